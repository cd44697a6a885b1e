// IndexPermutation: a keyed bijection of [0, n) with O(1) state, for global
// shuffles (every record of a dataset once per epoch, in an order that a
// (seed, epoch) pair fixes) and, later, for splitting one permutation across
// machines (each computes Apply(i) for its own positions).
//
// Construction: a balanced Feistel network over the smallest domain [0, 4^h)
// with 4^h >= n (h >= 1), with kRounds rounds; round r maps (L, R) to
// (R, L xor F(k_r, R)), where F is a 64-bit mixer (splitmix64's finaliser)
// of R and the round key k_r, cut to h bits, and the round keys are derived
// from (seed, epoch). The network permutes [0, 4^h); values >= n are walked
// again through it ("cycle-walking") until they land in [0, n), which keeps
// the result a bijection of [0, n). As 4^h < 4n, a walk takes fewer than 4
// steps on average.
//
// State: n and the round keys (a few words), whatever n; Apply costs a few
// tens of nanoseconds and needs nothing of earlier calls, so a position in
// the permutation is just an integer.
//
// Not a cryptographic permutation: it is uniform enough for shuffling (the
// tests check that each value lands at each position about equally often
// over many keys), not against an adversary.
//
// Thread-safety: immutable after construction; Apply is thread-safe.
#ifndef SLUICE_DATA_INDEX_PERMUTATION_H_
#define SLUICE_DATA_INDEX_PERMUTATION_H_

#include <array>
#include <cstdint>

namespace sluice::data {

class IndexPermutation {
 public:
  static constexpr int kRounds = 6;

  // The permutation of [0, n) keyed by (seed, epoch). n == 0 is an empty
  // permutation (Apply must not be called). REQUIRES: n <= 2^62.
  IndexPermutation(uint64_t n, uint64_t seed, uint64_t epoch);

  // The value at position i. REQUIRES: i < size().
  uint64_t Apply(uint64_t i) const;

  uint64_t size() const { return n_; }

 private:
  uint64_t Round(uint64_t i) const;

  uint64_t n_;
  int half_bits_;       // h: each Feistel half holds h bits
  uint64_t half_mask_;  // 2^h - 1
  std::array<uint64_t, kRounds> keys_;
};

}  // namespace sluice::data

#endif  // SLUICE_DATA_INDEX_PERMUTATION_H_
