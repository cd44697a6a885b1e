// DecodeRaw: tf.io.decode_raw. Reinterprets the bytes of each string as an
// array of numbers.
//
// Output shape: bytes.shape + [n], n = (string length or fixed_length) /
// sizeof(out_type). Without fixed_length every string must have the same
// length, a multiple of the element size; with it (TF's DecodePaddedRaw) each
// string is cut or zero-padded to fixed_length bytes.
// little_endian says how the bytes are stored; values are byte-swapped when
// that differs from this machine (complex numbers part by part).
//
// Errors (InvalidArgument): non-string input; out_type kString/kInvalid;
//   "Input to DecodeRaw has length 5 that is not a multiple of 4, the size of
//    float"; "DecodeRaw requires input strings to all be the same size, but
//    element 1 has size 5 != 4"; "fixed_length (5) must be a multiple of the
//    size of out_type (4)"; negative fixed_length.
#ifndef SLUICE_OPS_DECODE_RAW_H_
#define SLUICE_OPS_DECODE_RAW_H_

#include <cstdint>
#include <optional>

#include "sluice/core/dtype.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::ops {

// Thread-safe (pure function).
Result<Tensor> DecodeRaw(const Tensor& bytes, DType out_type, bool little_endian = true,
                         std::optional<int64_t> fixed_length = std::nullopt);

}  // namespace sluice::ops

#endif  // SLUICE_OPS_DECODE_RAW_H_
