// Probe passes (IteratorContext::probe): one element, read cheaply, taking
// nothing from the real passes.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "data/data_test_util.h"

namespace sluice::data {
namespace {

using testing::Ints;
using testing::Must;

// A source counting 0..n-1 that counts the elements it made and the probe
// flags its factory was given.
struct CountingSource {
  std::atomic<int> pulled{0};
  std::vector<bool> probes;  // one per factory call (iterators are made on one thread here)

  DatasetPtr Make(int64_t n) {
    return Must(FromProbeAwareGenerator(
        [this, n](bool probe) -> Result<GeneratorFn> {
          probes.push_back(probe);
          return GeneratorFn([this, n, i = int64_t{0}]() mutable -> Result<std::optional<Element>> {
            if (i == n) return std::optional<Element>();
            ++pulled;
            return std::optional<Element>(Element{Tensor::Scalar<int64_t>(i++)});
          });
        },
        testing::Int64Scalar()));
  }
};

// The first element of a probe pass over `ds` (-1 at an immediate end).
int64_t ProbeFirst(const DatasetPtr& ds) {
  auto it = ds->MakeProbeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_TRUE(s.ok()) << s;
  return end || !s.ok() ? -1 : e[0].scalar<int64_t>();
}

TEST(ProbeTest, BufferingStagesPassTheProbeStraightToTheirInput) {
  CountingSource source;
  DatasetPtr ds = Must(Shuffle(source.Make(1000), 500, 1, 2));
  ds = Must(Cache(ds));
  ds = Must(Prefetch(ds, 16));
  ds = Must(Repeat(ds, 3));
  ds = Must(Shard(ds, 4, 3));
  ds = Must(Take(ds, 10));
  EXPECT_EQ(ProbeFirst(ds), 0);
  EXPECT_EQ(source.pulled.load(), 1);
}

TEST(ProbeTest, FilterAndSkipStillApplyInAProbe) {
  CountingSource source;
  DatasetPtr ds = Must(Filter(source.Make(10), [](const Element& e) -> Result<bool> {
    return e[0].scalar<int64_t>() >= 3;
  }));
  ds = Must(Skip(ds, 1));
  EXPECT_EQ(ProbeFirst(ds), 4);
  EXPECT_EQ(source.pulled.load(), 5);
}

TEST(ProbeTest, AProbeTakesNoEpochFromAReshufflingShuffle) {
  DatasetPtr ds = Must(Shuffle(testing::RangeOf(20), 20, 7, 9));
  const std::vector<int64_t> without_probe = Ints(Must(Shuffle(testing::RangeOf(20), 20, 7, 9)));
  ProbeFirst(ds);
  EXPECT_EQ(Ints(ds), without_probe);
}

TEST(ProbeTest, AParallelMapCallsItsFunctionOnTheProbesThread) {
  std::mutex mu;
  std::vector<std::thread::id> callers;
  MapFn record = [&](Element e) -> Result<Element> {
    std::lock_guard<std::mutex> lock(mu);
    callers.push_back(std::this_thread::get_id());
    return e;
  };
  DatasetPtr ds = Must(Map(testing::RangeOf(100), record, testing::Int64Scalar(), MapOptions{.num_parallel_calls = 4}));
  EXPECT_EQ(ProbeFirst(ds), 0);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(callers.size(), 1u);
  EXPECT_EQ(callers[0], std::this_thread::get_id());
}

TEST(ProbeTest, AFusedMapAndBatchProbesOneBatchOnTheProbesThread) {
  std::mutex mu;
  std::vector<std::thread::id> callers;
  MapFn count = [&](Element e) -> Result<Element> {
    std::lock_guard<std::mutex> lock(mu);
    callers.push_back(std::this_thread::get_id());
    return e;
  };
  DatasetPtr ds = Must(Batch(Must(Map(testing::RangeOf(1000), count, testing::Int64Scalar(),
                                      MapOptions{.num_parallel_calls = 4})),
                             4));
  auto it = ds->MakeProbeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  ASSERT_FALSE(end);
  EXPECT_EQ(e[0].shape().DebugString(), TensorShape({4}).DebugString());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(callers, std::vector<std::thread::id>(4, std::this_thread::get_id()));
}

TEST(ProbeTest, AParallelInterleaveReadsNoInputAheadInAProbe) {
  CountingSource source;
  DatasetPtr inner = source.Make(100);
  InterleaveFn open = [inner](Element) -> Result<DatasetPtr> { return inner; };
  DatasetPtr ds = Must(Interleave(testing::RangeOf(4), open, testing::Int64Scalar(),
                                  InterleaveOptions{.cycle_length = 4, .block_length = 1, .num_parallel_calls = 4}));
  EXPECT_EQ(ProbeFirst(ds), 0);
  EXPECT_EQ(source.pulled.load(), 1);
}

TEST(ProbeTest, AProbeOfAFileCacheWritesNoFile) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "probe_test_cache";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  DatasetPtr ds = Must(CacheToFile(testing::RangeOf(5), (dir / "cache").string()));
  EXPECT_EQ(ProbeFirst(ds), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_EQ(Ints(ds), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(std::filesystem::exists(dir / "cache"));
  std::filesystem::remove_all(dir);
}

TEST(ProbeTest, AGeneratorFactoryIsToldWhetherItsPassIsAProbe) {
  CountingSource source;
  DatasetPtr ds = source.Make(3);
  ProbeFirst(ds);
  EXPECT_EQ(Ints(ds), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(source.probes, (std::vector<bool>{true, false}));
}

}  // namespace
}  // namespace sluice::data
