#include "example_plan.h"

#include <cstring>
#include <map>
#include <type_traits>
#include <utility>

namespace sluice::ops::internal {

void KeyIndex::Build(std::vector<std::string> keys) {
  keys_ = std::move(keys);
  entries_.clear();
  if (keys_.empty()) return;
  size_t cap = 4;
  while (cap < 2 * keys_.size()) cap *= 2;
  entries_.assign(cap, Entry{});
  mask_ = cap - 1;
  for (size_t s = 0; s < keys_.size(); ++s) {
    const uint64_t h = Hash(keys_[s]);
    size_t i = h & mask_;
    while (entries_[i].slot >= 0) i = (i + 1) & mask_;
    entries_[i] = Entry{h, static_cast<int>(s)};
  }
}

std::string_view TfTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kFloat16:
      return "half";
    default:
      return DTypeName(dtype);
  }
}

DType KindDType(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::kBytes:
      return DType::kString;
    case FeatureKind::kFloat:
      return DType::kFloat32;
    case FeatureKind::kInt64:
      return DType::kInt64;
    case FeatureKind::kNone:
      break;
  }
  return DType::kInvalid;
}

namespace {

bool IsFeatureDType(DType d) { return d == DType::kInt64 || d == DType::kFloat32 || d == DType::kString; }

Status CheckDType(DType dtype, std::string_view name) {
  if (dtype == DType::kInvalid) return errors::InvalidArgument("Missing type for feature ", name, ".");
  if (!IsFeatureDType(dtype)) return errors::InvalidArgument("Invalid config dtype: ", TfTypeName(dtype));
  return Status();
}

// A zero (or empty string) scalar of `dtype`.
Tensor ZeroScalar(DType dtype) { return Tensor::Zeros(dtype, TensorShape{}); }

// Slots by key, with TensorFlow's rules for a key requested more than once.
class SlotTable {
 public:
  explicit SlotTable(FeaturesPlan* plan) : plan_(plan) {}

  Result<int> AddDense(Slot slot) {
    SLUICE_RETURN_IF_ERROR(CheckFree(slot.key, SlotKind::kDense));
    return Insert(std::move(slot));
  }

  Result<int> AddSparse(const std::string& key, DType dtype) {
    return AddShared(key, SlotKind::kSparse, dtype, DType::kInvalid);
  }

  Result<int> AddRagged(const std::string& key, DType dtype, DType splits_dtype) {
    return AddShared(key, SlotKind::kRagged, dtype, splits_dtype);
  }

 private:
  // A sparse or ragged slot, which several outputs may share (a VarLen key
  // also used by a SparseFeature, a ragged partition key used twice): the
  // existing slot of `key` if its kind and types agree, else a new one.
  Result<int> AddShared(const std::string& key, SlotKind kind, DType dtype, DType splits_dtype) {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) {
      Slot s;
      s.key = key;
      s.kind = kind;
      s.dtype = dtype;
      if (kind == SlotKind::kRagged) s.splits_dtype = splits_dtype;
      return Insert(std::move(s));
    }
    const Slot& s = plan_->slots[it->second];
    if (s.kind != kind) return Intersect(s.kind, kind, key);
    if (s.dtype != dtype) {
      return errors::InvalidArgument("Conflicting type ", TfTypeName(s.dtype), " vs ", TfTypeName(dtype),
                                     " for feature ", key, ".");
    }
    if (kind == SlotKind::kRagged && s.splits_dtype != splits_dtype) {
      return errors::InvalidArgument("Conflicting partition type ", TfTypeName(s.splits_dtype), " vs ",
                                     TfTypeName(splits_dtype), " for feature ", key, ".");
    }
    return it->second;
  }

  // TF: "Dense and sparse keys must not intersect; intersection: {'k'}".
  static Status Intersect(SlotKind a, SlotKind b, const std::string& key) {
    auto is_dense = [](SlotKind k) { return k == SlotKind::kDense || k == SlotKind::kDenseVarLen; };
    std::string_view pair = "Ragged and sparse";
    if (is_dense(a) || is_dense(b)) {
      pair = (is_dense(a) ? b : a) == SlotKind::kSparse ? "Dense and sparse" : "Dense and ragged";
    }
    return errors::InvalidArgument(pair, " keys must not intersect; intersection: {'", key, "'}");
  }

  Status CheckFree(const std::string& key, SlotKind kind) {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return Status();
    const SlotKind other = plan_->slots[it->second].kind;
    if (other == SlotKind::kDense || other == SlotKind::kDenseVarLen) {
      return errors::InvalidArgument("Duplicate dense feature ", key, ".");
    }
    return Intersect(kind, other, key);
  }

  int Insert(Slot slot) {
    const int id = static_cast<int>(plan_->slots.size());
    by_key_.emplace(slot.key, id);
    plan_->slots.push_back(std::move(slot));
    return id;
  }

  FeaturesPlan* plan_;
  std::map<std::string, int, std::less<>> by_key_;
};

std::string_view UseName(SpecUse use) {
  switch (use) {
    case SpecUse::kExample:
      return "Example";
    case SpecUse::kContext:
      return "context";
    case SpecUse::kFeatureLists:
      return "sequence";
  }
  return "";
}

Status Unsupported(std::string_view kind, SpecUse use, const std::string& name) {
  return errors::InvalidArgument("Unsupported ", kind, " for ", UseName(use), " feature ", name, ".");
}

Status AddFixedLen(const std::string& name, const FixedLenFeature& f, SpecUse use, SlotTable* table,
                   FeaturesPlan* plan) {
  if (use == SpecUse::kFeatureLists) return Unsupported("FixedLenFeature", use, name);
  SLUICE_RETURN_IF_ERROR(CheckDType(f.dtype, name));
  Slot s;
  s.key = name;
  s.kind = SlotKind::kDense;
  s.dtype = f.dtype;
  s.shape = f.shape;
  s.stride = f.shape.num_elements();
  if (f.default_value.has_value()) {
    const Tensor& d = *f.default_value;
    if (d.dtype() != f.dtype) {
      return errors::InvalidArgument("Default value for feature ", name, " has dtype ", TfTypeName(d.dtype()),
                                     " but the feature is ", TfTypeName(f.dtype), ".");
    }
    if (d.num_elements() != s.stride) {
      return errors::InvalidArgument("Default value for feature ", name, " has ", d.num_elements(),
                                     " values, but shape ", f.shape.DebugString(), " needs ", s.stride, ".");
    }
    // Reshaped to `shape`, as TF does.
    s.default_value = Tensor(f.dtype, f.shape);
    d.CopyTo(s.default_value);
  }
  SLUICE_ASSIGN_OR_RETURN(int slot, table->AddDense(std::move(s)));
  OutputPlan out;
  out.name = name;
  out.kind = OutputKind::kDense;
  out.slot = slot;
  plan->outputs.push_back(std::move(out));
  return Status();
}

Status AddFixedLenSequence(const std::string& name, const FixedLenSequenceFeature& f, SpecUse use,
                           SlotTable* table, FeaturesPlan* plan) {
  if (use == SpecUse::kContext) return Unsupported("FixedLenSequenceFeature", use, name);
  SLUICE_RETURN_IF_ERROR(CheckDType(f.dtype, name));
  Slot s;
  s.key = name;
  s.dtype = f.dtype;
  s.shape = f.shape;
  s.stride = f.shape.num_elements();
  s.allow_missing = f.allow_missing;
  if (use == SpecUse::kExample) {
    if (!f.allow_missing) {
      return errors::InvalidArgument("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.");
    }
    if (s.stride == 0) {
      return errors::InvalidArgument("FixedLenSequenceFeature ", name, " has shape ", f.shape.DebugString(),
                                     " with no elements.");
    }
    s.kind = SlotKind::kDenseVarLen;
    if (f.default_value.has_value()) {
      const Tensor& d = *f.default_value;
      if (d.dtype() != f.dtype || d.num_elements() != 1) {
        return errors::InvalidArgument("The padding value of feature ", name, " must be a ",
                                       TfTypeName(f.dtype), " scalar, not ", d.DebugString(2), ".");
      }
      s.default_value = Tensor(f.dtype, TensorShape{});
      d.CopyTo(s.default_value);
    } else {
      s.default_value = ZeroScalar(f.dtype);
    }
  } else {
    if (f.default_value.has_value()) {
      return errors::InvalidArgument("Value feature_list_dense_defaults[", name,
                                     "] must be None: a FixedLenSequenceFeature of a SequenceExample takes "
                                     "no default_value.");
    }
    s.kind = SlotKind::kDense;
  }
  SLUICE_ASSIGN_OR_RETURN(int slot, table->AddDense(std::move(s)));
  OutputPlan out;
  out.name = name;
  out.kind = OutputKind::kDense;
  out.slot = slot;
  plan->outputs.push_back(std::move(out));
  return Status();
}

Status AddVarLen(const std::string& name, const VarLenFeature& f, SlotTable* table, FeaturesPlan* plan) {
  SLUICE_RETURN_IF_ERROR(CheckDType(f.dtype, name));
  SLUICE_ASSIGN_OR_RETURN(int slot, table->AddSparse(name, f.dtype));
  OutputPlan out;
  out.name = name;
  out.kind = OutputKind::kVarLen;
  out.slot = slot;
  plan->outputs.push_back(std::move(out));
  return Status();
}

Status AddSparseFeature(const std::string& name, const SparseFeature& f, SpecUse use, SlotTable* table,
                        FeaturesPlan* plan) {
  if (use != SpecUse::kExample) return Unsupported("SparseFeature", use, name);
  if (f.index_key.empty()) return errors::InvalidArgument("Missing index_key for SparseFeature ", name, ".");
  if (f.value_key.empty()) return errors::InvalidArgument("Missing value_key for SparseFeature ", name, ".");
  SLUICE_RETURN_IF_ERROR(CheckDType(f.dtype, name));
  if (f.size.size() != f.index_key.size()) {
    return errors::InvalidArgument("SparseFeature ", name, " has ", f.index_key.size(), " index_key but ",
                                   f.size.size(), " size entries.");
  }
  for (int64_t d : f.size) {
    if (d < 0) return errors::InvalidArgument("SparseFeature ", name, " has a negative size: ", d, ".");
  }
  OutputPlan out;
  out.name = name;
  out.kind = OutputKind::kSparseFeature;
  out.size = f.size;
  out.already_sorted = f.already_sorted;
  for (const std::string& key : f.index_key) {
    if (key.empty()) return errors::InvalidArgument("Missing index_key for SparseFeature ", name, ".");
    SLUICE_ASSIGN_OR_RETURN(int slot, table->AddSparse(key, DType::kInt64));
    out.index_slots.push_back(slot);
  }
  SLUICE_ASSIGN_OR_RETURN(out.slot, table->AddSparse(f.value_key, f.dtype));
  plan->outputs.push_back(std::move(out));
  return Status();
}

Status AddRaggedFeature(const std::string& name, const RaggedFeature& f, SlotTable* table, FeaturesPlan* plan) {
  SLUICE_RETURN_IF_ERROR(CheckDType(f.dtype, name));
  if (f.row_splits_dtype != DType::kInt32 && f.row_splits_dtype != DType::kInt64) {
    return errors::InvalidArgument("Invalid ragged_split_type: ", TfTypeName(f.row_splits_dtype));
  }
  OutputPlan out;
  out.name = name;
  out.kind = OutputKind::kRagged;
  out.splits_dtype = f.row_splits_dtype;
  const std::string& value_key = f.value_key.empty() ? name : f.value_key;
  SLUICE_ASSIGN_OR_RETURN(out.slot, table->AddRagged(value_key, f.dtype, f.row_splits_dtype));
  for (const RaggedPartition& p : f.partitions) {
    PartitionPlan pp;
    pp.kind = p.kind;
    if (p.kind == RaggedPartition::Kind::kUniformRowLength) {
      if (p.length < 0) {
        return errors::InvalidArgument("RaggedFeature ", name, ": uniform row length must be >= 0, not ",
                                       p.length, ".");
      }
      pp.length = p.length;
    } else {
      if (p.key.empty()) return errors::InvalidArgument("RaggedFeature ", name, ": a partition has no key.");
      SLUICE_ASSIGN_OR_RETURN(pp.slot, table->AddRagged(p.key, DType::kInt64, f.row_splits_dtype));
    }
    out.partitions.push_back(pp);
  }
  plan->outputs.push_back(std::move(out));
  return Status();
}

}  // namespace

Result<FeaturesPlan> CompileSpec(const FeatureSpec& spec, SpecUse use) {
  FeaturesPlan plan;
  SlotTable table(&plan);
  // Dense keys first, so that a key both dense and sparse reads as TF's
  // "Dense and sparse keys must not intersect".
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& entry : spec) {
      const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture those
      const FeatureConfig& config = entry.second;
      const bool dense = std::holds_alternative<FixedLenFeature>(config) ||
                         std::holds_alternative<FixedLenSequenceFeature>(config);
      if (dense != (pass == 0)) continue;
      Status s = std::visit(
          [&](const auto& f) -> Status {
            using T = std::decay_t<decltype(f)>;
            if constexpr (std::is_same_v<T, FixedLenFeature>) {
              return AddFixedLen(name, f, use, &table, &plan);
            } else if constexpr (std::is_same_v<T, FixedLenSequenceFeature>) {
              return AddFixedLenSequence(name, f, use, &table, &plan);
            } else if constexpr (std::is_same_v<T, VarLenFeature>) {
              return AddVarLen(name, f, &table, &plan);
            } else if constexpr (std::is_same_v<T, SparseFeature>) {
              return AddSparseFeature(name, f, use, &table, &plan);
            } else {
              return AddRaggedFeature(name, f, &table, &plan);
            }
          },
          config);
      SLUICE_RETURN_IF_ERROR(s);
    }
  }
  std::vector<std::string> keys;
  keys.reserve(plan.slots.size());
  for (const Slot& s : plan.slots) keys.push_back(s.key);
  plan.index.Build(std::move(keys));
  return plan;
}

}  // namespace sluice::ops::internal
