#include "features_decoder.h"

#include <algorithm>
#include <numeric>

#include "ragged_builder.h"
#include "record_errors.h"

namespace sluice::ops::internal {
namespace {

std::string_view ValuesName(DType dtype) {
  switch (dtype) {
    case DType::kInt64:
      return "int64";
    case DType::kFloat32:
      return "float";
    default:
      return "bytes";
  }
}

// Copies value i of `buf` into element j of `dst`.
void CopyValue(const ValueBuffer& buf, int64_t i, const Tensor& dst, int64_t j) {
  switch (buf.dtype) {
    case DType::kInt64:
      dst.data<int64_t>()[j] = buf.int64s[static_cast<size_t>(i)];
      break;
    case DType::kFloat32:
      dst.data<float>()[j] = buf.floats[static_cast<size_t>(i)];
      break;
    default: {
      const std::string_view v = buf.bytes[static_cast<size_t>(i)];
      dst.data<std::string>()[j].assign(v.data(), v.size());
    }
  }
}

}  // namespace

FeaturesDecoder::FeaturesDecoder(const FeaturesPlan& plan, int64_t num_records, bool batched,
                                 std::span<const std::string> names)
    : plan_(plan),
      batched_(batched),
      names_(names),
      found_(plan.slots.size()),
      present_(plan.slots.size()),
      dense_(plan.slots.size()),
      buffers_(plan.slots.size()) {
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const Slot& slot = plan.slots[s];
    if (slot.kind == SlotKind::kDense) {
      dense_[s] = Tensor(slot.dtype, batched ? slot.shape.WithFirstDim(num_records) : slot.shape);
    } else {
      buffers_[s].dtype = slot.dtype;
      buffers_[s].ends.reserve(static_cast<size_t>(num_records));
    }
  }
}

std::string_view FeaturesDecoder::Name(int64_t record) const { return RecordName(names_, record); }

Status FeaturesDecoder::EndRecord(int64_t record) {
  for (size_t s = 0; s < plan_.slots.size(); ++s) {
    const Slot& slot = plan_.slots[s];
    wire::FeatureRef f;
    if (present_[s] && !wire::ResolveFeature(found_[s], &f)) {
      return FeatureError(Name(record), slot.key, record, "Can't parse serialized Example.");
    }
    if (!present_[s] || f.kind == FeatureKind::kNone) {
      SLUICE_RETURN_IF_ERROR(Missing(s, record));
      continue;
    }
    const DType got = KindDType(f.kind);
    if (got != slot.dtype) {
      if (slot.kind == SlotKind::kDense || slot.kind == SlotKind::kDenseVarLen) {
        return FeatureError(Name(record), slot.key, record,
                            StrCat("Data types don't match. Data type: ", TfTypeName(got),
                                   " but expected type: ", TfTypeName(slot.dtype)));
      }
      return FeatureError(Name(record), slot.key, record,
                          StrCat("Data types don't match. Expected type: ", TfTypeName(slot.dtype),
                                 ", Actual type: ", TfTypeName(got)));
    }
    if (slot.kind == SlotKind::kDense) {
      SLUICE_RETURN_IF_ERROR(DecodeDense(s, f, record));
    } else {
      SLUICE_RETURN_IF_ERROR(DecodeToBuffer(s, f, record));
    }
  }
  return Status();
}

Status FeaturesDecoder::DecodeDense(size_t s, const wire::FeatureRef& f, int64_t record) {
  const Slot& slot = plan_.slots[s];
  int64_t count = 0;
  if (!WriteFeature(f, dense_[s], batched_ ? record * slot.stride : 0, slot.stride, &count)) {
    return FeatureError(Name(record), slot.key, record, "Can't parse serialized Example.");
  }
  if (count != slot.stride) {
    return FeatureError(Name(record), slot.key, record,
                        StrCat("Number of ", ValuesName(slot.dtype), " values != expected.  Values size: ", count,
                               " but output shape: ", slot.shape.DebugString()));
  }
  return Status();
}

Status FeaturesDecoder::DecodeToBuffer(size_t s, const wire::FeatureRef& f, int64_t record) {
  const Slot& slot = plan_.slots[s];
  ValueBuffer& buf = buffers_[s];
  const int64_t start = buf.size();
  if (!AppendFeature(f, &buf)) {
    return FeatureError(Name(record), slot.key, record, "Can't parse serialized Example.");
  }
  const int64_t count = buf.size() - start;
  if (slot.kind == SlotKind::kDenseVarLen && count % slot.stride != 0) {
    return FeatureError(Name(record), slot.key, record,
                        StrCat("Number of ", ValuesName(slot.dtype),
                               " values is not a multiple of stride length. Saw ", count,
                               " values but output shape is: ", PartialShape(slot.shape).WithFirstDim(-1).DebugString()));
  }
  buf.EndUnit();
  return Status();
}

Status FeaturesDecoder::Missing(size_t s, int64_t record) {
  const Slot& slot = plan_.slots[s];
  if (slot.kind != SlotKind::kDense) {
    buffers_[s].EndUnit();
    return Status();
  }
  if (!slot.default_value.valid()) {
    return FeatureError(Name(record), slot.key, record,
                        StrCat("Feature: ", slot.key, " (data type: ", TfTypeName(slot.dtype), ")",
                               " is required but could not be found."));
  }
  if (batched_) {
    CopyInto(slot.default_value, dense_[s], record * slot.stride);
  } else {
    dense_[s] = slot.default_value;  // shared: tensors are immutable once built
  }
  return Status();
}

Result<ParsedFeatures> FeaturesDecoder::Finish() {
  ParsedFeatures result;
  for (const OutputPlan& out : plan_.outputs) {
    const Slot& slot = plan_.slots[static_cast<size_t>(out.slot)];
    switch (out.kind) {
      case OutputKind::kDense:
        if (slot.kind == SlotKind::kDense) {
          result.emplace(out.name, dense_[static_cast<size_t>(out.slot)]);
        } else {
          result.emplace(out.name, BuildPaddedDense(buffers_[static_cast<size_t>(out.slot)], slot.shape,
                                                    slot.stride, slot.default_value, batched_));
        }
        break;
      case OutputKind::kVarLen:
        result.emplace(out.name, BuildVarLenSparse(buffers_[static_cast<size_t>(out.slot)], batched_));
        break;
      case OutputKind::kSparseFeature: {
        SLUICE_ASSIGN_OR_RETURN(SparseTensor st, BuildSparseFeature(out));
        result.emplace(out.name, std::move(st));
        break;
      }
      case OutputKind::kRagged: {
        SLUICE_ASSIGN_OR_RETURN(RaggedTensor rt, BuildRagged(out));
        result.emplace(out.name, std::move(rt));
        break;
      }
    }
  }
  return result;
}

Result<SparseTensor> FeaturesDecoder::BuildSparseFeature(const OutputPlan& out) const {
  const ValueBuffer& values = buffers_[static_cast<size_t>(out.slot)];
  const std::string& value_key = plan_.slots[static_cast<size_t>(out.slot)].key;
  const size_t rank = out.index_slots.size();
  std::vector<const ValueBuffer*> index(rank);
  for (size_t k = 0; k < rank; ++k) index[k] = &buffers_[static_cast<size_t>(out.index_slots[k])];

  // Check every record first: counts agree, indices in range.
  for (int64_t u = 0; u < values.num_units(); ++u) {
    for (size_t k = 0; k < rank; ++k) {
      const std::string& key = plan_.slots[static_cast<size_t>(out.index_slots[k])].key;
      if (index[k]->length(u) != values.length(u)) {
        return FeatureError(Name(u), key, u,
                            StrCat("SparseFeature ", out.name, ": index_key ", key, " has ", index[k]->length(u),
                                   " values but value_key ", value_key, " has ", values.length(u), "."));
      }
      for (int64_t i : index[k]->Int64s(u)) {
        if (i < 0 || i >= out.size[k]) {
          return FeatureError(Name(u), key, u,
                              StrCat("SparseFeature ", out.name, ": index ", i, " of index_key ", key,
                                     " is out of range [0, ", out.size[k], ")."));
        }
      }
    }
  }

  const int64_t n = values.size();
  const int64_t cols = static_cast<int64_t>(rank) + (batched_ ? 1 : 0);
  SparseTensor st;
  st.indices = IndicesTensor(n, cols);
  st.values = Tensor(values.dtype, TensorShape{n});
  int64_t* ix = st.indices.data<int64_t>();
  std::vector<int64_t> order;
  for (int64_t u = 0; u < values.num_units(); ++u) {
    const int64_t begin = values.begin(u);
    order.resize(static_cast<size_t>(values.length(u)));
    std::iota(order.begin(), order.end(), int64_t{0});
    if (!out.already_sorted) {
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        for (size_t k = 0; k < rank; ++k) {
          const int64_t x = index[k]->int64s[static_cast<size_t>(begin + a)];
          const int64_t y = index[k]->int64s[static_cast<size_t>(begin + b)];
          if (x != y) return x < y;
        }
        return false;
      });
    }
    for (size_t j = 0; j < order.size(); ++j) {
      const int64_t src = begin + order[j];
      if (batched_) *ix++ = u;
      for (size_t k = 0; k < rank; ++k) *ix++ = index[k]->int64s[static_cast<size_t>(src)];
      CopyValue(values, src, st.values, begin + static_cast<int64_t>(j));
    }
  }
  std::vector<int64_t> shape;
  if (batched_) shape.push_back(values.num_units());
  shape.insert(shape.end(), out.size.begin(), out.size.end());
  st.dense_shape = Tensor::FromVector(shape);
  return st;
}

Result<RaggedTensor> FeaturesDecoder::BuildRagged(const OutputPlan& out) const {
  const ValueBuffer& values = buffers_[static_cast<size_t>(out.slot)];
  RaggedBuilder builder(out.partitions);
  std::vector<std::span<const int64_t>> parts(out.partitions.size());
  std::vector<int64_t> tops;
  tops.reserve(static_cast<size_t>(values.num_units()));
  for (int64_t u = 0; u < values.num_units(); ++u) {
    for (size_t p = 0; p < out.partitions.size(); ++p) {
      const int slot = out.partitions[p].slot;
      if (slot >= 0) parts[p] = buffers_[static_cast<size_t>(slot)].Int64s(u);
    }
    int64_t top = 0;
    Status s = builder.AddUnit(values.length(u), parts, &top);
    if (!s.ok()) {
      return FeatureError(Name(u), plan_.slots[static_cast<size_t>(out.slot)].key, u,
                          StrCat("RaggedFeature ", out.name, ": ", s.message()));
    }
    tops.push_back(top);
  }
  RaggedTensor rt;
  rt.values = ValuesTensor(values, 0, values.size());
  if (batched_) {
    SLUICE_ASSIGN_OR_RETURN(Tensor outer, SplitsTensor(SplitsFromCounts(tops), out.splits_dtype));
    rt.nested_row_splits.push_back(std::move(outer));
  }
  for (const std::vector<int64_t>& level : builder.levels()) {
    SLUICE_ASSIGN_OR_RETURN(Tensor splits, SplitsTensor(level, out.splits_dtype));
    rt.nested_row_splits.push_back(std::move(splits));
  }
  return rt;
}

}  // namespace sluice::ops::internal
