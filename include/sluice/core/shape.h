// TensorShape (every dimension known) and PartialShape (dimensions, or the
// rank itself, may be unknown), printed TensorFlow's way: "[3,4]", "[?,3]",
// "[]" for a scalar, "<unknown>" for an unknown rank.
//
// TensorShape keeps up to kInlineDims dimensions without allocating, since a
// tensor is created for every element that flows through a queue. Both types
// are values: not synchronised, safe to share read-only.
#ifndef SLUICE_CORE_SHAPE_H_
#define SLUICE_CORE_SHAPE_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice {

class TensorShape {
 public:
  static constexpr int kInlineDims = 5;

  TensorShape() = default;  // a scalar: rank 0, one element
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(std::span<const int64_t> dims);
  TensorShape(const TensorShape& other) : rank_(other.rank_) {
    if (other.is_inline()) {
      std::memcpy(inline_, other.inline_, sizeof(inline_));
    } else {
      rank_ = 0;
      Assign(other.dims());
    }
  }
  TensorShape& operator=(const TensorShape& other) {
    if (this != &other) {
      if (!is_inline()) delete[] heap_;
      rank_ = 0;
      if (other.is_inline()) {
        std::memcpy(inline_, other.inline_, sizeof(inline_));
        rank_ = other.rank_;
      } else {
        Assign(other.dims());
      }
    }
    return *this;
  }
  TensorShape(TensorShape&& other) noexcept : rank_(other.rank_) {
    std::memcpy(inline_, other.inline_, sizeof(inline_));
    other.rank_ = 0;
  }
  TensorShape& operator=(TensorShape&& other) noexcept {
    if (this != &other) {
      if (!is_inline()) delete[] heap_;
      rank_ = other.rank_;
      std::memcpy(inline_, other.inline_, sizeof(inline_));
      other.rank_ = 0;
    }
    return *this;
  }
  ~TensorShape() {
    if (!is_inline()) delete[] heap_;
  }

  int rank() const { return rank_; }
  // REQUIRES: 0 <= i < rank().
  int64_t dim(int i) const { return data()[i]; }
  std::span<const int64_t> dims() const { return {data(), static_cast<size_t>(rank_)}; }
  // Product of the dimensions (1 for a scalar).
  int64_t num_elements() const;

  void set_dim(int i, int64_t size) { mutable_data()[i] = size; }
  // Appends a dimension, or puts one in front.
  void AddDim(int64_t size);
  void InsertDim(int i, int64_t size);
  // The shape without its first dimension. REQUIRES: rank() >= 1.
  TensorShape WithoutFirstDim() const;
  // [n] + this shape.
  TensorShape WithFirstDim(int64_t n) const;

  std::string DebugString() const;

  friend bool operator==(const TensorShape& a, const TensorShape& b) {
    if (a.rank_ != b.rank_) return false;
    const int64_t* x = a.data();
    const int64_t* y = b.data();
    for (int i = 0; i < a.rank_; ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
  friend bool operator!=(const TensorShape& a, const TensorShape& b) { return !(a == b); }

 private:
  bool is_inline() const { return rank_ <= kInlineDims; }
  const int64_t* data() const { return is_inline() ? inline_ : heap_; }
  int64_t* mutable_data() { return is_inline() ? inline_ : heap_; }
  void Assign(std::span<const int64_t> dims);

  union {
    int64_t inline_[kInlineDims];
    int64_t* heap_;
  };
  uint8_t rank_ = 0;
};

// A shape whose rank or dimensions may be unknown (-1 marks an unknown dim),
// as queues and batchers declare them.
class PartialShape {
 public:
  static constexpr int64_t kUnknownDim = -1;

  // Unknown rank: matches every shape.
  PartialShape() = default;
  PartialShape(std::initializer_list<int64_t> dims) : dims_(std::vector<int64_t>(dims)) {}
  explicit PartialShape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  PartialShape(const TensorShape& shape);  // NOLINT: a known shape is a partial shape

  static PartialShape UnknownRank() { return PartialShape(); }

  bool rank_known() const { return dims_.has_value(); }
  // REQUIRES: rank_known().
  int rank() const { return static_cast<int>(dims_->size()); }
  int64_t dim(int i) const { return (*dims_)[i]; }
  const std::vector<int64_t>& dims() const { return *dims_; }
  // Rank known and every dimension >= 0.
  bool fully_defined() const;
  // REQUIRES: fully_defined().
  TensorShape ToTensorShape() const;

  // Same rank and equal sizes wherever this shape knows the size.
  bool IsCompatibleWith(const TensorShape& shape) const;
  PartialShape WithFirstDim(int64_t n) const;

  std::string DebugString() const;

  friend bool operator==(const PartialShape& a, const PartialShape& b) {
    return a.dims_ == b.dims_;
  }
  friend bool operator!=(const PartialShape& a, const PartialShape& b) { return !(a == b); }

 private:
  std::optional<std::vector<int64_t>> dims_;
};

}  // namespace sluice

#endif  // SLUICE_CORE_SHAPE_H_
