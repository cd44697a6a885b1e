// ShardedRecordFiles, the consistency check and the preprocessing ranks over
// MPI (mpirun with 1, 2 and 4 ranks; CTest label mpi).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "distribute/mpi_test_util.h"
#include "sluice/data/datasets.h"
#include "sluice/distribute/datasets.h"
#include "sluice/distribute/service.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_writer.h"

namespace sluice::distribute {
namespace {

using testing::MpiWorld;

// A communicator shared with the datasets (they keep it): the world's, not owned.
std::shared_ptr<Communicator> Shared() { return std::shared_ptr<Communicator>(&MpiWorld(), [](Communicator*) {}); }

// Rank 0 writes files of `sizes` records into a fresh folder; every rank
// gets their names.
std::vector<std::string> SharedFiles(const std::vector<int>& sizes) {
  Communicator& c = MpiWorld();
  std::string dir;
  if (c.rank() == 0) {
    std::string tmpl = ::testing::TempDir() + "/sluice_mpi_XXXXXX";
    dir = mkdtemp(tmpl.data());
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::string path = StrCat(dir, "/f", i);
      auto w = io::RecordWriter::Open(path).value();
      for (int j = 0; j < sizes[i]; ++j) EXPECT_TRUE(w->Write(StrCat("f", i, "-", j)).ok());
      EXPECT_TRUE(w->Close().ok());
      EXPECT_TRUE(io::RecordIndex::LoadOrBuild(path).ok());  // built once, loaded by the others
    }
  }
  EXPECT_TRUE(c.Bcast(&dir, 0).ok());
  std::vector<std::string> files;
  for (size_t i = 0; i < sizes.size(); ++i) files.push_back(StrCat(dir, "/f", i));
  return files;
}

// Every rank's records of one pass, gathered on every rank.
std::map<std::string, int> GatherCounts(const std::vector<std::string>& mine) {
  std::string joined;
  for (const std::string& r : mine) joined += r + "\n";
  std::map<std::string, int> counts;
  const std::vector<std::string> all = MpiWorld().Allgather(joined).value();
  for (const std::string& rank : all) {
    size_t at = 0;
    for (size_t nl; (nl = rank.find('\n', at)) != std::string::npos; at = nl + 1) ++counts[rank.substr(at, nl - at)];
  }
  return counts;
}

std::vector<std::string> Pass(const data::DatasetPtr& ds) {
  std::vector<std::string> out;
  auto it = ds->MakeIterator();
  while (true) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || end) return out;
    out.push_back(e[0].scalar<std::string>());
  }
}

TEST(MpiShardedRecordFilesTest, EveryRecordOncePerEpochForEachPolicy) {
  const std::vector<std::string> files = SharedFiles({13, 0, 7, 21, 5});  // 46 records
  for (ShardingPolicy policy : {ShardingPolicy::kRecord, ShardingPolicy::kFile, ShardingPolicy::kData,
                                ShardingPolicy::kDynamic}) {
    DistributeOptions options;
    options.policy = policy;
    options.uneven = Uneven::kAllow;
    options.split_records = 4;  // no seed: rank 0 draws and broadcasts it
    auto ds = ShardedRecordFiles(files, options, ContextOf(Shared()));
    ASSERT_TRUE(ds.ok()) << ds.status();
    for (int epoch = 0; epoch < 2; ++epoch) {
      const std::map<std::string, int> counts = GatherCounts(Pass(*ds));
      EXPECT_EQ(counts.size(), 46u) << ShardingPolicyName(policy) << " epoch " << epoch;
      for (const auto& [record, n] : counts) EXPECT_EQ(n, 1) << record;
    }
    ASSERT_TRUE(MpiWorld().Barrier().ok());  // DYNAMIC: rank 0's dispatcher outlives every pass
  }
}

TEST(MpiShardedRecordFilesTest, DynamicCheckpointResumesExactlyOnce) {
  const std::vector<std::string> files = SharedFiles({13, 0, 7, 21, 5});  // 46 records
  DistributeOptions options;
  options.policy = ShardingPolicy::kDynamic;
  options.split_records = 3;
  std::vector<std::string> first;
  std::string state;
  {
    auto ds = ShardedRecordFiles(files, options, ContextOf(Shared())).value();
    auto it = MakeShardedIterator(ds);
    for (int k = 0; k < 4; ++k) {
      Element e;
      bool end = false;
      ASSERT_TRUE(it->GetNext(&e, &end).ok());
      ASSERT_FALSE(end);
      first.push_back(e[0].scalar<std::string>());
    }
    ASSERT_TRUE(MpiWorld().Barrier().ok());  // a synchronous step
    Result<DistributedState> s = it->state();
    ASSERT_TRUE(s.ok()) << s.status();
    state = s->Serialize();
    ASSERT_TRUE(MpiWorld().Barrier().ok());  // rank 0's dispatcher answered every rank
  }
  std::string root_state = state;
  ASSERT_TRUE(MpiWorld().Bcast(&root_state, 0).ok());
  EXPECT_EQ(state, root_state) << "every rank's state is the same";
  options.resume = DistributedState::Parse(state).value();
  options.seed = options.resume->seed;
  auto resumed = ShardedRecordFiles(files, options, ContextOf(Shared())).value();
  std::vector<std::string> mine = first;
  for (const std::string& r : Pass(resumed)) mine.push_back(r);
  const std::map<std::string, int> counts = GatherCounts(mine);
  EXPECT_EQ(counts.size(), 46u);
  for (const auto& [record, n] : counts) EXPECT_EQ(n, 1) << record;
  ASSERT_TRUE(MpiWorld().Barrier().ok());
}

TEST(MpiShardedRecordFilesTest, PadGivesEveryRankTheSameCount) {
  const std::vector<std::string> files = SharedFiles({11});
  DistributeOptions options;
  options.policy = ShardingPolicy::kRecord;
  options.seed = 4;
  auto ds = ShardedRecordFiles(files, options, ContextOf(Shared())).value();
  const int64_t mine = static_cast<int64_t>(Pass(ds).size());
  EXPECT_EQ(MpiWorld().Allreduce(mine, ReduceOp::kMin).value(), MpiWorld().Allreduce(mine, ReduceOp::kMax).value());
}

TEST(MpiShardedRecordFilesTest, ASeedThatDiffersFailsOnEveryRankNamingTheRank) {
  Communicator& c = MpiWorld();
  if (c.size() < 2) GTEST_SKIP() << "needs two ranks";
  const std::vector<std::string> files = SharedFiles({3});
  DistributeOptions options;
  options.seed = c.rank() == c.size() - 1 ? 2 : 1;
  Status s = ShardedRecordFiles(files, options, ContextOf(Shared())).status();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find(StrCat("ranks disagree on the seed: rank(s) ", c.size() - 1)), std::string::npos) << s;
}

TEST(MpiServiceTest, TrainerReadsEveryElementOfTheWorkersOnce) {
  Communicator& c = MpiWorld();
  if (c.size() < 2) GTEST_SKIP() << "needs a worker and a trainer";
  std::vector<std::string> roles(static_cast<size_t>(c.size()), "preprocess");
  roles[0] = "train";
  ServiceOptions options = ServiceOptionsFromRoles(roles);
  options.max_outstanding_requests = 3;
  const data::ElementSpec spec{{DType::kInt64}, {PartialShape({})}, {}};
  const int64_t n = 500;
  if (c.rank() == 0) {
    auto ds = FromService(Shared(), options, spec).value();
    auto it = ds->MakeIterator();
    std::vector<int64_t> got;
    while (true) {
      Element e;
      bool end = false;
      ASSERT_TRUE(it->GetNext(&e, &end).ok());
      if (end) break;
      got.push_back(e[0].scalar<int64_t>());
    }
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], i);
  } else {
    const int64_t workers = c.size() - 1;
    auto ds = data::Shard(data::Range(0, n).value(), workers, c.rank() - 1).value();
    EXPECT_TRUE(Serve(ds, Shared(), options).ok());
  }
  ASSERT_TRUE(c.Barrier().ok());
}

}  // namespace
}  // namespace sluice::distribute
