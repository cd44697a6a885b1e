// Element-level array ops of TF's graph: tf.cast, tf.reshape,
// tf.strided_slice (begin/end/shrink-axis masks), tf.transpose and
// tf.one_hot, on one tensor. The native map functions (sluice/data/
// native_ops.h) run them per element; results equal TF's exactly.
//
// Plain functions: thread-safe, inputs never written. Reshape shares the
// input's buffer; the others copy.
#ifndef SLUICE_OPS_ARRAY_OPS_H_
#define SLUICE_OPS_ARRAY_OPS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::ops {

// tf.cast between bool, the integer types and float32/float64: C++'s
// conversion (float -> int truncates toward zero, as TF; a float out of the
// integer's range is undefined in TF and saturates here), x != 0 for bool.
// Returns `x` itself when the dtype already matches.
// Errors: InvalidArgument for another dtype (string, complex, half types).
Result<Tensor> Cast(const Tensor& x, DType dtype);

// tf.reshape: at most one dimension may be -1 (inferred).
// Errors: InvalidArgument when the sizes do not match ("Input to reshape is a
// tensor with 12 values, but the requested shape has 10"), for two -1s, or a
// dimension < -1.
Result<Tensor> Reshape(const Tensor& x, std::span<const int64_t> shape);

// tf.strided_slice with one begin/end/stride per dimension of `x` (no
// ellipsis or new-axis masks). Bit i of begin_mask / end_mask ignores begin[i]
// / end[i] (the full range); of shrink_axis_mask takes the single index
// begin[i] and drops dimension i. Negative indices count from the end; out of
// range ones are clamped (TF's rules).
struct StridedSliceSpec {
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::vector<int64_t> strides;  // empty: all 1
  int64_t begin_mask = 0;
  int64_t end_mask = 0;
  int64_t shrink_axis_mask = 0;
};
// The output shape of StridedSlice for an input of `shape`, and per kept or
// shrunk dimension its (start, stride, length).
struct StridedSliceDims {
  std::vector<int64_t> start, stride, length;
  std::vector<int64_t> out_shape;
};
// Errors (InvalidArgument): sizes of begin/end/strides other than the rank; a
// zero stride ("strides[0] must be non-zero"); a shrunk index out of range
// ("slice index 5 of dimension 0 out of bounds.").
Result<StridedSliceDims> ResolveStridedSlice(std::span<const int64_t> shape, const StridedSliceSpec& spec);
Result<Tensor> StridedSlice(const Tensor& x, const StridedSliceSpec& spec);

// tf.transpose(x, perm). Errors: InvalidArgument unless perm is a
// permutation of 0 .. rank - 1.
Result<Tensor> Transpose(const Tensor& x, std::span<const int64_t> perm);

// tf.one_hot(indices, depth, on_value, off_value) as float32: shape
// indices.shape + [depth]; an index outside [0, depth) gives a row of
// off_value. `indices`: uint8, int32 or int64.
// Errors: InvalidArgument for depth < 0 or another dtype.
Result<Tensor> OneHot(const Tensor& indices, int64_t depth, float on_value = 1.0f, float off_value = 0.0f);

}  // namespace sluice::ops

#endif  // SLUICE_OPS_ARRAY_OPS_H_
