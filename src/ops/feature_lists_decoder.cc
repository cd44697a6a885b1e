#include "feature_lists_decoder.h"

#include <algorithm>

#include "ragged_builder.h"
#include "record_errors.h"

namespace sluice::ops::internal {

FeatureListsDecoder::FeatureListsDecoder(const FeaturesPlan& plan, int64_t num_records, bool batched,
                                         std::span<const std::string> names)
    : plan_(plan),
      num_records_(num_records),
      batched_(batched),
      names_(names),
      found_(plan.slots.size()),
      present_(plan.slots.size()),
      rows_(plan.slots.size()),
      row_ends_(plan.slots.size()) {
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    rows_[s].dtype = plan.slots[s].dtype;
    row_ends_[s].reserve(static_cast<size_t>(num_records));
  }
}

std::string_view FeatureListsDecoder::Name(int64_t record) const { return RecordName(names_, record); }

Status FeatureListsDecoder::EndRecord(int64_t record) {
  for (size_t s = 0; s < plan_.slots.size(); ++s) {
    const Slot& slot = plan_.slots[s];
    if (present_[s]) {
      SLUICE_RETURN_IF_ERROR(DecodeList(s, record));
    } else if (slot.kind == SlotKind::kDense && !slot.allow_missing) {
      return errors::InvalidArgument("Name: ", Name(record), ", Index: ", record, ", Feature list '", slot.key,
                                     "' is required but could not be found.  Did you mean to include it in "
                                     "feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?")
          .WithPayload("record", std::to_string(record))
          .WithPayload("feature", slot.key);
    }
    row_ends_[s].push_back(rows_[s].num_units());
  }
  return Status();
}

Status FeatureListsDecoder::DecodeList(size_t s, int64_t record) {
  const Slot& slot = plan_.slots[s];
  ValueBuffer& buf = rows_[s];
  int64_t row = 0;
  Status error;
  const bool ok = wire::ForEachMessageField(found_[s], 1, [&](std::string_view feature) {
    wire::FeatureRef f;
    if (!wire::ResolveFeature(feature, &f)) return false;
    const int64_t start = buf.size();
    if (f.kind != FeatureKind::kNone) {
      const DType got = KindDType(f.kind);
      if (got != slot.dtype) {
        error = errors::InvalidArgument("Name: ", Name(record), ", Feature list: ", slot.key, ", Index: ", row,
                                        ".  Data types don't match. Expected type: ", TfTypeName(slot.dtype))
                    .WithPayload("record", std::to_string(record))
                    .WithPayload("feature", slot.key);
        return false;
      }
      if (!AppendFeature(f, &buf)) return false;
    }
    const int64_t count = buf.size() - start;
    if (slot.kind == SlotKind::kDense && count != slot.stride) {
      error = FeatureError(Name(record), slot.key, row, record,
                           StrCat("Number of values != expected.  values size: ", count,
                                  " but output shape: ", slot.shape.DebugString()));
      return false;
    }
    buf.EndUnit();
    ++row;
    return true;
  });
  if (!error.ok()) return error;
  if (!ok) {
    return FeatureError(Name(record), slot.key, record,
                        StrCat("Error in sequence feature ", slot.key, ": can't parse its FeatureList."));
  }
  return Status();
}

std::vector<int64_t> FeatureListsDecoder::RecordRows(size_t s) const {
  std::vector<int64_t> rows(row_ends_[s].size());
  for (size_t r = 0; r < rows.size(); ++r) rows[r] = row_ends_[s][r] - (r == 0 ? 0 : row_ends_[s][r - 1]);
  return rows;
}

Result<ParsedFeatures> FeatureListsDecoder::Finish(std::map<std::string, Tensor, std::less<>>* lengths) {
  ParsedFeatures result;
  for (const OutputPlan& out : plan_.outputs) {
    const auto s = static_cast<size_t>(out.slot);
    switch (out.kind) {
      case OutputKind::kDense: {
        Tensor len;
        result.emplace(out.name, BuildDense(s, &len));
        (*lengths)[out.name] = std::move(len);
        break;
      }
      case OutputKind::kVarLen:
        result.emplace(out.name, BuildSparse(s));
        break;
      case OutputKind::kRagged: {
        SLUICE_ASSIGN_OR_RETURN(RaggedTensor rt, BuildRagged(out));
        result.emplace(out.name, std::move(rt));
        break;
      }
      case OutputKind::kSparseFeature:
        return errors::Internal("SparseFeature in feature lists");
    }
  }
  return result;
}

Tensor FeatureListsDecoder::BuildDense(size_t s, Tensor* lengths) const {
  const Slot& slot = plan_.slots[s];
  const ValueBuffer& buf = rows_[s];
  const std::vector<int64_t> rows = RecordRows(s);
  if (!batched_) {
    *lengths = Tensor::Scalar<int64_t>(rows[0]);
    Tensor t(slot.dtype, slot.shape.WithFirstDim(rows[0]));
    CopyValues(buf, 0, buf.size(), t, 0);
    return t;
  }
  *lengths = Tensor::FromVector(rows);
  const int64_t max_rows = rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end());
  TensorShape shape = slot.shape.WithFirstDim(max_rows);
  shape.InsertDim(0, num_records_);
  Tensor t = Tensor::Zeros(slot.dtype, std::move(shape));
  for (int64_t r = 0; r < num_records_; ++r) {
    const int64_t first_row = r == 0 ? 0 : row_ends_[s][static_cast<size_t>(r - 1)];
    const int64_t end_row = row_ends_[s][static_cast<size_t>(r)];
    if (end_row == first_row) continue;
    CopyValues(buf, buf.begin(first_row), buf.end(end_row - 1), t, r * max_rows * slot.stride);
  }
  return t;
}

SparseTensor FeatureListsDecoder::BuildSparse(size_t s) const {
  const ValueBuffer& buf = rows_[s];
  const std::vector<int64_t> rows = RecordRows(s);
  const int64_t n = buf.size();
  SparseTensor st;
  st.values = ValuesTensor(buf, 0, n);
  st.indices = IndicesTensor(n, batched_ ? 3 : 2);
  int64_t* ix = st.indices.data<int64_t>();
  int64_t unit = 0;
  for (int64_t r = 0; r < num_records_; ++r) {
    for (int64_t row = 0; row < rows[static_cast<size_t>(r)]; ++row, ++unit) {
      for (int64_t j = 0; j < buf.length(unit); ++j) {
        if (batched_) *ix++ = r;
        *ix++ = row;
        *ix++ = j;
      }
    }
  }
  const int64_t max_rows = rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end());
  const int64_t max_cols = buf.MaxUnitLength();
  st.dense_shape = batched_ ? Tensor::FromVector<int64_t>({num_records_, max_rows, max_cols})
                            : Tensor::FromVector<int64_t>({max_rows, max_cols});
  return st;
}

Result<RaggedTensor> FeatureListsDecoder::BuildRagged(const OutputPlan& out) const {
  const auto vs = static_cast<size_t>(out.slot);
  const ValueBuffer& values = rows_[vs];
  const std::string& key = plan_.slots[vs].key;
  // Partitions are feature lists too; each must have a row for every row of
  // the values.
  for (const PartitionPlan& p : out.partitions) {
    if (p.slot < 0) continue;
    const auto ps = static_cast<size_t>(p.slot);
    for (int64_t r = 0; r < num_records_; ++r) {
      if (row_ends_[ps][static_cast<size_t>(r)] != row_ends_[vs][static_cast<size_t>(r)]) {
        return FeatureError(Name(r), plan_.slots[ps].key, r,
                            StrCat("Feature ", out.name, ": values and partitions are not aligned"));
      }
    }
  }
  RaggedBuilder builder(out.partitions);
  std::vector<std::span<const int64_t>> parts(out.partitions.size());
  std::vector<int64_t> tops;
  tops.reserve(static_cast<size_t>(values.num_units()));
  int64_t record = 0;
  for (int64_t u = 0; u < values.num_units(); ++u) {
    while (u >= row_ends_[vs][static_cast<size_t>(record)]) ++record;
    for (size_t p = 0; p < out.partitions.size(); ++p) {
      const int slot = out.partitions[p].slot;
      if (slot >= 0) parts[p] = rows_[static_cast<size_t>(slot)].Int64s(u);
    }
    int64_t top = 0;
    Status s = builder.AddUnit(values.length(u), parts, &top);
    if (!s.ok()) return FeatureError(Name(record), key, record, StrCat("RaggedFeature ", out.name, ": ", s.message()));
    tops.push_back(top);
  }
  RaggedTensor rt;
  rt.values = ValuesTensor(values, 0, values.size());
  if (batched_) {
    SLUICE_ASSIGN_OR_RETURN(Tensor outer, SplitsTensor(SplitsFromCounts(RecordRows(vs)), out.splits_dtype));
    rt.nested_row_splits.push_back(std::move(outer));
  }
  SLUICE_ASSIGN_OR_RETURN(Tensor row_splits, SplitsTensor(SplitsFromCounts(tops), out.splits_dtype));
  rt.nested_row_splits.push_back(std::move(row_splits));
  for (const std::vector<int64_t>& level : builder.levels()) {
    SLUICE_ASSIGN_OR_RETURN(Tensor splits, SplitsTensor(level, out.splits_dtype));
    rt.nested_row_splits.push_back(std::move(splits));
  }
  return rt;
}

}  // namespace sluice::ops::internal
