// SparseTensor and RaggedTensor: the composite results of Example parsing and
// string splitting, laid out as TensorFlow lays them out, so that the Python
// layer can hand their component tensors to tf.SparseTensor /
// tf.RaggedTensor.from_nested_row_splits (or numpy) without conversion.
//
// Plain values: not synchronised; the tensors inside share buffers when
// copied, like any Tensor.
#ifndef SLUICE_OPS_COMPOSITE_TENSOR_H_
#define SLUICE_OPS_COMPOSITE_TENSOR_H_

#include <string>
#include <vector>

#include "sluice/core/tensor.h"

namespace sluice::ops {

// tf.SparseTensor: `values[i]` sits at `indices[i]` of a dense tensor of
// shape `dense_shape`.
//   indices:     int64 [n, rank], in row-major order unless stated otherwise
//   values:      [n] of the feature's dtype
//   dense_shape: int64 [rank]
struct SparseTensor {
  Tensor indices;
  Tensor values;
  Tensor dense_shape;
};

// tf.RaggedTensor in its nested-row-splits form: `values` is the flat
// innermost data; nested_row_splits[0] partitions the outermost dimension,
// and each following splits vector partitions the rows of the one before.
// Every splits vector starts at 0, never decreases, and ends at the number of
// items of the next level (the last one ends at values.dim(0)).
//
// With no splits at all (a RaggedFeature without partitions, parsed from a
// single Example) the value is just the 1-D `values`; TensorFlow returns a
// plain Tensor there, and the Python layer should too.
struct RaggedTensor {
  Tensor values;
  std::vector<Tensor> nested_row_splits;  // int32 or int64, outermost first
};

}  // namespace sluice::ops

#endif  // SLUICE_OPS_COMPOSITE_TENSOR_H_
