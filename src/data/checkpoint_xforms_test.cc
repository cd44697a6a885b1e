// Checkpoints of the sequential transformations: every break point of each,
// alone, under Repeat (the later epochs) and behind or in front of a seeded
// shuffle.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "data/checkpoint_test_util.h"
#include "data/data_test_util.h"
#include "sluice/data/checkpoint.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

using namespace checkpoint_testing;  // NOLINT(build/namespaces): the shared test helpers

DatasetPtr Shuffled(int64_t n, int64_t buffer = 4) { return Must(Shuffle(RangeOf(n), buffer, 7, 11, true)); }

PredicateFn Even() {
  return [](const Element& e) -> Result<bool> { return e[0].scalar<int64_t>() % 2 == 0; };
}

// x -> [x, x, ..., x] of length x % 4 (variable-length int64 vectors).
DatasetPtr Vectors(DatasetPtr ints) {
  ElementSpec spec{{DType::kInt64}, {PartialShape({-1})}, {}};
  return Must(Map(std::move(ints), [](Element e) -> Result<Element> {
    const int64_t x = e[0].scalar<int64_t>();
    return Element{Tensor::FromVector<int64_t>(std::vector<int64_t>(static_cast<size_t>(x % 4), x))};
  }, spec));
}

// x -> (x, "<x>s"): two components, one of them strings.
DatasetPtr Pairs(DatasetPtr ints) {
  ElementSpec spec{{DType::kInt64, DType::kString}, {PartialShape({}), PartialShape({})}, {}};
  return Must(Map(std::move(ints), [](Element e) -> Result<Element> {
    const int64_t x = e[0].scalar<int64_t>();
    return Element{e[0], Tensor::String(std::to_string(x) + "s")};
  }, spec));
}

// Saves after `k` elements of make() and restores into an iterator of a
// second make(); returns the rest.
std::vector<std::string> RestAfter(const std::function<DatasetPtr()>& make, int64_t k,
                                   std::vector<std::string>* before) {
  auto it = make()->MakeIterator();
  *before = EncodedRun(*it, k);
  Result<std::string> saved = SaveIterator(*it);
  EXPECT_TRUE(saved.ok()) << saved.status();
  if (!saved.ok()) return {};
  auto again = make()->MakeIterator();
  Status s = RestoreIterator(*again, *saved);
  EXPECT_TRUE(s.ok()) << s;
  return EncodedRun(*again, 1000);
}

TEST(CheckpointXformsTest, ShardResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return Must(Shard(RangeOf(20), 3, 1)); });
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Shard(Shuffled(14), 4, 2)), 3)); });
}

TEST(CheckpointXformsTest, ZipOfUnequalLengthsResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return Must(Zip({RangeOf(5), Must(Map(Shuffled(8), Times(3), Int64Scalar()))})); });
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Zip({Shuffled(6), Pairs(RangeOf(9))})), 3)); });
}

TEST(CheckpointXformsTest, ConcatenateResumesInEitherInputAndAfterBoth) {
  ExpectCheckpointsExact([] { return Must(Concatenate(RangeOf(3), Must(Range(10, 14)))); });
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Concatenate(Shuffled(5), Shuffled(4, 2))), 3)); });
  ExpectCheckpointsExact([] { return Must(Concatenate(Must(Take(RangeOf(5), 0)), RangeOf(3))); });
}

TEST(CheckpointXformsTest, ConcatenateBeforeItsSecondInputStartsKeepsThatInputsPasses) {
  // The second input's shuffle, behind a map and a batch, takes pass e in
  // epoch e; a checkpoint in the first part must carry it.
  ExpectCheckpointsExact([] {
    DatasetPtr second = Must(Batch(Must(Map(Shuffled(6, 3), Times(10), Int64Scalar())), 4));
    return Must(Repeat(Must(Concatenate(Must(Batch(Shuffled(5), 4)), second)), 4));
  });
  // The same shuffle on both sides: passes 2e and 2e + 1.
  ExpectCheckpointsExact([] {
    DatasetPtr both = Shuffled(4, 2);
    return Must(Repeat(Must(Concatenate(both, both)), 3));
  });
}

TEST(CheckpointXformsTest, EnumerateResumesItsCount) {
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Enumerate(Shuffled(6), 5)), 3)); });
}

TEST(CheckpointXformsTest, CacheResumesWhileWritingAndWhileReading) {
  // The first epoch writes the cache (one shuffled order); the later ones
  // read it, in a restored process too, which never ran the first epoch.
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Cache(Shuffled(6, 3))), 3)); });
  ExpectCheckpointsExact([] { return Must(Shuffle(Must(Repeat(Must(Cache(RangeOf(5))), 2)), 3, 1, 2, false)); });
}

TEST(CheckpointXformsTest, CacheRestoredWhileReadingServesTheLaterEpochsFromTheCheckpoint) {
  // An input whose values differ on every read, in any process, tells
  // whether the later epochs of the restored process read the cache.
  auto reads = std::make_shared<std::atomic<int64_t>>(0);
  auto make = [reads] {
    DatasetPtr counted = Must(Map(RangeOf(6), [reads](Element e) -> Result<Element> {
      return Element{Tensor::Scalar<int64_t>(e[0].scalar<int64_t>() + 1000 * reads->fetch_add(1))};
    }, Int64Scalar()));
    return Must(Repeat(Must(Cache(counted)), 3));
  };
  std::vector<std::string> before;
  std::vector<std::string> rest = RestAfter(make, 8, &before);
  ASSERT_EQ(rest.size(), 10u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(rest[i], before[i + 2]) << i;
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(rest[i + 4], before[i]) << i;
}

TEST(CheckpointXformsTest, BatchResumesWithAndWithoutTheRemainder) {
  ExpectCheckpointsExact([] { return Must(Batch(RangeOf(10), 3)); });
  ExpectCheckpointsExact([] { return Must(Batch(RangeOf(10), 3, true)); });
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Batch(Shuffled(7), 2)), 3)); });
  ExpectCheckpointsExact([] { return Must(Batch(Pairs(Shuffled(8)), 3)); });  // strings: the stacking path
}

TEST(CheckpointXformsTest, PaddedBatchResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return Must(PaddedBatch(Vectors(RangeOf(11)), 3)); });
  ExpectCheckpointsExact([] {
    return Must(Repeat(Must(PaddedBatch(Vectors(Shuffled(9)), 2, {PartialShape({5})},
                                        Element{Tensor::Scalar<int64_t>(-1)}, true)),
                       2));
  });
}

TEST(CheckpointXformsTest, UnbatchResumesInsideABatch) {
  ExpectCheckpointsExact([] { return Must(Unbatch(Must(Batch(RangeOf(10), 4)))); });
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Unbatch(Must(Batch(Pairs(Shuffled(7)), 3)))), 3)); });
  ExpectCheckpointsExact([] { return Must(Shuffle(Must(Unbatch(Must(Batch(RangeOf(9), 2)))), 3, 5, 6, false)); });
}

TEST(CheckpointXformsTest, UnbatchSavesOnlyTheRowsLeft) {
  auto make = [](int64_t rows) { return Must(Unbatch(Must(Batch(RangeOf(2 * rows), rows)))); };
  auto size_after_one = [](const DatasetPtr& ds) {
    auto it = ds->MakeIterator();
    EncodedRun(*it, 1);
    Result<std::string> saved = SaveIterator(*it);
    EXPECT_TRUE(saved.ok()) << saved.status();
    return saved.ok() ? saved->size() : 0;
  };
  // One row more in the batch, one row more saved; rows read are not kept.
  const size_t small = size_after_one(make(2)), large = size_after_one(make(1002));
  EXPECT_EQ(large - small, 1000 * sizeof(int64_t));
}

TEST(CheckpointXformsTest, FilterResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return Must(Filter(RangeOf(15), Even())); });
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Filter(Shuffled(11), Even())), 3)); });
}

TEST(CheckpointXformsTest, ScanResumesWithItsState) {
  ScanFn running_sum = [](const Element& state, Element e) -> Result<std::pair<Element, Element>> {
    const int64_t sum = state[0].scalar<int64_t>() + e[0].scalar<int64_t>();
    return std::make_pair(Element{Tensor::Scalar<int64_t>(sum)}, Element{Tensor::Scalar<int64_t>(sum * 10)});
  };
  ExpectCheckpointsExact([&] {
    return Must(Scan(Shuffled(9), Element{Tensor::Scalar<int64_t>(100)}, running_sum, Int64Scalar()));
  });
  // Each epoch starts from the initial state again.
  ExpectCheckpointsExact([&] {
    return Must(Repeat(Must(Scan(RangeOf(5), Element{Tensor::Scalar<int64_t>(0)}, running_sum, Int64Scalar())), 3));
  });
}

TEST(CheckpointXformsTest, TakeWhileResumesBeforeAndAfterThePredicateFails) {
  PredicateFn below7 = [](const Element& e) -> Result<bool> { return e[0].scalar<int64_t>() < 7; };
  ExpectCheckpointsExact([&] { return Must(TakeWhile(RangeOf(20), below7)); });
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(TakeWhile(Shuffled(12), below7)), 3)); });
}

TEST(CheckpointXformsTest, UniqueResumesWithItsSeenSet) {
  auto mod = [](int64_t m) {
    return [m](Element e) -> Result<Element> { return Element{Tensor::Scalar<int64_t>(e[0].scalar<int64_t>() % m)}; };
  };
  ExpectCheckpointsExact([&] { return Must(Unique(Must(Map(Shuffled(30, 6), mod(7), Int64Scalar())))); });
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(Unique(Must(Map(RangeOf(12), mod(5), Int64Scalar())))), 3)); });
  ExpectCheckpointsExact([&] {
    ElementSpec strings{{DType::kString}, {PartialShape({})}, {}};
    return Must(Unique(Must(Map(Shuffled(20), [](Element e) -> Result<Element> {
      return Element{Tensor::String(std::string(static_cast<size_t>(e[0].scalar<int64_t>() % 4), 'x'))};
    }, strings))));
  });
}

TEST(CheckpointXformsTest, IgnoreErrorsResumesAndKeepsTheSkippedCount) {
  auto failing = [] {
    return Must(Map(Shuffled(12), [](Element e) -> Result<Element> {
      if (e[0].scalar<int64_t>() % 4 == 0) return Status(Code::kDataLoss, "bad element");
      return e;
    }, Int64Scalar()));
  };
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(IgnoreErrors(failing())), 3)); });

  auto it = Must(IgnoreErrors(failing()))->MakeIterator();
  EncodedRun(*it, 5);
  Result<std::string> saved = SaveIterator(*it);
  ASSERT_TRUE(saved.ok()) << saved.status();
  const int64_t skipped = it->skipped_errors();
  EXPECT_GT(skipped, 0);
  auto again = Must(IgnoreErrors(failing()))->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*again, *saved).ok());
  EXPECT_EQ(again->skipped_errors(), skipped);
}

TEST(CheckpointXformsTest, RebatchResumesWithRowsPending) {
  ExpectCheckpointsExact([] { return Must(Rebatch(Must(Batch(RangeOf(17), 5)), {2, 3})); });
  ExpectCheckpointsExact([] { return Must(Rebatch(Must(Batch(RangeOf(17), 5)), {4}, true)); });
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Rebatch(Must(Batch(Pairs(Shuffled(9)), 4)), {3, 1})), 3)); });
}

TEST(CheckpointXformsTest, GroupByWindowResumesWithOpenWindowsAndInsideAReducedWindow) {
  KeyFn mod3 = [](const Element& e) -> Result<int64_t> { return e[0].scalar<int64_t>() % 3; };
  WindowSizeFn size = [](int64_t key) -> Result<int64_t> { return key + 3; };
  // Each window is read out in batches of two: a break can fall inside it.
  ReduceFn pairs = [](int64_t, DatasetPtr window) { return Batch(std::move(window), 2); };
  ElementSpec spec{{DType::kInt64}, {PartialShape({-1})}, {}};
  ExpectCheckpointsExact([&] { return Must(GroupByWindow(RangeOf(25), mod3, pairs, size, spec)); });
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(GroupByWindow(Shuffled(16), mod3, pairs, size, spec)), 3)); });
  // A reduce function with a seeded reshuffle: each window's order restored.
  ReduceFn shuffled = [](int64_t key, DatasetPtr window) { return Shuffle(std::move(window), 2, key + 1, 3, true); };
  ExpectCheckpointsExact([&] { return Must(GroupByWindow(RangeOf(20), mod3, shuffled, size, Int64Scalar())); });
}

TEST(CheckpointXformsTest, BucketBySequenceLengthResumesAtEveryBreakPoint) {
  ElementLengthFn length = [](const Element& e) -> Result<int64_t> { return e[0].shape().dim(0); };
  ExpectCheckpointsExact([&] { return Must(BucketBySequenceLength(Vectors(RangeOf(23)), length, {1, 3}, {2, 3, 2})); });
  ExpectCheckpointsExact([&] {
    return Must(Repeat(Must(BucketBySequenceLength(Vectors(Shuffled(15)), length, {2}, {3, 2})), 3));
  });
}

TEST(CheckpointXformsTest, WindowResumesWithItsBuffer) {
  ExpectCheckpointsExact([] { return Must(Window(RangeOf(12), 3, 2, 2)); });
  ExpectCheckpointsExact([] { return Must(Window(RangeOf(13), 2, 5, 1, true)); });  // shift beyond the span
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Window(Pairs(Shuffled(9)), 4, 1, 1, false)), 3)); });
}

TEST(CheckpointXformsTest, ElementsDatasetResumes) {
  auto elements = std::make_shared<std::vector<Element>>();
  for (int64_t i = 0; i < 5; ++i) elements->push_back(Element{Tensor::Scalar<int64_t>(i * i)});
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(FromElements(elements, Int64Scalar())), 3)); });
}

TEST(CheckpointXformsTest, SampleFromDatasetsResumesItsDrawsAndExhaustedInputs) {
  for (bool stop_on_empty : {false, true}) {
    SCOPED_TRACE(stop_on_empty ? "stop_on_empty" : "to the end of every input");
    ExpectCheckpointsExact([&] {
      return Must(Repeat(Must(SampleFromDatasets({RangeOf(4), Must(Range(100, 110)), Shuffled(6)}, {0.5, 0.3, 0.2},
                                                 3, 4, stop_on_empty)),
                         3));
    });
  }
  // Under Repeat with rerandomize: each epoch's draws come from its pass's seeds.
  ExpectCheckpointsExact([] {
    return Must(Repeat(Must(SampleFromDatasets({RangeOf(4), Must(Range(100, 105))}, {}, 8, 9, false, true)), 3));
  });
}

TEST(CheckpointXformsTest, SampleFromDatasetsWithUnseededDrawsResumesWithTheSavedSeeds) {
  // Seeds (0, 0) are drawn at random per iterator: only the checkpoint's
  // seeds give the continuation of the saved run.
  auto make = [] { return Must(SampleFromDatasets({RangeOf(30), Must(Range(100, 130))}, {}, 0, 0)); };
  auto it = make()->MakeIterator();
  std::vector<std::string> before = EncodedRun(*it, 10);
  Result<std::string> saved = SaveIterator(*it);
  ASSERT_TRUE(saved.ok()) << saved.status();
  std::vector<std::string> want = EncodedRun(*it, 1000);
  auto again = make()->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*again, *saved).ok());
  EXPECT_EQ(EncodedRun(*again, 1000), want);
}

TEST(CheckpointXformsTest, SampleFromDatasetsWithAWeightDatasetResumes) {
  ExpectCheckpointsExact([] {
    Tensor w(DType::kFloat32, TensorShape({6, 2}));
    for (int64_t i = 0; i < 12; ++i) w.flat<float>()[i] = static_cast<float>(i % 5 + 1);
    DatasetPtr weights = Must(FromTensorSlices(Element{w}));
    return Must(Repeat(
        Must(SampleFromDatasetsWithWeightDataset({RangeOf(10), Shuffled(10)}, weights, 2, 3, false, true)), 3));
  });
}

TEST(CheckpointXformsTest, ChooseFromDatasetsResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] {
    DatasetPtr choice = Must(Map(Shuffled(15, 5), [](Element e) -> Result<Element> {
      return Element{Tensor::Scalar<int64_t>(e[0].scalar<int64_t>() % 3)};
    }, Int64Scalar()));
    return Must(ChooseFromDatasets({RangeOf(3), Must(Range(10, 20)), Must(Range(20, 30))}, choice));
  });
  ExpectCheckpointsExact([] {
    DatasetPtr choice = Must(Map(RangeOf(12), [](Element e) -> Result<Element> {
      return Element{Tensor::Scalar<int64_t>(e[0].scalar<int64_t>() % 2)};
    }, Int64Scalar()));
    return Must(Repeat(Must(ChooseFromDatasets({RangeOf(2), Shuffled(10)}, choice, true)), 3));
  });
}

// Dense int64 [4] beside a SparseTensor of dense shape [4, 3]:
// (0, 1) = 10, (2, 0) = 20, (2, 2) = 30, (3, 1) = 40.
Element SparseSample() {
  Tensor indices(DType::kInt64, TensorShape{4, 2});
  const std::vector<int64_t> idx = {0, 1, 2, 0, 2, 2, 3, 1};
  std::copy(idx.begin(), idx.end(), indices.data<int64_t>());
  return Element{Tensor::FromVector<int64_t>({7, 8, 9, 6}), indices, Tensor::FromVector<int64_t>({10, 20, 30, 40}),
                 Tensor::FromVector<int64_t>({4, 3})};
}

TEST(CheckpointXformsTest, SparseSlicesBatchAndUnbatchResumeAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return Must(FromTensorSlicesWithSparse(SparseSample(), {1})); });
  ExpectCheckpointsExact([] {
    DatasetPtr rows = Must(Shuffle(Must(FromTensorSlicesWithSparse(SparseSample(), {1})), 2, 1, 2, true));
    return Must(Repeat(Must(BatchWithSparse(rows, 3, false, {1})), 3));
  });
  ExpectCheckpointsExact([] {
    DatasetPtr rows = Must(FromTensorSlicesWithSparse(SparseSample(), {1}));
    return Must(Repeat(Must(UnbatchWithSparse(Must(BatchWithSparse(rows, 3, false, {1})), {1})), 3));
  });
}

TEST(CheckpointXformsTest, AChainOfTransformationsAroundAShuffleResumes) {
  ExpectCheckpointsExact([] {
    DatasetPtr ds = Must(Filter(Must(Enumerate(Shuffled(40, 8))), [](const Element& e) -> Result<bool> {
      return e[1].scalar<int64_t>() % 3 != 0;
    }));
    ds = Must(Shard(ds, 2, 0));
    ds = Must(Batch(ds, 3));
    ds = Must(Rebatch(ds, {2}));
    ds = Must(Unbatch(ds));
    ds = Must(Shuffle(ds, 3, 9, 10, true));
    return Must(Take(Must(Repeat(ds, 2)), 25));
  });
}

// A child process reads a pipeline, writing a checkpoint (count | bytes)
// every `every` elements (to a temporary file renamed over the last), and
// is killed with SIGKILL between two checkpoints; an iterator restored from
// the last one continues with the uninterrupted run's elements from there.
TEST(CheckpointXformsTest, AProcessKilledBetweenCheckpointsResumesFromTheLastOne) {
  auto make = [] {
    DatasetPtr ds = Must(Window(Must(Unbatch(Must(Batch(Shuffled(30, 7), 4)))), 3, 2, 1));
    return Must(Take(Must(Repeat(Must(Concatenate(ds, Must(Filter(Shuffled(9), Even())))), 3)), 60));
  };
  std::vector<std::string> full;
  {
    auto it = make()->MakeIterator();
    full = EncodedRun(*it, 1000);
  }
  const std::string path = ::testing::TempDir() + "/checkpoint_xforms_kill.ckpt";
  std::remove(path.c_str());
  constexpr int64_t kEvery = 7, kKilledAfter = 38;  // the last checkpoint: after 35 elements
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto it = make()->MakeIterator();
    for (int64_t n = 1; n <= kKilledAfter; ++n) {
      if (EncodedRun(*it, 1).size() != 1) _exit(1);
      if (n % kEvery != 0) continue;
      Result<std::string> saved = SaveIterator(*it);
      if (!saved.ok()) _exit(2);
      {
        std::ofstream out(path + ".tmp", std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(&n), sizeof(n));
        out << *saved;
        if (!out.flush()) _exit(3);
      }
      if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0) _exit(4);
    }
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(5);
    while (true) pause();  // killed here
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the child failed before its last checkpoint";
  close(ready[0]);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int64_t count = 0;
  ASSERT_GT(file.size(), sizeof(count));
  std::memcpy(&count, file.data(), sizeof(count));
  EXPECT_EQ(count, kKilledAfter / kEvery * kEvery);
  auto it = make()->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*it, std::string_view(file).substr(sizeof(count))).ok());
  std::vector<std::string> rest = EncodedRun(*it, 1000);
  ASSERT_EQ(count + static_cast<int64_t>(rest.size()), static_cast<int64_t>(full.size()));
  for (size_t i = 0; i < rest.size(); ++i) ASSERT_EQ(rest[i], full[static_cast<size_t>(count) + i]) << i;
}

}  // namespace
}  // namespace sluice::data
