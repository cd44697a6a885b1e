#include "value_buffer.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

namespace sluice::ops::internal {
namespace {

// Writes the first `cap` values, counts all of them.
template <class T>
struct SpanSink {
  T* dst;
  size_t cap;
  size_t n = 0;
  void Add(T v) {
    if (n < cap) dst[n] = v;
    ++n;
  }
  void AddPackedFloats(const uint8_t* p, size_t k) {
    if (n < cap) CopyFloatsLE(p, std::min(k, cap - n), dst + n);
    n += k;
  }
};

struct StringSpanSink {
  std::string* dst;
  size_t cap;
  size_t n = 0;
  void Add(std::string_view v) {
    if (n < cap) dst[n].assign(v.data(), v.size());
    ++n;
  }
};

struct ViewSpanSink {
  std::string_view* dst;
  size_t cap;
  size_t n = 0;
  void Add(std::string_view v) {
    if (n < cap) dst[n] = v;
    ++n;
  }
};

template <class T>
void CopyRange(const T* src, int64_t n, T* dst) {
  std::copy(src, src + n, dst);
}

}  // namespace

int64_t ValueBuffer::size() const {
  switch (dtype) {
    case DType::kInt64:
      return static_cast<int64_t>(int64s.size());
    case DType::kFloat32:
      return static_cast<int64_t>(floats.size());
    default:
      return static_cast<int64_t>(bytes.size());
  }
}

int64_t ValueBuffer::MaxUnitLength() const {
  int64_t m = 0;
  for (int64_t u = 0; u < num_units(); ++u) m = std::max(m, length(u));
  return m;
}

bool AppendFeature(const wire::FeatureRef& f, ValueBuffer* buf) {
  switch (f.kind) {
    case FeatureKind::kInt64: {
      VectorSink<int64_t> sink{&buf->int64s};
      return wire::DecodeFeatureValues<FeatureKind::kInt64>(f, sink);
    }
    case FeatureKind::kFloat: {
      VectorSink<float> sink{&buf->floats};
      return wire::DecodeFeatureValues<FeatureKind::kFloat>(f, sink);
    }
    case FeatureKind::kBytes: {
      VectorSink<std::string_view> sink{&buf->bytes};
      return wire::DecodeFeatureValues<FeatureKind::kBytes>(f, sink);
    }
    case FeatureKind::kNone:
      break;
  }
  return true;
}

bool WriteFeature(const wire::FeatureRef& f, const Tensor& dst, int64_t offset, int64_t cap, int64_t* count) {
  const auto c = static_cast<size_t>(cap);
  bool ok = true;
  size_t n = 0;
  switch (f.kind) {
    case FeatureKind::kInt64: {
      SpanSink<int64_t> sink{dst.data<int64_t>() + offset, c};
      ok = wire::DecodeFeatureValues<FeatureKind::kInt64>(f, sink);
      n = sink.n;
      break;
    }
    case FeatureKind::kFloat: {
      SpanSink<float> sink{dst.data<float>() + offset, c};
      ok = wire::DecodeFeatureValues<FeatureKind::kFloat>(f, sink);
      n = sink.n;
      break;
    }
    case FeatureKind::kBytes: {
      StringSpanSink sink{dst.data<std::string>() + offset, c};
      ok = wire::DecodeFeatureValues<FeatureKind::kBytes>(f, sink);
      n = sink.n;
      break;
    }
    case FeatureKind::kNone:
      break;
  }
  *count = static_cast<int64_t>(n);
  return ok;
}

bool WriteBytesViews(const wire::FeatureRef& f, std::string_view* dst, int64_t cap, int64_t* count) {
  ViewSpanSink sink{dst, static_cast<size_t>(cap)};
  const bool ok = wire::DecodeFeatureValues<FeatureKind::kBytes>(f, sink);
  *count = static_cast<int64_t>(sink.n);
  return ok;
}

void CopyValues(const ValueBuffer& buf, int64_t begin, int64_t end, const Tensor& dst, int64_t dst_offset) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  switch (buf.dtype) {
    case DType::kInt64:
      CopyRange(buf.int64s.data() + begin, n, dst.data<int64_t>() + dst_offset);
      break;
    case DType::kFloat32:
      CopyRange(buf.floats.data() + begin, n, dst.data<float>() + dst_offset);
      break;
    default: {
      std::string* out = dst.data<std::string>() + dst_offset;
      for (int64_t i = 0; i < n; ++i) {
        const std::string_view v = buf.bytes[static_cast<size_t>(begin + i)];
        out[i].assign(v.data(), v.size());
      }
    }
  }
}

Tensor ValuesTensor(const ValueBuffer& buf, int64_t begin, int64_t end) {
  Tensor t(buf.dtype, TensorShape{end - begin});
  CopyValues(buf, begin, end, t, 0);
  return t;
}

void Fill(const Tensor& dst, const Tensor& value) {
  const int64_t n = dst.num_elements();
  switch (dst.dtype()) {
    case DType::kInt64:
      std::fill_n(dst.data<int64_t>(), n, value.scalar<int64_t>());
      break;
    case DType::kFloat32:
      std::fill_n(dst.data<float>(), n, value.scalar<float>());
      break;
    default:
      std::fill_n(dst.data<std::string>(), n, value.scalar<std::string>());
  }
}

void CopyInto(const Tensor& src, const Tensor& dst, int64_t dst_offset) {
  const int64_t n = src.num_elements();
  switch (src.dtype()) {
    case DType::kInt64:
      CopyRange(src.data<int64_t>(), n, dst.data<int64_t>() + dst_offset);
      break;
    case DType::kFloat32:
      CopyRange(src.data<float>(), n, dst.data<float>() + dst_offset);
      break;
    default:
      CopyRange(src.data<std::string>(), n, dst.data<std::string>() + dst_offset);
  }
}

Tensor IndicesTensor(int64_t n, int64_t cols) { return Tensor::Zeros(DType::kInt64, TensorShape{n, cols}); }

SparseTensor BuildVarLenSparse(const ValueBuffer& buf, bool batched) {
  SparseTensor st;
  BuildVarLenSparse(buf, batched, &st);
  return st;
}

namespace {

// The indices [n, 1] = 0..n-1 and dense_shape [1] = n of a one-record
// VarLen output depend on n alone, so for small n they are built once and
// shared (tensors are immutable once built, as the shared default values
// are): they were two of the three allocations of every VarLen output of a
// single-record parse (docs/perf/example-parsing.md).
struct SingleIndexTensors {
  static constexpr int64_t kMax = 64;
  Tensor indices[kMax + 1];
  Tensor dense_shape[kMax + 1];
  SingleIndexTensors() {
    for (int64_t n = 0; n <= kMax; ++n) {
      indices[n] = Tensor(DType::kInt64, TensorShape{n, 1});
      for (int64_t i = 0; i < n; ++i) indices[n].data<int64_t>()[i] = i;
      dense_shape[n] = Tensor(DType::kInt64, TensorShape{1});
      dense_shape[n].data<int64_t>()[0] = n;
    }
  }
};

}  // namespace

void BuildVarLenSparse(const ValueBuffer& buf, bool batched, SparseTensor* st) {
  const int64_t n = buf.size();
  st->values = ValuesTensor(buf, 0, n);
  if (!batched) {
    static const SingleIndexTensors* const shared = new SingleIndexTensors();  // never freed: shared forever
    if (n <= SingleIndexTensors::kMax) {
      st->indices = shared->indices[n];
      st->dense_shape = shared->dense_shape[n];
      return;
    }
    st->indices = Tensor(DType::kInt64, TensorShape{n, 1});
    int64_t* ix = st->indices.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) ix[i] = i;
    st->dense_shape = Tensor(DType::kInt64, TensorShape{1});
    st->dense_shape.data<int64_t>()[0] = n;
    return;
  }
  st->indices = Tensor(DType::kInt64, TensorShape{n, 2});
  int64_t* ix = st->indices.data<int64_t>();
  for (int64_t u = 0; u < buf.num_units(); ++u) {
    for (int64_t j = 0; j < buf.length(u); ++j) {
      *ix++ = u;
      *ix++ = j;
    }
  }
  st->dense_shape = Tensor(DType::kInt64, TensorShape{2});
  st->dense_shape.data<int64_t>()[0] = buf.num_units();
  st->dense_shape.data<int64_t>()[1] = buf.MaxUnitLength();
}

Tensor BuildPaddedDense(const ValueBuffer& buf, const TensorShape& row_shape, int64_t stride, const Tensor& pad,
                        bool batched) {
  if (!batched) {
    Tensor t(buf.dtype, row_shape.WithFirstDim(buf.size() / stride));
    CopyValues(buf, 0, buf.size(), t, 0);
    return t;
  }
  const int64_t max_rows = buf.MaxUnitLength() / stride;
  TensorShape shape = row_shape.WithFirstDim(max_rows);
  shape.InsertDim(0, buf.num_units());
  Tensor t(buf.dtype, std::move(shape));
  Fill(t, pad);
  for (int64_t u = 0; u < buf.num_units(); ++u) {
    CopyValues(buf, buf.begin(u), buf.end(u), t, u * max_rows * stride);
  }
  return t;
}

}  // namespace sluice::ops::internal
