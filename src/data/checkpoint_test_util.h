// The break-point harness of the checkpoint tests.
#ifndef SLUICE_SRC_DATA_CHECKPOINT_TEST_UTIL_H_
#define SLUICE_SRC_DATA_CHECKPOINT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "data/data_test_util.h"
#include "data/element_codec.h"
#include "sluice/data/checkpoint.h"
#include "sluice/data/dataset.h"

namespace sluice::data::testing {

// The elements of one pass as their encodings (exact comparison), at most
// `limit`; fails the test on an error.
inline std::vector<std::string> EncodedRun(IteratorBase& it, int64_t limit) {
  std::vector<std::string> out;
  while (static_cast<int64_t>(out.size()) < limit) {
    Element e;
    bool end = false;
    Status s = it.GetNext(&e, &end);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || end) break;
    out.push_back(EncodeElement(e));
  }
  return out;
}

// For each break point k: k elements from an iterator of make(), save,
// restore into an iterator of a second make() (a new process would build the
// pipeline anew), and the rest. Each concatenation must equal one
// uninterrupted pass of a third make(). No break points: 0..n, every one.
// `limit` bounds infinite pipelines.
inline void ExpectCheckpointsExact(const std::function<DatasetPtr()>& make, std::vector<int64_t> breaks = {},
                                   int64_t limit = 1000) {
  std::vector<std::string> full;
  {
    auto it = make()->MakeIterator();
    full = EncodedRun(*it, limit);
  }
  if (breaks.empty()) {
    for (int64_t k = 0; k <= static_cast<int64_t>(full.size()); ++k) breaks.push_back(k);
  }
  for (int64_t k : breaks) {
    SCOPED_TRACE("break after " + std::to_string(k) + " elements");
    std::vector<std::string> got;
    std::string bytes;
    {
      auto it = make()->MakeIterator();
      got = EncodedRun(*it, k);
      Result<std::string> saved = SaveIterator(*it);
      ASSERT_TRUE(saved.ok()) << saved.status();
      bytes = std::move(*saved);
    }
    auto it = make()->MakeIterator();
    Status s = RestoreIterator(*it, bytes);
    ASSERT_TRUE(s.ok()) << s;
    std::vector<std::string> rest = EncodedRun(*it, limit - static_cast<int64_t>(got.size()));
    got.insert(got.end(), rest.begin(), rest.end());
    ASSERT_EQ(got.size(), full.size());
    for (size_t i = 0; i < full.size(); ++i) ASSERT_EQ(got[i], full[i]) << "element " << i;
  }
}

}  // namespace sluice::data::testing

// The helpers the checkpoint tests call unqualified, brought in with one
// `using namespace checkpoint_testing;`.
namespace sluice::data::checkpoint_testing {
using testing::EncodedRun;
using testing::ExpectCheckpointsExact;
using testing::Int64Scalar;
using testing::Must;
using testing::RangeOf;
using testing::Times;
}  // namespace sluice::data::checkpoint_testing

#endif  // SLUICE_SRC_DATA_CHECKPOINT_TEST_UTIL_H_
