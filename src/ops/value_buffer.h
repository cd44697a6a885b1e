// ValueBuffer: the values of one feature key collected over a batch, before
// the output tensors are built (private to the ops layer).
//
// Values are appended unit by unit (a unit is a record, or one row of a
// feature list); `ends` records where each unit stops. Bytes values are
// string_views into the serialized records, so the records must outlive the
// buffer; they are copied once, into the output tensors.
#ifndef SLUICE_SRC_OPS_VALUE_BUFFER_H_
#define SLUICE_SRC_OPS_VALUE_BUFFER_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "sluice/core/tensor.h"
#include "sluice/ops/composite_tensor.h"
#include "wire_format.h"

namespace sluice::ops::internal {

struct ValueBuffer {
  DType dtype = DType::kInvalid;  // kInt64, kFloat32 or kString
  std::vector<int64_t> int64s;
  std::vector<float> floats;
  std::vector<std::string_view> bytes;
  std::vector<int64_t> ends;  // value count after each unit

  int64_t size() const;
  int64_t num_units() const { return static_cast<int64_t>(ends.size()); }
  int64_t begin(int64_t u) const { return u == 0 ? 0 : ends[static_cast<size_t>(u - 1)]; }
  int64_t end(int64_t u) const { return ends[static_cast<size_t>(u)]; }
  int64_t length(int64_t u) const { return end(u) - begin(u); }
  void EndUnit() { ends.push_back(size()); }
  int64_t MaxUnitLength() const;
  // REQUIRES: dtype == kInt64.
  std::span<const int64_t> Int64s(int64_t u) const {
    return {int64s.data() + begin(u), static_cast<size_t>(length(u))};
  }
};

// Copies n little-endian floats.
inline void CopyFloatsLE(const uint8_t* src, size_t n, float* dst) {
  if (n == 0) return;  // dst may be the null data() of an empty vector
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, src, n * 4);
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(wire::LoadLE32(src + 4 * i));
  }
}

// A wire-format sink appending to a vector.
template <class T>
struct VectorSink {
  std::vector<T>* out;
  void Add(T v) { out->push_back(v); }
  void AddPackedFloats(const uint8_t* p, size_t n) {
    const size_t old = out->size();
    out->resize(old + n);
    CopyFloatsLE(p, n, out->data() + old);
  }
};

// Appends the values of `f` to `buf`. REQUIRES: KindDType(f.kind) ==
// buf->dtype. False when the values are malformed.
bool AppendFeature(const wire::FeatureRef& f, ValueBuffer* buf);

// Decodes `f` into elements [offset, offset + cap) of `dst` and sets *count
// to the number of values it holds (only the first `cap` are written).
// REQUIRES: KindDType(f.kind) == dst.dtype(). False when malformed.
bool WriteFeature(const wire::FeatureRef& f, const Tensor& dst, int64_t offset, int64_t cap, int64_t* count);

// Views mode: the bytes values of `f` as views into its record, into
// dst[0, cap); *count as WriteFeature. REQUIRES: f.kind == kBytes.
bool WriteBytesViews(const wire::FeatureRef& f, std::string_view* dst, int64_t cap, int64_t* count);

// Copies values [begin, end) of `buf` into `dst` from element dst_offset.
void CopyValues(const ValueBuffer& buf, int64_t begin, int64_t end, const Tensor& dst, int64_t dst_offset);
// Values [begin, end) as a new rank-1 tensor.
Tensor ValuesTensor(const ValueBuffer& buf, int64_t begin, int64_t end);
// Sets every element of `dst` to the scalar `value`.
void Fill(const Tensor& dst, const Tensor& value);
// Copies the elements of `src` into `dst` from element dst_offset.
void CopyInto(const Tensor& src, const Tensor& dst, int64_t dst_offset);

// A VarLenFeature result. Batched: indices [n, 2] (unit, position),
// dense_shape [units, longest unit]. Single (one unit): indices [n, 1],
// dense_shape [n].
SparseTensor BuildVarLenSparse(const ValueBuffer& buf, bool batched);
// The same, into *st.
void BuildVarLenSparse(const ValueBuffer& buf, bool batched, SparseTensor* st);

// Units of rows of `stride` values. Batched: [units, most rows] + row_shape,
// short units padded with the scalar `pad`. Single (one unit):
// [rows] + row_shape.
Tensor BuildPaddedDense(const ValueBuffer& buf, const TensorShape& row_shape, int64_t stride, const Tensor& pad,
                        bool batched);

// An int64 tensor [n, cols] of zeros.
Tensor IndicesTensor(int64_t n, int64_t cols);

}  // namespace sluice::ops::internal

#endif  // SLUICE_SRC_OPS_VALUE_BUFFER_H_
