// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11), the counter-based generator TensorFlow's RandomShuffleQueue
// draws from, with its one-sample-at-a-time adapter. Written here because it
// is tiny and the same seeds must give the same stream as TensorFlow's.
// Not synchronised.
#ifndef SLUICE_CORE_PHILOX_H_
#define SLUICE_CORE_PHILOX_H_

#include <array>
#include <cstdint>

namespace sluice {

class Philox4x32 {
 public:
  // The key takes `seed`; the high half of the counter takes `seed2`.
  Philox4x32(uint64_t seed, uint64_t seed2) {
    key_[0] = static_cast<uint32_t>(seed);
    key_[1] = static_cast<uint32_t>(seed >> 32);
    counter_[2] = static_cast<uint32_t>(seed2);
    counter_[3] = static_cast<uint32_t>(seed2 >> 32);
  }

  // The next 32-bit sample.
  uint32_t Next() {
    if (used_ == 4) {
      block_ = NextBlock();
      used_ = 0;
    }
    return block_[used_++];
  }

  // Advances the counter by `count` blocks (4 samples each) without
  // computing them, as TF's PhiloxRandom::Skip: the count is added to the
  // low 64 bits of the counter, carrying into the high 64. Samples of the
  // current block not yet taken are still returned first.
  void Skip(uint64_t count) {
    const uint64_t low = (uint64_t{counter_[1]} << 32 | counter_[0]) + count;
    const bool carry = low < count;
    counter_[0] = static_cast<uint32_t>(low);
    counter_[1] = static_cast<uint32_t>(low >> 32);
    if (carry && ++counter_[2] == 0) ++counter_[3];
  }

 private:
  static constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;
  static constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;

  std::array<uint32_t, 4> NextBlock() {
    std::array<uint32_t, 4> c = counter_;
    std::array<uint32_t, 2> k = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k[0] += kW0;
        k[1] += kW1;
      }
      const uint64_t p0 = uint64_t{kM0} * c[0];
      const uint64_t p1 = uint64_t{kM1} * c[2];
      c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    }
    // 128-bit counter increment.
    for (uint32_t& word : counter_) {
      if (++word != 0) break;
    }
    return c;
  }

  std::array<uint32_t, 4> counter_{};
  std::array<uint32_t, 2> key_{};
  std::array<uint32_t, 4> block_{};
  int used_ = 4;
};

}  // namespace sluice

#endif  // SLUICE_CORE_PHILOX_H_
