// ShardedRecordFiles over thread communicators: exactly-once per epoch
// across ranks for every policy and uneven mode, resume at another world
// size, the consistency check (label concurrency: runs under TSan).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sluice/distribute/datasets.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_writer.h"

namespace sluice::distribute {
namespace {

std::string TempPath(const std::string& name) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test.begin(), test.end(), '/', '_');
  return ::testing::TempDir() + "/dist_" + test + name;
}

// Files "f<i>" holding records "f<i>-<j>" for j < sizes[i].
std::vector<std::string> WriteFiles(const std::vector<int>& sizes) {
  std::vector<std::string> files;
  for (size_t i = 0; i < sizes.size(); ++i) {
    files.push_back(TempPath(StrCat("f", i)));
    auto w = io::RecordWriter::Open(files.back());
    EXPECT_TRUE(w.ok()) << w.status();
    for (int j = 0; j < sizes[i]; ++j) EXPECT_TRUE((*w)->Write(StrCat("f", i, "-", j)).ok());
    EXPECT_TRUE((*w)->Close().ok());
    ::unlink(io::RecordIndex::IndexPath(files.back()).c_str());
  }
  // Build the indexes once, so the ranks' threads only load them.
  for (const std::string& f : files) EXPECT_TRUE(io::RecordIndex::LoadOrBuild(f).ok());
  return files;
}

std::vector<std::string> Pass(data::IteratorBase* it, Status* status = nullptr) {
  std::vector<std::string> out;
  while (true) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    if (status) *status = s;
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || end) return out;
    out.push_back(e[0].scalar<std::string>());
  }
}

// Each rank's records of `epochs` passes: result[epoch][rank].
using Reads = std::vector<std::vector<std::vector<std::string>>>;

Reads RunRanks(int ranks, const std::vector<std::string>& files, const DistributeOptions& options, int epochs = 1) {
  const auto comms = MakeThreadCommunicators(ranks);
  Reads reads(static_cast<size_t>(epochs), std::vector<std::vector<std::string>>(static_cast<size_t>(ranks)));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      Result<data::DatasetPtr> ds = ShardedRecordFiles(files, options, ContextOf(comms[static_cast<size_t>(r)]));
      ASSERT_TRUE(ds.ok()) << ds.status();
      for (int e = 0; e < epochs; ++e) reads[static_cast<size_t>(e)][static_cast<size_t>(r)] = Pass((*ds)->MakeIterator().get());
      // The dispatcher (DYNAMIC) lives on rank 0's dataset: keep every
      // dataset until all ranks are done.
      ASSERT_TRUE(comms[static_cast<size_t>(r)]->Barrier().ok());
    });
  }
  for (std::thread& t : threads) t.join();
  return reads;
}

std::map<std::string, int> Counts(const std::vector<std::vector<std::string>>& per_rank) {
  std::map<std::string, int> counts;
  for (const auto& rank : per_rank) {
    for (const std::string& r : rank) ++counts[r];
  }
  return counts;
}

struct Case {
  ShardingPolicy policy;
  Uneven uneven;
};

class ExactlyOnceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ExactlyOnceTest, EveryRecordOncePerEpochAcrossRanks) {
  const auto [policy, uneven] = GetParam();
  const std::vector<int> sizes = {5, 0, 9, 3, 7, 1, 4};  // 29 records
  const std::vector<std::string> files = WriteFiles(sizes);
  for (int ranks : {1, 2, 3, 4}) {
    DistributeOptions options;
    options.policy = policy;
    options.uneven = uneven;
    options.seed = 77;
    options.split_records = 3;
    const Reads reads = RunRanks(ranks, files, options, /*epochs=*/2);
    for (size_t e = 0; e < reads.size(); ++e) {
      SCOPED_TRACE(testing::Message() << ShardingPolicyName(policy) << " " << UnevenName(uneven) << " ranks=" << ranks
                                      << " epoch=" << e);
      const std::map<std::string, int> counts = Counts(reads[e]);
      std::vector<size_t> lengths;
      for (const auto& rank : reads[e]) lengths.push_back(rank.size());
      const size_t lo = *std::min_element(lengths.begin(), lengths.end());
      const size_t hi = *std::max_element(lengths.begin(), lengths.end());
      int repeated = 0;
      for (const auto& [record, n] : counts) repeated += n - 1;
      const int total = 29;
      if (policy == ShardingPolicy::kDynamic || uneven == Uneven::kAllow) {
        EXPECT_EQ(static_cast<int>(counts.size()), total);
        EXPECT_EQ(repeated, 0);
        if (policy != ShardingPolicy::kDynamic && policy != ShardingPolicy::kFile) {
          EXPECT_LE(hi - lo, 1u);
        }
      } else if (uneven == Uneven::kDrop) {
        EXPECT_EQ(lo, hi);
        EXPECT_EQ(repeated, 0);
        if (policy != ShardingPolicy::kFile) {
          EXPECT_EQ(static_cast<int>(counts.size()), total - total % ranks);
        }
      } else {  // pad
        EXPECT_EQ(lo, hi);
        EXPECT_EQ(static_cast<int>(counts.size()), total);
      }
    }
    if (policy == ShardingPolicy::kRecord && ranks == 1) {
      EXPECT_NE(reads[0][0], reads[1][0]) << "reshuffled";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, ExactlyOnceTest,
    ::testing::Values(Case{ShardingPolicy::kRecord, Uneven::kDrop}, Case{ShardingPolicy::kRecord, Uneven::kPad},
                      Case{ShardingPolicy::kRecord, Uneven::kAllow}, Case{ShardingPolicy::kData, Uneven::kDrop},
                      Case{ShardingPolicy::kData, Uneven::kPad}, Case{ShardingPolicy::kData, Uneven::kAllow},
                      Case{ShardingPolicy::kFile, Uneven::kDrop}, Case{ShardingPolicy::kFile, Uneven::kPad},
                      Case{ShardingPolicy::kFile, Uneven::kAllow}, Case{ShardingPolicy::kDynamic, Uneven::kAllow}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return StrCat(ShardingPolicyName(info.param.policy), "_", UnevenName(info.param.uneven));
    });

TEST(ShardedRecordFilesTest, DataPolicyMatchesDatasetShardOrder) {
  const std::vector<std::string> files = WriteFiles({4, 3});
  DistributeOptions options;
  options.policy = ShardingPolicy::kData;
  options.uneven = Uneven::kAllow;
  options.seed = 1;
  const Reads reads = RunRanks(2, files, options);
  EXPECT_EQ(reads[0][0], (std::vector<std::string>{"f0-0", "f0-2", "f1-0", "f1-2"}));
  EXPECT_EQ(reads[0][1], (std::vector<std::string>{"f0-1", "f0-3", "f1-1"}));
}

TEST(ShardedRecordFilesTest, OffGivesEveryRankEverything) {
  const std::vector<std::string> files = WriteFiles({2, 3});
  DistributeOptions options;
  options.policy = ShardingPolicy::kOff;
  options.seed = 1;
  const Reads reads = RunRanks(3, files, options);
  for (const auto& rank : reads[0]) EXPECT_EQ(rank.size(), 5u);
}

TEST(ShardedRecordFilesTest, SeedChosenByRankZeroIsSharedByAll) {
  const std::vector<std::string> files = WriteFiles({50});
  DistributeOptions options;
  options.policy = ShardingPolicy::kRecord;
  options.uneven = Uneven::kAllow;
  const Reads reads = RunRanks(3, files, options);  // no seed: broadcast
  EXPECT_EQ(Counts(reads[0]).size(), 50u);
}

// `ranks` ranks take `steps` synchronous steps of the dataset's first pass,
// then checkpoint: each rank's records and the (common) state.
std::pair<std::vector<std::vector<std::string>>, DistributedState> StepsThenCheckpoint(
    int ranks, const std::vector<std::string>& files, const DistributeOptions& options, int steps) {
  const auto comms = MakeThreadCommunicators(ranks);
  std::vector<std::vector<std::string>> read(static_cast<size_t>(ranks));
  std::vector<DistributedState> states(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      auto ds = ShardedRecordFiles(files, options, ContextOf(comms[static_cast<size_t>(r)])).value();
      auto it = MakeShardedIterator(ds);
      for (int k = 0; k < steps; ++k) {
        Element e;
        bool end = false;
        ASSERT_TRUE(it->GetNext(&e, &end).ok());
        ASSERT_FALSE(end);
        read[static_cast<size_t>(r)].push_back(e[0].scalar<std::string>());
      }
      // A synchronous step: every rank has read as many. DYNAMIC asks rank
      // 0's dispatcher, so its dataset lives until every rank has asked.
      ASSERT_TRUE(comms[static_cast<size_t>(r)]->Barrier().ok());
      states[static_cast<size_t>(r)] = it->state().value();
      ASSERT_TRUE(comms[static_cast<size_t>(r)]->Barrier().ok());
    });
  }
  for (std::thread& t : threads) t.join();
  for (const DistributedState& s : states) EXPECT_EQ(s, states[0]) << "every rank's state is the same";
  return {read, states[0]};
}

class ResumeTest : public ::testing::TestWithParam<ShardingPolicy> {};

TEST_P(ResumeTest, ResumeAtAnotherWorldSizeKeepsExactlyOnce) {
  const std::vector<std::string> files = WriteFiles({40, 23, 9, 17, 5});  // 94 records
  for (int before : {2, 3}) {
    for (int after : {1, 2, 3, 4}) {
      DistributeOptions options;
      options.policy = GetParam();
      options.uneven = Uneven::kAllow;
      options.seed = 5;
      options.split_records = 3;  // DYNAMIC: several splits per rank before the checkpoint
      auto [first, state] = StepsThenCheckpoint(before, files, options, 4);
      options.resume = state;
      const Reads rest = RunRanks(after, files, options, 2);
      std::map<std::string, int> counts = Counts(first);
      for (const auto& [record, n] : Counts(rest[0])) counts[record] += n;
      SCOPED_TRACE(testing::Message() << before << " -> " << after << " ranks");
      EXPECT_EQ(counts.size(), 94u);
      for (const auto& [record, n] : counts) EXPECT_EQ(n, 1) << record;
      // The next epoch is a whole one at the new size.
      const std::map<std::string, int> next = Counts(rest[1]);
      EXPECT_EQ(next.size(), 94u);
      for (const auto& [record, n] : next) EXPECT_EQ(n, 1) << record;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, ResumeTest,
                         ::testing::Values(ShardingPolicy::kRecord, ShardingPolicy::kData, ShardingPolicy::kFile,
                                           ShardingPolicy::kDynamic),
                         [](const auto& info) { return std::string(ShardingPolicyName(info.param)); });

TEST(ShardedRecordFilesTest, FileCheckpointOfAResumeAtAnotherSizeResumesAgainExactlyOnce) {
  const std::vector<std::string> files = WriteFiles({40, 23, 9, 17, 5});  // 94 records
  DistributeOptions options;
  options.policy = ShardingPolicy::kFile;
  options.uneven = Uneven::kAllow;
  options.seed = 8;
  // 3 ranks read 5 each, 2 ranks go on for 6 steps, then 4 ranks finish the epoch.
  auto [first, state] = StepsThenCheckpoint(3, files, options, 5);
  options.resume = state;
  auto [second, state2] = StepsThenCheckpoint(2, files, options, 6);
  EXPECT_EQ(state2.world_size, 3);
  EXPECT_EQ(state2.position, 5u);
  EXPECT_EQ(state2.rest, 12u);
  EXPECT_EQ(DistributedState::Parse(state2.Serialize()).value(), state2);
  options.resume = state2;
  const Reads rest = RunRanks(4, files, options);
  std::map<std::string, int> counts = Counts(first);
  for (const auto& [record, n] : Counts(second)) counts[record] += n;
  for (const auto& [record, n] : Counts(rest[0])) counts[record] += n;
  EXPECT_EQ(counts.size(), 94u);
  for (const auto& [record, n] : counts) EXPECT_EQ(n, 1) << record;
}

TEST(ShardedRecordFilesTest, DynamicCheckpointOfAResumeResumesAgainExactlyOnce) {
  const std::vector<std::string> files = WriteFiles({40, 23, 9, 17, 5});  // 94 records
  DistributeOptions options;
  options.policy = ShardingPolicy::kDynamic;
  options.seed = 8;
  options.split_records = 4;
  // 3 ranks read 5 each (each holds part of a split), 2 ranks go on for 6
  // steps from what was left, then 4 ranks finish the epoch.
  auto [first, state] = StepsThenCheckpoint(3, files, options, 5);
  ASSERT_TRUE(state.left.has_value());
  uint64_t left = 0;
  for (const auto& [b, e] : *state.left) left += e - b;
  EXPECT_EQ(left, 94u - 15u) << state.Serialize();
  options.resume = DistributedState::Parse(state.Serialize()).value();
  auto [second, state2] = StepsThenCheckpoint(2, files, options, 6);
  EXPECT_EQ(state2.epoch, state.epoch);
  options.resume = state2;
  const Reads rest = RunRanks(4, files, options, 2);
  std::map<std::string, int> counts = Counts(first);
  for (const auto& [record, n] : Counts(second)) counts[record] += n;
  for (const auto& [record, n] : Counts(rest[0])) counts[record] += n;
  EXPECT_EQ(counts.size(), 94u);
  for (const auto& [record, n] : counts) EXPECT_EQ(n, 1) << record;
  EXPECT_EQ(Counts(rest[1]).size(), 94u) << "the next epoch is whole";
}

TEST(ShardedRecordFilesTest, DynamicStateBeforeEveryRankHasReadAsManyIsFailedPrecondition) {
  const std::vector<std::string> files = WriteFiles({30});
  DistributeOptions options;
  options.policy = ShardingPolicy::kDynamic;
  options.seed = 2;
  options.split_records = 2;
  const auto comms = MakeThreadCommunicators(2);
  Status rank1_state;
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto ds = ShardedRecordFiles(files, options, ContextOf(comms[static_cast<size_t>(r)])).value();
      auto it = MakeShardedIterator(ds);
      // Rank 1 reads 3 records while rank 0 has read none.
      if (r == 1) {
        for (int k = 0; k < 3; ++k) {
          Element e;
          bool end = false;
          const Status s = it->GetNext(&e, &end);
          ASSERT_TRUE(s.ok()) << s;
        }
        rank1_state = it->state().status();
      }
      ASSERT_TRUE(comms[static_cast<size_t>(r)]->Barrier().ok());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(rank1_state.code(), Code::kFailedPrecondition) << rank1_state;
  EXPECT_NE(std::string(rank1_state.message()).find("rank 0 has been handed only 0"), std::string::npos)
      << rank1_state;
}

TEST(ShardedRecordFilesTest, DynamicRanksMidEpochFailClearlyWhenRankZeroDropsItsDataset) {
  const std::vector<std::string> files = WriteFiles({9, 4});
  DistributeOptions options;
  options.policy = ShardingPolicy::kDynamic;
  options.seed = 3;
  options.split_records = 2;
  const auto comms = MakeThreadCommunicators(3);
  std::vector<Status> after(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      auto ds = ShardedRecordFiles(files, options, ContextOf(comms[static_cast<size_t>(r)])).value();
      auto it = ds->MakeIterator();
      Element e;
      bool end = false;
      ASSERT_TRUE(it->GetNext(&e, &end).ok());  // every rank holds a split
      ASSERT_TRUE(comms[static_cast<size_t>(r)]->Barrier().ok());
      if (r == 0) {
        it.reset();
        ds.reset();  // the dispatcher's owner is gone while ranks 1 and 2 are mid-epoch
      }
      ASSERT_TRUE(comms[static_cast<size_t>(r)]->Barrier().ok());
      if (r != 0) {
        // Not a wait for ever: the rest of the split, then an error that says why.
        Status s;
        while (s.ok() && !end) s = it->GetNext(&e, &end);
        after[static_cast<size_t>(r)] = s;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r : {1, 2}) {
    EXPECT_EQ(after[static_cast<size_t>(r)].code(), Code::kFailedPrecondition) << after[static_cast<size_t>(r)];
    EXPECT_NE(std::string(after[static_cast<size_t>(r)].message()).find("keep rank 0's dataset"), std::string::npos);
  }
}

TEST(ShardedRecordFilesTest, DynamicOnOneRankWithoutCommunicatorCheckpointsAndResumes) {
  const std::vector<std::string> files = WriteFiles({10, 7});
  DistributeOptions options;
  options.policy = ShardingPolicy::kDynamic;
  options.seed = 6;
  options.split_records = 3;
  auto ds = ShardedRecordFiles(files, options, InputContext{}).value();
  auto it = MakeShardedIterator(ds);
  std::map<std::string, int> counts;
  for (int k = 0; k < 5; ++k) {
    Element e;
    bool end = false;
    ASSERT_TRUE(it->GetNext(&e, &end).ok());
    ++counts[e[0].scalar<std::string>()];
  }
  const DistributedState state = it->state().value();
  EXPECT_EQ(state.policy, ShardingPolicy::kDynamic);
  options.resume = state;
  auto resumed = ShardedRecordFiles(files, options, InputContext{}).value();
  for (const std::string& r : Pass(resumed->MakeIterator().get())) ++counts[r];
  EXPECT_EQ(counts.size(), 17u);
  for (const auto& [record, n] : counts) EXPECT_EQ(n, 1) << record;
}

TEST(ShardedRecordFilesTest, OffCheckpointAtAnotherWorldSizeIsFailedPrecondition) {
  const std::vector<std::string> files = WriteFiles({3});
  DistributeOptions options;
  options.policy = ShardingPolicy::kOff;
  options.seed = 5;
  options.resume = DistributedState{.seed = 5, .policy = ShardingPolicy::kOff, .world_size = 2, .position = 1};
  InputContext single;
  EXPECT_EQ(ShardedRecordFiles(files, options, single).status().code(), Code::kFailedPrecondition);
}

TEST(ShardedRecordFilesTest, DifferentFileListsFailFastNamingTheRanks) {
  const std::vector<std::string> files = WriteFiles({3, 4, 5});
  const auto comms = MakeThreadCommunicators(3);
  std::vector<Status> results(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      std::vector<std::string> mine = files;
      if (r == 2) mine.pop_back();  // rank 2 globbed fewer files
      DistributeOptions options;
      options.seed = 9;
      results[static_cast<size_t>(r)] = ShardedRecordFiles(mine, options, ContextOf(comms[static_cast<size_t>(r)])).status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) {
    EXPECT_EQ(s.code(), Code::kFailedPrecondition);
    EXPECT_NE(s.message().find("ranks disagree on the file list: rank(s) 2 differ from rank 0"), std::string::npos)
        << s;
  }
}

TEST(ShardedRecordFilesTest, DifferentSeedsFailFast) {
  const std::vector<std::string> files = WriteFiles({3});
  const auto comms = MakeThreadCommunicators(2);
  std::vector<Status> results(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      DistributeOptions options;
      options.seed = static_cast<uint64_t>(r);
      results[static_cast<size_t>(r)] = ShardedRecordFiles(files, options, ContextOf(comms[static_cast<size_t>(r)])).status();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(results[0].code(), Code::kFailedPrecondition);
  EXPECT_NE(results[1].message().find("ranks disagree on the seed: rank(s) 1"), std::string::npos) << results[1];
}

TEST(ShardedRecordFilesTest, SeveralRanksWithoutCommunicatorNeedASeed) {
  const std::vector<std::string> files = WriteFiles({3});
  InputContext ctx;
  ctx.num_input_pipelines = 2;
  ctx.input_pipeline_id = 1;
  ctx.launcher = Launcher::kTorchrun;
  Result<data::DatasetPtr> ds = ShardedRecordFiles(files, DistributeOptions{}, ctx);
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  DistributeOptions seeded;
  seeded.seed = 3;
  seeded.policy = ShardingPolicy::kRecord;
  ds = ShardedRecordFiles(files, seeded, ctx);
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->cardinality(), 2);  // pad: ceil(3 / 2)
}

}  // namespace
}  // namespace sluice::distribute
