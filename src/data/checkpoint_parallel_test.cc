// Checkpoints of the threaded iterators: parallel map, prefetch and
// interleave (sequential and parallel), at every break point, under Repeat
// and after a shuffle.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "data/checkpoint_test_util.h"
#include "data/data_test_util.h"
#include "sluice/data/checkpoint.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

using namespace checkpoint_testing;  // NOLINT(build/namespaces): the shared test helpers

// x -> x * 3, taking longer for some elements, so that later calls finish
// first and calls are in flight when a checkpoint is saved.
MapFn UnevenTimes3() {
  return [](Element e) -> Result<Element> {
    const int64_t x = e[0].scalar<int64_t>();
    std::this_thread::sleep_for(std::chrono::microseconds(x % 3 == 0 ? 300 : 10));
    return Element{Tensor::Scalar<int64_t>(x * 3)};
  };
}

DatasetPtr ParallelMapOf(DatasetPtr input, MapFn fn, int64_t calls, bool deterministic = true) {
  return Must(Map(std::move(input), std::move(fn), Int64Scalar(),
                  MapOptions{.num_parallel_calls = calls, .deterministic = deterministic}));
}

// x -> [x * 10, x * 10 + x]: input x yields x + 1 elements.
InterleaveFn Ramp() {
  return [](Element e) -> Result<DatasetPtr> {
    const int64_t x = e[0].scalar<int64_t>();
    return Range(x * 10, x * 10 + x + 1);
  };
}

DatasetPtr InterleaveOf(DatasetPtr input, int64_t cycle, int64_t block, std::optional<int64_t> calls) {
  return Must(Interleave(std::move(input), Ramp(), Int64Scalar(),
                         InterleaveOptions{.cycle_length = cycle, .block_length = block, .num_parallel_calls = calls}));
}

TEST(CheckpointParallelTest, ParallelMapResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return ParallelMapOf(RangeOf(24), UnevenTimes3(), 3); });
}

TEST(CheckpointParallelTest, ParallelMapWithChunksResumesAtEveryBreakPoint) {
  // A cheap function: chunks of many elements are reserved at once.
  ExpectCheckpointsExact([] { return ParallelMapOf(RangeOf(200), Times(2), 2); }, {0, 1, 7, 63, 150, 199, 200});
}

TEST(CheckpointParallelTest, AutotunedParallelMapResumes) {
  ExpectCheckpointsExact([] { return ParallelMapOf(RangeOf(20), UnevenTimes3(), kAutotune); }, {0, 1, 5, 13, 20});
}

TEST(CheckpointParallelTest, ParallelMapUnderRepeatKeepsEachEpochsIndex) {
  // The function sees the epoch: the restored map must continue its passes.
  ExpectCheckpointsExact([] {
    IndexedMapFn fn = [](Element e, ElementIndex i) -> Result<Element> {
      return Element{Tensor::Scalar<int64_t>(e[0].scalar<int64_t>() + 100 * static_cast<int64_t>(i.epoch))};
    };
    auto map = Must(MapWithIndex(RangeOf(5), fn, Int64Scalar(), MapOptions{.num_parallel_calls = 2}));
    return Must(Repeat(map, 3));
  });
}

TEST(CheckpointParallelTest, ShuffleParallelMapPrefetchUnderRepeatResumes) {
  ExpectCheckpointsExact([] {
    auto shuffled = Must(Shuffle(RangeOf(12), 5, 42, 7, true));
    auto mapped = ParallelMapOf(shuffled, UnevenTimes3(), 3);
    return Must(Repeat(Must(Prefetch(mapped, 4)), 2));
  });
}

TEST(CheckpointParallelTest, ParallelMapSavesBufferedErrorsInPlace) {
  auto make = [] {
    MapFn fn = [](Element e) -> Result<Element> {
      const int64_t x = e[0].scalar<int64_t>();
      if (x % 4 == 2) return Status(Code::kDataLoss, "bad element " + std::to_string(x));
      return Element{Tensor::Scalar<int64_t>(x)};
    };
    return ParallelMapOf(RangeOf(10), fn, 3);
  };
  auto it = make()->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  Result<std::string> saved = SaveIterator(*it);  // element 2, an error, is buffered by now or in flight
  ASSERT_TRUE(saved.ok()) << saved.status();
  auto restored = make()->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*restored, *saved).ok());
  std::vector<std::string> got;
  while (true) {
    Status s = restored->GetNext(&e, &end);
    if (s.ok() && end) break;
    got.push_back(s.ok() ? std::to_string(e[0].scalar<int64_t>()) : s.ToString());
  }
  const std::vector<std::string> want = {"1", "DATA_LOSS: bad element 2", "3", "4", "5", "DATA_LOSS: bad element 6",
                                         "7", "8", "9"};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NE(got[i].find(want[i]), std::string::npos) << got[i];
}

TEST(CheckpointParallelTest, NondeterministicParallelMapResumesWithTheSameSet) {
  auto make = [] { return ParallelMapOf(RangeOf(30), UnevenTimes3(), 3, false); };
  for (int64_t k : {0, 4, 17, 30}) {
    SCOPED_TRACE("break after " + std::to_string(k));
    auto it = make()->MakeIterator();
    std::vector<std::string> got = EncodedRun(*it, k);
    Result<std::string> saved = SaveIterator(*it);
    ASSERT_TRUE(saved.ok()) << saved.status();
    auto restored = make()->MakeIterator();
    ASSERT_TRUE(RestoreIterator(*restored, *saved).ok());
    std::vector<std::string> rest = EncodedRun(*restored, 1000);
    got.insert(got.end(), rest.begin(), rest.end());
    auto full_it = make()->MakeIterator();
    std::vector<std::string> full = EncodedRun(*full_it, 1000);
    std::sort(got.begin(), got.end());
    std::sort(full.begin(), full.end());
    EXPECT_EQ(got, full);
  }
}

TEST(CheckpointParallelTest, SavingTwiceWhileRunningKeepsTheSequence) {
  // Save pauses the workers; the saved iterator itself must go on unchanged.
  auto make = [] { return Must(Prefetch(ParallelMapOf(RangeOf(40), UnevenTimes3(), 4), 3)); };
  auto full_it = make()->MakeIterator();
  std::vector<std::string> full = EncodedRun(*full_it, 1000);
  auto it = make()->MakeIterator();
  std::vector<std::string> got;
  for (int round = 0; round < 8; ++round) {
    std::vector<std::string> part = EncodedRun(*it, 5);
    got.insert(got.end(), part.begin(), part.end());
    ASSERT_TRUE(SaveIterator(*it).ok());
  }
  EXPECT_EQ(got, full);
}

TEST(CheckpointParallelTest, SaveWithFullBuffersLetsTheWorkerWaitingForSpaceGo) {
  // With the consumer idle, a worker waits for space holding the input's
  // lock; Save must wake it rather than wait for that lock forever.
  auto calls = std::make_shared<std::atomic<int64_t>>(0);
  auto make = [calls] {
    MapFn fn = [calls](Element e) -> Result<Element> {
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // one element per chunk
      calls->fetch_add(1);
      return e;
    };
    return ParallelMapOf(RangeOf(100), fn, 2);
  };
  auto it = make()->MakeIterator();
  std::vector<std::string> first = EncodedRun(*it, 1);
  while (calls->load() < 5) std::this_thread::yield();  // 4 slots (2 x 2 chunks of 1) filled after the one taken
  Result<std::string> saved = SaveIterator(*it);
  ASSERT_TRUE(saved.ok()) << saved.status();
  auto restored = make()->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*restored, *saved).ok());
  std::vector<std::string> rest = EncodedRun(*restored, 1000);
  first.insert(first.end(), rest.begin(), rest.end());
  auto full_it = make()->MakeIterator();
  EXPECT_EQ(first, EncodedRun(*full_it, 1000));
}

TEST(CheckpointParallelTest, PrefetchResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return Must(Prefetch(Must(Map(RangeOf(15), UnevenTimes3(), Int64Scalar())), 3)); });
}

TEST(CheckpointParallelTest, AutotunedPrefetchUnderRepeatResumes) {
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Prefetch(RangeOf(6), kAutotune)), 3)); });
}

TEST(CheckpointParallelTest, InterleaveResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return InterleaveOf(RangeOf(6), 3, 2, std::nullopt); });
}

TEST(CheckpointParallelTest, ParallelInterleaveResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return InterleaveOf(RangeOf(6), 3, 2, 3); });
}

TEST(CheckpointParallelTest, ParallelInterleaveOfShuffledInputsUnderRepeatResumes) {
  ExpectCheckpointsExact([] {
    auto shuffled = Must(Shuffle(RangeOf(5), 3, 9, 1, true));
    return Must(Repeat(InterleaveOf(shuffled, 2, 1, 2), 2));
  });
}

TEST(CheckpointParallelTest, AutotunedCycleLengthResumes) {
  ExpectCheckpointsExact([] { return InterleaveOf(RangeOf(5), kAutotune, 1, kAutotune); }, {0, 1, 4, 9, 15});
}

TEST(CheckpointParallelTest, PrefetchOfAGeneratorIsUnimplementedAndKeepsRunning) {
  auto gen = Must(FromGenerator(
      []() -> Result<GeneratorFn> {
        auto next = std::make_shared<int64_t>(0);
        return GeneratorFn([next]() -> Result<std::optional<Element>> {
          if (*next == 5) return std::optional<Element>();
          return std::optional<Element>(Element{Tensor::Scalar<int64_t>((*next)++)});
        });
      },
      Int64Scalar()));
  auto it = Must(Prefetch(gen, 2))->MakeIterator();
  std::vector<std::string> first = EncodedRun(*it, 2);
  Result<std::string> saved = SaveIterator(*it);
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(saved.status().code(), Code::kUnimplemented) << saved.status();
  EXPECT_EQ(EncodedRun(*it, 1000).size(), 3u);  // the failed save did not stop the prefetch thread
}

}  // namespace
}  // namespace sluice::data

namespace sluice::data {
namespace {

// Each stage's input ends before the stage drains its buffer or cycle; the
// reshuffling shuffle below it must still reach the checkpoint, or the next
// epoch after a restore gets another order.
TEST(CheckpointParallelTest, StagesWhoseInputEndedStillSaveItForTheNextEpochs) {
  auto shuffled = [] { return Must(Shuffle(RangeOf(4), 4, 5, 6, true)); };
  ExpectCheckpointsExact([&] { return Must(Repeat(InterleaveOf(shuffled(), 2, 1, std::nullopt), 3)); });
  ExpectCheckpointsExact([&] { return Must(Repeat(InterleaveOf(shuffled(), 2, 1, 2), 3)); });
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(Prefetch(shuffled(), 3)), 3)); });
  ExpectCheckpointsExact([&] { return Must(Repeat(ParallelMapOf(shuffled(), Times(2), 2), 3)); });
}

}  // namespace
}  // namespace sluice::data
