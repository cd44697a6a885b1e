#include "sluice/data/native_ops.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <bit>
#include <memory>
#include <string>
#include <utility>

#include "sluice/image/color.h"
#include "sluice/image/geometry.h"
#include "sluice/image/normalize.h"
#include "sluice/image/resize.h"
#include "sluice/ops/decode_raw.h"

namespace sluice::data {
namespace {

using TensorFn = std::function<Result<Tensor>(const Tensor&, uint64_t seed)>;

Status CheckIndex(const ElementSpec& input, size_t component, const char* op) {
  if (component < input.size()) return Status();
  return errors::InvalidArgument(op, ": component ", component, " is out of range (the input has ", input.size(),
                                 " components)");
}

// The seed of element `at` of a map seeded `seed`.
uint64_t ElementSeed(uint64_t seed, ElementIndex at) {
  return train::SeedStream::SeedFor(train::SeedStream::SeedFor(seed, at.epoch), at.index);
}

// A map replacing `component` by fn(component, element seed), of signature
// (dtype, shape); dtype kInvalid keeps the input's.
Result<NativeMap> ComponentMap(const ElementSpec& input, size_t component, const char* op, DType dtype,
                               PartialShape shape, uint64_t seed, TensorFn fn) {
  SLUICE_RETURN_IF_ERROR(CheckIndex(input, component, op));
  NativeMap out;
  out.spec = input;
  if (dtype != DType::kInvalid) out.spec.dtypes[component] = dtype;
  out.spec.shapes[component] = std::move(shape);
  out.fn = [component, seed, fn = std::move(fn), op](Element e, ElementIndex at) -> Result<Element> {
    if (component >= e.size()) {
      return errors::InvalidArgument(op, ": the element has no component ", component);
    }
    SLUICE_ASSIGN_OR_RETURN(Tensor t, fn(e[component], ElementSeed(seed, at)));
    e[component] = std::move(t);
    return e;
  };
  return out;
}

// A map whose function ignores the seed.
Result<NativeMap> PlainMap(const ElementSpec& input, size_t component, const char* op, DType dtype,
                           PartialShape shape, std::function<Result<Tensor>(const Tensor&)> fn) {
  return ComponentMap(input, component, op, dtype, std::move(shape), 0,
                      [fn = std::move(fn)](const Tensor& t, uint64_t) { return fn(t); });
}

const PartialShape& ShapeOf(const ElementSpec& input, size_t component) {
  static const PartialShape unknown;
  return component < input.size() ? input.shapes[component] : unknown;
}

DType DTypeOf(const ElementSpec& input, size_t component) {
  return component < input.size() ? input.dtypes[component] : DType::kInvalid;
}

// The input's shape when known to be of one of `ranks`, InvalidArgument
// (naming `op`) when known to be of another rank.
Status CheckRank(const ElementSpec& input, size_t component, const char* op, int lo, int hi) {
  const PartialShape& s = ShapeOf(input, component);
  if (!s.rank_known() || (s.rank() >= lo && s.rank() <= hi)) return Status();
  return errors::InvalidArgument(op, ": component ", component, " must have rank ", lo, lo == hi ? "" : " to ",
                                 lo == hi ? "" : std::to_string(hi), ", not ", s.DebugString());
}

}  // namespace

Result<NativeMap> DecodeRawMap(const ElementSpec& input, size_t component, DType out_type, bool little_endian) {
  const DType in = DTypeOf(input, component);
  if (in != DType::kInvalid && in != DType::kString) {
    return errors::InvalidArgument("decode_raw: component ", component, " must be a string, not ", DTypeName(in));
  }
  if (out_type == DType::kString || out_type == DType::kInvalid) {
    return errors::InvalidArgument("decode_raw: out_type must be numeric, not ", DTypeName(out_type));
  }
  PartialShape shape;
  if (ShapeOf(input, component).rank_known()) {
    std::vector<int64_t> dims = ShapeOf(input, component).dims();
    dims.push_back(-1);
    shape = PartialShape(std::move(dims));
  }
  return PlainMap(input, component, "decode_raw", out_type, std::move(shape),
                  [out_type, little_endian](const Tensor& t) { return ops::DecodeRaw(t, out_type, little_endian); });
}

Result<NativeMap> CastMap(const ElementSpec& input, size_t component, DType dtype) {
  SLUICE_RETURN_IF_ERROR(ops::Cast(Tensor(DType::kInt32, TensorShape{}), dtype).status());
  const DType in = DTypeOf(input, component);
  if (in != DType::kInvalid && in != dtype) SLUICE_RETURN_IF_ERROR(ops::Cast(Tensor(in, TensorShape{}), dtype).status());
  return PlainMap(input, component, "cast", dtype, ShapeOf(input, component),
                  [dtype](const Tensor& t) { return ops::Cast(t, dtype); });
}

Result<NativeMap> ReshapeMap(const ElementSpec& input, size_t component, std::vector<int64_t> shape) {
  PartialShape out(shape);
  const PartialShape& in = ShapeOf(input, component);
  if (in.fully_defined()) {
    SLUICE_ASSIGN_OR_RETURN(Tensor probe, ops::Reshape(Tensor(DType::kUInt8, in.ToTensorShape()), shape));
    out = PartialShape(probe.shape());
  }
  return PlainMap(input, component, "reshape", DType::kInvalid, std::move(out),
                  [shape = std::move(shape)](const Tensor& t) { return ops::Reshape(t, shape); });
}

Result<NativeMap> StridedSliceMap(const ElementSpec& input, size_t component, ops::StridedSliceSpec spec) {
  const PartialShape& in = ShapeOf(input, component);
  PartialShape out;
  if (in.fully_defined()) {
    SLUICE_ASSIGN_OR_RETURN(ops::StridedSliceDims dims, ops::ResolveStridedSlice(in.dims(), spec));
    out = PartialShape(std::move(dims.out_shape));
  } else if (in.rank_known()) {
    if (static_cast<size_t>(in.rank()) != spec.begin.size()) {
      return errors::InvalidArgument("strided_slice: begin has ", spec.begin.size(), " entries for an input of rank ",
                                     in.rank());
    }
    out = PartialShape(std::vector<int64_t>(in.rank() - std::popcount(static_cast<uint64_t>(spec.shrink_axis_mask)), -1));
  }
  return PlainMap(input, component, "strided_slice", DType::kInvalid, std::move(out),
                  [spec = std::move(spec)](const Tensor& t) { return ops::StridedSlice(t, spec); });
}

Result<NativeMap> SliceMap(const ElementSpec& input, size_t component, const std::vector<int64_t>& begin,
                           const std::vector<int64_t>& size) {
  if (begin.size() != size.size()) {
    return errors::InvalidArgument("slice: begin and size must have the same length, not ", begin.size(), " and ",
                                   size.size());
  }
  ops::StridedSliceSpec spec;
  spec.begin = begin;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < -1 || begin[d] < 0) return errors::InvalidArgument("slice: begin must be >= 0 and size >= -1");
    if (size[d] == -1) spec.end_mask |= int64_t{1} << d;
    spec.end.push_back(size[d] == -1 ? 0 : begin[d] + size[d]);
  }
  return StridedSliceMap(input, component, std::move(spec));
}

Result<NativeMap> TransposeMap(const ElementSpec& input, size_t component, std::vector<int64_t> perm) {
  const PartialShape& in = ShapeOf(input, component);
  PartialShape out;
  if (in.rank_known()) {
    if (static_cast<size_t>(in.rank()) != perm.size()) {
      return errors::InvalidArgument("transpose: perm has ", perm.size(), " entries for an input of rank ", in.rank());
    }
    std::vector<int64_t> dims;
    for (int64_t p : perm) {
      if (p < 0 || p >= in.rank()) return errors::InvalidArgument("transpose: perm entry ", p, " is out of range");
      dims.push_back(in.dim(static_cast<int>(p)));
    }
    out = PartialShape(std::move(dims));
  }
  return PlainMap(input, component, "transpose", DType::kInvalid, std::move(out),
                  [perm = std::move(perm)](const Tensor& t) { return ops::Transpose(t, perm); });
}

Result<NativeMap> RandomCropMap(const ElementSpec& input, size_t component, std::vector<int64_t> size, uint64_t seed) {
  const PartialShape& in = ShapeOf(input, component);
  if (in.rank_known() && static_cast<size_t>(in.rank()) != size.size()) {
    return errors::InvalidArgument("random_crop: size has ", size.size(), " entries for an input of rank ", in.rank());
  }
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < 0 || (in.rank_known() && in.dim(static_cast<int>(d)) >= 0 && size[d] > in.dim(static_cast<int>(d)))) {
      return errors::InvalidArgument("random_crop: Need value.shape >= size, got ", in.DebugString());
    }
  }
  PartialShape out(size);
  return ComponentMap(input, component, "random_crop", DType::kInvalid, std::move(out), seed,
                      [size = std::move(size)](const Tensor& t, uint64_t s) { return image::RandomCrop(t, size, s); });
}

Result<NativeMap> RandomFlipLeftRightMap(const ElementSpec& input, size_t component, uint64_t seed) {
  SLUICE_RETURN_IF_ERROR(CheckRank(input, component, "random_flip_left_right", 3, 4));
  return ComponentMap(input, component, "random_flip_left_right", DType::kInvalid, ShapeOf(input, component), seed,
                      [](const Tensor& t, uint64_t s) { return image::RandomFlipLeftRight(t, s); });
}

Result<NativeMap> RandomFlipUpDownMap(const ElementSpec& input, size_t component, uint64_t seed) {
  SLUICE_RETURN_IF_ERROR(CheckRank(input, component, "random_flip_up_down", 3, 4));
  return ComponentMap(input, component, "random_flip_up_down", DType::kInvalid, ShapeOf(input, component), seed,
                      [](const Tensor& t, uint64_t s) { return image::RandomFlipUpDown(t, s); });
}

Result<NativeMap> RandomBrightnessMap(const ElementSpec& input, size_t component, float max_delta, uint64_t seed) {
  if (!(max_delta >= 0.0f)) return errors::InvalidArgument("random_brightness: max_delta must be non-negative.");
  return ComponentMap(input, component, "random_brightness", DType::kInvalid, ShapeOf(input, component), seed,
                      [max_delta](const Tensor& t, uint64_t s) { return image::RandomBrightness(t, max_delta, s); });
}

Result<NativeMap> RandomContrastMap(const ElementSpec& input, size_t component, float lower, float upper,
                                    uint64_t seed) {
  if (!(upper > lower)) return errors::InvalidArgument("random_contrast: upper must be > lower.");
  if (!(lower >= 0.0f)) return errors::InvalidArgument("random_contrast: lower must be non-negative.");
  SLUICE_RETURN_IF_ERROR(CheckRank(input, component, "random_contrast", 3, 8));
  return ComponentMap(input, component, "random_contrast", DType::kInvalid, ShapeOf(input, component), seed,
                      [lower, upper](const Tensor& t, uint64_t s) { return image::RandomContrast(t, lower, upper, s); });
}

Result<NativeMap> PerImageStandardizationMap(const ElementSpec& input, size_t component) {
  SLUICE_RETURN_IF_ERROR(CheckRank(input, component, "per_image_standardization", 3, 4));
  return PlainMap(input, component, "per_image_standardization", DType::kFloat32, ShapeOf(input, component),
                  [](const Tensor& t) { return image::PerImageStandardization(t); });
}

Result<NativeMap> ResizeBilinearMap(const ElementSpec& input, size_t component, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0) {
    return errors::InvalidArgument("resize: size must be positive, not [", height, ", ", width, "]");
  }
  SLUICE_RETURN_IF_ERROR(CheckRank(input, component, "resize", 3, 4));
  const PartialShape& in = ShapeOf(input, component);
  PartialShape out;
  if (in.rank_known()) {
    std::vector<int64_t> dims = in.dims();
    dims[dims.size() - 3] = height;
    dims[dims.size() - 2] = width;
    out = PartialShape(std::move(dims));
  }
  image::ResizeOptions options;
  options.height = height;
  options.width = width;
  return PlainMap(input, component, "resize", DType::kFloat32, std::move(out),
                  [options](const Tensor& t) { return image::Resize(t, options); });
}

Result<NativeMap> NormalizeMap(const ElementSpec& input, size_t component, std::vector<float> mean,
                               std::vector<float> stddev) {
  SLUICE_RETURN_IF_ERROR(CheckRank(input, component, "normalize", 3, 4));
  image::NormalizeOptions options;
  options.mean = std::move(mean);
  options.stddev = std::move(stddev);
  for (float s : options.stddev) {
    if (!(s > 0.0f)) return errors::InvalidArgument("normalize: std values must be positive");
  }
  return PlainMap(input, component, "normalize", DType::kFloat32, ShapeOf(input, component),
                  [options = std::move(options)](const Tensor& t) { return image::Normalize(t, options); });
}

namespace {

template <class T>
Result<Tensor> ApplyScalar(const Tensor& x, ScalarOp op, T v) {
  Tensor out(x.dtype(), x.shape());
  const T* in = x.data<T>();
  T* o = out.data<T>();
  const int64_t n = x.num_elements();
  switch (op) {
    case ScalarOp::kAdd: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(in[i] + v); break;
    case ScalarOp::kSub: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(in[i] - v); break;
    case ScalarOp::kReverseSub: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(v - in[i]); break;
    case ScalarOp::kMul: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(in[i] * v); break;
    case ScalarOp::kDiv: for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(in[i] / v); break;
  }
  return out;
}

}  // namespace

Result<NativeMap> ScalarArithmeticMap(const ElementSpec& input, size_t component, ScalarOp op, double value) {
  const DType in = DTypeOf(input, component);
  const bool is_float = in == DType::kFloat32 || in == DType::kFloat64;
  if (in != DType::kInvalid && !is_float && in != DType::kInt32 && in != DType::kInt64) {
    return errors::InvalidArgument("scalar arithmetic: unsupported dtype ", DTypeName(in));
  }
  if (in != DType::kInvalid && !is_float && op == ScalarOp::kDiv) {
    return errors::InvalidArgument("scalar arithmetic: no native integer division");
  }
  return PlainMap(input, component, "scalar arithmetic", DType::kInvalid, ShapeOf(input, component),
                  [op, value](const Tensor& t) -> Result<Tensor> {
                    switch (t.dtype()) {
                      case DType::kFloat32: return ApplyScalar<float>(t, op, static_cast<float>(value));
                      case DType::kFloat64: return ApplyScalar<double>(t, op, value);
                      case DType::kInt32:
                        if (op != ScalarOp::kDiv) return ApplyScalar<int32_t>(t, op, static_cast<int32_t>(value));
                        break;
                      case DType::kInt64:
                        if (op != ScalarOp::kDiv) return ApplyScalar<int64_t>(t, op, static_cast<int64_t>(value));
                        break;
                      default:
                        break;
                    }
                    return errors::InvalidArgument("scalar arithmetic: unsupported dtype ", DTypeName(t.dtype()));
                  });
}

Result<NativeMap> OneHotMap(const ElementSpec& input, size_t component, int64_t depth) {
  if (depth < 0) return errors::InvalidArgument("one_hot: depth must be non-negative, got: ", depth);
  const PartialShape& in = ShapeOf(input, component);
  PartialShape out;
  if (in.rank_known()) {
    std::vector<int64_t> dims = in.dims();
    dims.push_back(depth);
    out = PartialShape(std::move(dims));
  }
  return PlainMap(input, component, "one_hot", DType::kFloat32, std::move(out),
                  [depth](const Tensor& t) { return ops::OneHot(t, depth); });
}

Result<NativeMap> SelectMap(const ElementSpec& input, std::vector<size_t> components) {
  if (components.empty()) return errors::InvalidArgument("select: no components");
  NativeMap out;
  for (size_t c : components) {
    SLUICE_RETURN_IF_ERROR(CheckIndex(input, c, "select"));
    out.spec.dtypes.push_back(input.dtypes[c]);
    out.spec.shapes.push_back(input.shapes[c]);
    if (!input.names.empty()) out.spec.names.push_back(input.names[c]);
  }
  // Repeated components would repeat names, which name nothing: drop them.
  std::vector<size_t> sorted = components;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) out.spec.names.clear();
  out.fn = [components = std::move(components)](Element e, ElementIndex) -> Result<Element> {
    std::vector<Tensor> picked;
    picked.reserve(components.size());
    for (size_t c : components) {
      if (c >= e.size()) return errors::InvalidArgument("select: the element has no component ", c);
      picked.push_back(e[c]);
    }
    return Element(std::move(picked));
  };
  return out;
}

NativeMap Compose(std::vector<NativeMap> maps) {
  assert(!maps.empty());
  if (maps.size() == 1) return std::move(maps[0]);
  NativeMap out;
  out.spec = maps.back().spec;
  std::vector<IndexedMapFn> fns;
  for (NativeMap& m : maps) fns.push_back(std::move(m.fn));
  out.fn = [fns = std::move(fns)](Element e, ElementIndex at) -> Result<Element> {
    for (const IndexedMapFn& f : fns) {
      SLUICE_ASSIGN_OR_RETURN(e, f(std::move(e), at));
    }
    return e;
  };
  return out;
}

train::TypedProducer MapNativeProducer(train::TypedProducer input, NativeMap map) {
  auto calls = std::make_shared<std::atomic<uint64_t>>(0);
  train::TypedProducer out{nullptr, std::move(map.spec.dtypes), std::move(map.spec.shapes), std::move(map.spec.names)};
  out.producer = [in = std::move(input.producer), fn = std::move(map.fn), calls]() -> Result<Element> {
    SLUICE_ASSIGN_OR_RETURN(Element e, in());
    return fn(std::move(e), ElementIndex{0, calls->fetch_add(1, std::memory_order_relaxed)});
  };
  return out;
}

}  // namespace sluice::data
