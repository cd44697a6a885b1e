#include "ragged_builder.h"

#include <limits>
#include <string>

namespace sluice::ops::internal {
namespace {

using Kind = RaggedPartition::Kind;

Status Mismatch(std::string_view what, std::string_view detail, int64_t count) {
  return errors::InvalidArgument(what, " partition does not fit the ", count, " items below it: ", detail);
}

bool NonDecreasing(std::span<const int64_t> v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] < v[i - 1]) return false;
  }
  return true;
}

Status FromRowSplits(std::span<const int64_t> v, int64_t c, std::vector<int64_t>* s) {
  if (v.empty()) {
    if (c != 0) return Mismatch("row_splits", "it is empty", c);
    return Status();
  }
  if (v.front() != 0) return Mismatch("row_splits", StrCat("it starts at ", v.front(), ", not 0"), c);
  if (!NonDecreasing(v)) return Mismatch("row_splits", "it decreases", c);
  if (v.back() != c) return Mismatch("row_splits", StrCat("it ends at ", v.back()), c);
  s->assign(v.begin(), v.end());
  return Status();
}

Status FromRowLengths(std::span<const int64_t> v, int64_t c, std::vector<int64_t>* s) {
  for (int64_t len : v) {
    int64_t next;
    if (len < 0) return Mismatch("row_lengths", StrCat("it holds ", len), c);
    if (__builtin_add_overflow(s->back(), len, &next)) return Mismatch("row_lengths", "its sum overflows", c);
    s->push_back(next);
  }
  if (s->back() != c) return Mismatch("row_lengths", StrCat("they sum to ", s->back()), c);
  return Status();
}

Status FromRowStarts(std::span<const int64_t> v, int64_t c, std::vector<int64_t>* s) {
  if (v.empty()) {
    if (c != 0) return Mismatch("row_starts", "it is empty", c);
    return Status();
  }
  if (v.front() != 0) return Mismatch("row_starts", StrCat("it starts at ", v.front(), ", not 0"), c);
  if (!NonDecreasing(v)) return Mismatch("row_starts", "it decreases", c);
  if (v.back() > c) return Mismatch("row_starts", StrCat("a row starts at ", v.back()), c);
  s->assign(v.begin(), v.end());
  s->push_back(c);
  return Status();
}

Status FromRowLimits(std::span<const int64_t> v, int64_t c, std::vector<int64_t>* s) {
  if (v.empty()) {
    if (c != 0) return Mismatch("row_limits", "it is empty", c);
    return Status();
  }
  if (v.front() < 0) return Mismatch("row_limits", StrCat("it holds ", v.front()), c);
  if (!NonDecreasing(v)) return Mismatch("row_limits", "it decreases", c);
  if (v.back() != c) return Mismatch("row_limits", StrCat("it ends at ", v.back()), c);
  s->insert(s->end(), v.begin(), v.end());
  return Status();
}

Status FromValueRowIds(std::span<const int64_t> v, int64_t c, std::vector<int64_t>* s) {
  if (static_cast<int64_t>(v.size()) != c) {
    return Mismatch("value_rowids", StrCat("it has ", v.size(), " entries"), c);
  }
  if (v.empty()) return Status();
  if (v.front() < 0) return Mismatch("value_rowids", StrCat("it holds ", v.front()), c);
  if (!NonDecreasing(v)) return Mismatch("value_rowids", "it decreases", c);
  if (v.back() >= c + kMaxImpliedEmptyRows) {
    return Mismatch("value_rowids", StrCat("row id ", v.back(), " implies too many empty rows"), c);
  }
  const int64_t rows = v.back() + 1;
  s->assign(static_cast<size_t>(rows) + 1, 0);
  for (int64_t id : v) ++(*s)[static_cast<size_t>(id) + 1];
  for (int64_t r = 0; r < rows; ++r) (*s)[r + 1] += (*s)[r];
  return Status();
}

Status FromUniformLength(int64_t length, int64_t c, std::vector<int64_t>* s) {
  if (length == 0) {
    if (c != 0) return Mismatch("uniform_row_length", "the length is 0", c);
    return Status();
  }
  if (c % length != 0) return Mismatch("uniform_row_length", StrCat("the length is ", length), c);
  for (int64_t r = 1; r <= c / length; ++r) s->push_back(r * length);
  return Status();
}

Status LocalSplits(const PartitionPlan& p, std::span<const int64_t> v, int64_t c, std::vector<int64_t>* s) {
  s->assign(1, 0);
  switch (p.kind) {
    case Kind::kRowSplits:
      return FromRowSplits(v, c, s);
    case Kind::kRowLengths:
      return FromRowLengths(v, c, s);
    case Kind::kRowStarts:
      return FromRowStarts(v, c, s);
    case Kind::kRowLimits:
      return FromRowLimits(v, c, s);
    case Kind::kValueRowIds:
      return FromValueRowIds(v, c, s);
    case Kind::kUniformRowLength:
      return FromUniformLength(p.length, c, s);
  }
  return errors::Internal("unknown partition kind");
}

}  // namespace

RaggedBuilder::RaggedBuilder(std::span<const PartitionPlan> partitions)
    : partitions_(partitions),
      levels_(partitions.size(), std::vector<int64_t>{0}),
      local_(partitions.size()) {}

Status RaggedBuilder::AddUnit(int64_t num_values, std::span<const std::span<const int64_t>> parts, int64_t* top) {
  int64_t c = num_values;
  for (size_t p = partitions_.size(); p-- > 0;) {
    SLUICE_RETURN_IF_ERROR(LocalSplits(partitions_[p], parts[p], c, &local_[p]));
    c = static_cast<int64_t>(local_[p].size()) - 1;
  }
  *top = c;
  for (size_t p = 0; p < partitions_.size(); ++p) {
    std::vector<int64_t>& level = levels_[p];
    const int64_t offset = level.back();
    for (size_t i = 1; i < local_[p].size(); ++i) level.push_back(local_[p][i] + offset);
  }
  return Status();
}

std::vector<int64_t> SplitsFromCounts(std::span<const int64_t> counts) {
  std::vector<int64_t> s;
  s.reserve(counts.size() + 1);
  s.push_back(0);
  for (int64_t c : counts) s.push_back(s.back() + c);
  return s;
}

Result<Tensor> SplitsTensor(std::span<const int64_t> splits, DType dtype) {
  const auto n = static_cast<int64_t>(splits.size());
  if (dtype == DType::kInt64) {
    Tensor t(DType::kInt64, TensorShape{n});
    std::copy(splits.begin(), splits.end(), t.data<int64_t>());
    return t;
  }
  Tensor t(DType::kInt32, TensorShape{n});
  int32_t* out = t.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (splits[i] > std::numeric_limits<int32_t>::max()) {
      return errors::InvalidArgument("Ragged row splits reach ", splits[i],
                                     ", which does not fit row_splits_dtype int32; use int64.");
    }
    out[i] = static_cast<int32_t>(splits[i]);
  }
  return t;
}

}  // namespace sluice::ops::internal
