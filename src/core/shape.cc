#include "sluice/core/shape.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace sluice {

TensorShape::TensorShape(std::initializer_list<int64_t> dims) {
  Assign(std::span<const int64_t>(dims.begin(), dims.size()));
}
TensorShape::TensorShape(std::span<const int64_t> dims) { Assign(dims); }
void TensorShape::Assign(std::span<const int64_t> dims) {
  assert(dims.size() <= 255);
  rank_ = static_cast<uint8_t>(dims.size());
  if (!is_inline()) heap_ = new int64_t[dims.size()];
  std::copy(dims.begin(), dims.end(), mutable_data());
}

int64_t TensorShape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims()) n *= d;
  return n;
}

void TensorShape::AddDim(int64_t size) { InsertDim(rank_, size); }

void TensorShape::InsertDim(int i, int64_t size) {
  std::vector<int64_t> dims(this->dims().begin(), this->dims().end());
  dims.insert(dims.begin() + i, size);
  *this = TensorShape(std::span<const int64_t>(dims));
}

TensorShape TensorShape::WithoutFirstDim() const {
  assert(rank_ >= 1);
  return TensorShape(dims().subspan(1));
}

TensorShape TensorShape::WithFirstDim(int64_t n) const {
  TensorShape out = *this;
  out.InsertDim(0, n);
  return out;
}

std::string TensorShape::DebugString() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ",";
    s += std::to_string(dim(i));
  }
  return s + "]";
}

PartialShape::PartialShape(const TensorShape& shape)
    : dims_(std::vector<int64_t>(shape.dims().begin(), shape.dims().end())) {}

bool PartialShape::fully_defined() const {
  return dims_ && std::all_of(dims_->begin(), dims_->end(), [](int64_t d) { return d >= 0; });
}

TensorShape PartialShape::ToTensorShape() const {
  assert(fully_defined());
  return TensorShape(std::span<const int64_t>(*dims_));
}

bool PartialShape::IsCompatibleWith(const TensorShape& shape) const {
  if (!dims_) return true;
  if (static_cast<int>(dims_->size()) != shape.rank()) return false;
  for (int i = 0; i < shape.rank(); ++i) {
    if ((*dims_)[i] >= 0 && (*dims_)[i] != shape.dim(i)) return false;
  }
  return true;
}

PartialShape PartialShape::WithFirstDim(int64_t n) const {
  if (!dims_) return *this;
  std::vector<int64_t> dims = *dims_;
  dims.insert(dims.begin(), n);
  return PartialShape(std::move(dims));
}

std::string PartialShape::DebugString() const {
  if (!dims_) return "<unknown>";
  std::string s = "[";
  for (size_t i = 0; i < dims_->size(); ++i) {
    if (i) s += ",";
    s += (*dims_)[i] < 0 ? "?" : std::to_string((*dims_)[i]);
  }
  return s + "]";
}

}  // namespace sluice
