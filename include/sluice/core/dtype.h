// DType: the element types a Tensor can hold, numbered as TensorFlow's
// DataType enum (types.proto), so that a dtype round-trips with TF.
//
// Half and bfloat16 are stored as their 16-bit patterns (sluice does no
// arithmetic on them); string elements are std::string (bytes, not text).
#ifndef SLUICE_CORE_DTYPE_H_
#define SLUICE_CORE_DTYPE_H_

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

enum class DType : uint8_t {
  kInvalid = 0,
  kFloat32 = 1,
  kFloat64 = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kString = 7,
  kComplex64 = 8,
  kInt64 = 9,
  kBool = 10,
  kBFloat16 = 14,
  kUInt16 = 17,
  kComplex128 = 18,
  kFloat16 = 19,
  kUInt32 = 22,
  kUInt64 = 23,
};

// 16-bit floating-point storage types: the bit pattern only.
struct float16_t {
  uint16_t bits;
};
struct bfloat16_t {
  uint16_t bits;
};

namespace internal {
// Bytes per element indexed by DType's value; 0 where there is no dtype.
// Inline, not a search of dtype.cc's table: it is on every tensor's hot path
// (Slice, TotalBytes: a queue's single dequeue). dtype.cc checks it against
// that table at compile time.
inline constexpr uint8_t kDTypeSizes[24] = {0, 4, 8, 4, 1, 2, 1, sizeof(std::string), 8, 8, 1, 0,
                                            0, 0, 2, 0, 0, 2, 16, 2, 0, 0, 4, 8};
}  // namespace internal

// Bytes per element; sizeof(std::string) for kString; 0 for kInvalid.
inline size_t DTypeSize(DType dtype) {
  const auto i = static_cast<size_t>(dtype);
  return i < sizeof(internal::kDTypeSizes) ? internal::kDTypeSizes[i] : 0;
}
// TensorFlow's Python names: "float32", "int64", "string", "bool", "float16",
// "bfloat16", "complex64", ...
std::string_view DTypeName(DType dtype);
// Inverse of DTypeName; also accepts numpy aliases ("half", "double", "float",
// "bytes", "str"). nullopt for an unknown name.
std::optional<DType> DTypeFromName(std::string_view name);
// True for every valid dtype except kString (plain bytes that may be memcpy'd).
bool IsPlainDType(DType dtype);

// Maps a C++ type to its DType: DTypeOf<float>() == DType::kFloat32.
template <class T>
constexpr DType DTypeOf();
#define SLUICE_DTYPE_OF(T, D) \
  template <>                 \
  constexpr DType DTypeOf<T>() { return DType::D; }
SLUICE_DTYPE_OF(float, kFloat32)
SLUICE_DTYPE_OF(double, kFloat64)
SLUICE_DTYPE_OF(int32_t, kInt32)
SLUICE_DTYPE_OF(uint8_t, kUInt8)
SLUICE_DTYPE_OF(int16_t, kInt16)
SLUICE_DTYPE_OF(int8_t, kInt8)
SLUICE_DTYPE_OF(std::string, kString)
SLUICE_DTYPE_OF(std::complex<float>, kComplex64)
SLUICE_DTYPE_OF(int64_t, kInt64)
SLUICE_DTYPE_OF(bool, kBool)
SLUICE_DTYPE_OF(bfloat16_t, kBFloat16)
SLUICE_DTYPE_OF(uint16_t, kUInt16)
SLUICE_DTYPE_OF(std::complex<double>, kComplex128)
SLUICE_DTYPE_OF(float16_t, kFloat16)
SLUICE_DTYPE_OF(uint32_t, kUInt32)
SLUICE_DTYPE_OF(uint64_t, kUInt64)
#undef SLUICE_DTYPE_OF

}  // namespace sluice

#endif  // SLUICE_CORE_DTYPE_H_
