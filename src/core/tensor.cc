#include "sluice/core/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

#include "core/block_cache.h"
#include "core/bulk_copy.h"

namespace sluice {
namespace {

constexpr uintptr_t RoundUp(uintptr_t n, uintptr_t a) { return (n + a - 1) / a * a; }

// Copies `n` elements of `dtype` from src to dst (strings by assignment).
void CopyElements(DType dtype, const void* src, void* dst, int64_t n) {
  if (n <= 0) return;  // memcpy must not see the null data of an empty Wrap
  if (dtype == DType::kString) {
    const auto* s = static_cast<const std::string*>(src);
    auto* d = static_cast<std::string*>(dst);
    std::copy(s, s + n, d);
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n) * DTypeSize(dtype));
  }
}

}  // namespace

size_t TensorBuffer::BlockBytes(size_t data_bytes) { return sizeof(TensorBuffer) + kAlignment + data_bytes; }

TensorBuffer* TensorBuffer::Allocate(DType dtype, int64_t num_elements) {
  // Header and data in one malloc block, the data 64-byte aligned after the
  // header. Plain malloc rather than aligned_alloc: glibc serves malloc from
  // its per-thread cache, but aligned_alloc from the arena under a lock, which
  // made small tensors (one per queue element) several times slower. Large
  // blocks go through the BlockCache (see core/block_cache.h).
  const size_t bytes = static_cast<size_t>(num_elements) * DTypeSize(dtype);
  void* mem = internal::BlockCache::Get().Allocate(BlockBytes(bytes));
  if (mem == nullptr) throw std::bad_alloc();
  auto* buf = new (mem) TensorBuffer();
  const auto after_header = reinterpret_cast<uintptr_t>(static_cast<char*>(mem) + sizeof(TensorBuffer));
  buf->data_ = reinterpret_cast<void*>(RoundUp(after_header, kAlignment));
  buf->size_ = bytes;
  if (dtype == DType::kString) {
    auto* s = static_cast<std::string*>(buf->data_);
    for (int64_t i = 0; i < num_elements; ++i) new (s + i) std::string();
    buf->num_strings_ = num_elements;
  }
  return buf;
}

TensorBuffer* TensorBuffer::Wrap(void* data, size_t size, std::function<void()> release) {
  void* mem = std::malloc(sizeof(TensorBuffer));
  if (mem == nullptr) throw std::bad_alloc();
  auto* buf = new (mem) TensorBuffer();
  buf->data_ = data;
  buf->size_ = size;
  buf->release_ = release ? std::move(release) : [] {};
  return buf;
}

void TensorBuffer::Free() const {
  auto* self = const_cast<TensorBuffer*>(this);
  if (self->release_) {
    self->release_();
  } else {
    auto* s = static_cast<std::string*>(self->data_);
    for (int64_t i = 0; i < num_strings_; ++i) s[i].~basic_string();
  }
  const bool owned = !self->release_;
  const size_t block = BlockBytes(self->size_);
  self->~TensorBuffer();
  if (owned) {
    internal::BlockCache::Get().Free(self, block);
  } else {
    std::free(self);  // Wrap: the header alone
  }
}

Tensor::Tensor(DType dtype, TensorShape shape) : dtype_(dtype), shape_(std::move(shape)) {
  assert(DTypeSize(dtype) > 0);
  buffer_ = TensorBuffer::Allocate(dtype, shape_.num_elements());
  data_ = buffer_->data();
}

Tensor Tensor::Zeros(DType dtype, TensorShape shape) {
  Tensor t(dtype, std::move(shape));
  if (dtype != DType::kString) std::memset(t.data_, 0, t.TotalBytes());
  return t;
}

Tensor Tensor::String(std::string_view value) {
  Tensor t(DType::kString, TensorShape{});
  t.data<std::string>()->assign(value);
  return t;
}

Tensor Tensor::FromStrings(const std::vector<std::string>& values) {
  Tensor t(DType::kString, TensorShape{static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.data<std::string>());
  return t;
}

Tensor Tensor::Wrap(DType dtype, TensorShape shape, void* data, std::function<void()> release) {
  assert(dtype != DType::kString);
  const size_t bytes = static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype);
  TensorBuffer* buf = TensorBuffer::Wrap(data, bytes, std::move(release));
  return Tensor(dtype, std::move(shape), buf, data);
}

// The view first (its shape may allocate, and throw), then its reference.
Tensor Tensor::Slice(int64_t i) const {
  Tensor view = SliceAdoptingRef(i);
  buffer_->Ref();
  return view;
}

Tensor Tensor::Slice(int64_t begin, int64_t end) const {
  Tensor view = SliceAdoptingRef(begin, end);
  buffer_->Ref();
  return view;
}

Tensor Tensor::SliceAdoptingRef(int64_t i) const {
  assert(rank() >= 1 && i >= 0 && i < shape_.dim(0));
  TensorShape row = shape_.WithoutFirstDim();
  const size_t row_bytes = static_cast<size_t>(row.num_elements()) * DTypeSize(dtype_);
  return Tensor(dtype_, std::move(row), buffer_, static_cast<char*>(data_) + i * row_bytes);
}

Tensor Tensor::SliceAdoptingRef(int64_t begin, int64_t end) const {
  assert(rank() >= 1 && 0 <= begin && begin <= end && end <= shape_.dim(0));
  TensorShape out = shape_;
  out.set_dim(0, end - begin);
  const size_t row_bytes = shape_.dim(0) == 0 ? 0 : TotalBytes() / static_cast<size_t>(shape_.dim(0));
  return Tensor(dtype_, std::move(out), buffer_, static_cast<char*>(data_) + begin * row_bytes);
}

Result<Tensor> Tensor::Stack(std::span<const Tensor> parts, DType dtype, const TensorShape& part_shape) {
  const size_t part_bytes = static_cast<size_t>(part_shape.num_elements()) * DTypeSize(dtype);
  bool adjacent = !parts.empty() && part_bytes > 0 && parts[0].buffer_ != nullptr;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& p = parts[i];
    if (p.dtype_ != dtype || p.shape_ != part_shape) {
      return errors::InvalidArgument("Cannot stack part ", i, " of ", DTypeName(p.dtype_), " ",
                                     p.shape_.DebugString(), " with parts of ", DTypeName(dtype), " ",
                                     part_shape.DebugString());
    }
    adjacent = adjacent && p.buffer_ == parts[0].buffer_ &&
               p.data_ == static_cast<char*>(parts[0].data_) + i * part_bytes;
  }
  TensorShape out_shape = part_shape.WithFirstDim(static_cast<int64_t>(parts.size()));
  if (adjacent) {
    parts[0].buffer_->Ref();
    return Tensor(dtype, std::move(out_shape), parts[0].buffer_, parts[0].data_);
  }
  Tensor out(dtype, std::move(out_shape));
  char* dst = static_cast<char*>(out.data_);
  for (const Tensor& p : parts) {
    if (dtype == DType::kString) {
      CopyElements(dtype, p.data_, dst, part_shape.num_elements());
    } else {
      internal::BulkCopy(dst, p.data_, part_bytes);  // large rows bypass the cache
    }
    dst += part_bytes;
  }
  return out;
}

Tensor Tensor::Gather(std::span<const int64_t> rows) const {
  assert(rank() >= 1);
  std::vector<Tensor> parts;
  parts.reserve(rows.size());
  for (int64_t r : rows) parts.push_back(Slice(r));
  Result<Tensor> stacked = Stack(parts, dtype_, shape_.WithoutFirstDim());
  assert(stacked.ok());  // rows of one tensor always stack
  return std::move(stacked).value();
}

Result<Tensor> Tensor::Concat(std::span<const Tensor> parts) {
  if (parts.empty()) return errors::InvalidArgument("Concat needs at least one tensor");
  const Tensor& first = parts[0];
  if (first.rank() < 1) return errors::InvalidArgument("Concat needs tensors of rank >= 1");
  TensorShape row = first.shape_.WithoutFirstDim();
  int64_t total = 0;
  for (const Tensor& p : parts) {
    if (p.dtype_ != first.dtype_ || p.rank() < 1 || p.shape_.WithoutFirstDim() != row) {
      return errors::InvalidArgument("Cannot concatenate ", DTypeName(p.dtype_), " ",
                                     p.shape_.DebugString(), " with ", DTypeName(first.dtype_), " ",
                                     first.shape_.DebugString());
    }
    total += p.shape_.dim(0);
  }
  Tensor out(first.dtype_, row.WithFirstDim(total));
  char* dst = static_cast<char*>(out.data_);
  for (const Tensor& p : parts) {
    CopyElements(p.dtype_, p.data_, dst, p.num_elements());
    dst += p.TotalBytes();
  }
  return out;
}

void Tensor::CopyTo(const Tensor& dst) const {
  assert(dst.dtype_ == dtype_ && dst.num_elements() == num_elements());
  CopyElements(dtype_, data_, dst.data_, num_elements());
}

void Tensor::CopyPaddedTo(const Tensor& dst) const {
  assert(dst.dtype_ == dtype_ && dst.rank() == rank());
  if (num_elements() == 0) return;
  if (rank() == 0 || shape_ == dst.shape_) {
    CopyTo(dst);
    return;
  }
  // Copy contiguous innermost rows; walk the outer dimensions as a counter.
  const int r = rank();
  const int64_t inner = shape_.dim(r - 1);
  const size_t esize = DTypeSize(dtype_);
  std::vector<int64_t> idx(static_cast<size_t>(r - 1), 0);
  std::vector<int64_t> dst_strides(static_cast<size_t>(r), 1);
  for (int i = r - 2; i >= 0; --i) dst_strides[i] = dst_strides[i + 1] * dst.shape_.dim(i + 1);
  const int64_t rows = num_elements() / inner;
  const char* src = static_cast<const char*>(data_);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (int i = 0; i < r - 1; ++i) offset += idx[i] * dst_strides[i];
    CopyElements(dtype_, src + row * inner * esize, static_cast<char*>(dst.data_) + offset * esize, inner);
    for (int i = r - 2; i >= 0; --i) {
      if (++idx[i] < shape_.dim(i)) break;
      idx[i] = 0;
    }
  }
}

Tensor Tensor::DeepCopy() const {
  if (!valid()) return Tensor();
  Tensor out(dtype_, shape_);
  CopyTo(out);
  return out;
}

namespace {
template <class T>
void AppendValue(std::ostringstream& os, const void* data, int64_t i) {
  os << static_cast<const T*>(data)[i];
}
}  // namespace

std::string Tensor::DebugString(int max_entries) const {
  std::ostringstream os;
  os << "Tensor<" << DTypeName(dtype_) << " " << shape_.DebugString();
  if (!valid()) return "Tensor<invalid>";
  os << ":";
  const int64_t n = std::min<int64_t>(num_elements(), max_entries);
  for (int64_t i = 0; i < n; ++i) {
    os << " ";
    switch (dtype_) {
      case DType::kFloat32: AppendValue<float>(os, data_, i); break;
      case DType::kFloat64: AppendValue<double>(os, data_, i); break;
      case DType::kInt32: AppendValue<int32_t>(os, data_, i); break;
      case DType::kInt64: AppendValue<int64_t>(os, data_, i); break;
      case DType::kInt16: AppendValue<int16_t>(os, data_, i); break;
      case DType::kUInt16: AppendValue<uint16_t>(os, data_, i); break;
      case DType::kUInt32: AppendValue<uint32_t>(os, data_, i); break;
      case DType::kUInt64: AppendValue<uint64_t>(os, data_, i); break;
      case DType::kInt8: os << int{static_cast<const int8_t*>(data_)[i]}; break;
      case DType::kUInt8: os << int{static_cast<const uint8_t*>(data_)[i]}; break;
      case DType::kBool: os << (static_cast<const bool*>(data_)[i] ? "true" : "false"); break;
      case DType::kString: os << '"' << static_cast<const std::string*>(data_)[i] << '"'; break;
      default: os << "?"; break;
    }
  }
  if (num_elements() > n) os << " ...";
  os << ">";
  return os.str();
}

bool ValuesEqual(const Tensor& a, const Tensor& b) {
  if (a.dtype_ != b.dtype_ || a.shape_ != b.shape_) return false;
  if (a.dtype_ == DType::kString) {
    auto x = a.flat<std::string>();
    auto y = b.flat<std::string>();
    return std::equal(x.begin(), x.end(), y.begin());
  }
  // No bytes: equal (and memcmp must not see the null data of invalid tensors).
  if (a.TotalBytes() == 0) return true;
  return std::memcmp(a.data_, b.data_, a.TotalBytes()) == 0;
}

}  // namespace sluice
