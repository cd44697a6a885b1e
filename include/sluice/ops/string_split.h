// String splitting into a SparseTensor, as TensorFlow's StringSplit
// (tf.compat.v1.string_split) and StringSplitV2 (tf.strings.split) ops.
//
// Both take a rank-1 string tensor of n strings and return
//   indices int64 [k, 2] (string, token), values string [k],
//   dense_shape int64 [2] = [n, most tokens in one string].
// Errors: InvalidArgument for input that is not a rank-1 string tensor.
// Thread-safe (pure functions).
#ifndef SLUICE_OPS_STRING_SPLIT_H_
#define SLUICE_OPS_STRING_SPLIT_H_

#include <cstdint>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/composite_tensor.h"

namespace sluice::ops {

// StringSplit: every character of `delimiter` separates tokens; an empty
// delimiter splits into single bytes. skip_empty drops empty tokens.
Result<SparseTensor> StringSplit(const Tensor& strings, std::string_view delimiter = " ", bool skip_empty = true);

// StringSplitV2, Python's str.split: a non-empty `sep` is one whole separator
// and empty tokens are kept ("1,,2" -> "1", "", "2"; "" -> ""); an empty `sep`
// splits on runs of ASCII whitespace and drops empty tokens. At most
// `maxsplit` splits per string when maxsplit >= 0; the rest stays in the last
// token.
Result<SparseTensor> StringSplitV2(const Tensor& strings, std::string_view sep = "", int64_t maxsplit = -1);

}  // namespace sluice::ops

#endif  // SLUICE_OPS_STRING_SPLIT_H_
