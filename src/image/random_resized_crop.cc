// DecodeRandomResizedCrop: header size -> box -> partial decode -> fused
// resize/flip/normalise (see random_resized_crop.h).
#include "sluice/image/random_resized_crop.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>
#include <optional>

#include "image/codec_internal.h"
#include "image/internal.h"
#include "sluice/image/codec.h"
#include "sluice/image/sample_distorted_bounding_box.h"

namespace sluice::image {
namespace {

constexpr const char* kOp = "decode_random_resized_crop";

Status CheckPair(const std::array<double, 2>& r, const char* name, double upper) {
  if (!(r[0] > 0.0 && r[0] <= r[1] && r[1] <= upper)) {
    return errors::InvalidArgument(kOp, ": '", name, "' must be an increasing pair of positive values",
                                   std::isfinite(upper) ? " at most 1" : "", ", got [", r[0], ", ", r[1], "]");
  }
  return Status::OK();
}

Status CheckOptions(const RandomResizedCropOptions& o) {
  if (o.height <= 0 || o.width <= 0) {
    return errors::InvalidArgument(kOp, ": output size must be positive, got [", o.height, ", ", o.width, "]");
  }
  const bool tf = o.sampler == CropSampler::kTensorFlow;
  SLUICE_RETURN_IF_ERROR(CheckPair(o.scale, "scale", tf ? 1.0 : HUGE_VAL));
  SLUICE_RETURN_IF_ERROR(CheckPair(o.ratio, "ratio", HUGE_VAL));
  if (o.max_attempts <= 0) {
    return errors::InvalidArgument(kOp, ": 'max_attempts' must be positive, got ", o.max_attempts);
  }
  if (!(o.flip_probability >= 0.0f && o.flip_probability <= 1.0f)) {
    return errors::InvalidArgument(kOp, ": 'flip_probability' must be in [0, 1], got ", o.flip_probability);
  }
  if (o.channels != 1 && o.channels != 3) {
    return errors::InvalidArgument(kOp, ": 'channels' must be 1 or 3, got ", o.channels);
  }
  if (!o.dct_method.empty() && o.dct_method != "INTEGER_FAST" && o.dct_method != "INTEGER_ACCURATE") {
    return errors::InvalidArgument(kOp, ": 'dct_method' must be '', 'INTEGER_FAST' or 'INTEGER_ACCURATE', got '",
                                   o.dct_method, "'");
  }
  std::vector<float> a, b;
  return internal::NormalizeCoefficients(o.normalize, o.channels, 1.0f / 255.0f, kOp, &a, &b);
}

// torchvision's RandomResizedCrop.get_params, in double precision, with
// Python's round (half to even: nearbyint in the default rounding mode).
CropWindow TorchvisionBox(int64_t height, int64_t width, const RandomResizedCropOptions& o, internal::Rng& rng) {
  const double area = static_cast<double>(height) * static_cast<double>(width);
  const double log_lo = std::log(o.ratio[0]), log_hi = std::log(o.ratio[1]);
  const auto uniform = [&rng](double lo, double hi) { return lo + (hi - lo) * rng.UniformFloat(); };
  for (int32_t attempt = 0; attempt < o.max_attempts; ++attempt) {
    const double target_area = area * uniform(o.scale[0], o.scale[1]);
    const double aspect = std::exp(uniform(log_lo, log_hi));
    const double w = std::nearbyint(std::sqrt(target_area * aspect));
    const double h = std::nearbyint(std::sqrt(target_area / aspect));
    if (w > 0 && h > 0 && w <= static_cast<double>(width) && h <= static_cast<double>(height)) {
      const auto bh = static_cast<int64_t>(h), bw = static_cast<int64_t>(w);
      const int64_t y = rng.UniformInt(static_cast<uint32_t>(height - bh + 1));
      const int64_t x = rng.UniformInt(static_cast<uint32_t>(width - bw + 1));
      return {y, x, bh, bw};
    }
  }
  // Fallback: the centre crop, clipped to the ratio range.
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t h = height, w = width;
  if (in_ratio < o.ratio[0]) {
    h = static_cast<int64_t>(std::nearbyint(static_cast<double>(width) / o.ratio[0]));
  } else if (in_ratio > o.ratio[1]) {
    w = static_cast<int64_t>(std::nearbyint(static_cast<double>(height) * o.ratio[1]));
  }
  h = std::clamp<int64_t>(h, 1, height);
  w = std::clamp<int64_t>(w, 1, width);
  return {(height - h) / 2, (width - w) / 2, h, w};
}

Result<CropWindow> TensorFlowBox(int64_t height, int64_t width, const RandomResizedCropOptions& o,
                                 internal::Rng& rng) {
  SampleDistortedBoundingBoxOptions s;
  s.seed = (uint64_t{rng.Next32()} << 32) | rng.Next32();
  s.min_object_covered = 0.0f;
  s.aspect_ratio_range = {static_cast<float>(o.ratio[0]), static_cast<float>(o.ratio[1])};
  s.area_range = {static_cast<float>(o.scale[0]), static_cast<float>(o.scale[1])};
  s.max_attempts = o.max_attempts;
  s.use_image_if_no_bounding_boxes = true;
  static const Tensor kNoBoxes(DType::kFloat32, TensorShape{0, 4});
  SLUICE_ASSIGN_OR_RETURN(DistortedBoundingBox box, SampleDistortedBoundingBox(height, width, kNoBoxes, s));
  return CropWindow{box.begin[0], box.begin[1], box.size[0], box.size[1]};
}

// SampleRandomResizedCrop after the options were checked.
Result<RandomResizedCropParams> SampleChecked(int64_t image_height, int64_t image_width,
                                              const RandomResizedCropOptions& o, uint64_t seed) {
  if (image_height <= 0 || image_width <= 0 || image_height > INT32_MAX || image_width > INT32_MAX) {
    return errors::InvalidArgument(kOp, ": image size must be positive, got [", image_height, ", ", image_width,
                                   "]");
  }
  internal::Rng rng(seed);
  RandomResizedCropParams p;
  p.flip = rng.UniformFloat() < o.flip_probability;
  if (o.sampler == CropSampler::kTensorFlow) {
    SLUICE_ASSIGN_OR_RETURN(p.window, TensorFlowBox(image_height, image_width, o, rng));
  } else {
    p.window = TorchvisionBox(image_height, image_width, o, rng);
  }
  return p;
}

// The largest DCT scale factor (2, 4 or 8) that keeps `window` at least the
// output size, or 1.
int DctScaleFactor(const CropWindow& window, const RandomResizedCropOptions& o) {
  for (int factor : {8, 4, 2}) {
    if (window.height >= o.height * factor && window.width >= o.width * factor) return factor;
  }
  return 1;
}

// `window` in the pixels of the image decoded at 1/factor (libjpeg's size
// ceil(n / factor)), snapped outwards to whole pixels.
CropWindow ScaleWindow(const CropWindow& w, int factor, int64_t height, int64_t width) {
  const int64_t scaled_h = (height + factor - 1) / factor, scaled_w = (width + factor - 1) / factor;
  const int64_t y0 = w.y / factor, x0 = w.x / factor;
  const int64_t y1 = std::min(scaled_h, (w.y + w.height + factor - 1) / factor);
  const int64_t x1 = std::min(scaled_w, (w.x + w.width + factor - 1) / factor);
  return {y0, x0, y1 - y0, x1 - x0};
}

ResizeFlipNormalizeOptions ResizeOptionsFor(const RandomResizedCropOptions& o, bool flip,
                                            std::optional<CropWindow> crop) {
  ResizeFlipNormalizeOptions r;
  r.height = o.height;
  r.width = o.width;
  r.method = o.method;
  r.antialias = o.antialias;
  r.crop = crop;
  r.flip_left_right = flip;
  r.normalize = o.normalize;
  return r;
}

Status CheckOut(const Tensor& out, const TensorShape& shape) {
  if (out.dtype() != DType::kFloat32 || out.shape() != shape) {
    return errors::InvalidArgument(kOp, ": 'out' must be float32 ", shape.DebugString(), ", got ",
                                   DTypeName(out.dtype()), " ", out.shape().DebugString());
  }
  return Status::OK();
}

// The JPEG path: only the box is decoded (the rows of the box, and the iMCU
// columns that cover it).
Status JpegInto(std::string_view contents, const RandomResizedCropOptions& o, uint64_t seed, const Tensor& out) {
  SLUICE_ASSIGN_OR_RETURN(Tensor shape, ExtractJpegShape(contents, DType::kInt64));
  const int64_t height = shape.data<int64_t>()[0], width = shape.data<int64_t>()[1];
  SLUICE_ASSIGN_OR_RETURN(RandomResizedCropParams p, SampleChecked(height, width, o, seed));
  DecodeJpegOptions d;
  d.channels = o.channels;
  d.dct_method = o.dct_method;
  CropWindow window = p.window;
  if (o.dct_scaling) {
    d.ratio = DctScaleFactor(window, o);
    if (d.ratio > 1) window = ScaleWindow(window, d.ratio, height, width);
  }
  SLUICE_RETURN_IF_ERROR(internal::CheckJpegOptions(d));
  // DecodeAndCropJpeg's decode, minus its last step: the rows keep the
  // columns libjpeg decoded around the window, which is then read in place.
  int64_t column_offset = 0;
  SLUICE_ASSIGN_OR_RETURN(Tensor rows, internal::DecodeJpegData(contents, d, &window, &column_offset));
  const CropWindow in_rows{0, column_offset, window.height, window.width};
  return ResizeFlipNormalizeInto(rows, ResizeOptionsFor(o, p.flip, in_rows), out);
}

// The PNG path: a full decode, then the box is resampled in place.
Status PngInto(std::string_view contents, const RandomResizedCropOptions& o, uint64_t seed, const Tensor& out) {
  DecodePngOptions d;
  d.channels = o.channels;
  SLUICE_ASSIGN_OR_RETURN(Tensor image, DecodePng(contents, d));
  SLUICE_ASSIGN_OR_RETURN(RandomResizedCropParams p,
                          SampleChecked(image.shape().dim(0), image.shape().dim(1), o, seed));
  return ResizeFlipNormalizeInto(image, ResizeOptionsFor(o, p.flip, p.window), out);
}

// Dispatch on the format. REQUIRES: options checked, `out` of the right shape.
Status DecodeInto(std::string_view contents, const RandomResizedCropOptions& o, uint64_t seed, const Tensor& out) {
  if (contents.empty()) return internal::EmptyInputError();
  switch (const ImageFormat format = SniffImageFormat(contents)) {
    case ImageFormat::kJpeg: return JpegInto(contents, o, seed, out);
    case ImageFormat::kPng: return PngInto(contents, o, seed, out);
    default: return internal::UnsupportedFormatError(format);
  }
}

}  // namespace

Result<RandomResizedCropParams> SampleRandomResizedCrop(int64_t image_height, int64_t image_width,
                                                        const RandomResizedCropOptions& options, uint64_t seed) {
  SLUICE_RETURN_IF_ERROR(CheckOptions(options));
  return SampleChecked(image_height, image_width, options, seed);
}

Result<TensorShape> RandomResizedCropShape(const RandomResizedCropOptions& o) {
  SLUICE_RETURN_IF_ERROR(CheckOptions(o));
  return o.normalize.data_format == DataFormat::kCHW ? TensorShape{o.channels, o.height, o.width}
                                                      : TensorShape{o.height, o.width, o.channels};
}

Status DecodeRandomResizedCropInto(std::string_view contents, const RandomResizedCropOptions& options,
                                   uint64_t seed, const Tensor& out) {
  SLUICE_ASSIGN_OR_RETURN(TensorShape shape, RandomResizedCropShape(options));
  SLUICE_RETURN_IF_ERROR(CheckOut(out, shape));
  return DecodeInto(contents, options, seed, out);
}

Result<Tensor> DecodeRandomResizedCrop(std::string_view contents, const RandomResizedCropOptions& options,
                                       uint64_t seed) {
  SLUICE_ASSIGN_OR_RETURN(TensorShape shape, RandomResizedCropShape(options));
  Tensor out(DType::kFloat32, shape);
  SLUICE_RETURN_IF_ERROR(DecodeInto(contents, options, seed, out));
  return out;
}

}  // namespace sluice::image
