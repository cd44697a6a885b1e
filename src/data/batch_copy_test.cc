// Batch copies elements that fill buffers of their own into the batch as
// they arrive (src/data/batch.cc: ReadBatchCopying).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "data/data_test_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Must;
using testing::RangeOf;

// Elements of `rows` int64 values each, every one in a buffer of its own whose
// release is counted, so that a test can see how many are alive at once.
struct LiveCounter {
  std::atomic<int> live{0};
  std::atomic<int> peak{0};
};

DatasetPtr CountedRows(int64_t n, int64_t rows, std::shared_ptr<LiveCounter> counter) {
  return Must(Map(
      RangeOf(n),
      [rows, counter](Element e) -> Result<Element> {
        auto* data = static_cast<int64_t*>(std::malloc(static_cast<size_t>(rows) * sizeof(int64_t)));
        std::fill(data, data + rows, e[0].scalar<int64_t>());
        const int now = ++counter->live;
        int peak = counter->peak.load();
        while (now > peak && !counter->peak.compare_exchange_weak(peak, now)) {
        }
        return Element{Tensor::Wrap(DType::kInt64, TensorShape{rows}, data, [data, counter] {
          std::free(data);
          --counter->live;
        })};
      },
      ElementSpec{{DType::kInt64}, {PartialShape({rows})}, {}}));
}

TEST(BatchCopyTest, ABatchHoldsEachElementOnlyUntilItIsCopied) {
  auto counter = std::make_shared<LiveCounter>();
  std::vector<Element> batches = Elements(Must(Batch(CountedRows(16, 4, counter), 8)));
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(counter->peak.load(), 1);
  EXPECT_EQ(counter->live.load(), 0);
  EXPECT_EQ(batches[1][0].shape(), (TensorShape{8, 4}));
  EXPECT_EQ(batches[1][0].data<int64_t>()[0], 8);
  EXPECT_EQ(batches[1][0].data<int64_t>()[31], 15);
}

TEST(BatchCopyTest, AShortLastBatchHasOnlyItsRows) {
  auto counter = std::make_shared<LiveCounter>();
  std::vector<Element> batches = Elements(Must(Batch(CountedRows(5, 2, counter), 4)));
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1][0].shape(), (TensorShape{1, 2}));
  EXPECT_EQ(batches[1][0].data<int64_t>()[1], 4);
  EXPECT_TRUE(Elements(Must(Batch(CountedRows(5, 2, counter), 4, /*drop_remainder=*/true))).size() == 1u);
}

TEST(BatchCopyTest, RebatchingAnUnbatchedBatchStillSharesItsBuffer) {
  DatasetPtr rows = Must(Unbatch(Must(Batch(CountedRows(8, 3, std::make_shared<LiveCounter>()), 4))));
  std::vector<Element> batches = Elements(Must(Batch(rows, 4)));
  ASSERT_EQ(batches.size(), 2u);
  std::vector<Element> again = Elements(Must(Batch(Must(Unbatch(Must(FromTensors(Element{batches[0][0]})))), 4)));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_TRUE(again[0][0].SharesBufferWith(batches[0][0]));
}

}  // namespace
}  // namespace sluice::data
