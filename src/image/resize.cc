// Separable resampling for tf.image.resize and the fused training path.
//
// Each method is reduced to per-axis AxisWeights (for output index i: a run
// of `count` consecutive source indices from `start`, with their weights).
// Resample2D filters input rows horizontally into float32 on demand (a ring
// of `span` rows, so the working set stays in cache) and accumulates output
// rows vertically over rows of width * channels contiguous floats. No SIMD
// intrinsics here: the vertical loops are written so that gcc and clang
// auto-vectorise them at -O3 (packed mulps/addps, or vfmadd with
// -march=native; gcc 12 at -O2 vectorises little of it, see
// docs/perf/resize-kernels.md). The fused op's common case
// (3-channel uint8, two taps per axis: the random resized crop's bilinear)
// goes instead to the hand-written SSE2 / AVX2 kernel of resize_kernels.h. The
// horizontal pass is templated on the channel count; for uint8 input (the
// decoded-image case) a row is widened to float once, each output sums a
// fixed number of taps, a 3- or 4-channel pixel is one 4-float vector (GNU
// vector extensions, gcc and clang), and channels-first output gets channel
// planes straight from it (four pixels transposed per step). The fused path
// finishes a two-tap row (bilinear) in one pass: vertical sum, normalisation
// and layout.
#include "sluice/image/resize.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "image/internal.h"
#include "image/resize_kernels.h"
#include "sluice/image/geometry.h"
#include "sluice/image/image.h"

namespace sluice::image {
namespace {

// Sampling weights along one axis.
struct AxisWeights {
  int64_t in_size = 0;
  int64_t out_size = 0;
  int span = 0;                 // the largest count
  std::vector<int64_t> start;   // first source index of output i
  std::vector<int32_t> count;   // taps of output i (0: output is 0)
  std::vector<float> weights;   // out_size * span, zero-padded
};

struct Tap {
  int64_t index;
  float weight;
};

// Collects each output's taps (source indices clamped to the axis, so a tap
// off the edge adds to the edge pixel) and packs them into AxisWeights.
class AxisBuilder {
 public:
  AxisBuilder(int64_t in_size, int64_t out_size) : in_size_(in_size), taps_(out_size) {}
  void Add(int64_t out, int64_t index, float weight) {
    taps_[out].push_back({std::clamp<int64_t>(index, 0, in_size_ - 1), weight});
  }
  AxisWeights Build() &&;

 private:
  int64_t in_size_;
  std::vector<std::vector<Tap>> taps_;
};

AxisWeights AxisBuilder::Build() && {
  AxisWeights a;
  a.in_size = in_size_;
  a.out_size = static_cast<int64_t>(taps_.size());
  a.start.assign(taps_.size(), 0);
  a.count.assign(taps_.size(), 0);
  for (size_t i = 0; i < taps_.size(); ++i) {
    if (taps_[i].empty()) continue;
    int64_t lo = taps_[i][0].index, hi = lo;
    for (const Tap& t : taps_[i]) {
      lo = std::min(lo, t.index);
      hi = std::max(hi, t.index);
    }
    a.start[i] = lo;
    a.count[i] = static_cast<int32_t>(hi - lo + 1);
    a.span = std::max(a.span, a.count[i]);
  }
  a.weights.assign(taps_.size() * a.span, 0.0f);
  for (size_t i = 0; i < taps_.size(); ++i) {
    for (const Tap& t : taps_[i]) a.weights[i * a.span + (t.index - a.start[i])] += t.weight;
  }
  return a;
}

// ResizeBilinear, half_pixel_centers: source (i + 0.5) * in/out - 0.5.
// Built directly (no AxisBuilder: it is on the per-image path of the fused
// random resized crop), with AxisBuilder's result: two taps, or one holding
// both weights when they hit the same source index.
AxisWeights BilinearAxis(int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  AxisWeights a;
  a.in_size = in;
  a.out_size = out;
  a.start.resize(out);
  a.count.resize(out);
  std::vector<float> w0(out), w1(out);  // weights of start and start + 1
  for (int64_t i = 0; i < out; ++i) {
    const float src = (static_cast<float>(i) + 0.5f) * scale - 0.5f;
    const float src_floor = std::floor(src);
    const float lerp = src - src_floor;
    const int64_t lo = std::clamp<int64_t>(static_cast<int64_t>(src_floor), 0, in - 1);
    const int64_t hi = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(src)), 0, in - 1);
    a.start[i] = std::min(lo, hi);
    if (lo == hi) {
      a.count[i] = 1;
      w0[i] = 0.0f + (1.0f - lerp) + lerp;  // AxisBuilder's summation order
      w1[i] = 0.0f;
    } else {
      a.count[i] = 2;  // lo < hi
      w0[i] = 1.0f - lerp;
      w1[i] = lerp;
    }
    a.span = std::max(a.span, a.count[i]);
  }
  a.weights.assign(static_cast<size_t>(out * a.span), 0.0f);
  for (int64_t i = 0; i < out; ++i) {
    a.weights[i * a.span] = w0[i];
    if (a.span == 2) a.weights[i * a.span + 1] = w1[i];
  }
  return a;
}

// ResizeNearestNeighbor, half_pixel_centers: floor((i + 0.5) * in/out).
std::vector<int64_t> NearestAxis(int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  std::vector<int64_t> index(out);
  for (int64_t i = 0; i < out; ++i) {
    const float src = (static_cast<float>(i) + 0.5f) * scale;
    index[i] = std::clamp<int64_t>(static_cast<int64_t>(std::floor(src)), 0, in - 1);
  }
  return index;
}

// ResizeBicubic's Keys (a = -0.5) weights, sampled as TF does at 1/1024 steps
// (the table is evaluated in double and stored as float).
constexpr int kBicubicTableSize = 1024;
float KeysTable(int i, bool outer) {
  constexpr double a = -0.5;
  float x = static_cast<float>(i * 1.0 / kBicubicTableSize);
  if (!outer) return static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
  x += 1.0f;
  return static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
}

AxisWeights BicubicAxis(int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  AxisBuilder b(in, out);
  for (int64_t i = 0; i < out; ++i) {
    const float src = (static_cast<float>(i) + 0.5f) * scale - 0.5f;
    const int64_t base = static_cast<int64_t>(std::floor(src));
    const int offset = static_cast<int>(lrintf((src - static_cast<float>(base)) * kBicubicTableSize));
    const float w[4] = {KeysTable(offset, true), KeysTable(offset, false),
                        KeysTable(kBicubicTableSize - offset, false),
                        KeysTable(kBicubicTableSize - offset, true)};
    float sum = 0.0f;
    for (int k = 0; k < 4; ++k) {
      const int64_t index = base - 1 + k;
      if (index >= 0 && index < in) sum += w[k];
    }
    const float norm = std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min() ? 1.0f / sum : 1.0f;
    for (int k = 0; k < 4; ++k) {
      const int64_t index = base - 1 + k;
      if (index >= 0 && index < in) b.Add(i, index, w[k] * norm);
    }
  }
  return std::move(b).Build();
}

// ResizeArea: output i covers source [i * s, (i + 1) * s), s = in/out; each
// source cell weighs its covered length, times `factor`.
AxisWeights AreaAxis(int64_t in, int64_t out, float factor) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  AxisBuilder b(in, out);
  for (int64_t i = 0; i < out; ++i) {
    const float lo = static_cast<float>(i) * scale;
    const float hi = static_cast<float>(i + 1) * scale;
    const int64_t first = static_cast<int64_t>(std::floor(lo));
    const int64_t end = static_cast<int64_t>(std::ceil(hi));
    for (int64_t v = first; v < end; ++v) {
      const float fv = static_cast<float>(v);
      float w;
      if (fv < lo) {
        w = fv + 1 > hi ? scale : fv + 1 - lo;
      } else {
        w = fv + 1 > hi ? hi - fv : 1.0f;
      }
      b.Add(i, v, w * factor);
    }
  }
  return std::move(b).Build();
}

// ScaleAndTranslate's sampling kernels (TF's sampling_kernels.h formulas).
enum class Kernel { kTriangle, kKeysCubic, kMitchellCubic, kLanczos3, kLanczos5, kGaussian };

float KernelRadius(Kernel k) {
  switch (k) {
    case Kernel::kTriangle: return 1.0f;
    case Kernel::kKeysCubic:
    case Kernel::kMitchellCubic: return 2.0f;
    case Kernel::kLanczos3: return 3.0f;
    case Kernel::kLanczos5: return 5.0f;
    case Kernel::kGaussian: return 1.5f;
  }
  return 1.0f;
}

float Lanczos(float x, float radius) {
  constexpr float kPi = 3.14159265359f;
  if (x > radius) return 0.0f;
  if (x <= 1e-3f) return 1.0f;
  return radius * std::sin(kPi * x) * std::sin(kPi * x / radius) / (kPi * kPi * x * x);
}

float KernelValue(Kernel k, float x) {
  x = std::abs(x);
  switch (k) {
    case Kernel::kTriangle: return x < 1.0f ? 1.0f - x : 0.0f;
    case Kernel::kKeysCubic:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
      return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    case Kernel::kMitchellCubic:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
      return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
    case Kernel::kLanczos3: return Lanczos(x, 3.0f);
    case Kernel::kLanczos5: return Lanczos(x, 5.0f);
    case Kernel::kGaussian: {
      constexpr float kRadius = 1.5f, kSigma = kRadius / 3.0f;
      if (x >= kRadius) return 0.0f;
      return static_cast<float>(std::exp(-x * x / (2.0 * kSigma * kSigma)));
    }
  }
  return 0.0f;
}

// ScaleAndTranslate with translation 0 and scale out/in: output i samples
// (i + 0.5) / scale with the kernel, widened by 1/scale when antialiasing a
// downscale; weights renormalised to sum 1.
AxisWeights KernelAxis(int64_t in, int64_t out, Kernel kernel, bool antialias) {
  const float scale = static_cast<float>(out) / static_cast<float>(in);
  const float inv_scale = static_cast<float>(1.0 / scale);
  const float kernel_scale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const float radius = KernelRadius(kernel) * kernel_scale;
  AxisBuilder b(in, out);
  std::vector<float> w;
  for (int64_t i = 0; i < out; ++i) {
    const float sample = (static_cast<float>(i) + 0.5f) * inv_scale;
    if (sample < 0 || sample > static_cast<float>(in)) continue;
    const int64_t first = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(sample - radius - 0.5f)), 0, in - 1);
    const int64_t end = std::clamp<int64_t>(static_cast<int64_t>(std::floor(sample + radius - 0.5f)), 0, in - 1) + 1;
    w.clear();
    float sum = 0.0f;
    for (int64_t s = first; s < end; ++s) {
      const float pos = static_cast<float>(s) + 0.5f - sample;
      w.push_back(KernelValue(kernel, std::abs(pos / kernel_scale)));
      sum += w.back();
    }
    if (std::abs(sum) < 1000.0f * std::numeric_limits<float>::min()) continue;  // TF: all-zero span
    const float norm = 1.0f / sum;
    for (int64_t s = first; s < end; ++s) b.Add(i, s, w[s - first] * norm);
  }
  return std::move(b).Build();
}

std::optional<Kernel> ScaleAndTranslateKernel(ResizeMethod method, bool antialias) {
  switch (method) {
    case ResizeMethod::kBilinear: return antialias ? std::optional(Kernel::kTriangle) : std::nullopt;
    case ResizeMethod::kBicubic: return antialias ? std::optional(Kernel::kKeysCubic) : std::nullopt;
    case ResizeMethod::kLanczos3: return Kernel::kLanczos3;
    case ResizeMethod::kLanczos5: return Kernel::kLanczos5;
    case ResizeMethod::kGaussian: return Kernel::kGaussian;
    case ResizeMethod::kMitchellCubic: return Kernel::kMitchellCubic;
    default: return std::nullopt;
  }
}

// The weights of `method` along one axis; `area_factor` scales kArea's.
AxisWeights MakeAxis(ResizeMethod method, bool antialias, int64_t in, int64_t out, float area_factor) {
  if (auto kernel = ScaleAndTranslateKernel(method, antialias)) return KernelAxis(in, out, *kernel, antialias);
  switch (method) {
    case ResizeMethod::kBicubic: return BicubicAxis(in, out);
    case ResizeMethod::kArea: return AreaAxis(in, out, area_factor);
    case ResizeMethod::kNearestNeighbor: {
      AxisBuilder b(in, out);
      const std::vector<int64_t> index = NearestAxis(in, out);
      for (int64_t i = 0; i < out; ++i) b.Add(i, index[i], 1.0f);
      return std::move(b).Build();
    }
    default: return BilinearAxis(in, out);
  }
}

// The two axes of one resize, shared by every image of a batch.
struct Plan {
  AxisWeights y, x;
};

Plan MakePlan(ResizeMethod method, bool antialias, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w) {
  // ResizeArea multiplies each sum by 1 / (height_scale * width_scale); the
  // factor rides on the vertical weights.
  float area_factor = 1.0f;
  if (method == ResizeMethod::kArea) {
    const float hs = static_cast<float>(in_h) / static_cast<float>(out_h);
    const float ws = static_cast<float>(in_w) / static_cast<float>(out_w);
    area_factor = static_cast<float>(1.0 / (hs * ws));
  }
  return {MakeAxis(method, antialias, in_h, out_h, area_factor), MakeAxis(method, antialias, in_w, out_w, 1.0f)};
}

// A (possibly cropped) HWC image: row r, column x, channel c is at
// data[r * row_stride + x * channels + c].
template <class T>
struct View {
  const T* data;
  int64_t row_stride;
  int64_t height, width, channels;
};

// Horizontal pass of one row: out[x, c] = sum_k w[x, k] * in[start[x] + k, c].
// `flip` writes output x at out_w - 1 - x (tf.image.flip_left_right for free).
template <int kC, class T>
void FilterRow(const T* __restrict in, int64_t channels, const AxisWeights& ax, bool flip,
               float* __restrict out) {
  const int64_t c_count = kC > 0 ? kC : channels;
  const int span = ax.span;
  for (int64_t x = 0; x < ax.out_size; ++x) {
    const int64_t dst = (flip ? ax.out_size - 1 - x : x) * c_count;
    const float* w = ax.weights.data() + x * span;
    const T* p = in + ax.start[x] * c_count;
    const int n = ax.count[x];
    if constexpr (kC > 0) {
      float acc[kC] = {};
      for (int k = 0; k < n; ++k) {
        for (int c = 0; c < kC; ++c) acc[c] += w[k] * static_cast<float>(p[k * kC + c]);
      }
      for (int c = 0; c < kC; ++c) out[dst + c] = acc[c];
    } else {
      for (int64_t c = 0; c < c_count; ++c) {
        float acc = 0.0f;
        for (int k = 0; k < n; ++k) acc += w[k] * static_cast<float>(p[k * c_count + c]);
        out[dst + c] = acc;
      }
    }
  }
}

// The uint8 fast path (the decoded-image case): the row is widened to
// float32 once (a loop the compiler vectorises) into `in`, then every output
// sums exactly `span` taps, the weights past its count being zero-padded, so
// the tap loop has a fixed trip count (kSpan > 0: unrolled) and no per-tap
// int -> float conversion. `in` holds span * kC zero floats past the row for
// the padded taps of the last outputs. Same products and summation order as
// FilterRow (the extra terms add +0), so the results are identical.
#if defined(__GNUC__)
// Four floats: one pixel of up to 4 channels (vector extensions, gcc and clang).
typedef float V4 __attribute__((vector_size(16)));

// Output pixel x of a kC (3 or 4) channel row as one 4-lane vector (kC == 3
// reads a 4th float, from the next pixel or the zero tail, into a lane that
// is never stored).
template <int kC, int kSpan>
inline V4 FilterPixel(const float* __restrict in, const float* w, int64_t start, int span) {
  const float* p = in + start * kC;
  V4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < (kSpan > 0 ? kSpan : span); ++k) {
    V4 v;
    std::memcpy(&v, p + k * kC, sizeof(v));
    acc += w[k] * v;
  }
  return acc;
}

// Stores v to dst[0..3], or reversed (dst[3 - i] = v[i]) when `reverse`.
inline void StoreV4(float* dst, V4 v, bool reverse) {
  if (reverse) v = __builtin_shufflevector(v, v, 3, 2, 1, 0);
  std::memcpy(dst, &v, sizeof(v));
}

// Planar rows of 3 or 4 channels, four output pixels at a time: the four
// pixel vectors are transposed into channel vectors, one store per plane.
// Returns the number of pixels done (a multiple of 4).
template <int kC, int kSpan>
int64_t FilterPlanarQuads(const float* __restrict in, const AxisWeights& ax, bool flip, float* __restrict out) {
  const int span = kSpan > 0 ? kSpan : ax.span;
  const int64_t out_w = ax.out_size;
  const int64_t quads = out_w / 4 * 4;
  for (int64_t x = 0; x < quads; x += 4) {
    V4 p[4];
    for (int i = 0; i < 4; ++i) {
      p[i] = FilterPixel<kC, kSpan>(in, ax.weights.data() + (x + i) * span, ax.start[x + i], span);
    }
    const V4 t0 = __builtin_shufflevector(p[0], p[1], 0, 4, 1, 5);  // r0 r1 g0 g1
    const V4 t1 = __builtin_shufflevector(p[2], p[3], 0, 4, 1, 5);  // r2 r3 g2 g3
    const V4 t2 = __builtin_shufflevector(p[0], p[1], 2, 6, 3, 7);  // b0 b1 a0 a1
    const V4 t3 = __builtin_shufflevector(p[2], p[3], 2, 6, 3, 7);  // b2 b3 a2 a3
    const int64_t dst = flip ? out_w - 4 - x : x;
    StoreV4(out + dst, __builtin_shufflevector(t0, t1, 0, 1, 4, 5), flip);
    StoreV4(out + out_w + dst, __builtin_shufflevector(t0, t1, 2, 3, 6, 7), flip);
    StoreV4(out + 2 * out_w + dst, __builtin_shufflevector(t2, t3, 0, 1, 4, 5), flip);
    if constexpr (kC == 4) StoreV4(out + 3 * out_w + dst, __builtin_shufflevector(t2, t3, 2, 3, 6, 7), flip);
  }
  return quads;
}
#endif

template <int kC, int kSpan>
void FilterFloatRow(const float* __restrict in, const AxisWeights& ax, bool flip, bool planar,
                    float* __restrict out) {
  const int span = kSpan > 0 ? kSpan : ax.span;
  const float* __restrict weights = ax.weights.data();
  const int64_t* __restrict start = ax.start.data();
  const int64_t out_w = ax.out_size;
  // Where channel c of output pixel xd goes: interleaved, or channel planes.
  const int64_t pixel_stride = planar ? 1 : kC, channel_stride = planar ? out_w : 1;
  int64_t x = 0;
#if defined(__GNUC__)
  if constexpr (kC == 3 || kC == 4) {
    if (planar) x = FilterPlanarQuads<kC, kSpan>(in, ax, flip, out);
    for (; x < out_w; ++x) {
      const V4 acc = FilterPixel<kC, kSpan>(in, weights + x * span, start[x], span);
      float* dst = out + (flip ? out_w - 1 - x : x) * pixel_stride;
      for (int c = 0; c < kC; ++c) dst[c * channel_stride] = acc[c];
    }
    return;
  }
#endif
  for (; x < out_w; ++x) {
    const float* w = weights + x * span;
    const float* p = in + start[x] * kC;
    float acc[kC] = {};
    for (int k = 0; k < span; ++k) {
      for (int c = 0; c < kC; ++c) acc[c] += w[k] * p[k * kC + c];
    }
    float* dst = out + (flip ? out_w - 1 - x : x) * pixel_stride;
    for (int c = 0; c < kC; ++c) dst[c * channel_stride] = acc[c];
  }
}

template <int kC>
void FilterUint8Row(const uint8_t* __restrict in, int64_t width, const AxisWeights& ax, bool flip, bool planar,
                    float* __restrict scratch, float* out) {
  const int64_t n = width * kC;
  for (int64_t i = 0; i < n; ++i) scratch[i] = static_cast<float>(in[i]);
  switch (ax.span) {
    case 2: return FilterFloatRow<kC, 2>(scratch, ax, flip, planar, out);
    case 4: return FilterFloatRow<kC, 4>(scratch, ax, flip, planar, out);
    default: return FilterFloatRow<kC, 0>(scratch, ax, flip, planar, out);
  }
}

// Whether FilterRowDispatch can write channel planes (the uint8 fast path).
template <class T>
bool CanFilterPlanar(int64_t channels) {
  return std::is_same_v<T, uint8_t> && channels >= 1 && channels <= 4;
}

// Floats FilterRowDispatch needs as `scratch` for a row of `width` pixels.
int64_t FilterScratchSize(int64_t width, int64_t channels, const AxisWeights& ax) {
  return (width + ax.span) * channels;
}

// Filters one row into `out`: interleaved pixels, or channel planes when
// `planar` (REQUIRES: CanFilterPlanar<T>(channels) then).
template <class T>
void FilterRowDispatch(const T* in, int64_t width, int64_t channels, const AxisWeights& ax, bool flip, bool planar,
                       float* scratch, float* out) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    switch (channels) {
      case 1: return FilterUint8Row<1>(in, width, ax, flip, planar, scratch, out);
      case 2: return FilterUint8Row<2>(in, width, ax, flip, planar, scratch, out);
      case 3: return FilterUint8Row<3>(in, width, ax, flip, planar, scratch, out);
      case 4: return FilterUint8Row<4>(in, width, ax, flip, planar, scratch, out);
      default: break;
    }
  }
  switch (channels) {
    case 1: return FilterRow<1>(in, channels, ax, flip, out);
    case 2: return FilterRow<2>(in, channels, ax, flip, out);
    case 3: return FilterRow<3>(in, channels, ax, flip, out);
    case 4: return FilterRow<4>(in, channels, ax, flip, out);
    default: return FilterRow<0>(in, channels, ax, flip, out);
  }
}

// dst[i] = w * src[i] (first tap) or dst[i] += w * src[i]: the vectorised
// inner loops of the vertical pass.
void ScaleRow(float* __restrict dst, const float* __restrict src, float w, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = w * src[i];
}
void AccumulateRow(float* __restrict dst, const float* __restrict src, float w, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += w * src[i];
}

// Resamples `in` with `plan`. For each output row y, writes the row
// (out_w * channels floats, HWC, or channel planes [c][out_w] when `planar`)
// into sink.Row(y), then calls sink.Commit(y). The vertical pass does not
// care which: it combines whole rows. An output row of two taps (bilinear's
// usual case) is first offered whole to sink.WriteTwoTaps(y, row0, row1, w0,
// w1), which may finish it in one pass (returning true) as long as it
// computes w0 * row0 + w1 * row1 in that order.
// REQUIRES: CanFilterPlanar<T>(in.channels) if planar.
template <class T, class Sink>
void Resample2D(const View<T>& in, const Plan& plan, bool flip, Sink& sink, bool planar = false) {
  const AxisWeights& ay = plan.y;
  const int64_t row_len = plan.x.out_size * in.channels;
  // Input rows are filtered horizontally on demand into a ring of `span`
  // rows (row r in slot r % span): output y needs rows [start, start +
  // count), count <= span, and start rarely decreases, so each input row is
  // filtered about once while the working set stays a few rows, in cache.
  const int64_t ring_rows = std::max(ay.span, 1);
  std::unique_ptr<float[]> ring(new float[static_cast<size_t>(ring_rows * row_len)]);
  std::vector<int64_t> ring_holds(static_cast<size_t>(ring_rows), -1);  // input row in each slot
  // Zero-initialised: its tail stays zero (see FilterFloatRow).
  std::vector<float> scratch(static_cast<size_t>(FilterScratchSize(in.width, in.channels, plan.x)));
  const auto filtered_row = [&](int64_t r) {
    const int64_t slot = r % ring_rows;
    float* row = ring.get() + slot * row_len;
    if (ring_holds[slot] != r) {
      FilterRowDispatch(in.data + r * in.row_stride, in.width, in.channels, plan.x, flip, planar, scratch.data(),
                        row);
      ring_holds[slot] = r;
    }
    return static_cast<const float*>(row);
  };
  for (int64_t y = 0; y < ay.out_size; ++y) {
    const int n = ay.count[y];
    const int64_t first = ay.start[y];
    const float* w = ay.weights.data() + y * ay.span;
    if (n == 2 && sink.WriteTwoTaps(y, filtered_row(first), filtered_row(first + 1), w[0], w[1])) continue;
    float* dst = sink.Row(y);
    if (n == 0) {
      std::fill(dst, dst + row_len, 0.0f);
    } else {
      ScaleRow(dst, filtered_row(first), w[0], row_len);
      for (int k = 1; k < n; ++k) AccumulateRow(dst, filtered_row(first + k), w[k], row_len);
    }
    sink.Commit(y);
  }
}

// Sink of plain Resize: rows go straight into the float32 output image.
struct DirectSink {
  float* out;
  int64_t row_len;
  float* Row(int64_t y) { return out + y * row_len; }
  void Commit(int64_t) {}
  bool WriteTwoTaps(int64_t, const float*, const float*, float, float) { return false; }
};

Status CheckSize(const char* op, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0) {
    return errors::InvalidArgument(op, ": output dimensions must be positive, got size [", height, ", ", width,
                                   "]");
  }
  return Status::OK();
}

// ResizeNearestNeighbor: a gather of whole pixels, any dtype, no arithmetic.
Tensor ResizeNearest(const Tensor& images, const ImageGeometry& g, int64_t out_h, int64_t out_w) {
  const int64_t n = g.is_batch ? g.batch : 1;
  TensorShape shape = g.is_batch ? TensorShape{n, out_h, out_w, g.channels} : TensorShape{out_h, out_w, g.channels};
  Tensor out(images.dtype(), shape);
  const std::vector<int64_t> iy = NearestAxis(g.height, out_h);
  const std::vector<int64_t> ix = NearestAxis(g.width, out_w);
  const size_t pixel = static_cast<size_t>(g.channels) * DTypeSize(images.dtype());
  const auto* src = static_cast<const uint8_t*>(images.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t b = 0; b < n; ++b) {
    const uint8_t* image = src + b * g.height * g.width * pixel;
    for (int64_t y = 0; y < out_h; ++y) {
      const uint8_t* row = image + iy[y] * g.width * pixel;
      for (int64_t x = 0; x < out_w; ++x, dst += pixel) std::memcpy(dst, row + ix[x] * pixel, pixel);
    }
  }
  return out;
}

}  // namespace

std::string_view ResizeMethodName(ResizeMethod method) {
  switch (method) {
    case ResizeMethod::kBilinear: return "bilinear";
    case ResizeMethod::kNearestNeighbor: return "nearest";
    case ResizeMethod::kBicubic: return "bicubic";
    case ResizeMethod::kArea: return "area";
    case ResizeMethod::kLanczos3: return "lanczos3";
    case ResizeMethod::kLanczos5: return "lanczos5";
    case ResizeMethod::kGaussian: return "gaussian";
    case ResizeMethod::kMitchellCubic: return "mitchellcubic";
  }
  return "?";
}

std::optional<ResizeMethod> ResizeMethodFromName(std::string_view name) {
  for (ResizeMethod m : {ResizeMethod::kBilinear, ResizeMethod::kNearestNeighbor, ResizeMethod::kBicubic,
                         ResizeMethod::kArea, ResizeMethod::kLanczos3, ResizeMethod::kLanczos5,
                         ResizeMethod::kGaussian, ResizeMethod::kMitchellCubic}) {
    if (ResizeMethodName(m) == name) return m;
  }
  return std::nullopt;
}

Result<Tensor> Resize(const Tensor& images, const ResizeOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, GetGeometry(images, "resize"));
  SLUICE_RETURN_IF_ERROR(CheckSize("resize", options.height, options.width));
  if (g.height <= 0 || g.width <= 0) {
    return errors::InvalidArgument("resize: input image must be of non-zero size, got shape ",
                                   images.shape().DebugString());
  }
  int64_t out_h = options.height, out_w = options.width;
  if (options.preserve_aspect_ratio) {
    const float scale = std::min(static_cast<float>(out_h) / static_cast<float>(g.height),
                                 static_cast<float>(out_w) / static_cast<float>(g.width));
    out_h = static_cast<int64_t>(std::nearbyint(scale * static_cast<float>(g.height)));
    out_w = static_cast<int64_t>(std::nearbyint(scale * static_cast<float>(g.width)));
    SLUICE_RETURN_IF_ERROR(CheckSize("resize", out_h, out_w));
  }
  if (options.method == ResizeMethod::kNearestNeighbor) {
    if (!IsPlainDType(images.dtype())) {
      return errors::InvalidArgument("resize: unsupported image dtype ", DTypeName(images.dtype()));
    }
    return ResizeNearest(images, g, out_h, out_w);
  }
  const int64_t n = g.is_batch ? g.batch : 1;
  Tensor out(DType::kFloat32, g.is_batch ? TensorShape{n, out_h, out_w, g.channels}
                                         : TensorShape{out_h, out_w, g.channels});
  const Plan plan = MakePlan(options.method, options.antialias, g.height, g.width, out_h, out_w);
  SLUICE_RETURN_IF_ERROR(internal::DispatchReal(images.dtype(), "resize", [&](auto tag) {
    using T = decltype(tag);
    const int64_t in_len = g.height * g.width * g.channels;
    const int64_t out_len = out_h * out_w * g.channels;
    for (int64_t b = 0; b < n; ++b) {
      View<T> view{images.data<T>() + b * in_len, g.width * g.channels, g.height, g.width, g.channels};
      DirectSink sink{out.data<float>() + b * out_len, out_w * g.channels};
      Resample2D(view, plan, /*flip=*/false, sink);
    }
    return Status::OK();
  }));
  return out;
}

Result<Tensor> ResizeWithPad(const Tensor& images, int64_t target_height, int64_t target_width,
                             ResizeMethod method, bool antialias) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, GetGeometry(images, "resize_with_pad"));
  if (target_height <= 0) return errors::InvalidArgument("resize_with_pad: target_height must be > 0.");
  if (target_width <= 0) return errors::InvalidArgument("resize_with_pad: target_width must be > 0.");
  // TF's arithmetic, in float32.
  const float h = static_cast<float>(g.height), w = static_cast<float>(g.width);
  const float th = static_cast<float>(target_height), tw = static_cast<float>(target_width);
  const float ratio = std::max(w / tw, h / th);
  const float resized_h = h / ratio, resized_w = w / ratio;
  ResizeOptions ro;
  ro.height = static_cast<int64_t>(std::floor(resized_h));
  ro.width = static_cast<int64_t>(std::floor(resized_w));
  ro.method = method;
  ro.antialias = antialias;
  const int64_t pad_h = std::max<int64_t>(0, static_cast<int64_t>(std::floor((th - resized_h) / 2)));
  const int64_t pad_w = std::max<int64_t>(0, static_cast<int64_t>(std::floor((tw - resized_w) / 2)));
  SLUICE_ASSIGN_OR_RETURN(Tensor resized, Resize(images, ro));
  return PadToBoundingBox(resized, pad_h, pad_w, target_height, target_width);
}

namespace {

constexpr const char* kFusedOp = "resize_flip_normalize";

// Sink of the fused path: each row is normalised (x * a[c] + b[c]) and
// stored HWC, or copied to the c planes of a CHW output: contiguously when
// the rows arrive as channel planes (`planar`), else gathered.
struct NormalizeSink {
  float* out;
  int64_t out_h, out_w, channels;
  bool chw;
  bool planar;
  std::vector<float> a_row, b_row;  // a, b repeated along an HWC row
  std::vector<float> a, b;
  std::vector<float> row;

  float* Row(int64_t y) { return chw ? row.data() : out + y * out_w * channels; }
  // The vertical pass, normalisation and layout of a two-tap row in one pass
  // over the output (the same arithmetic as Row + Commit).
  bool WriteTwoTaps(int64_t y, const float* __restrict s0, const float* __restrict s1, float w0, float w1) {
    if (!chw) {
      const int64_t len = out_w * channels;
      float* __restrict dst = out + y * len;
      const float* __restrict sa = a_row.data();
      const float* __restrict sb = b_row.data();
      for (int64_t i = 0; i < len; ++i) dst[i] = (w0 * s0[i] + w1 * s1[i]) * sa[i] + sb[i];
      return true;
    }
    if (!planar) return false;
    for (int64_t c = 0; c < channels; ++c) {
      float* __restrict dst = out + (c * out_h + y) * out_w;
      const float* __restrict r0 = s0 + c * out_w;
      const float* __restrict r1 = s1 + c * out_w;
      const float ac = a[c], bc = b[c];
      for (int64_t x = 0; x < out_w; ++x) dst[x] = (w0 * r0[x] + w1 * r1[x]) * ac + bc;
    }
    return true;
  }
  void Commit(int64_t y) {
    const int64_t len = out_w * channels;
    if (!chw) {
      float* __restrict dst = out + y * len;
      const float* __restrict sa = a_row.data();
      const float* __restrict sb = b_row.data();
      for (int64_t i = 0; i < len; ++i) dst[i] = dst[i] * sa[i] + sb[i];
      return;
    }
    for (int64_t c = 0; c < channels; ++c) {
      float* __restrict dst = out + (c * out_h + y) * out_w;
      const float ac = a[c], bc = b[c];
      if (planar) {
        const float* __restrict src = row.data() + c * out_w;
        for (int64_t x = 0; x < out_w; ++x) dst[x] = src[x] * ac + bc;
      } else {
        const float* __restrict src = row.data() + c;
        for (int64_t x = 0; x < out_w; ++x) dst[x] = src[x * channels] * ac + bc;
      }
    }
  }
};

// `a` (span <= 2) as the two-tap kernel's axis, flipped if `flip` (entry j
// then describes output j, taken from mirrored source position out - 1 - j).
internal::TwoTapAxis TwoTaps(const AxisWeights& a, bool flip) {
  internal::TwoTapAxis t;
  const auto n = static_cast<size_t>(a.out_size);
  t.first.resize(n);
  t.w0.assign(n, 0.0f);
  t.w1.assign(n, 0.0f);
  for (int64_t j = 0; j < a.out_size; ++j) {
    const int64_t i = flip ? a.out_size - 1 - j : j;
    t.first[j] = static_cast<int32_t>(a.start[i]);
    // count 0: both weights 0 (the output is 0, as in Resample2D); count 1:
    // the padded second weight is 0; count 2: start + 1 < in_size.
    if (a.span >= 1) t.w0[j] = a.weights[i * a.span];
    if (a.span == 2) t.w1[j] = a.weights[i * a.span + 1];
  }
  return t;
}

Result<TensorShape> FusedOutputShape(const Tensor& image, const ResizeFlipNormalizeOptions& o) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, GetGeometry(image, kFusedOp, /*allow_batch=*/false));
  if (image.dtype() != DType::kUInt8) {
    return errors::InvalidArgument(kFusedOp, ": 'image' must be uint8, got ", DTypeName(image.dtype()));
  }
  SLUICE_RETURN_IF_ERROR(CheckSize(kFusedOp, o.height, o.width));
  if (o.crop) {
    const CropWindow& c = *o.crop;
    if (c.y < 0 || c.x < 0 || c.height <= 0 || c.width <= 0 || c.y + c.height > g.height ||
        c.x + c.width > g.width) {
      return errors::InvalidArgument(kFusedOp, ": 'crop' [y=", c.y, ", x=", c.x, ", height=", c.height,
                                     ", width=", c.width, "] must be a non-empty window inside the ",
                                     g.height, "x", g.width, " image");
    }
  } else if (g.height <= 0 || g.width <= 0) {
    return errors::InvalidArgument(kFusedOp, ": input image must be of non-zero size, got shape ",
                                   image.shape().DebugString());
  }
  return o.normalize.data_format == DataFormat::kCHW ? TensorShape{g.channels, o.height, o.width}
                                                      : TensorShape{o.height, o.width, g.channels};
}

}  // namespace

Status ResizeFlipNormalizeInto(const Tensor& image, const ResizeFlipNormalizeOptions& o, const Tensor& out) {
  SLUICE_ASSIGN_OR_RETURN(TensorShape shape, FusedOutputShape(image, o));
  if (out.dtype() != DType::kFloat32 || out.shape() != shape) {
    return errors::InvalidArgument(kFusedOp, ": 'out' must be float32 ", shape.DebugString(), ", got ",
                                   DTypeName(out.dtype()), " ", out.shape().DebugString());
  }
  const int64_t full_w = image.shape().dim(1), channels = image.shape().dim(2);
  const CropWindow window = o.crop.value_or(CropWindow{0, 0, image.shape().dim(0), full_w});
  std::vector<float> a, b;
  SLUICE_RETURN_IF_ERROR(internal::NormalizeCoefficients(o.normalize, channels, 1.0f / 255.0f, kFusedOp, &a, &b));
  const bool chw = o.normalize.data_format == DataFormat::kCHW;
  const Plan plan = MakePlan(o.method, o.antialias, window.height, window.width, o.height, o.width);
  const uint8_t* base = image.data<uint8_t>() + (window.y * full_w + window.x) * channels;
  const internal::ResizeKernel kernel = internal::ResizeKernelInUse();
  if (kernel != internal::ResizeKernel::kPortable && channels == 3 && plan.y.span <= 2 && plan.x.span <= 2 &&
      window.height < INT32_MAX && window.width < INT32_MAX / 4) {
    // The random resized crop's case, by the hand-written kernel
    // (resize_kernels.h): bilinear, or any method with two taps at most.
    const internal::TwoTapAxis y = TwoTaps(plan.y, /*flip=*/false);
    const internal::TwoTapAxis x = TwoTaps(plan.x, o.flip_left_right);
    internal::TwoTapRgbJob job;
    job.in = base;
    job.row_stride = full_w * channels;
    job.in_height = window.height;
    job.in_width = window.width;
    job.y = &y;
    job.x = &x;
    job.out_height = o.height;
    job.out_width = o.width;
    std::copy(a.begin(), a.end(), job.a);
    std::copy(b.begin(), b.end(), job.b);
    job.chw = chw;
    job.out = out.data<float>();
    internal::ResampleTwoTapRgb(kernel, job);
    return Status::OK();
  }
  NormalizeSink sink;
  sink.out = out.data<float>();
  sink.out_h = o.height;
  sink.out_w = o.width;
  sink.channels = channels;
  sink.chw = chw;
  sink.planar = chw && CanFilterPlanar<uint8_t>(channels);
  if (chw) {
    sink.row.resize(static_cast<size_t>(o.width * channels));
  } else {
    for (int64_t x = 0; x < o.width; ++x) {
      sink.a_row.insert(sink.a_row.end(), a.begin(), a.end());
      sink.b_row.insert(sink.b_row.end(), b.begin(), b.end());
    }
  }
  sink.a = std::move(a);
  sink.b = std::move(b);
  View<uint8_t> view{base, full_w * channels, window.height, window.width, channels};
  Resample2D(view, plan, o.flip_left_right, sink, sink.planar);
  return Status::OK();
}

Result<Tensor> ResizeFlipNormalize(const Tensor& image, const ResizeFlipNormalizeOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(TensorShape shape, FusedOutputShape(image, options));
  Tensor out(DType::kFloat32, shape);
  SLUICE_RETURN_IF_ERROR(ResizeFlipNormalizeInto(image, options, out));
  return out;
}

}  // namespace sluice::image
