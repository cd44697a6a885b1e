// Batching SparseTensors as TensorFlow's tf.train batchers do.
//
// TF's batch/shuffle_batch (and their _join and maybe_ forms) accept
// SparseTensors, e.g. a VarLenFeature of parse_single_example, and return ONE
// batched SparseTensor per sparse input: each example's indices with the
// example's position in the batch prepended, the values concatenated in
// batch order, and a dense_shape of [batch_size, max of each dimension over
// the batch]. TF does it by storing each SparseTensor in a SparseTensorsMap
// and enqueueing its int64 handle; the batch's handles are turned back into
// one SparseTensor by take_many_sparse_from_tensors_map.
//
// sluice has no resource map: a stage packs each SparseTensor's three parts
// into one string scalar (the format below), which a queue stores and batches
// like any string; UnpackSparseBatch turns a batch of them into the batched
// SparseTensor, with TakeManySparseFromTensorsMap's semantics and messages.
//
//   auto parsed = MapParseExample(read, parser, 1);     // {k/dense_shape, k/indices, k/values, label}
//   auto packed = MapPackSparse(*parsed, {{1, 2, 0}});  // {k (string scalar), label}
//   ... Batch(packed->producer, ...) ... dequeue -> {k: string [batch], label: [batch]}
//   ops::SparseTensor k = *UnpackSparseBatch(batch[0]);
//
// Thread-safety: every function here is a pure function of its arguments;
// MapPackSparse's producer is as thread-safe as its input (see
// producer_ops.h) and keeps no state.
#ifndef SLUICE_PIPELINE_SPARSE_BATCH_H_
#define SLUICE_PIPELINE_SPARSE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/composite_tensor.h"
#include "sluice/pipeline/producer_ops.h"

namespace sluice::train {

// ---- The packed format ---------------------------------------------------------
//
// One SparseTensor of rank r with n values, in one string (little-endian;
// an in-process format: queue elements, never files):
//
//   offset 0   u8       kPackedSparseVersion
//   offset 1   u8       values' dtype (DType, TF's DataType number)
//   offset 2   u16      r
//   offset 4   u32      0 (reserved; keeps the int64 fields 8-byte aligned)
//   offset 8   i64[r]   dense_shape
//              i64      n
//              i64[n*r] indices, row-major
//              values:  numbers: n * DTypeSize(dtype) bytes (bool: 1 byte,
//                       0 or 1; float16/bfloat16: their bit patterns);
//                       strings: n times (u64 length, then its bytes).
//
// Nothing follows the values. The python package writes the same bytes
// (python/sluice/_sparse_batch.py); a test checks that the two agree.
inline constexpr uint8_t kPackedSparseVersion = 1;
inline constexpr size_t kPackedSparseHeaderBytes = 8;

// Packs one SparseTensor: `indices` int64 [n, r], `values` [n] of any dtype,
// `dense_shape` int64 [r] (TF's add_sparse_to_tensors_map checks: the parts'
// ranks and sizes agree; the indices are not checked against dense_shape).
// Errors: InvalidArgument naming the mismatch (TF's SparseTensor::Create
// messages).
Result<std::string> PackSparse(const Tensor& indices, const Tensor& values, const Tensor& dense_shape);

// Packs each row of a batch of SparseTensors (TF's
// add_many_sparse_to_tensors_map, for enqueue_many): the parts describe a
// SparseTensor of rank r >= 2 whose dimension 0 is the batch; the result is a
// string vector [dense_shape[0]], row b packing the values whose index starts
// with b, the index without its first entry, and dense_shape[1:] (a row
// without values packs an empty SparseTensor of that shape).
// Errors (InvalidArgument): the parts' shapes disagree; rank < 2 ("Rank of
// input SparseTensor should be > 1, but saw rank: r"); an index out of
// bounds, out of order or repeated (TF's IndicesValid messages).
Result<Tensor> PackSparseRows(const Tensor& indices, const Tensor& values, const Tensor& dense_shape);

// take_many_sparse_from_tensors_map of a batch of N packed SparseTensors of
// rank r each: indices int64 [total n, 1 + r] (example i's indices with i
// prepended, in batch order), values [total n] (concatenated in batch
// order), dense_shape int64 [1 + r] = [N, max over the batch of each
// dimension]. `dtype`: the values' expected dtype; nullopt: the first
// example's.
// Errors (InvalidArgument): N == 0 (TF's "Must have at least 1 serialized
// SparseTensor, but input matrix has 0 rows"); a corrupt string ("Corrupt
// packed SparseTensor[i]: ..."); a dtype other than `dtype` ("Requested
// SparseTensor of type float32 but SparseTensor[i].values.dtype() ==
// int64"); a rank other than the first example's ("Inconsistent rank across
// SparseTensors: rank prior to SparseTensor[i] was: 2 but rank of
// SparseTensor[i] is: 3"). ResourceExhausted if the total does not fit.
Result<ops::SparseTensor> UnpackSparseBatch(std::span<const std::string_view> packed,
                                            std::optional<DType> dtype = std::nullopt);
// As above, for a string vector (a dequeued batch's packed component).
// InvalidArgument if `packed` is not a string vector.
Result<ops::SparseTensor> UnpackSparseBatch(const Tensor& packed, std::optional<DType> dtype = std::nullopt);

// ---- The producer stage -----------------------------------------------------------

// Where one SparseTensor's parts sit in an element: component indices.
struct SparseComponents {
  size_t indices = 0;
  size_t values = 0;
  size_t dense_shape = 0;
};

// Packs SparseTensors of each element (a stage, as those of producer_ops.h):
// each entry of `sparse` names the three components of one SparseTensor,
// which become one kString scalar component at the position of the first of
// the three (the lowest index); the other two are dropped and the remaining
// components keep their order. Its name, when the input has names: the
// indices component's name less a trailing "/indices" (MapParseExample's
// "<key>/indices" -> "<key>").
// enqueue_many: the input yields batches (TypedProducer: shapes are a row's),
// each SparseTensor's dimension 0 is the batch, and PackSparseRows packs one
// string per row: a string vector whose length must match the other
// components' rows (the batcher's enqueue checks).
// Errors at build time (InvalidArgument): the input producer is empty;
// `sparse` is empty; a component out of range or named twice; indices or
// dense_shape not int64; and, where shapes are known (not with
// enqueue_many), indices not of rank 2, values or dense_shape not of rank 1,
// or their rank dimensions disagreeing. Per call: the input's errors;
// PackSparse's / PackSparseRows' errors.
Result<TypedProducer> MapPackSparse(TypedProducer input, std::vector<SparseComponents> sparse,
                                    bool enqueue_many = false);

}  // namespace sluice::train

#endif  // SLUICE_PIPELINE_SPARSE_BATCH_H_
