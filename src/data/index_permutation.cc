// IndexPermutation: a Feistel network with cycle-walking (see the header).
#include "sluice/data/index_permutation.h"

#include <cassert>

namespace sluice::data {
namespace {

// splitmix64's finaliser: every input bit flips each output bit with
// probability about 1/2.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

IndexPermutation::IndexPermutation(uint64_t n, uint64_t seed, uint64_t epoch) : n_(n) {
  assert(n <= (uint64_t{1} << 62));
  half_bits_ = 1;
  while (half_bits_ < 31 && (uint64_t{1} << (2 * half_bits_)) < n) ++half_bits_;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  // Seed and epoch go through the mixer separately so that nearby pairs
  // ((s, e + 1) and (s + 1, e)) give unrelated keys.
  const uint64_t base = Mix(Mix(seed ^ 0x9e3779b97f4a7c15ULL) + epoch);
  for (int r = 0; r < kRounds; ++r) keys_[r] = Mix(base + 0x632be59bd9b4e019ULL * static_cast<uint64_t>(r + 1));
}

uint64_t IndexPermutation::Round(uint64_t i) const {
  uint64_t left = i >> half_bits_, right = i & half_mask_;
  for (int r = 0; r < kRounds; ++r) {
    const uint64_t f = Mix(right ^ keys_[r]) & half_mask_;
    const uint64_t next_right = left ^ f;
    left = right;
    right = next_right;
  }
  return (left << half_bits_) | right;
}

uint64_t IndexPermutation::Apply(uint64_t i) const {
  assert(i < n_);
  // Cycle-walking: the network permutes [0, 4^h) and i < n, so following
  // its cycle from i reaches a value below n again.
  do {
    i = Round(i);
  } while (i >= n_);
  return i;
}

}  // namespace sluice::data
