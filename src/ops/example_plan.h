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
#include <cstring>
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
//
// Hash and the key comparison are inline, with fixed-size (overlapping)
// loads instead of memcpy/memcmp of a variable length: two libc calls per
// key were a visible part of a one-record parse
// (docs/perf/example-parsing.md).
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
      if (e.hash == h) {
        const std::string& k = keys_[static_cast<size_t>(e.slot)];
        if (k.size() == key.size() && Equal(k.data(), key.data(), key.size())) return e.slot;
      }
    }
  }
  static uint64_t Hash(std::string_view key) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
    const char* p = key.data();
    size_t n = key.size();
    uint64_t h = 0xCBF29CE484222325ull ^ (n * kMul);
    uint64_t tail = 0;
    if (n >= 8) {
      for (; n > 8; p += 8, n -= 8) {
        h = (h ^ Load64(p)) * kMul;
        h ^= h >> 32;
      }
      tail = Load64(key.data() + key.size() - 8);  // the last 1-8 bytes, overlapping
    } else if (n >= 4) {
      tail = Load32(p) | (uint64_t{Load32(p + n - 4)} << 32);
    } else if (n > 0) {
      tail = static_cast<uint8_t>(p[0]) | (uint64_t{static_cast<uint8_t>(p[n / 2])} << 8) |
             (uint64_t{static_cast<uint8_t>(p[n - 1])} << 16);
    }
    h = (h ^ tail) * kMul;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
  }

 private:
  static uint64_t Load64(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static uint32_t Load32(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  // a[0, n) == b[0, n).
  static bool Equal(const char* a, const char* b, size_t n) {
    if (n >= 8) {
      for (size_t i = 0; i + 8 < n; i += 8) {
        if (Load64(a + i) != Load64(b + i)) return false;
      }
      return Load64(a + n - 8) == Load64(b + n - 8);
    }
    if (n >= 4) return Load32(a) == Load32(b) && Load32(a + n - 4) == Load32(b + n - 4);
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

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
