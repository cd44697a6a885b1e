// The sequential stages' statistics (stage_timer.h): every stage of the tree
// is in IteratorStats with the elements it produced, sources first.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "data/data_test_util.h"
#include "data/model.h"

namespace sluice::data {
namespace {

using testing::Must;
using testing::RangeOf;

// Reads every element of `it`; the number read.
int64_t Drain(IteratorBase& it) {
  int64_t n = 0;
  while (true) {
    Element e;
    bool end = false;
    EXPECT_TRUE(it.GetNext(&e, &end).ok());
    if (end) return n;
    ++n;
  }
}

std::vector<std::string> Names(const std::vector<StageStats>& stats) {
  std::vector<std::string> out;
  for (const StageStats& s : stats) out.push_back(s.name);
  return out;
}

PredicateFn IsEven() {
  return [](const Element& e) -> Result<bool> { return e[0].scalar<int64_t>() % 2 == 0; };
}

TEST(StageStatsTest, EverySequentialStageCountsTheElementsItProduced) {
  DatasetPtr ds = Must(Filter(RangeOf(100), IsEven()));  // 50 evens
  ds = Must(Shuffle(ds, 10, 1, 2));
  ds = Must(Skip(ds, 5));
  ds = Must(Take(ds, 30));
  ds = Must(Shard(ds, 2, 0));
  ds = Must(Zip({ds, RangeOf(20)}));
  ds = Must(Concatenate(ds, Must(Zip({RangeOf(3), RangeOf(3)}))));
  auto it = ds->MakeIterator();
  EXPECT_EQ(Drain(*it), 18);
  const std::vector<StageStats> stats = IteratorStats(*it);
  // Sources first; the second input of Concatenate (its Zip) is made when the first ends.
  EXPECT_EQ(Names(stats), (std::vector<std::string>{"Filter", "Shuffle", "Skip", "Take", "Shard", "Zip", "Concatenate",
                                                    "Zip", "Root"}));
  // Take stops after 30, so Skip hands out 30 of Shuffle's 35; Shuffle
  // refilled its buffer before each, so it took 35 + 9 from Filter.
  const int64_t elements[] = {44, 35, 30, 30, 15, 15, 18, 3, 18};
  ASSERT_EQ(stats.size(), std::size(elements));
  for (size_t i = 0; i < stats.size(); ++i) EXPECT_EQ(stats[i].elements, elements[i]) << stats[i].name;
  EXPECT_GT(stats[0].busy_ns, 0);  // the predicate
  EXPECT_GT(stats[1].wait_ns, 0);  // filling the buffer from Filter
  // The first element of each stage is timed, its bytes counted kSampleEvery times over.
  EXPECT_EQ(stats[4].bytes, 8 * Node::kSampleEvery);
  EXPECT_EQ(stats[5].bytes, 2 * 8 * Node::kSampleEvery);
}

TEST(StageStatsTest, ShuffleReportsItsBufferFill) {
  auto it = Must(Shuffle(RangeOf(100), 10, 1, 2))->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  const StageStats s = IteratorStats(*it)[0];
  EXPECT_EQ(s.name, "Shuffle");
  EXPECT_EQ(s.buffer_size, 10);
  EXPECT_EQ(s.buffer_fill, 9);  // filled to 10, one handed out
}

TEST(StageStatsTest, RepeatCountsEveryEpochAndEachEpochHasItsOwnInputStages) {
  auto it = Must(Repeat(Must(Cache(Must(Take(RangeOf(10), 4)))), 3))->MakeIterator();
  for (int i = 0; i < 10; ++i) {
    Element e;
    bool end = false;
    ASSERT_TRUE(it->GetNext(&e, &end).ok());
    ASSERT_FALSE(end);
  }
  const std::vector<StageStats> stats = IteratorStats(*it);
  // Repeat makes its input at each epoch's first GetNext (so it comes first);
  // the third epoch reads the cache without making Take.
  ASSERT_EQ(Names(stats), (std::vector<std::string>{"Repeat", "Cache", "Root"}));
  EXPECT_EQ(stats[0].elements, 10);
  EXPECT_EQ(stats[1].elements, 2);
}

TEST(StageStatsTest, LongChainsCountEveryElementOfEveryStage) {
  DatasetPtr ds = RangeOf(200000);
  for (int i = 0; i < 4; ++i) ds = Must(Skip(Must(Take(ds, -1)), 0));
  auto it = ds->MakeIterator();
  EXPECT_EQ(Drain(*it), 200000);
  for (const StageStats& s : IteratorStats(*it)) {
    EXPECT_EQ(s.elements, 200000) << s.name;
  }
}

// The per-element cost of a pass-through stage with its counting (a
// regression to timing every element would show).
TEST(StageStatsTest, CountingCostsLittlePerElementAndStage) {
  if (std::getenv("SLUICE_PERF_TESTS") == nullptr) GTEST_SKIP() << "set SLUICE_PERF_TESTS=1";
  const int64_t n = 2'000'000;
  DatasetPtr ds = RangeOf(n);
  for (int i = 0; i < 5; ++i) ds = Must(Take(ds, -1));
  auto it = ds->MakeIterator();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Drain(*it), n);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  const double per_stage = ns / n / 5;
  std::printf("take(-1): %.1f ns per element per stage\n", per_stage);
  EXPECT_LT(per_stage, 100);
}

}  // namespace
}  // namespace sluice::data
