// TF 1's resize ops (resize.h: ResizeV1, ResizeImagesV1).
//
// Direct kernels rather than Resize's separable resampler: each one repeats
// the float32 arithmetic of TF's kernel in TF's order (bilinear lerps the
// row pair horizontally, then vertically; bicubic sums four rows per input
// column, then four columns; area sums each row's covered cells, then the
// rows), so that results match TF's to a few ulps instead of to a summation
// order's rounding. Per-axis sampling (indices, weights) is computed once per
// call and shared by every image of a batch.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "image/internal.h"
#include "sluice/image/image.h"
#include "sluice/image/resize.h"

namespace sluice::image {
namespace {

std::string OpName(ResizeMethod method) {
  switch (method) {
    case ResizeMethod::kBilinear: return "resize_bilinear";
    case ResizeMethod::kNearestNeighbor: return "resize_nearest_neighbor";
    case ResizeMethod::kBicubic: return "resize_bicubic";
    case ResizeMethod::kArea: return "resize_area";
    default: return "resize_images";
  }
}

int64_t Bound(int64_t v, int64_t size) { return std::clamp<int64_t>(v, 0, size - 1); }

// TF's CalculateResizeScale (align_corners means nothing for a 1-pixel
// input or output axis).
float AxisScale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && in > 1 && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

// Source coordinate of output i: LegacyScaler, or HalfPixelScaler.
float Source(int64_t i, float scale, bool half_pixel) {
  return half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
}

// The geometry of one call, validated.
struct Job {
  ImageGeometry g;
  int64_t batch = 1;
  int64_t out_h = 0, out_w = 0;
  float scale_h = 0, scale_w = 0;
};

Result<Job> MakeJob(const Tensor& images, const ResizeV1Options& o, const std::string& op) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, GetGeometry(images, op));
  if (o.half_pixel_centers && o.align_corners) {
    return errors::InvalidArgument(op, ": If half_pixel_centers is True, align_corners must be False.");
  }
  if (o.half_pixel_centers && o.method == ResizeMethod::kArea) {
    return errors::InvalidArgument(op, ": has no half_pixel_centers (its pixel centres are always right)");
  }
  if (g.channels <= 0) return errors::InvalidArgument(op, ": image must have at least one channel");
  if (g.height <= 0 || g.width <= 0) {
    return errors::InvalidArgument(op, ": input image must be of non-zero size, got shape ",
                                   images.shape().DebugString());
  }
  if (o.height <= 0 || o.width <= 0) {
    return errors::InvalidArgument(op, ": output dimensions must be positive, got size [", o.height, ", ",
                                   o.width, "]");
  }
  Job j;
  j.g = g;
  j.batch = g.is_batch ? g.batch : 1;
  j.out_h = o.height;
  j.out_w = o.width;
  j.scale_h = AxisScale(g.height, o.height, o.align_corners);
  j.scale_w = AxisScale(g.width, o.width, o.align_corners);
  return j;
}

TensorShape OutputShape(const Job& j) {
  return j.g.is_batch ? TensorShape{j.batch, j.out_h, j.out_w, j.g.channels}
                      : TensorShape{j.out_h, j.out_w, j.g.channels};
}

// ---- nearest ---------------------------------------------------------------

std::vector<int64_t> NearestAxis(int64_t in, int64_t out, float scale, const ResizeV1Options& o) {
  std::vector<int64_t> index(out);
  for (int64_t i = 0; i < out; ++i) {
    // HalfPixelScalerForNN: the -0.5 is left out because floor follows.
    const float src = o.half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
    const float pick = o.align_corners ? std::round(src) : std::floor(src);
    index[i] = Bound(static_cast<int64_t>(pick), in);
  }
  return index;
}

Result<Tensor> Nearest(const Tensor& images, const Job& j, const ResizeV1Options& o, const std::string& op) {
  const DType dtype = images.dtype();
  if (!IsPlainDType(dtype) || dtype == DType::kBool || dtype == DType::kUInt32 || dtype == DType::kUInt64 ||
      dtype == DType::kComplex64 || dtype == DType::kComplex128) {
    return errors::InvalidArgument(op, ": unsupported image dtype ", DTypeName(dtype));
  }
  if (j.g.height >= (int64_t{1} << 24) || j.g.width >= (int64_t{1} << 24)) {
    return errors::InvalidArgument(op, ": nearest neighbor requires max height & width of 2^24");
  }
  const std::vector<int64_t> iy = NearestAxis(j.g.height, j.out_h, j.scale_h, o);
  const std::vector<int64_t> ix = NearestAxis(j.g.width, j.out_w, j.scale_w, o);
  Tensor out(dtype, OutputShape(j));
  const size_t pixel = static_cast<size_t>(j.g.channels) * DTypeSize(dtype);
  const auto* src = static_cast<const uint8_t*>(images.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t b = 0; b < j.batch; ++b) {
    const uint8_t* image = src + b * j.g.height * j.g.width * pixel;
    for (int64_t y = 0; y < j.out_h; ++y) {
      const uint8_t* row = image + iy[y] * j.g.width * pixel;
      for (int64_t x = 0; x < j.out_w; ++x, dst += pixel) std::memcpy(dst, row + ix[x] * pixel, pixel);
    }
  }
  return out;
}

// ---- bilinear ----------------------------------------------------------------

struct Lerp {
  int64_t lo, hi;  // source indices
  float t;         // weight of hi
};

std::vector<Lerp> BilinearAxis(int64_t in, int64_t out, float scale, bool half_pixel) {
  std::vector<Lerp> axis(out);
  for (int64_t i = 0; i < out; ++i) {
    const float src = Source(i, scale, half_pixel);
    const float src_floor = std::floor(src);
    axis[i] = {Bound(static_cast<int64_t>(src_floor), in), Bound(static_cast<int64_t>(std::ceil(src)), in),
               src - src_floor};
  }
  return axis;
}

template <class T>
void Bilinear(const T* in, const Job& j, const std::vector<Lerp>& ys, const std::vector<Lerp>& xs, float* out) {
  const int64_t c_count = j.g.channels, row_len = j.g.width * c_count;
  for (int64_t y = 0; y < j.out_h; ++y) {
    const T* top = in + ys[y].lo * row_len;
    const T* bottom = in + ys[y].hi * row_len;
    const float ty = ys[y].t;
    for (int64_t x = 0; x < j.out_w; ++x) {
      const int64_t l = xs[x].lo * c_count, r = xs[x].hi * c_count;
      const float tx = xs[x].t;
      for (int64_t c = 0; c < c_count; ++c, ++out) {
        const float tl = static_cast<float>(top[l + c]), tr = static_cast<float>(top[r + c]);
        const float bl = static_cast<float>(bottom[l + c]), br = static_cast<float>(bottom[r + c]);
        const float upper = tl + (tr - tl) * tx;
        const float lower = bl + (br - bl) * tx;
        *out = upper + (lower - upper) * ty;
      }
    }
  }
}

// ---- bicubic -------------------------------------------------------------------

constexpr int kCubicTableSize = 1024;

// TF's coefficient table of the cubic kernel with parameter `a`: entry 2i is
// the weight at distance i / 1024 (inner taps), 2i + 1 at 1 + i / 1024.
std::vector<float> CubicTable(double a) {
  std::vector<float> table((kCubicTableSize + 1) * 2);
  for (int i = 0; i <= kCubicTableSize; ++i) {
    float x = static_cast<float>(i * 1.0 / kCubicTableSize);
    table[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
    x = static_cast<float>(x + 1.0);
    table[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
  }
  return table;
}

const float* CubicCoefficients(bool keys) {
  static const std::vector<float> kKeys = CubicTable(-0.5);
  static const std::vector<float> kLegacy = CubicTable(-0.75);
  return keys ? kKeys.data() : kLegacy.data();
}

struct Cubic {
  std::array<int64_t, 4> index;
  std::array<float, 4> weight;
};

// Legacy: a = -0.75, indices clamped (edge pixels weigh more). Half pixel:
// Keys a = -0.5, off-image taps get weight 0 and the rest are renormalised.
std::vector<Cubic> BicubicAxis(int64_t in, int64_t out, float scale, bool half_pixel) {
  const float* table = CubicCoefficients(half_pixel);
  std::vector<Cubic> axis(out);
  for (int64_t i = 0; i < out; ++i) {
    const float src = Source(i, scale, half_pixel);
    const auto base = static_cast<int64_t>(std::floor(src));
    const float delta = src - static_cast<float>(base);
    const int64_t offset = lrintf(delta * kCubicTableSize);
    const float w[4] = {table[offset * 2 + 1], table[offset * 2], table[(kCubicTableSize - offset) * 2],
                        table[(kCubicTableSize - offset) * 2 + 1]};
    Cubic& c = axis[i];
    for (int k = 0; k < 4; ++k) {
      c.index[k] = Bound(base - 1 + k, in);
      c.weight[k] = !half_pixel || c.index[k] == base - 1 + k ? w[k] : 0.0f;
    }
    if (!half_pixel) continue;
    const float sum = c.weight[0] + c.weight[1] + c.weight[2] + c.weight[3];
    if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv = 1.0f / sum;
      for (float& w : c.weight) w *= inv;
    }
  }
  return axis;
}

template <class T>
void Bicubic(const T* in, const Job& j, const std::vector<Cubic>& ys, const std::vector<Cubic>& xs, float* out) {
  const int64_t c_count = j.g.channels, row_len = j.g.width * c_count;
  std::vector<float> column(static_cast<size_t>(row_len));  // the four rows summed, per input column
  for (int64_t y = 0; y < j.out_h; ++y) {
    const Cubic& cy = ys[y];
    const T* r[4] = {in + cy.index[0] * row_len, in + cy.index[1] * row_len, in + cy.index[2] * row_len,
                     in + cy.index[3] * row_len};
    for (int64_t i = 0; i < row_len; ++i) {
      column[i] = static_cast<float>(r[0][i]) * cy.weight[0] + static_cast<float>(r[1][i]) * cy.weight[1] +
                  static_cast<float>(r[2][i]) * cy.weight[2] + static_cast<float>(r[3][i]) * cy.weight[3];
    }
    for (int64_t x = 0; x < j.out_w; ++x) {
      const Cubic& cx = xs[x];
      for (int64_t c = 0; c < c_count; ++c, ++out) {
        *out = column[cx.index[0] * c_count + c] * cx.weight[0] + column[cx.index[1] * c_count + c] * cx.weight[1] +
               column[cx.index[2] * c_count + c] * cx.weight[2] + column[cx.index[3] * c_count + c] * cx.weight[3];
      }
    }
  }
}

// ---- area --------------------------------------------------------------------

// Output i covers source [i * scale, (i + 1) * scale): cells start..end-1,
// the first and last partly (their covered lengths), the rest wholly.
struct Span {
  int64_t start, end;
  float start_weight, last_weight;
};

// The covered length of cell v within [lo, hi) (TF's expression; the
// result is `scale` when the span lies inside the cell).
float Coverage(int64_t v, float lo, float hi, float scale) {
  const float fv = static_cast<float>(v), fv1 = static_cast<float>(v + 1);
  if (fv < lo) return fv1 > hi ? scale : fv1 - lo;
  return fv1 > hi ? hi - fv : 1.0f;
}

std::vector<Span> AreaAxis(int64_t out, float scale) {
  std::vector<Span> axis(out);
  for (int64_t i = 0; i < out; ++i) {
    const float lo = static_cast<float>(i) * scale, hi = static_cast<float>(i + 1) * scale;
    Span& s = axis[i];
    s.start = static_cast<int64_t>(std::floor(lo));
    s.end = static_cast<int64_t>(std::ceil(hi));
    s.start_weight = Coverage(s.start, lo, hi, scale);
    s.last_weight = Coverage(s.end - 1, lo, hi, scale);
  }
  return axis;
}

template <class T>
void Area(const T* in, const Job& j, const std::vector<Span>& xs, float* out) {
  const int64_t c_count = j.g.channels, row_len = j.g.width * c_count;
  const float norm = static_cast<float>(1.0 / (j.scale_h * j.scale_w));
  std::vector<const T*> rows;
  std::vector<float> row_weights;
  for (int64_t y = 0; y < j.out_h; ++y) {
    const float lo = static_cast<float>(y) * j.scale_h, hi = static_cast<float>(y + 1) * j.scale_h;
    rows.clear();
    row_weights.clear();
    for (auto i = static_cast<int64_t>(std::floor(lo)); i < static_cast<int64_t>(std::ceil(hi)); ++i) {
      rows.push_back(in + Bound(i, j.g.height) * row_len);
      row_weights.push_back(Coverage(i, lo, hi, j.scale_h));
    }
    for (int64_t x = 0; x < j.out_w; ++x) {
      const Span& s = xs[x];
      const int64_t first = Bound(s.start, j.g.width) * c_count, last = Bound(s.end - 1, j.g.width) * c_count;
      for (int64_t c = 0; c < c_count; ++c, ++out) {
        float sum = 0.0f;
        for (size_t r = 0; r < rows.size(); ++r) {
          const T* p = rows[r];
          float row_sum = static_cast<float>(p[first + c]) * s.start_weight;
          if (s.start + 1 != s.end) {
            for (int64_t v = s.start + 1; v < s.end - 1; ++v) {
              row_sum += static_cast<float>(p[Bound(v, j.g.width) * c_count + c]);
            }
            row_sum += static_cast<float>(p[last + c]) * s.last_weight;
          }
          sum += row_sum * row_weights[r];
        }
        *out = sum * norm;
      }
    }
  }
}

// ---- dispatch ------------------------------------------------------------------

Result<Tensor> Interpolate(const Tensor& images, const Job& j, const ResizeV1Options& o, const std::string& op) {
  Tensor out(DType::kFloat32, OutputShape(j));
  const int64_t in_len = j.g.height * j.g.width * j.g.channels;
  const int64_t out_len = j.out_h * j.out_w * j.g.channels;
  const bool half = o.half_pixel_centers;
  SLUICE_RETURN_IF_ERROR(internal::DispatchReal(images.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* in = images.data<T>();
    float* dst = out.data<float>();
    if (o.method == ResizeMethod::kBilinear && j.out_h == j.g.height && j.out_w == j.g.width) {
      // TF's ResizeBilinear returns a same-size image cast, not interpolated.
      for (int64_t i = 0; i < j.batch * in_len; ++i) dst[i] = static_cast<float>(in[i]);
    } else if (o.method == ResizeMethod::kBilinear) {
      const std::vector<Lerp> ys = BilinearAxis(j.g.height, j.out_h, j.scale_h, half);
      const std::vector<Lerp> xs = BilinearAxis(j.g.width, j.out_w, j.scale_w, half);
      for (int64_t b = 0; b < j.batch; ++b) Bilinear(in + b * in_len, j, ys, xs, dst + b * out_len);
    } else if (o.method == ResizeMethod::kBicubic) {
      const std::vector<Cubic> ys = BicubicAxis(j.g.height, j.out_h, j.scale_h, half);
      const std::vector<Cubic> xs = BicubicAxis(j.g.width, j.out_w, j.scale_w, half);
      for (int64_t b = 0; b < j.batch; ++b) Bicubic(in + b * in_len, j, ys, xs, dst + b * out_len);
    } else {
      const std::vector<Span> xs = AreaAxis(j.out_w, j.scale_w);
      for (int64_t b = 0; b < j.batch; ++b) Area(in + b * in_len, j, xs, dst + b * out_len);
    }
    return Status::OK();
  }));
  return out;
}

bool IsV1Method(ResizeMethod m) {
  return m == ResizeMethod::kBilinear || m == ResizeMethod::kNearestNeighbor || m == ResizeMethod::kBicubic ||
         m == ResizeMethod::kArea;
}

}  // namespace

Result<Tensor> ResizeV1(const Tensor& images, const ResizeV1Options& options) {
  if (!IsV1Method(options.method)) {
    return errors::InvalidArgument("resize_images: Resize method is not implemented: ",
                                   ResizeMethodName(options.method));
  }
  const std::string op = OpName(options.method);
  SLUICE_ASSIGN_OR_RETURN(Job job, MakeJob(images, options, op));
  if (options.method == ResizeMethod::kNearestNeighbor) return Nearest(images, job, options, op);
  return Interpolate(images, job, options, op);
}

Result<Tensor> ResizeImagesV1(const Tensor& images, const ResizeImagesV1Options& options) {
  constexpr const char* kOp = "resize_images";
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, GetGeometry(images, kOp));
  if (!IsV1Method(options.method)) {
    return errors::InvalidArgument(kOp, ": Resize method is not implemented: ", ResizeMethodName(options.method));
  }
  ResizeV1Options o;
  o.height = options.height;
  o.width = options.width;
  o.method = options.method;
  o.align_corners = options.align_corners;
  if (options.preserve_aspect_ratio) {
    if (g.height <= 0 || g.width <= 0) {
      return errors::InvalidArgument(kOp, ": input image must be of non-zero size, got shape ",
                                     images.shape().DebugString());
    }
    // TF's float32 scale, rounded half to even.
    const float scale = std::min(static_cast<float>(o.height) / static_cast<float>(g.height),
                                 static_cast<float>(o.width) / static_cast<float>(g.width));
    o.height = static_cast<int64_t>(std::nearbyint(scale * static_cast<float>(g.height)));
    o.width = static_cast<int64_t>(std::nearbyint(scale * static_cast<float>(g.width)));
  }
  if (o.height == g.height && o.width == g.width) return images.DeepCopy();
  return ResizeV1(images, o);
}

}  // namespace sluice::image
