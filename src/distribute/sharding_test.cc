#include "sluice/distribute/sharding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sluice::distribute {
namespace {

// ---- Golden values: the same on every machine and standard library.

TEST(ShardingGoldenTest, GlobalPermutationIsPinned) {
  std::vector<uint64_t> epoch0, epoch1;
  for (uint64_t p = 0; p < 10; ++p) {
    epoch0.push_back(GlobalRecordAt(10, 1234, 0, p));
    epoch1.push_back(GlobalRecordAt(10, 1234, 1, p));
  }
  EXPECT_EQ(epoch0, (std::vector<uint64_t>{3, 9, 5, 7, 2, 1, 8, 0, 4, 6}));
  EXPECT_EQ(epoch1, (std::vector<uint64_t>{7, 6, 8, 9, 2, 3, 0, 4, 5, 1}));
  EXPECT_EQ(GlobalRecordAt(1000003, 42, 7, 0), 15225u);
  EXPECT_EQ(GlobalRecordAt(1000003, 42, 7, 999999), 978322u);
}

TEST(ShardingGoldenTest, FileAssignmentIsPinned) {
  const auto plain = AssignFiles(7, 3, /*seed=*/99, /*epoch=*/2);
  EXPECT_EQ(plain, (std::vector<std::vector<uint64_t>>{{3, 2, 1}, {0, 5}, {6, 4}}));
  const auto balanced = AssignFiles(7, 3, 99, 2, {10, 1, 1, 1, 1, 1, 5});
  EXPECT_EQ(balanced, (std::vector<std::vector<uint64_t>>{{3, 2, 5, 4, 1}, {0}, {6}}));
}

// ---- Exactly-once over many (n, ranks, uneven) combinations.

// Every rank's positions of `plan`, concatenated.
std::vector<uint64_t> AllPositions(const StridePlan& plan) {
  std::vector<uint64_t> out;
  for (int r = 0; r < plan.num_ranks; ++r) {
    for (uint64_t k = 0; k < plan.CountFor(r); ++k) out.push_back(plan.PositionAt(r, k));
  }
  return out;
}

class StrideExactlyOnceTest : public ::testing::TestWithParam<Uneven> {};

TEST_P(StrideExactlyOnceTest, EveryRecordOnceAndEqualEnds) {
  const Uneven uneven = GetParam();
  for (uint64_t n : {0u, 1u, 7u, 8u, 100u, 1001u}) {
    for (int ranks = 1; ranks <= 8; ++ranks) {
      const StridePlan plan{n, 0, ranks, uneven};
      std::vector<uint64_t> counts;
      for (int r = 0; r < ranks; ++r) counts.push_back(plan.CountFor(r));
      const uint64_t lo = *std::min_element(counts.begin(), counts.end());
      const uint64_t hi = *std::max_element(counts.begin(), counts.end());
      std::vector<int> seen(n, 0);
      // Record ids through the epoch's permutation: a bijection, so each
      // position's record is distinct exactly when the positions are.
      for (uint64_t p : AllPositions(plan)) ++seen[GlobalRecordAt(n, 5, 3, p)];
      const uint64_t rem = n % static_cast<uint64_t>(ranks);
      uint64_t missing = 0, repeated = 0;
      for (int c : seen) {
        missing += c == 0;
        repeated += c > 1 ? static_cast<uint64_t>(c - 1) : 0;
      }
      SCOPED_TRACE(testing::Message() << "n=" << n << " ranks=" << ranks);
      switch (uneven) {
        case Uneven::kDrop:
          EXPECT_EQ(lo, hi);
          EXPECT_EQ(missing, rem);
          EXPECT_EQ(repeated, 0u);
          break;
        case Uneven::kPad:
          EXPECT_EQ(lo, hi);
          EXPECT_EQ(missing, 0u);
          EXPECT_EQ(repeated, rem == 0 || n == 0 ? 0u : ranks - rem);
          break;
        case Uneven::kAllow:
          EXPECT_LE(hi - lo, 1u);
          EXPECT_EQ(missing, 0u);
          EXPECT_EQ(repeated, 0u);
          break;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllUneven, StrideExactlyOnceTest,
                         ::testing::Values(Uneven::kDrop, Uneven::kPad, Uneven::kAllow));

TEST(StridePlanTest, LargeEpochIsCoveredExactlyOnceByEightRanks) {
  const uint64_t n = 1000003;
  const StridePlan plan{n, 0, 8, Uneven::kAllow};
  std::vector<bool> seen(n, false);
  uint64_t total = 0;
  for (int r = 0; r < 8; ++r) {
    for (uint64_t k = 0; k < plan.CountFor(r); ++k) {
      const uint64_t id = GlobalRecordAt(n, 11, 0, plan.PositionAt(r, k));
      ASSERT_FALSE(seen[id]) << "record " << id << " twice";
      seen[id] = true;
      ++total;
    }
  }
  EXPECT_EQ(total, n);
}

TEST(StridePlanTest, DropLeavesOutDifferentRecordsEachEpoch) {
  const uint64_t n = 103;
  const StridePlan plan{n, 0, 4, Uneven::kDrop};
  std::vector<std::vector<uint64_t>> dropped(2);
  for (uint64_t epoch : {0u, 1u}) {
    std::vector<bool> seen(n, false);
    for (uint64_t p : AllPositions(plan)) seen[GlobalRecordAt(n, 1, epoch, p)] = true;
    for (uint64_t id = 0; id < n; ++id) {
      if (!seen[id]) dropped[epoch].push_back(id);
    }
  }
  ASSERT_EQ(dropped[0].size(), 3u);
  EXPECT_NE(dropped[0], dropped[1]);
}

TEST(StridePlanTest, DataPolicyMatchesDatasetShard) {
  // DATA deals positions in input order: rank r reads elements r, r + n, ...
  const StridePlan plan{10, 0, 3, Uneven::kAllow};
  std::vector<uint64_t> rank1;
  for (uint64_t k = 0; k < plan.CountFor(1); ++k) rank1.push_back(plan.PositionAt(1, k));
  EXPECT_EQ(rank1, (std::vector<uint64_t>{1, 4, 7}));
}

// ---- Resume at another world size keeps exactly-once.

TEST(StridePlanTest, ResumeAtAnyWorldSizeReadsEveryRecordOnce) {
  const uint64_t n = 1001;
  for (int before = 1; before <= 6; ++before) {
    for (int after = 1; after <= 6; ++after) {
      for (uint64_t steps : {0u, 1u, 37u, 1001u}) {
        const StridePlan first{n, 0, before, Uneven::kAllow};
        std::vector<int> seen(n, 0);
        for (int r = 0; r < before; ++r) {
          for (uint64_t k = 0; k < std::min(steps, first.CountFor(r)); ++k) ++seen[first.PositionAt(r, k)];
        }
        const DistributedState state{.seed = 7,
                                     .epoch = 2,
                                     .policy = ShardingPolicy::kRecord,
                                     .world_size = before,
                                     .position = first.PositionAfterSteps(steps)};
        Result<DistributedState> restored = DistributedState::Parse(state.Serialize());
        ASSERT_TRUE(restored.ok()) << restored.status();
        ASSERT_EQ(*restored, state);
        const StridePlan second{n, restored->position, after, Uneven::kAllow};
        for (uint64_t p : AllPositions(second)) ++seen[p];
        SCOPED_TRACE(testing::Message() << before << " -> " << after << " ranks after " << steps << " steps");
        EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(n));
      }
    }
  }
}

// ---- FILE.

TEST(AssignFilesTest, EveryFileOnceAndFilesMoveBetweenEpochs) {
  for (uint64_t files : {0u, 1u, 5u, 16u, 33u}) {
    for (int ranks = 1; ranks <= 8; ++ranks) {
      const auto a = AssignFiles(files, ranks, 3, 0), b = AssignFiles(files, ranks, 3, 1);
      std::vector<int> seen(files, 0);
      for (const auto& list : a) {
        for (uint64_t f : list) ++seen[f];
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(files));
      if (files >= 16 && ranks > 1) {
        EXPECT_NE(a, b) << files << " files, " << ranks << " ranks";
      }
    }
  }
}

TEST(AssignFilesTest, RecordCountsGoToTheLeastLoadedRank) {
  const std::vector<uint64_t> sizes = {100, 1, 1, 1, 1, 1, 1, 1, 50, 50};
  const auto lists = AssignFiles(sizes.size(), 2, 0, 0, sizes);
  std::vector<uint64_t> totals;
  for (const auto& list : lists) {
    uint64_t t = 0;
    for (uint64_t f : list) t += sizes[f];
    totals.push_back(t);
  }
  // Greedy balance: the difference is at most the largest file.
  EXPECT_LE(std::max(totals[0], totals[1]) - std::min(totals[0], totals[1]), 100u);
  EXPECT_EQ(totals[0] + totals[1], 207u);
  EXPECT_EQ(FileModeCount(totals, 0, Uneven::kDrop), std::min(totals[0], totals[1]));
  EXPECT_EQ(FileModeCount(totals, 0, Uneven::kPad), std::max(totals[0], totals[1]));
  EXPECT_EQ(FileModeCount(totals, 1, Uneven::kAllow), totals[1]);
}

// ---- Names and parsing.

TEST(ShardingPolicyTest, NamesRoundTripInAnyCase) {
  for (const char* name : {"OFF", "auto", "File", "DATA", "hint", "dynamic", "RECORD"}) {
    Result<ShardingPolicy> p = ParseShardingPolicy(name);
    ASSERT_TRUE(p.ok()) << p.status();
    std::string upper(name);
    for (char& c : upper) c = static_cast<char>(std::toupper(c));
    EXPECT_EQ(ShardingPolicyName(*p), upper);
  }
  EXPECT_EQ(ParseShardingPolicy("files").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseUneven("PAD").value(), Uneven::kPad);
  EXPECT_EQ(ParseUneven("even").status().code(), Code::kInvalidArgument);
  // TF's AutoShardPolicy values.
  EXPECT_EQ(static_cast<int>(ShardingPolicy::kOff), -1);
  EXPECT_EQ(static_cast<int>(ShardingPolicy::kHint), 3);
}

TEST(ShardingPolicyTest, AutoIsFileWithEnoughFilesElseData) {
  EXPECT_EQ(ResolvePolicy(ShardingPolicy::kAuto, 4, 4), ShardingPolicy::kFile);
  EXPECT_EQ(ResolvePolicy(ShardingPolicy::kAuto, 3, 4), ShardingPolicy::kData);
  EXPECT_EQ(ResolvePolicy(ShardingPolicy::kRecord, 1, 4), ShardingPolicy::kRecord);
}

TEST(DistributedStateTest, ForeignBytesAreDataLoss) {
  for (const char* bytes : {"", "sluice-dist v2 seed=1 epoch=0 policy=FILE world_size=1 position=0",
                            "sluice-dist v1 seed=1 epoch=0 policy=FILE world_size=1",
                            "sluice-dist v1 seed=x epoch=0 policy=FILE world_size=1 position=0",
                            "sluice-dist v1 seed=1 epoch=0 policy=FILES world_size=1 position=0"}) {
    EXPECT_EQ(DistributedState::Parse(bytes).status().code(), Code::kDataLoss) << bytes;
  }
}

TEST(DistributedStateTest, DynamicLeftRangesRoundTripAndBadOnesAreDataLoss) {
  DistributedState state{.seed = 3, .epoch = 1, .policy = ShardingPolicy::kDynamic, .world_size = 4, .position = 9};
  state.left = std::vector<std::pair<uint64_t, uint64_t>>{{0, 5}, {12, 13}, {40, 94}};
  EXPECT_EQ(state.Serialize(), "sluice-dist v1 seed=3 epoch=1 policy=DYNAMIC world_size=4 position=9 left=0-5,12-13,40-94");
  EXPECT_EQ(DistributedState::Parse(state.Serialize()).value(), state);
  state.left->clear();  // the epoch was read to its end
  EXPECT_EQ(DistributedState::Parse(state.Serialize()).value(), state);
  // Before DYNAMIC kept its positions: no left, the whole epoch.
  EXPECT_FALSE(
      DistributedState::Parse("sluice-dist v1 seed=3 epoch=1 policy=DYNAMIC world_size=4 position=9").value().left);
  for (const char* bad : {"left=5-5", "left=7-3", "left=0-5,4-9", "left=0-5,", "left=a-b", "left=0-5 left=6-7"}) {
    const Result<DistributedState> r =
        DistributedState::Parse(StrCat("sluice-dist v1 seed=3 epoch=1 policy=DYNAMIC world_size=4 position=9 ", bad));
    EXPECT_EQ(r.status().code(), Code::kDataLoss) << bad;
  }
}

}  // namespace
}  // namespace sluice::distribute
