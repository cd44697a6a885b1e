// tf.image's colour ops. Formulas are TensorFlow's (kernels adjust_*_op.cc,
// colorspace_op.h, and image_ops_impl.py for the dtype handling), rewritten
// as plain per-pixel loops.
#include "sluice/image/color.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "image/internal.h"

namespace sluice::image {
namespace {

template <class D>
D SaturateFromDouble(double v) {
  if (std::isnan(v)) return D{0};
  if (v <= static_cast<double>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  return static_cast<D>(v);  // truncates toward zero, as TF's cast
}

template <class D>
D CastInt(int64_t v, bool saturate) {
  if (saturate) {
    return static_cast<D>(std::clamp<int64_t>(v, static_cast<int64_t>(std::numeric_limits<D>::lowest()),
                                              static_cast<int64_t>(std::numeric_limits<D>::max())));
  }
  return static_cast<D>(v);  // modular, as TF's cast
}

// One element of convert_image_dtype from S to D.
template <class S, class D>
struct Converter {
  bool saturate;
  // Integer scaling factor between the two integer ranges.
  int64_t factor = 1;
  D to_float_scale{};  // int -> float
  S to_int_scale{};    // float -> int

  explicit Converter(bool sat) : saturate(sat) {
    if constexpr (std::is_integral_v<S> && std::is_integral_v<D>) {
      const uint64_t in_range = static_cast<uint64_t>(std::numeric_limits<S>::max()) + 1;
      const uint64_t out_range = static_cast<uint64_t>(std::numeric_limits<D>::max()) + 1;
      factor = static_cast<int64_t>(in_range > out_range ? in_range / out_range : out_range / in_range);
    } else if constexpr (std::is_integral_v<S>) {
      to_float_scale = static_cast<D>(1.0 / static_cast<double>(std::numeric_limits<S>::max()));
    } else if constexpr (std::is_integral_v<D>) {
      to_int_scale = static_cast<S>(static_cast<double>(std::numeric_limits<D>::max()) + 0.5);
    }
  }

  D operator()(S x) const {
    if constexpr (std::is_integral_v<S> && std::is_integral_v<D>) {
      if (std::numeric_limits<S>::max() > std::numeric_limits<D>::max()) {
        const int64_t v = static_cast<int64_t>(x);
        int64_t q = v / factor;
        if (v % factor != 0 && v < 0) --q;  // floordiv
        return CastInt<D>(q, saturate);
      }
      const D c = CastInt<D>(static_cast<int64_t>(x), saturate);
      return static_cast<D>(static_cast<uint64_t>(static_cast<int64_t>(c)) * static_cast<uint64_t>(factor));
    } else if constexpr (std::is_integral_v<S>) {
      return static_cast<D>(x) * to_float_scale;
    } else if constexpr (std::is_integral_v<D>) {
      return SaturateFromDouble<D>(static_cast<double>(static_cast<S>(x * to_int_scale)));
    } else {
      return static_cast<D>(x);
    }
  }
};

Status ConvertInto(const Tensor& in, const Tensor& out, bool saturate) {
  return internal::DispatchReal(in.dtype(), "convert_image_dtype", [&](auto s_tag) {
    using S = decltype(s_tag);
    return internal::DispatchReal(out.dtype(), "convert_image_dtype", [&](auto d_tag) {
      using D = decltype(d_tag);
      const Converter<S, D> convert(saturate);
      const S* src = in.data<S>();
      D* dst = out.data<D>();
      const int64_t n = in.num_elements();
      for (int64_t i = 0; i < n; ++i) dst[i] = convert(src[i]);
      return Status::OK();
    });
  });
}

// TF's pattern for the adjust_* ops: float32 images are adjusted directly
// (on a copy), others converted to float32, adjusted, and converted back.
template <class Fn>
Result<Tensor> AdjustInFloat32(const Tensor& image, const char* op, bool saturate_back, Fn&& fn) {
  SLUICE_RETURN_IF_ERROR(internal::DispatchReal(image.dtype(), op, [](auto) { return Status::OK(); }));
  Tensor f;
  if (image.dtype() == DType::kFloat32) {
    f = image.DeepCopy();
  } else {
    SLUICE_ASSIGN_OR_RETURN(f, ConvertImageDtype(image, DType::kFloat32));
  }
  SLUICE_RETURN_IF_ERROR(fn(f));
  if (image.dtype() == DType::kFloat32) return f;
  return ConvertImageDtype(f, image.dtype(), saturate_back);
}

Status CheckRgb(const Tensor& image, const char* op) {
  if (image.rank() < 1 || image.shape().dim(image.rank() - 1) != 3) {
    return errors::InvalidArgument(op, ": input must have 3 channels (last dimension), got shape ",
                                   image.shape().DebugString());
  }
  return Status::OK();
}

// AdjustSaturation kernel's own HSV conversion (h in [0, 1)).
void SaturationRgbToHsv(float r, float g, float b, float* h, float* s, float* v) {
  const float vv = std::max(r, std::max(g, b));
  const float range = vv - std::min(r, std::min(g, b));
  *s = vv > 0 ? range / vv : 0.0f;
  const float norm = 1.0f / (6.0f * range);
  float hh;
  if (r == vv) {
    hh = norm * (g - b);
  } else if (g == vv) {
    hh = norm * (b - r) + static_cast<float>(2.0 / 6.0);
  } else {
    hh = norm * (r - g) + static_cast<float>(4.0 / 6.0);
  }
  if (range <= 0.0f) hh = 0.0f;
  if (hh < 0.0f) hh += 1.0f;
  *h = hh;
  *v = vv;
}

void SaturationHsvToRgb(float h, float s, float v, float* r, float* g, float* b) {
  const float c = s * v;
  const float m = v - c;
  const float dh = h * 6.0f;
  const int category = static_cast<int>(dh);
  float fmodu = dh;
  while (fmodu <= 0) fmodu += 2.0f;
  while (fmodu >= 2.0f) fmodu -= 2.0f;
  const float x = c * (1.0f - std::abs(fmodu - 1.0f));
  float rr = 0, gg = 0, bb = 0;
  switch (category) {
    case 0: rr = c; gg = x; break;
    case 1: rr = x; gg = c; break;
    case 2: gg = c; bb = x; break;
    case 3: gg = x; bb = c; break;
    case 4: rr = x; bb = c; break;
    case 5: rr = c; bb = x; break;
    default: break;
  }
  *r = rr + m;
  *g = gg + m;
  *b = bb + m;
}

// AdjustHue kernel: hue as a sextant number in [0, 6) plus the value range.
void RgbToHueRange(float r, float g, float b, float* h, float* v_min, float* v_max) {
  float v_mid;
  int category;
  if (r < g) {
    if (b < r) {
      *v_max = g, v_mid = r, *v_min = b, category = 1;
    } else if (b > g) {
      *v_max = b, v_mid = g, *v_min = r, category = 3;
    } else {
      *v_max = g, v_mid = b, *v_min = r, category = 2;
    }
  } else {
    if (b < g) {
      *v_max = r, v_mid = g, *v_min = b, category = 0;
    } else if (b > r) {
      *v_max = b, v_mid = r, *v_min = g, category = 4;
    } else {
      *v_max = r, v_mid = b, *v_min = g, category = 5;
    }
  }
  if (*v_max == *v_min) {
    *h = 0;
    return;
  }
  const float ratio = (v_mid - *v_min) / (*v_max - *v_min);
  const bool increase = (category & 1) == 0;
  *h = static_cast<float>(category) + (increase ? ratio : 1.0f - ratio);
}

void HueRangeToRgb(float h, float v_min, float v_max, float* r, float* g, float* b) {
  const int category = static_cast<int>(h);
  float ratio = h - static_cast<float>(category);
  if ((category & 1) != 0) ratio = 1.0f - ratio;
  const float v_mid = v_min + ratio * (v_max - v_min);
  switch (category) {
    case 0: *r = v_max, *g = v_mid, *b = v_min; break;
    case 1: *r = v_mid, *g = v_max, *b = v_min; break;
    case 2: *r = v_min, *g = v_max, *b = v_mid; break;
    case 3: *r = v_min, *g = v_mid, *b = v_max; break;
    case 4: *r = v_mid, *g = v_min, *b = v_max; break;
    default: *r = v_max, *g = v_min, *b = v_mid; break;
  }
}

template <class Fn>
void ForEachRgb(const Tensor& f, Fn&& fn) {
  float* p = f.data<float>();
  const int64_t n = f.num_elements() / 3;
  for (int64_t i = 0; i < n; ++i, p += 3) fn(p);
}

}  // namespace

Result<Tensor> ConvertImageDtype(const Tensor& image, DType dtype, bool saturate) {
  SLUICE_RETURN_IF_ERROR(internal::DispatchReal(image.dtype(), "convert_image_dtype", [](auto) { return Status::OK(); }));
  SLUICE_RETURN_IF_ERROR(internal::DispatchReal(dtype, "convert_image_dtype", [](auto) { return Status::OK(); }));
  if (image.dtype() == dtype) return image;
  Tensor out(dtype, image.shape());
  SLUICE_RETURN_IF_ERROR(ConvertInto(image, out, saturate));
  return out;
}

Result<Tensor> AdjustBrightness(const Tensor& image, float delta) {
  return AdjustInFloat32(image, "adjust_brightness", true, [&](Tensor& f) {
    for (float& v : f.flat<float>()) v += delta;
    return Status::OK();
  });
}

Result<Tensor> AdjustContrast(const Tensor& images, float contrast_factor) {
  constexpr const char* op = "adjust_contrast";
  if (images.rank() < 3) {
    return errors::InvalidArgument(op, ": input must be at least 3-D, got shape ", images.shape().DebugString());
  }
  const int r = images.rank();
  const int64_t h = images.shape().dim(r - 3), w = images.shape().dim(r - 2), c = images.shape().dim(r - 1);
  return AdjustInFloat32(images, op, true, [&](Tensor& f) {
    const int64_t per_image = h * w * c;
    if (per_image == 0) return Status::OK();
    const int64_t n = f.num_elements() / per_image;
    std::vector<double> sum(c);
    for (int64_t b = 0; b < n; ++b) {
      float* p = f.data<float>() + b * per_image;
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int64_t i = 0; i < h * w; ++i) {
        for (int64_t ch = 0; ch < c; ++ch) sum[ch] += p[i * c + ch];
      }
      std::vector<float> mean(c);
      for (int64_t ch = 0; ch < c; ++ch) mean[ch] = static_cast<float>(sum[ch] / static_cast<double>(h * w));
      for (int64_t i = 0; i < h * w; ++i) {
        for (int64_t ch = 0; ch < c; ++ch) {
          float& v = p[i * c + ch];
          v = (v - mean[ch]) * contrast_factor + mean[ch];
        }
      }
    }
    return Status::OK();
  });
}

Result<Tensor> AdjustSaturation(const Tensor& image, float saturation_factor) {
  SLUICE_RETURN_IF_ERROR(CheckRgb(image, "adjust_saturation"));
  return AdjustInFloat32(image, "adjust_saturation", false, [&](Tensor& f) {
    ForEachRgb(f, [&](float* p) {
      float h, s, v;
      SaturationRgbToHsv(p[0], p[1], p[2], &h, &s, &v);
      s = std::min(1.0f, std::max(0.0f, s * saturation_factor));
      SaturationHsvToRgb(h, s, v, &p[0], &p[1], &p[2]);
    });
    return Status::OK();
  });
}

Result<Tensor> AdjustHue(const Tensor& image, float delta) {
  constexpr const char* op = "adjust_hue";
  if (!(delta >= -1.0f && delta <= 1.0f)) {
    return errors::InvalidArgument(op, ": delta must be in the interval [-1, 1], got ", delta);
  }
  SLUICE_RETURN_IF_ERROR(CheckRgb(image, op));
  return AdjustInFloat32(image, op, false, [&](Tensor& f) {
    ForEachRgb(f, [&](float* p) {
      float h, v_min, v_max;
      RgbToHueRange(p[0], p[1], p[2], &h, &v_min, &v_max);
      h += delta * 6.0f;
      while (h < 0) h += 6.0f;
      while (h >= 6.0f) h -= 6.0f;
      HueRangeToRgb(h, v_min, v_max, &p[0], &p[1], &p[2]);
    });
    return Status::OK();
  });
}

Result<Tensor> AdjustGamma(const Tensor& image, float gamma, float gain) {
  if (!(gamma >= 0.0f)) {
    return errors::InvalidArgument("adjust_gamma: Gamma should be a non-negative real number.");
  }
  return AdjustInFloat32(image, "adjust_gamma", true, [&](Tensor& f) {
    for (float& v : f.flat<float>()) v = gain * std::pow(v, gamma);
    return Status::OK();
  });
}

Result<Tensor> RgbToGrayscale(const Tensor& images) {
  constexpr const char* op = "rgb_to_grayscale";
  SLUICE_RETURN_IF_ERROR(CheckRgb(images, op));
  SLUICE_RETURN_IF_ERROR(internal::DispatchReal(images.dtype(), op, [](auto) { return Status::OK(); }));
  SLUICE_ASSIGN_OR_RETURN(Tensor f, ConvertImageDtype(images, DType::kFloat32));
  TensorShape shape = images.shape();
  shape.set_dim(shape.rank() - 1, 1);
  Tensor gray(DType::kFloat32, shape);
  const float* p = f.data<float>();
  float* g = gray.data<float>();
  for (int64_t i = 0; i < gray.num_elements(); ++i, p += 3) g[i] = p[0] * 0.2989f + p[1] * 0.5870f + p[2] * 0.1140f;
  return ConvertImageDtype(gray, images.dtype());
}

Result<Tensor> GrayscaleToRgb(const Tensor& images) {
  constexpr const char* op = "grayscale_to_rgb";
  if (images.rank() < 1 || images.shape().dim(images.rank() - 1) != 1 || !IsPlainDType(images.dtype())) {
    return errors::InvalidArgument(op, ": last dimension must be 1 (and the dtype numeric), got ",
                                   DTypeName(images.dtype()), " ", images.shape().DebugString());
  }
  TensorShape shape = images.shape();
  shape.set_dim(shape.rank() - 1, 3);
  Tensor out(images.dtype(), shape);
  const size_t elem = DTypeSize(images.dtype());
  const auto* s = static_cast<const uint8_t*>(images.raw_data());
  auto* d = static_cast<uint8_t*>(out.raw_data());
  for (int64_t i = 0; i < images.num_elements(); ++i, s += elem) {
    for (int k = 0; k < 3; ++k, d += elem) std::memcpy(d, s, elem);
  }
  return out;
}

namespace {

template <class T>
void RgbToHsvPixel(const T* in, T* out) {
  const T r = in[0], g = in[1], b = in[2];
  const T v = std::max(r, std::max(g, b));
  const T range = v - std::min(r, std::min(g, b));
  const T s = v > T(0) ? range / v : T(0);
  const T norm = (T(1) / range) * (T(1) / T(6));
  T h;
  if (r == v) {
    h = norm * (g - b);
  } else if (g == v) {
    h = norm * (b - r) + T(2) / T(6);
  } else {
    h = norm * (r - g) + T(4) / T(6);
  }
  if (!(range > T(0))) h = T(0);
  if (h < T(0)) h += T(1);
  out[0] = h, out[1] = s, out[2] = v;
}

template <class T>
void HsvToRgbPixel(const T* in, T* out) {
  const T h = in[0], s = in[1], v = in[2];
  const T dh = h * T(6);
  auto clamp01 = [](T x) { return std::min(T(1), std::max(T(0), x)); };
  const T dr = clamp01(std::abs(dh - T(3)) - T(1));
  const T dg = clamp01(-std::abs(dh - T(2)) + T(2));
  const T db = clamp01(-std::abs(dh - T(4)) + T(2));
  const T one_s = -s + T(1);
  out[0] = (one_s + s * dr) * v;
  out[1] = (one_s + s * dg) * v;
  out[2] = (one_s + s * db) * v;
}

template <bool kToHsv>
Result<Tensor> ConvertColorSpace(const Tensor& images, const char* op) {
  SLUICE_RETURN_IF_ERROR(CheckRgb(images, op));
  Tensor out(images.dtype(), images.shape());
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in = images.data<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < images.num_elements(); i += 3) {
      if constexpr (kToHsv) {
        RgbToHsvPixel(in + i, o + i);
      } else {
        HsvToRgbPixel(in + i, o + i);
      }
    }
  };
  if (images.dtype() == DType::kFloat32) {
    run(float{});
  } else if (images.dtype() == DType::kFloat64) {
    run(double{});
  } else {
    return errors::InvalidArgument(op, ": 'images' must be float32 or float64, got ", DTypeName(images.dtype()));
  }
  return out;
}

}  // namespace

Result<Tensor> RgbToHsv(const Tensor& images) { return ConvertColorSpace<true>(images, "rgb_to_hsv"); }
Result<Tensor> HsvToRgb(const Tensor& images) { return ConvertColorSpace<false>(images, "hsv_to_rgb"); }

Result<Tensor> RandomBrightness(const Tensor& image, float max_delta, uint64_t seed) {
  if (!(max_delta >= 0.0f)) return errors::InvalidArgument("random_brightness: max_delta must be non-negative.");
  internal::Rng rng(seed);
  return AdjustBrightness(image, rng.Uniform(-max_delta, max_delta));
}

namespace {
Status CheckFactorRange(const char* op, float lower, float upper) {
  if (!(upper > lower)) return errors::InvalidArgument(op, ": upper must be > lower.");
  if (!(lower >= 0.0f)) return errors::InvalidArgument(op, ": lower must be non-negative.");
  return Status::OK();
}
}  // namespace

Result<Tensor> RandomContrast(const Tensor& image, float lower, float upper, uint64_t seed) {
  SLUICE_RETURN_IF_ERROR(CheckFactorRange("random_contrast", lower, upper));
  internal::Rng rng(seed);
  return AdjustContrast(image, rng.Uniform(lower, upper));
}

Result<Tensor> RandomSaturation(const Tensor& image, float lower, float upper, uint64_t seed) {
  SLUICE_RETURN_IF_ERROR(CheckFactorRange("random_saturation", lower, upper));
  internal::Rng rng(seed);
  return AdjustSaturation(image, rng.Uniform(lower, upper));
}

Result<Tensor> RandomHue(const Tensor& image, float max_delta, uint64_t seed) {
  if (!(max_delta <= 0.5f)) return errors::InvalidArgument("random_hue: max_delta must be <= 0.5.");
  if (!(max_delta >= 0.0f)) return errors::InvalidArgument("random_hue: max_delta must be non-negative.");
  internal::Rng rng(seed);
  return AdjustHue(image, rng.Uniform(-max_delta, max_delta));
}

}  // namespace sluice::image
