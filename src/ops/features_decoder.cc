#include "features_decoder.h"

#include <algorithm>
#include <cassert>
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

// Views mode: appends the views for the int64 value indices of `indices`
// (built from a buffer whose bytes were `views`; -1 is `pad`) to *pool.
StringsRange IndicesToViews(const Tensor& indices, const std::vector<std::string_view>& views, std::string_view pad,
                            std::vector<std::string_view>* pool) {
  StringsRange range{true, indices.shape(), pool->size(), 0};
  for (int64_t i : indices.flat<int64_t>()) pool->push_back(i < 0 ? pad : views[static_cast<size_t>(i)]);
  range.end = pool->size();
  return range;
}

// The values tensor of an output: the Tensor itself or a composite's values.
Tensor* ValuesOf(FeatureValue* v) {
  if (auto* st = std::get_if<SparseTensor>(v)) return &st->values;
  if (auto* rt = std::get_if<RaggedTensor>(v)) return &rt->values;
  return std::get_if<Tensor>(v);
}

// The spare scratch of this thread (see the header).
thread_local std::unique_ptr<DecoderScratch> t_spare_scratch;
constexpr size_t kMaxSpareBytes = 1 << 20;

std::unique_ptr<DecoderScratch> TakeScratch(size_t slots) {
  std::unique_ptr<DecoderScratch> s = std::move(t_spare_scratch);
  if (!s) s = std::make_unique<DecoderScratch>();
  // Only ever grown: a ValueBuffer kept keeps its vectors' capacity.
  if (s->found.size() < slots) {
    s->found.resize(slots);
    s->present.resize(slots);
    s->dense.resize(slots);
    s->buffers.resize(slots);
    s->view_offset.resize(slots);
  }
  return s;
}

// `used`: the slots the decoder used (the others are already clear).
void ReturnScratch(std::unique_ptr<DecoderScratch> s, size_t used) {
  size_t bytes = s->buffers.capacity() * sizeof(ValueBuffer);
  // Drop the references now. Most were moved out (already invalid): testing
  // first avoids rewriting every tensor per parse (store-forwarding stalls
  // on the temporaries; docs/perf/example-parsing.md).
  for (size_t i = 0; i < used; ++i) {
    if (s->dense[i].valid()) s->dense[i] = Tensor();
  }
  for (size_t i = 0; i < s->buffers.size(); ++i) {
    ValueBuffer& b = s->buffers[i];
    bytes += b.int64s.capacity() * 8 + b.floats.capacity() * 4 + b.bytes.capacity() * sizeof(std::string_view) +
             b.ends.capacity() * 8;
    if (i < used) {
      b.int64s.clear();
      b.floats.clear();
      b.bytes.clear();
      b.ends.clear();
    }
  }
  if (bytes <= kMaxSpareBytes && !t_spare_scratch) t_spare_scratch = std::move(s);
}

}  // namespace

FeaturesDecoder::FeaturesDecoder(const FeaturesPlan& plan, int64_t num_records, bool batched,
                                 std::span<const std::string> names, bool views,
                                 std::vector<std::string_view>* pool)
    : plan_(plan),
      batched_(batched),
      views_(views),
      names_(names),
      num_records_(num_records),
      scratch_(TakeScratch(plan.slots.size())),
      found_(scratch_->found),
      present_(scratch_->present),
      dense_(scratch_->dense),
      buffers_(scratch_->buffers),
      view_offset_(scratch_->view_offset),
      pool_(pool) {
  assert(!views || pool != nullptr);
  size_t pool_size = 0;
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const Slot& slot = plan.slots[s];
    if (DenseViews(s)) {
      view_offset_[s] = static_cast<int64_t>(pool_size);
      pool_size += static_cast<size_t>((batched ? num_records : 1) * slot.stride);
    } else if (slot.kind == SlotKind::kDense) {
      dense_[s] = Tensor(slot.dtype, batched ? slot.shape.WithFirstDim(num_records) : slot.shape);
    } else {
      buffers_[s].dtype = slot.dtype;
      buffers_[s].ends.reserve(static_cast<size_t>(num_records));
    }
  }
  if (views) pool_->assign(pool_size, std::string_view());
}

FeaturesDecoder::~FeaturesDecoder() { ReturnScratch(std::move(scratch_), plan_.slots.size()); }

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
  const int64_t offset = batched_ ? record * slot.stride : 0;
  const bool ok = DenseViews(s) ? WriteBytesViews(f, pool_->data() + view_offset_[s] + offset, slot.stride, &count)
                                : WriteFeature(f, dense_[s], offset, slot.stride, &count);
  if (!ok) {
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
  if (DenseViews(s)) {
    const std::span<const std::string> d = slot.default_value.flat<std::string>();
    std::copy(d.begin(), d.end(), pool_->begin() + view_offset_[s] + (batched_ ? record * slot.stride : 0));
  } else if (batched_) {
    CopyInto(slot.default_value, dense_[s], record * slot.stride);
  } else {
    dense_[s] = slot.default_value;  // shared: tensors are immutable once built
  }
  return Status();
}

Result<ParsedFeatures> FeaturesDecoder::Finish() {
  assert(!views_);
  ParsedFeatures result;
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    FeatureValue value;
    SLUICE_RETURN_IF_ERROR(BuildOutput(i, &value));
    result.emplace(plan_.outputs[i].name, std::move(value));
  }
  return result;
}

Status FeaturesDecoder::FinishViews(std::vector<FeatureValue>* values, std::vector<StringsRange>* strings) {
  assert(views_);
  // Bytes buffers become buffers of value indices (see the header).
  std::vector<std::vector<std::string_view>> bytes;
  for (size_t s = 0; s < plan_.slots.size(); ++s) {
    ValueBuffer& buf = buffers_[s];
    if (plan_.slots[s].kind == SlotKind::kDense || buf.dtype != DType::kString) continue;
    if (bytes.empty()) bytes.resize(plan_.slots.size());
    bytes[s].swap(buf.bytes);
    buf.dtype = DType::kInt64;
    buf.int64s.resize(bytes[s].size());
    std::iota(buf.int64s.begin(), buf.int64s.end(), int64_t{0});
  }
  // Reused in place: value-initialising a new FeatureValue (over 200 bytes,
  // zeroed with rep stos) is a visible part of a one-record parse
  // (docs/perf/example-parsing.md).
  values->resize(plan_.outputs.size());
  strings->resize(plan_.outputs.size());
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    SLUICE_RETURN_IF_ERROR(BuildOutput(i, &(*values)[i]));
    const auto s = static_cast<size_t>(plan_.outputs[i].slot);
    const Slot& slot = plan_.slots[s];
    StringsRange& range = (*strings)[i];
    if (slot.dtype != DType::kString) {
      if (range.present) range = StringsRange();
      continue;
    }
    Tensor* t = ValuesOf(&(*values)[i]);
    if (DenseViews(s)) {
      range.present = true;
      range.shape = batched_ ? slot.shape.WithFirstDim(num_records_) : slot.shape;
      range.begin = static_cast<size_t>(view_offset_[s]);
      range.end = range.begin + static_cast<size_t>((batched_ ? num_records_ : 1) * slot.stride);
    } else {
      // Only kDenseVarLen slots pad; their default_value is the pad scalar.
      const std::string_view pad =
          slot.kind == SlotKind::kDenseVarLen ? std::string_view(slot.default_value.scalar<std::string>()) : "";
      range = IndicesToViews(*t, bytes[s], pad, pool_);
    }
    if (t->valid()) *t = Tensor();
  }
  return Status();
}

Status FeaturesDecoder::BuildOutput(size_t i, FeatureValue* value) {
  // Built in place: a FeatureValue is over 200 bytes, too large to move
  // through Results once per output (docs/perf/example-parsing.md).
  const OutputPlan& out = plan_.outputs[i];
  const auto s = static_cast<size_t>(out.slot);
  const Slot& slot = plan_.slots[s];
  switch (out.kind) {
    case OutputKind::kDense:
      if (slot.kind == SlotKind::kDense) {
        value->emplace<Tensor>(std::move(dense_[s]));
      } else {
        const ValueBuffer& buf = buffers_[s];
        // Views mode: string values are indices here, -1 is the padding.
        const Tensor pad = buf.dtype == slot.dtype ? slot.default_value : Tensor::Scalar<int64_t>(-1);
        value->emplace<Tensor>(BuildPaddedDense(buf, slot.shape, slot.stride, pad, batched_));
      }
      return Status();
    case OutputKind::kVarLen:
      BuildVarLenSparse(buffers_[s], batched_, &value->emplace<SparseTensor>());
      return Status();
    case OutputKind::kSparseFeature: {
      SLUICE_ASSIGN_OR_RETURN(value->emplace<SparseTensor>(), BuildSparseFeature(out));
      return Status();
    }
    case OutputKind::kRagged: {
      SLUICE_ASSIGN_OR_RETURN(value->emplace<RaggedTensor>(), BuildRagged(out));
      return Status();
    }
  }
  return errors::Internal("unknown output kind");
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
