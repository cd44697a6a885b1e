// Helpers of the data layer's tests.
#ifndef SLUICE_SRC_DATA_DATA_TEST_UTIL_H_
#define SLUICE_SRC_DATA_DATA_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <vector>

#include "sluice/data/datasets.h"

namespace sluice::data::testing {

inline DatasetPtr Must(Result<DatasetPtr> r) {
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : nullptr;
}

// Every element of one pass; fails the test on an error.
inline std::vector<Element> Elements(const DatasetPtr& ds) {
  std::vector<Element> out;
  auto it = ds->MakeIterator();
  while (true) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || end) return out;
    out.push_back(std::move(e));
  }
}

// The int64 scalar component `c` of every element.
inline std::vector<int64_t> Ints(const DatasetPtr& ds, size_t c = 0) {
  std::vector<int64_t> out;
  for (const Element& e : Elements(ds)) out.push_back(e[c].scalar<int64_t>());
  return out;
}

inline DatasetPtr RangeOf(int64_t n) { return Must(Range(0, n)); }

inline ElementSpec Int64Scalar() { return ElementSpec{{DType::kInt64}, {PartialShape({})}, {}}; }

// x -> x * factor, on int64 scalars.
inline MapFn Times(int64_t factor) {
  return [factor](Element e) -> Result<Element> { return Element{Tensor::Scalar<int64_t>(e[0].scalar<int64_t>() * factor)}; };
}

}  // namespace sluice::data::testing

#endif  // SLUICE_SRC_DATA_DATA_TEST_UTIL_H_
