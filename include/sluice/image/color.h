// Pixel-value transforms of tf.image: dtype conversion, brightness, contrast,
// saturation, hue, gamma, grayscale and HSV, with their random forms.
//
// Dtypes follow tf.image: integer images are on their full range, float
// images on [0, 1] (ConvertImageDtype). The adjust_* ops compute in float32
// as TF does (converting integer images there and back, saturating where TF
// saturates) and return the input dtype. Supported dtypes: uint8, int8,
// uint16, int16, int32, int64, float32, float64 (float16/bfloat16, which TF
// also accepts, are InvalidArgument here). Results match TF to float32
// rounding (documented per op); integer outputs match exactly except where a
// value lands within an ulp of a rounding boundary.
//
// Plain functions: thread-safe, inputs never written. Random ops draw one
// factor for the whole call (a batch shares it, as in TF) from `seed`: same
// seed, same result; TF's random stream is not reproduced.
#ifndef SLUICE_IMAGE_COLOR_H_
#define SLUICE_IMAGE_COLOR_H_

#include <cstdint>

#include "sluice/core/dtype.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::image {

// tf.image.convert_image_dtype(image, dtype, saturate). Any shape.
//   int -> int:     floor-divides (narrower) or multiplies (wider) by the
//                   ratio of (max + 1)s, as TF (so uint8 255 -> uint16 65280).
//   int -> float:   x * (1 / max_in), the factor rounded to the output type.
//   float -> int:   x * (max_out + 0.5), truncated. Out-of-range values (and
//                   NaN -> 0) saturate even when `saturate` is false, where
//                   TF's result is undefined.
//   float -> float: a cast.
// With `saturate`, integer casts clamp instead of wrapping. Returns `image`
// itself when the dtype already matches. Exact vs TF.
// Errors: InvalidArgument for an unsupported dtype.
Result<Tensor> ConvertImageDtype(const Tensor& image, DType dtype, bool saturate = false);

// tf.image.adjust_brightness: image + delta on the float scale.
// Float results are not clamped; integer results saturate.
Result<Tensor> AdjustBrightness(const Tensor& image, float delta);

// tf.image.adjust_contrast: (x - mean) * contrast_factor + mean, the mean per
// image and channel over height and width (accumulated in float64; TF uses
// float32, so results agree to ~1e-6 relative). `images`: rank >= 3.
Result<Tensor> AdjustContrast(const Tensor& images, float contrast_factor);

// tf.image.adjust_saturation: in HSV, s = clamp(s * saturation_factor, 0, 1),
// with TF's AdjustSaturation kernel arithmetic. Last dimension must be 3.
Result<Tensor> AdjustSaturation(const Tensor& image, float saturation_factor);

// tf.image.adjust_hue: rotates the hue by `delta` turns (TF's AdjustHue
// kernel). Errors: InvalidArgument unless -1 <= delta <= 1, or the last
// dimension is not 3.
Result<Tensor> AdjustHue(const Tensor& image, float delta);

// tf.image.adjust_gamma: gain * x ** gamma on the float scale.
// Errors: InvalidArgument if gamma < 0 ("Gamma should be a non-negative real
// number.").
Result<Tensor> AdjustGamma(const Tensor& image, float gamma = 1.0f, float gain = 1.0f);

// tf.image.rgb_to_grayscale: 0.2989 r + 0.5870 g + 0.1140 b, last dimension
// 3 -> 1, converted back to the input dtype without saturation (as TF).
Result<Tensor> RgbToGrayscale(const Tensor& images);
// tf.image.grayscale_to_rgb: repeats the single channel three times (any
// non-string dtype; last dimension must be 1).
Result<Tensor> GrayscaleToRgb(const Tensor& images);

// tf.image.rgb_to_hsv / hsv_to_rgb: float32 or float64, last dimension 3,
// h, s, v in [0, 1] (TF's RGBToHSV / HSVToRGB formulas; exact to an ulp).
Result<Tensor> RgbToHsv(const Tensor& images);
Result<Tensor> HsvToRgb(const Tensor& images);

// tf.image.random_brightness: delta uniform in [-max_delta, max_delta).
// Errors: InvalidArgument if max_delta < 0.
Result<Tensor> RandomBrightness(const Tensor& image, float max_delta, uint64_t seed);
// tf.image.random_contrast / random_saturation: factor uniform in
// [lower, upper). Errors: InvalidArgument unless 0 <= lower < upper.
Result<Tensor> RandomContrast(const Tensor& image, float lower, float upper, uint64_t seed);
Result<Tensor> RandomSaturation(const Tensor& image, float lower, float upper, uint64_t seed);
// tf.image.random_hue: delta uniform in [-max_delta, max_delta).
// Errors: InvalidArgument unless 0 <= max_delta <= 0.5.
Result<Tensor> RandomHue(const Tensor& image, float max_delta, uint64_t seed);

}  // namespace sluice::image

#endif  // SLUICE_IMAGE_COLOR_H_
