#include "sluice/data/index_permutation.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace sluice::data {
namespace {

// True when p maps [0, n) onto [0, n).
bool IsBijection(const IndexPermutation& p) {
  std::vector<bool> seen(p.size(), false);
  for (uint64_t i = 0; i < p.size(); ++i) {
    const uint64_t v = p.Apply(i);
    if (v >= p.size() || seen[v]) return false;
    seen[v] = true;
  }
  return true;
}

TEST(IndexPermutationTest, IsABijectionForManySizes) {
  std::vector<uint64_t> sizes = {0, 1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 64, 97, 128, 255, 256, 257, 1000, 1023,
                                 1024, 1025, 4093, 4096, 65521, 65536, 100003};
  for (uint64_t n = 0; n < 70; ++n) sizes.push_back(n);
  for (uint64_t n : sizes) {
    for (uint64_t seed : {0u, 1u, 12345u}) {
      IndexPermutation p(n, seed, /*epoch=*/seed % 3);
      EXPECT_EQ(p.size(), n);
      EXPECT_TRUE(IsBijection(p)) << "n=" << n << " seed=" << seed;
    }
  }
}

TEST(IndexPermutationTest, SameKeySameOrderOtherKeysOtherOrders) {
  const uint64_t n = 1000;
  IndexPermutation a(n, 7, 0), again(n, 7, 0), next_epoch(n, 7, 1), other_seed(n, 8, 0);
  int same_epoch_diff = 0, next_epoch_same = 0, other_seed_same = 0;
  for (uint64_t i = 0; i < n; ++i) {
    same_epoch_diff += a.Apply(i) != again.Apply(i);
    next_epoch_same += a.Apply(i) == next_epoch.Apply(i);
    other_seed_same += a.Apply(i) == other_seed.Apply(i);
  }
  EXPECT_EQ(same_epoch_diff, 0);
  // Two independent permutations agree on about one position.
  EXPECT_LT(next_epoch_same, 10);
  EXPECT_LT(other_seed_same, 10);
}

// Over many keys, each value lands at each position about equally often: a
// chi-square over the n x n table of counts. The seeds are fixed, so the
// statistic is the same in every run; the bound is far above the 99.9%
// quantile of a uniform table (about 1.23 * (n-1)^2 for these sizes).
TEST(IndexPermutationTest, PositionsAreUniformOverKeys) {
  for (uint64_t n : {5u, 8u, 13u}) {
    const int keys = 4000;
    std::vector<int> counts(n * n, 0);
    for (int k = 0; k < keys; ++k) {
      IndexPermutation p(n, /*seed=*/42, /*epoch=*/static_cast<uint64_t>(k));
      for (uint64_t i = 0; i < n; ++i) ++counts[i * n + p.Apply(i)];
    }
    const double expected = static_cast<double>(keys) / static_cast<double>(n);
    double chi2 = 0;
    for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
    const double dof = static_cast<double>((n - 1) * (n - 1));
    EXPECT_LT(chi2, 1.5 * dof + 30) << "n=" << n;
  }
}

// A shuffle should not keep neighbours together: the fraction of positions
// whose successor is mapped to the next value is about 1/n.
TEST(IndexPermutationTest, NeighboursAreSeparated) {
  const uint64_t n = 100000;
  IndexPermutation p(n, 3, 0);
  int adjacent = 0;
  for (uint64_t i = 0; i + 1 < n; ++i) adjacent += p.Apply(i + 1) == p.Apply(i) + 1;
  EXPECT_LT(adjacent, 20);
}

}  // namespace
}  // namespace sluice::data
