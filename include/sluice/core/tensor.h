// Tensor: a typed, shaped view of a reference-counted, 64-byte-aligned buffer.
//
// Copying a Tensor shares its buffer (one atomic increment); Slice() along the
// first dimension shares it too, so taking element i of a batch copies
// nothing. A Tensor created by this library owns its buffer; Tensor::Wrap
// borrows foreign memory (a numpy array) and calls a release function when the
// last Tensor sharing it goes away.
//
// Thread-safety: the reference count is atomic, so Tensors sharing a buffer may
// be copied and destroyed on different threads. The contents are not
// synchronised: writing a buffer while another thread reads it is a data race.
// Tensors travelling through queues are treated as immutable once enqueued.
//
// Strings: a kString tensor holds std::string objects (bytes), constructed
// empty when the buffer is allocated and destroyed with it.
//
// Memory: a buffer of 256 KiB or more is not given back to malloc when its
// last reference goes, but kept for the next tensor of the same size class
// (pipelines allocate the same large shapes again and again, and fresh pages
// cost a kernel fault each), up to SLUICE_BLOCK_CACHE_MB of the environment
// (default 256; 0 turns it off) read at the first large allocation.
#ifndef SLUICE_CORE_TENSOR_H_
#define SLUICE_CORE_TENSOR_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"

namespace sluice {

// The memory behind one or more Tensors. Intrusively reference-counted.
class TensorBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  // A new buffer for `num_elements` of `dtype`, 64-byte aligned; numbers are
  // left uninitialised, strings constructed empty. Throws std::bad_alloc.
  static TensorBuffer* Allocate(DType dtype, int64_t num_elements);
  // Borrows `data` (`size` bytes); `release` runs when the last reference
  // goes, on whichever thread drops it.
  static TensorBuffer* Wrap(void* data, size_t size, std::function<void()> release);

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool owns_memory() const { return !release_; }

  void Ref() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) Free();
  }
  // n references at once (n > 0): one atomic operation for a container that
  // hands out many views (see core/tensor_internal.h).
  void Ref(int32_t n) const { refs_.fetch_add(n, std::memory_order_relaxed); }
  void Unref(int32_t n) const {
    if (refs_.fetch_sub(n, std::memory_order_acq_rel) == n) Free();
  }
  // True if this is the only reference (the caller may then write).
  bool RefCountIsOne() const { return refs_.load(std::memory_order_acquire) == 1; }

 private:
  TensorBuffer() = default;
  ~TensorBuffer() = default;
  void Free() const;  // the last reference went
  // The malloc block behind a buffer of `data_bytes` made by Allocate.
  static size_t BlockBytes(size_t data_bytes);

  mutable std::atomic<int32_t> refs_{1};
  void* data_ = nullptr;
  size_t size_ = 0;
  int64_t num_strings_ = 0;          // std::string objects to destroy
  std::function<void()> release_;    // set for wrapped memory
};

namespace internal {
class TensorAttorney;
}  // namespace internal

class Tensor {
 public:
  // An invalid tensor (dtype kInvalid, no buffer): a placeholder.
  Tensor() = default;
  // Allocates: numbers uninitialised, strings empty.
  Tensor(DType dtype, TensorShape shape);
  // Inline: a Tensor is copied and moved several times per queue operation.
  Tensor(const Tensor& other)
      : dtype_(other.dtype_), shape_(other.shape_), buffer_(other.buffer_), data_(other.data_) {
    if (buffer_) buffer_->Ref();
  }
  Tensor& operator=(const Tensor& other) {
    if (this != &other) {
      if (other.buffer_) other.buffer_->Ref();
      if (buffer_) buffer_->Unref();
      dtype_ = other.dtype_;
      shape_ = other.shape_;
      buffer_ = other.buffer_;
      data_ = other.data_;
    }
    return *this;
  }
  Tensor(Tensor&& other) noexcept
      : dtype_(other.dtype_), shape_(std::move(other.shape_)), buffer_(other.buffer_), data_(other.data_) {
    other.dtype_ = DType::kInvalid;
    other.buffer_ = nullptr;
    other.data_ = nullptr;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      if (buffer_) buffer_->Unref();
      dtype_ = other.dtype_;
      shape_ = std::move(other.shape_);
      buffer_ = other.buffer_;
      data_ = other.data_;
      other.dtype_ = DType::kInvalid;
      other.buffer_ = nullptr;
      other.data_ = nullptr;
    }
    return *this;
  }
  ~Tensor() {
    if (buffer_) buffer_->Unref();
  }

  // Every byte zero; strings empty; bools false.
  static Tensor Zeros(DType dtype, TensorShape shape);
  template <class T>
  static Tensor Scalar(T value);
  static Tensor String(std::string_view value);  // a string scalar
  // A rank-1 tensor holding `values`.
  template <class T>
  static Tensor FromVector(const std::vector<T>& values);
  static Tensor FromStrings(const std::vector<std::string>& values);
  // Views `data` without copying; `release` runs once no Tensor refers to it.
  // REQUIRES: dtype is not kString; `data` holds shape.num_elements() values.
  static Tensor Wrap(DType dtype, TensorShape shape, void* data, std::function<void()> release);

  bool valid() const { return dtype_ != DType::kInvalid; }
  DType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t num_elements() const { return shape_.num_elements(); }
  // num_elements() * DTypeSize(dtype()).
  size_t TotalBytes() const { return static_cast<size_t>(num_elements()) * DTypeSize(dtype_); }

  void* raw_data() const { return data_; }
  // REQUIRES: DTypeOf<T>() == dtype().
  template <class T>
  T* data() const {
    assert(DTypeOf<T>() == dtype_);
    return static_cast<T*>(data_);
  }
  template <class T>
  std::span<T> flat() const {
    return {data<T>(), static_cast<size_t>(num_elements())};
  }
  template <class T>
  T& scalar() const {
    assert(num_elements() == 1);
    return *data<T>();
  }

  // Element i along the first dimension, sharing the buffer.
  // REQUIRES: rank() >= 1 and 0 <= i < shape().dim(0).
  Tensor Slice(int64_t i) const;
  // Rows [begin, end) along the first dimension, sharing the buffer.
  // REQUIRES: rank() >= 1 and 0 <= begin <= end <= shape().dim(0).
  Tensor Slice(int64_t begin, int64_t end) const;
  // [n] + parts' shape, the parts copied in order. Zero-copy when the parts
  // are adjacent slices of one buffer (an enqueue_many batch coming back out
  // whole). InvalidArgument if dtypes or shapes differ.
  static Result<Tensor> Stack(std::span<const Tensor> parts, DType dtype, const TensorShape& part_shape);
  // Joins along the first dimension. InvalidArgument if dtypes differ or the
  // shapes differ beyond the first dimension.
  static Result<Tensor> Concat(std::span<const Tensor> parts);
  // Rows `rows` along the first dimension, in that order, copied into a new
  // tensor (tf.gather on axis 0). REQUIRES: rank() >= 1 and every row index
  // in [0, shape().dim(0)).
  Tensor Gather(std::span<const int64_t> rows) const;

  // Copies this tensor's values into `dst`, which must have the same dtype
  // and number of elements (strings are copied, not shared).
  void CopyTo(const Tensor& dst) const;
  // Copies this tensor into the top-left corner of `dst` (same dtype and
  // rank, every dim of dst >= this one's); the rest of dst is untouched.
  void CopyPaddedTo(const Tensor& dst) const;
  // A copy with its own buffer.
  Tensor DeepCopy() const;

  bool SharesBufferWith(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  const TensorBuffer* buffer() const { return buffer_; }

  // "Tensor<float32 [2,3]: 1 2 3 4 5 6>", at most `max_entries` values.
  std::string DebugString(int max_entries = 8) const;

  // Same dtype, shape and values.
  friend bool ValuesEqual(const Tensor& a, const Tensor& b);

 private:
  // Internal operations for containers of the layers above (the queue's
  // ring) reach private members through this attorney
  // (src/core/tensor_internal.h), not through the public interface.
  friend class internal::TensorAttorney;

  // As Slice, but the view takes over a reference the caller added to
  // buffer() beforehand (see TensorAttorney::SliceAdoptingRef).
  Tensor SliceAdoptingRef(int64_t i) const;
  Tensor SliceAdoptingRef(int64_t begin, int64_t end) const;

  Tensor(DType dtype, TensorShape shape, TensorBuffer* buffer, void* data)
      : dtype_(dtype), shape_(std::move(shape)), buffer_(buffer), data_(data) {}

  DType dtype_ = DType::kInvalid;
  TensorShape shape_;
  TensorBuffer* buffer_ = nullptr;  // one reference held
  void* data_ = nullptr;            // inside buffer_
};

template <class T>
Tensor Tensor::Scalar(T value) {
  Tensor t(DTypeOf<T>(), TensorShape{});
  *t.data<T>() = std::move(value);
  return t;
}

template <class T>
Tensor Tensor::FromVector(const std::vector<T>& values) {
  Tensor t(DTypeOf<T>(), TensorShape{static_cast<int64_t>(values.size())});
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace sluice

#endif  // SLUICE_CORE_TENSOR_H_
