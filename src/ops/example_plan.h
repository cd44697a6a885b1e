// The compiled form of a FeatureSpec (private to the ops layer).
//
// Compiling splits the spec into "slots", one per feature key read from the
// records, and "outputs", one per spec entry. A slot says how a key's values
// are collected: straight into a dense tensor (FixedLenFeature), or appended
// to a buffer (everything else). SparseFeature and RaggedFeature outputs
// combine several slots; a key shared by several outputs is read once.
// Immutable after CompileSpec, so shared by every parse.
#ifndef SLUICE_SRC_OPS_EXAMPLE_PLAN_H_
#define SLUICE_SRC_OPS_EXAMPLE_PLAN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/example_view.h"
#include "sluice/ops/feature_spec.h"

namespace sluice::ops::internal {

// Finds a slot by key: open addressing over precomputed hashes. Built once,
// then read-only.
class KeyIndex {
 public:
  void Build(std::vector<std::string> keys);
  // The position of `key` in the keys given to Build, or -1.
  int Find(std::string_view key) const {
    if (entries_.empty()) return -1;
    const uint64_t h = Hash(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Entry& e = entries_[i];
      if (e.slot < 0) return -1;
      if (e.hash == h && keys_[e.slot] == key) return e.slot;
    }
  }
  static uint64_t Hash(std::string_view key);

 private:
  struct Entry {
    uint64_t hash = 0;
    int slot = -1;
  };
  std::vector<Entry> entries_;
  size_t mask_ = 0;
  std::vector<std::string> keys_;
};

enum class SlotKind : uint8_t {
  kDense,        // fixed count per record (Example) or per row (sequence)
  kDenseVarLen,  // Example FixedLenSequenceFeature: rows of `stride` values
  kSparse,       // VarLenFeature and SparseFeature keys
  kRagged,       // RaggedFeature values and partitions
};

struct Slot {
  std::string key;
  SlotKind kind = SlotKind::kSparse;
  DType dtype = DType::kInvalid;
  DType splits_dtype = DType::kInvalid;  // kRagged: for conflict checks
  TensorShape shape;    // kDense: the value (or row) shape; kDenseVarLen: the row shape
  int64_t stride = 1;   // shape.num_elements()
  // kDense in an Example: the default (reshaped to `shape`); invalid when the
  // feature is required. kDenseVarLen: the scalar padding value.
  Tensor default_value;
  bool allow_missing = false;  // sequence kDense
};

struct PartitionPlan {
  RaggedPartition::Kind kind = RaggedPartition::Kind::kRowSplits;
  int slot = -1;        // the partition's slot; -1 for kUniformRowLength
  int64_t length = 0;   // kUniformRowLength
};

enum class OutputKind : uint8_t { kDense, kVarLen, kSparseFeature, kRagged };

struct OutputPlan {
  std::string name;
  OutputKind kind = OutputKind::kDense;
  int slot = -1;                  // the dense/varlen slot, or the value slot
  // kSparseFeature
  std::vector<int> index_slots;
  std::vector<int64_t> size;
  bool already_sorted = false;
  // kRagged
  std::vector<PartitionPlan> partitions;
  DType splits_dtype = DType::kInt64;
};

struct FeaturesPlan {
  std::vector<Slot> slots;
  std::vector<OutputPlan> outputs;
  KeyIndex index;  // slot key -> slot
};

// Where a spec is used; each allows different feature kinds.
enum class SpecUse { kExample, kContext, kFeatureLists };

// InvalidArgument for an invalid or unsupported spec.
Result<FeaturesPlan> CompileSpec(const FeatureSpec& spec, SpecUse use);

// TensorFlow's name for a dtype in messages ("float", "int64", "string").
std::string_view TfTypeName(DType dtype);
// The dtype a Feature list kind holds.
DType KindDType(FeatureKind kind);

}  // namespace sluice::ops::internal

#endif  // SLUICE_SRC_OPS_EXAMPLE_PLAN_H_
