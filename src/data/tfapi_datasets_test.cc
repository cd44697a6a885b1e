// Counter, Random and AssertCardinality: elements, cardinality, TF's errors,
// and the checkpoint battery.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "data/checkpoint_test_util.h"
#include "data/data_test_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

using testing::Ints;
using testing::Must;
using testing::RangeOf;

std::vector<int64_t> First(const DatasetPtr& ds, int n) { return Ints(Must(Take(ds, n))); }

TEST(CounterTest, CountsFromStartByStepForEver) {
  DatasetPtr c = Must(Counter(3, -2));
  EXPECT_EQ(c->cardinality(), kInfiniteCardinality);
  EXPECT_EQ(First(c, 4), (std::vector<int64_t>{3, 1, -1, -3}));
}

TEST(CounterTest, MakesScalarsOfTheDtype) {
  DatasetPtr c = Must(Counter(5, 1, DType::kInt32));
  EXPECT_EQ(c->element_spec().dtypes[0], DType::kInt32);
  auto it = c->MakeIterator();
  Element e;
  bool end = true;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int32_t>(), 5);
}

TEST(RandomTest, SameSeedSameSequenceAndValuesBelow2To32) {
  std::vector<int64_t> a = First(Must(Random(4, 7, false)), 200);
  EXPECT_EQ(a, First(Must(Random(4, 7, false)), 200));
  EXPECT_NE(a, First(Must(Random(4, 8, false)), 200));
  for (int64_t v : a) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, int64_t{1} << 32);
  }
  EXPECT_GT(std::set<int64_t>(a.begin(), a.end()).size(), 190u);
}

TEST(RandomTest, RerandomizesEachPassOnlyWhenAsked) {
  DatasetPtr fixed = Must(Random(4, 7, false));
  EXPECT_EQ(First(fixed, 5), First(fixed, 5));
  DatasetPtr fresh = Must(Random(4, 7, true));
  std::vector<int64_t> first = First(fresh, 5);
  EXPECT_NE(first, First(fresh, 5));
  EXPECT_EQ(first, First(Must(Random(4, 7, true)), 5));  // pass 0 of another dataset of the same seeds
}

Status RunToEnd(const DatasetPtr& ds) {
  auto it = ds->MakeIterator();
  while (true) {
    Element e;
    bool end = false;
    SLUICE_RETURN_IF_ERROR(it->GetNext(&e, &end));
    if (end) return Status();
  }
}

TEST(AssertCardinalityTest, ReportsTheAssertedCardinalityAndPassesAMatchingInput) {
  DatasetPtr ds = Must(AssertCardinality(Must(Filter(RangeOf(5), [](const Element&) -> Result<bool> {
    return true;
  })), 5));
  EXPECT_EQ(ds->cardinality(), 5);
  EXPECT_EQ(Ints(ds), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(AssertCardinalityTest, FewerElementsIsFailedPreconditionInTfsWords) {
  Status s = RunToEnd(Must(AssertCardinality(RangeOf(3), 5)));
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "Input dataset was expected to contain 5 elements but contained only 3 elements.");
  s = RunToEnd(Must(AssertCardinality(RangeOf(1), kInfiniteCardinality)));
  EXPECT_EQ(s.message(), "Input dataset was expected to contain an infinite number of elements but contained only "
                         "1 element.");
}

TEST(AssertCardinalityTest, MoreElementsFailsAtTheFirstExtraOne) {
  auto it = Must(AssertCardinality(RangeOf(10), 5))->MakeIterator();
  Element e;
  bool end = false;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(it->GetNext(&e, &end).ok());
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "Input dataset was expected to contain 5 elements but contained at least 6 elements.");
}

TEST(AssertCardinalityTest, NegativeCardinalityOtherThanInfiniteIsInvalidArgument) {
  EXPECT_EQ(AssertCardinality(RangeOf(3), -2).status().code(), Code::kInvalidArgument);
}

TEST(TfapiCheckpointTest, RestoredIteratorsContinueExactly) {
  testing::ExpectCheckpointsExact([] { return Must(Counter(10, 3)); }, {0, 1, 5}, 20);
  testing::ExpectCheckpointsExact([] { return Must(Random(1, 2, false)); }, {0, 1, 5}, 20);
  testing::ExpectCheckpointsExact([] { return Must(Repeat(Must(Take(Must(Random(1, 2, true)), 4)), 3)); },
                                  {0, 1, 5});
  testing::ExpectCheckpointsExact([] { return Must(AssertCardinality(RangeOf(8), 8)); }, {0, 1, 5});
}

}  // namespace
}  // namespace sluice::data
