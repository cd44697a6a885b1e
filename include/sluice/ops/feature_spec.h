// Feature configurations for tf.train.Example / SequenceExample parsing: the
// C++ forms of tf.io.FixedLenFeature, VarLenFeature, FixedLenSequenceFeature,
// SparseFeature and RaggedFeature, with TensorFlow's meaning and defaults.
//
// A FeatureSpec maps an output name to its configuration, like the `features`
// dict of tf.io.parse_example. For FixedLenFeature, FixedLenSequenceFeature
// and VarLenFeature the output name is also the feature key looked up in each
// record; SparseFeature and RaggedFeature name their keys themselves.
//
// Feature values in a record are one of three lists, and a config's dtype must
// match the list: kInt64 (Int64List), kFloat32 (FloatList) or kString
// (BytesList). Plain values; validated when a parser is created. The
// constructors take the fields in TensorFlow's argument order.
#ifndef SLUICE_OPS_FEATURE_SPEC_H_
#define SLUICE_OPS_FEATURE_SPEC_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/shape.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/composite_tensor.h"

namespace sluice::ops {

// A feature with exactly shape.num_elements() values in every record, parsed
// to a dense Tensor of `shape` ([batch] + shape for a batch).
struct FixedLenFeature {
  FixedLenFeature() = default;
  FixedLenFeature(TensorShape shape, DType dtype, std::optional<Tensor> default_value = std::nullopt)
      : shape(std::move(shape)), dtype(dtype), default_value(std::move(default_value)) {}

  TensorShape shape;
  DType dtype = DType::kInvalid;
  // Used where a record lacks the feature (or holds an empty Feature). Must
  // have dtype `dtype` and shape.num_elements() values (it is reshaped to
  // `shape`, as TF does). Absent: the feature is required.
  std::optional<Tensor> default_value;
};

// A feature with any number of values, parsed to a SparseTensor:
// single record: indices [n, 1], dense_shape [n];
// batch of B:    indices [n, 2] (record, position), dense_shape [B, max n].
struct VarLenFeature {
  VarLenFeature() = default;
  explicit VarLenFeature(DType dtype) : dtype(dtype) {}

  DType dtype = DType::kInvalid;
};

// A feature whose values are a sequence of rows of `shape`:
// - in a SequenceExample's feature_lists, one Feature per row. Output
//   [rows] + shape ([batch, max rows] + shape for a batch, zero-padded), and
//   the row counts in ParsedSequenceExample::lengths. A missing feature list
//   is an error unless allow_missing; default_value must be absent (TF's
//   feature_list_dense_defaults must be None).
// - in an Example, one Feature whose value count is a multiple of
//   shape.num_elements(). Requires allow_missing (TF: "FixedLenSequenceFeature
//   requires allow_missing to be True"); not allowed in a SequenceExample's
//   context. Output [rows] + shape, or [batch, max rows] + shape padded with
//   default_value (a scalar; 0 or "" when absent).
struct FixedLenSequenceFeature {
  FixedLenSequenceFeature() = default;
  FixedLenSequenceFeature(TensorShape shape, DType dtype, bool allow_missing = false,
                          std::optional<Tensor> default_value = std::nullopt)
      : shape(std::move(shape)), dtype(dtype), allow_missing(allow_missing), default_value(std::move(default_value)) {}

  TensorShape shape;
  DType dtype = DType::kInvalid;
  bool allow_missing = false;
  std::optional<Tensor> default_value;
};

// A SparseTensor assembled from an int64 index feature per dimension and a
// value feature, as tf.io.SparseFeature: in each record the i-th value sits at
// (index_key[0][i], index_key[1][i], ...). Output dense_shape is `size`
// ([batch] + size for a batch). Examples only (not SequenceExamples).
struct SparseFeature {
  SparseFeature() = default;
  SparseFeature(std::vector<std::string> index_key, std::string value_key, DType dtype, std::vector<int64_t> size,
                bool already_sorted = false)
      : index_key(std::move(index_key)),
        value_key(std::move(value_key)),
        dtype(dtype),
        size(std::move(size)),
        already_sorted(already_sorted) {}

  std::vector<std::string> index_key;  // one int64 feature per dimension
  std::string value_key;
  DType dtype = DType::kInvalid;
  std::vector<int64_t> size;           // one per index_key
  // False: indices are sorted into row-major order within each record (TF's
  // sparse_reorder). True: kept in record order.
  bool already_sorted = false;
};

// One partition of a RaggedFeature: how an int64 feature (or a constant) cuts
// the level below it into rows, as tf.io.RaggedFeature.RowSplits & co.
struct RaggedPartition {
  enum class Kind : uint8_t {
    kRowSplits,        // [0, e1, e2, ..., n]
    kRowLengths,       // [l0, l1, ...], sum n
    kRowStarts,        // [0, s1, ...]
    kRowLimits,        // [e0, e1, ..., n]
    kValueRowIds,      // row id of every item, non-decreasing; rows = last + 1
    kUniformRowLength  // every row has `length` items
  };
  Kind kind = Kind::kRowSplits;
  std::string key;     // the int64 feature; unused for kUniformRowLength
  int64_t length = 0;  // kUniformRowLength only

  static RaggedPartition RowSplits(std::string key) { return {Kind::kRowSplits, std::move(key), 0}; }
  static RaggedPartition RowLengths(std::string key) { return {Kind::kRowLengths, std::move(key), 0}; }
  static RaggedPartition RowStarts(std::string key) { return {Kind::kRowStarts, std::move(key), 0}; }
  static RaggedPartition RowLimits(std::string key) { return {Kind::kRowLimits, std::move(key), 0}; }
  static RaggedPartition ValueRowIds(std::string key) { return {Kind::kValueRowIds, std::move(key), 0}; }
  static RaggedPartition UniformRowLength(int64_t length) { return {Kind::kUniformRowLength, "", length}; }
};

// A RaggedTensor whose flat values come from `value_key` (the output name when
// empty) and whose ragged dimensions come from `partitions`, outermost first,
// as tf.io.RaggedFeature. A batch (or a SequenceExample feature list) adds an
// outer ragged dimension. Partitions are always validated (TF validates only
// with validate=True): inconsistent ones are InvalidArgument.
struct RaggedFeature {
  RaggedFeature() = default;
  explicit RaggedFeature(DType dtype, std::string value_key = "", std::vector<RaggedPartition> partitions = {},
                         DType row_splits_dtype = DType::kInt32)
      : dtype(dtype),
        value_key(std::move(value_key)),
        partitions(std::move(partitions)),
        row_splits_dtype(row_splits_dtype) {}

  DType dtype = DType::kInvalid;
  std::string value_key;
  std::vector<RaggedPartition> partitions;
  DType row_splits_dtype = DType::kInt32;  // kInt32 or kInt64, TF's default int32
};

using FeatureConfig =
    std::variant<FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, SparseFeature, RaggedFeature>;

// Output name -> configuration (TF's `features` dict).
using FeatureSpec = std::map<std::string, FeatureConfig, std::less<>>;

// One parsed output: a Tensor (FixedLen*, dense), a SparseTensor (VarLen,
// SparseFeature) or a RaggedTensor (RaggedFeature).
using FeatureValue = std::variant<Tensor, SparseTensor, RaggedTensor>;

// Output name -> value, for every entry of the FeatureSpec (and nothing else:
// keys only used to build a SparseFeature or RaggedFeature are not reported).
using ParsedFeatures = std::map<std::string, FeatureValue, std::less<>>;

}  // namespace sluice::ops

#endif  // SLUICE_OPS_FEATURE_SPEC_H_
