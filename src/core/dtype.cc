#include "sluice/core/dtype.h"

#include <array>
#include <utility>

namespace sluice {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, 16> kInfos = {{
    {DType::kFloat32, "float32", 4},
    {DType::kFloat64, "float64", 8},
    {DType::kInt32, "int32", 4},
    {DType::kUInt8, "uint8", 1},
    {DType::kInt16, "int16", 2},
    {DType::kInt8, "int8", 1},
    {DType::kString, "string", sizeof(std::string)},
    {DType::kComplex64, "complex64", 8},
    {DType::kInt64, "int64", 8},
    {DType::kBool, "bool", 1},
    {DType::kBFloat16, "bfloat16", 2},
    {DType::kUInt16, "uint16", 2},
    {DType::kComplex128, "complex128", 16},
    {DType::kFloat16, "float16", 2},
    {DType::kUInt32, "uint32", 4},
    {DType::kUInt64, "uint64", 8},
}};

const DTypeInfo* Find(DType dtype) {
  for (const auto& info : kInfos) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

// The inline table of dtype.h agrees with kInfos.
constexpr bool InlineSizesMatch() {
  size_t listed = 0;
  for (size_t i = 0; i < sizeof(internal::kDTypeSizes); ++i) listed += internal::kDTypeSizes[i] != 0;
  if (listed != kInfos.size()) return false;
  for (const auto& info : kInfos) {
    const auto i = static_cast<size_t>(info.dtype);
    if (i >= sizeof(internal::kDTypeSizes) || internal::kDTypeSizes[i] != info.size) return false;
  }
  return true;
}
static_assert(InlineSizesMatch(), "dtype.h's kDTypeSizes disagrees with kInfos");

std::string_view DTypeName(DType dtype) {
  const DTypeInfo* info = Find(dtype);
  return info ? info->name : "invalid";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const auto& info : kInfos) {
    if (info.name == name) return info.dtype;
  }
  static constexpr std::pair<std::string_view, DType> kAliases[] = {
      {"half", DType::kFloat16},   {"float", DType::kFloat32}, {"double", DType::kFloat64},
      {"bytes", DType::kString},   {"str", DType::kString},    {"bool_", DType::kBool},
      {"complex", DType::kComplex128},
  };
  for (const auto& [alias, dtype] : kAliases) {
    if (alias == name) return dtype;
  }
  return std::nullopt;
}

bool IsPlainDType(DType dtype) { return dtype != DType::kString && Find(dtype) != nullptr; }

}  // namespace sluice
