#include "sluice/ops/decode_raw.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "example_plan.h"

namespace sluice::ops {
namespace {

bool IsComplex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }

// Reverses the bytes of each `unit`-byte word in [p, p + n).
void SwapWords(char* p, size_t n, size_t unit) {
  for (size_t i = 0; i + unit <= n; i += unit) std::reverse(p + i, p + i + unit);
}

}  // namespace

Result<Tensor> DecodeRaw(const Tensor& bytes, DType out_type, bool little_endian,
                         std::optional<int64_t> fixed_length) {
  if (bytes.dtype() != DType::kString) {
    return errors::InvalidArgument("DecodeRaw needs a string tensor, not ", DTypeName(bytes.dtype()));
  }
  if (out_type == DType::kString || DTypeSize(out_type) == 0) {
    return errors::InvalidArgument("DecodeRaw cannot produce out_type ", DTypeName(out_type));
  }
  const auto elem = static_cast<int64_t>(DTypeSize(out_type));
  const std::string* in = bytes.data<std::string>();
  const int64_t n = bytes.num_elements();
  int64_t width = 0;  // bytes taken from each string
  if (fixed_length.has_value()) {
    if (*fixed_length < 0) return errors::InvalidArgument("fixed_length must be >= 0, not ", *fixed_length);
    if (*fixed_length % elem != 0) {
      return errors::InvalidArgument("fixed_length (", *fixed_length, ") must be a multiple of the size of out_type (",
                                     elem, ")");
    }
    width = *fixed_length;
  } else if (n > 0) {
    width = static_cast<int64_t>(in[0].size());
    for (int64_t i = 1; i < n; ++i) {
      if (static_cast<int64_t>(in[i].size()) != width) {
        return errors::InvalidArgument("DecodeRaw requires input strings to all be the same size, but element ",
                                       i, " has size ", in[i].size(), " != ", width);
      }
    }
    if (width % elem != 0) {
      return errors::InvalidArgument("Input to DecodeRaw has length ", width, " that is not a multiple of ", elem,
                                     ", the size of ", internal::TfTypeName(out_type));
    }
  }
  TensorShape shape = bytes.shape();
  shape.AddDim(width / elem);
  Tensor out(out_type, std::move(shape));
  auto* dst = static_cast<char*>(out.raw_data());
  const bool swap = little_endian != (std::endian::native == std::endian::little);
  const size_t unit = IsComplex(out_type) ? static_cast<size_t>(elem) / 2 : static_cast<size_t>(elem);
  for (int64_t i = 0; i < n; ++i) {
    const size_t take = std::min(in[i].size(), static_cast<size_t>(width));
    if (take > 0) std::memcpy(dst, in[i].data(), take);
    if (take < static_cast<size_t>(width)) std::memset(dst + take, 0, static_cast<size_t>(width) - take);
    if (swap && unit > 1) SwapWords(dst, static_cast<size_t>(width), unit);
    dst += width;
  }
  return out;
}

}  // namespace sluice::ops
