#include "sluice/ops/array_ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "core/tensor_internal.h"

namespace sluice::ops {
namespace {

// Calls fn(T{}) for the dtypes Cast converts between; InvalidArgument naming
// `op` otherwise.
template <class F>
Status DispatchCastable(DType dtype, const char* op, F&& fn) {
  switch (dtype) {
    case DType::kBool: return fn(bool{});
    case DType::kUInt8: return fn(uint8_t{});
    case DType::kInt8: return fn(int8_t{});
    case DType::kUInt16: return fn(uint16_t{});
    case DType::kInt16: return fn(int16_t{});
    case DType::kUInt32: return fn(uint32_t{});
    case DType::kInt32: return fn(int32_t{});
    case DType::kUInt64: return fn(uint64_t{});
    case DType::kInt64: return fn(int64_t{});
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    default:
      return errors::InvalidArgument(op, ": unsupported dtype ", DTypeName(dtype));
  }
}

// One value of `From` as `To`: a float out of To's range saturates (NaN -> 0).
template <class To, class From>
To Convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (!(v == v)) return To{};
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    const double d = static_cast<double>(v);
    if (d <= lo) return std::numeric_limits<To>::lowest();
    if (d >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(v);
  }
}

// Copies `n` values of `size` bytes from `in` (stepping `step` values) to
// contiguous `out`: one memcpy when contiguous, else a typed loop.
void CopyRow(const char* in, int64_t step, int64_t n, size_t size, char* out) {
  if (step == 1) {
    std::memcpy(out, in, static_cast<size_t>(n) * size);
    return;
  }
  auto typed = [&](auto t) {
    using T = decltype(t);
    const T* src = reinterpret_cast<const T*>(in);
    T* dst = reinterpret_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i, src + i * step, sizeof(T));
  };
  switch (size) {
    case 1: typed(uint8_t{}); return;
    case 2: typed(uint16_t{}); return;
    case 4: typed(uint32_t{}); return;
    case 8: typed(uint64_t{}); return;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * size, in + i * step * static_cast<int64_t>(size), size);
  }
}

// A new tensor of `out_shape` whose element (i_0, .., i_k) is x's flat
// element start + sum(i_d * step[d]) (steps in elements, maybe negative).
Tensor GatherView(const Tensor& x, std::span<const int64_t> out_shape, int64_t start, std::span<const int64_t> step) {
  Tensor out(x.dtype(), TensorShape(out_shape));
  const size_t rank = out_shape.size();
  const int64_t total = out.num_elements();
  if (total == 0) return out;
  const int64_t inner = rank == 0 ? 1 : out_shape[rank - 1];
  const int64_t inner_step = rank == 0 ? 1 : step[rank - 1];
  std::vector<int64_t> at(rank == 0 ? 0 : rank - 1, 0);
  const bool strings = x.dtype() == DType::kString;
  const size_t size = DTypeSize(x.dtype());
  for (int64_t row = 0; row * inner < total; ++row) {
    int64_t offset = start;
    for (size_t d = 0; d < at.size(); ++d) offset += at[d] * step[d];
    if (strings) {
      const std::string* in = x.data<std::string>();
      std::string* o = out.data<std::string>() + row * inner;
      for (int64_t i = 0; i < inner; ++i) o[i] = in[offset + i * inner_step];
    } else {
      CopyRow(static_cast<const char*>(x.raw_data()) + offset * static_cast<int64_t>(size), inner_step, inner, size,
              static_cast<char*>(out.raw_data()) + row * inner * static_cast<int64_t>(size));
    }
    for (size_t d = at.size(); d-- > 0;) {
      if (++at[d] < out_shape[d]) break;
      at[d] = 0;
    }
  }
  return out;
}

// Row-major strides (in elements) of `shape`.
std::vector<int64_t> RowMajorSteps(std::span<const int64_t> shape) {
  std::vector<int64_t> step(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) step[d - 1] = step[d] * shape[d];
  return step;
}

}  // namespace

Result<Tensor> Cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor out(dtype, x.shape());
  const int64_t n = x.num_elements();
  SLUICE_RETURN_IF_ERROR(DispatchCastable(x.dtype(), "cast", [&](auto from) {
    using From = decltype(from);
    return DispatchCastable(dtype, "cast", [&](auto to) {
      using To = decltype(to);
      const From* in = x.data<From>();
      To* o = out.data<To>();
      for (int64_t i = 0; i < n; ++i) o[i] = Convert<To>(in[i]);
      return Status();
    });
  }));
  return out;
}

Result<Tensor> Reshape(const Tensor& x, std::span<const int64_t> shape) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0) return errors::InvalidArgument("reshape: only one input size may be -1, not both ", unknown, " and ", i);
      unknown = static_cast<int>(i);
    } else if (dims[i] < 0) {
      return errors::InvalidArgument("reshape: size ", i, " must be non-negative, not ", dims[i]);
    } else {
      known *= dims[i];
    }
  }
  const int64_t n = x.num_elements();
  if (unknown >= 0 && known > 0 && n % known == 0) dims[unknown] = n / known;
  int64_t requested = 1;
  for (int64_t d : dims) requested *= d;
  if ((unknown >= 0 && dims[unknown] < 0) || requested != n) {
    return errors::InvalidArgument("Input to reshape is a tensor with ", n, " values, but the requested shape ",
                                   unknown >= 0 ? "requires a multiple of " : "has ", unknown >= 0 ? known : requested);
  }
  TensorShape out_shape{std::span<const int64_t>(dims)};
  if (x.dtype() == DType::kString) {
    Tensor out(x.dtype(), std::move(out_shape));
    x.CopyTo(out);
    return out;
  }
  // Shares x's buffer itself, so a consumer sees who else holds the bytes.
  return internal::TensorAttorney::Reshaped(x, std::move(out_shape));
}

Result<StridedSliceDims> ResolveStridedSlice(std::span<const int64_t> shape, const StridedSliceSpec& spec) {
  const size_t rank = shape.size();
  if (spec.begin.size() != rank || spec.end.size() != rank || (!spec.strides.empty() && spec.strides.size() != rank)) {
    return errors::InvalidArgument("strided_slice: begin, end and strides must have one entry per dimension of the "
                                   "input (rank ", rank, "), not ", spec.begin.size(), ", ", spec.end.size(), ", ",
                                   spec.strides.size());
  }
  StridedSliceDims out;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = shape[d];
    const int64_t stride = spec.strides.empty() ? 1 : spec.strides[d];
    if (stride == 0) return errors::InvalidArgument("strides[", d, "] must be non-zero");
    const int64_t bit = int64_t{1} << d;
    if ((spec.shrink_axis_mask & bit) != 0) {
      int64_t i = spec.begin[d] < 0 ? spec.begin[d] + dim : spec.begin[d];
      if ((spec.begin_mask & bit) != 0) i = stride > 0 ? 0 : dim - 1;
      if (i < 0 || i >= dim) return errors::InvalidArgument("slice index ", spec.begin[d], " of dimension ", d, " out of bounds.");
      out.start.push_back(i);
      out.stride.push_back(1);
      out.length.push_back(1);
      continue;
    }
    // TF's canonical range: clamped into [0, dim] (forward) or [-1, dim - 1].
    const int64_t lo = stride > 0 ? 0 : -1;
    const int64_t hi = stride > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t v, bool masked, bool is_begin) {
      if (masked) return stride > 0 ? (is_begin ? lo : hi) : (is_begin ? hi : lo);
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    const int64_t b = canonical(spec.begin[d], (spec.begin_mask & bit) != 0, true);
    const int64_t e = canonical(spec.end[d], (spec.end_mask & bit) != 0, false);
    const int64_t span = stride > 0 ? e - b : b - e;
    const int64_t step = stride > 0 ? stride : -stride;
    const int64_t length = span <= 0 ? 0 : (span + step - 1) / step;
    out.start.push_back(b);
    out.stride.push_back(stride);
    out.length.push_back(length);
    out.out_shape.push_back(length);
  }
  return out;
}

Result<Tensor> StridedSlice(const Tensor& x, const StridedSliceSpec& spec) {
  SLUICE_ASSIGN_OR_RETURN(StridedSliceDims dims, ResolveStridedSlice(x.shape().dims(), spec));
  // A view over every input dim (length 1 for a shrunk one), then the output
  // shape drops the shrunk dims; lengths of 0 make the start irrelevant.
  for (int64_t n : dims.length) {
    if (n == 0) return Tensor(x.dtype(), TensorShape(std::span<const int64_t>(dims.out_shape)));
  }
  const std::vector<int64_t> in_step = RowMajorSteps(x.shape().dims());
  int64_t start = 0;
  std::vector<int64_t> step(in_step.size());
  for (size_t d = 0; d < in_step.size(); ++d) {
    start += dims.start[d] * in_step[d];
    step[d] = dims.stride[d] * in_step[d];
  }
  Tensor view = GatherView(x, dims.length, start, step);
  return Reshape(view, dims.out_shape);
}

Result<Tensor> Transpose(const Tensor& x, std::span<const int64_t> perm) {
  const size_t rank = static_cast<size_t>(x.rank());
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    ok = perm[i] >= 0 && static_cast<size_t>(perm[i]) < rank && !seen[perm[i]];
    if (ok) seen[perm[i]] = true;
  }
  if (!ok) return errors::InvalidArgument("transpose: perm must be a permutation of 0 .. ", rank, " - 1 (the input's rank)");
  const auto in = x.shape().dims();
  const std::vector<int64_t> in_step = RowMajorSteps(in);
  // Output dim d walks input dim perm[d].
  std::vector<int64_t> out_shape(rank), step(rank);
  for (size_t d = 0; d < rank; ++d) {
    out_shape[d] = in[perm[d]];
    step[d] = in_step[perm[d]];
  }
  return GatherView(x, out_shape, 0, step);
}

Result<Tensor> OneHot(const Tensor& indices, int64_t depth, float on_value, float off_value) {
  if (depth < 0) return errors::InvalidArgument("one_hot: depth must be non-negative, got: ", depth);
  std::vector<int64_t> dims(indices.shape().dims().begin(), indices.shape().dims().end());
  dims.push_back(depth);
  Tensor out(DType::kFloat32, TensorShape(std::span<const int64_t>(dims)));
  float* o = out.data<float>();
  std::fill(o, o + out.num_elements(), off_value);
  auto fill = [&](auto t) {
    using T = decltype(t);
    const T* in = indices.data<T>();
    for (int64_t i = 0; i < indices.num_elements(); ++i) {
      const int64_t v = static_cast<int64_t>(in[i]);
      if (v >= 0 && v < depth) o[i * depth + v] = on_value;
    }
    return Status();
  };
  switch (indices.dtype()) {
    case DType::kUInt8: SLUICE_RETURN_IF_ERROR(fill(uint8_t{})); break;
    case DType::kInt32: SLUICE_RETURN_IF_ERROR(fill(int32_t{})); break;
    case DType::kInt64: SLUICE_RETURN_IF_ERROR(fill(int64_t{})); break;
    default:
      return errors::InvalidArgument("one_hot: indices must be uint8, int32 or int64, not ", DTypeName(indices.dtype()));
  }
  return out;
}

}  // namespace sluice::ops
