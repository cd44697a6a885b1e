// Private helpers of the image transforms: dtype dispatch over tf.image's
// real pixel types, and the seeded generator behind the random_* ops.
#ifndef SLUICE_SRC_IMAGE_INTERNAL_H_
#define SLUICE_SRC_IMAGE_INTERNAL_H_

#include <cstdint>
#include <string_view>
#include <utility>

#include "core/philox.h"  // header-only; shared with RandomShuffleQueue
#include "sluice/core/dtype.h"
#include "sluice/core/status.h"

namespace sluice::image::internal {

// Calls fn(T{}) with the C++ type of `dtype` for the real types tf.image
// computes on (uint8, int8, uint16, int16, int32, int64, float32, float64);
// InvalidArgument naming `op` for any other dtype.
template <class F>
Status DispatchReal(DType dtype, std::string_view op, F&& fn) {
  switch (dtype) {
    case DType::kUInt8: return fn(uint8_t{});
    case DType::kInt8: return fn(int8_t{});
    case DType::kUInt16: return fn(uint16_t{});
    case DType::kInt16: return fn(int16_t{});
    case DType::kInt32: return fn(int32_t{});
    case DType::kInt64: return fn(int64_t{});
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    default:
      return errors::InvalidArgument(op, ": unsupported image dtype ", DTypeName(dtype),
                                     " (expected uint8, int8, uint16, int16, int32, int64, "
                                     "float32 or float64)");
  }
}

// The seeded stream of every random_* op: Philox-4x32-10 keyed by the seed.
// Same seed, same draws; it does not reproduce TensorFlow's stream.
class Rng {
 public:
  explicit Rng(uint64_t seed) : philox_(seed, 0x5eed1a6e5eedULL) {}
  uint32_t Next32() { return philox_.Next(); }
  // Uniform in [0, 1) with 24 random bits.
  float UniformFloat() { return static_cast<float>(Next32() >> 8) * (1.0f / 16777216.0f); }
  // Uniform in [lo, hi).
  float Uniform(float lo, float hi) { return lo + (hi - lo) * UniformFloat(); }
  // Uniform integer in [0, n), n > 0 (64-bit multiply-shift: no modulo bias
  // worth speaking of for image sizes).
  uint32_t UniformInt(uint32_t n) {
    return static_cast<uint32_t>((uint64_t{Next32()} * n) >> 32);
  }
  bool Coin() { return (Next32() >> 31) != 0; }

 private:
  Philox4x32 philox_;
};

}  // namespace sluice::image::internal

#endif  // SLUICE_SRC_IMAGE_INTERNAL_H_
