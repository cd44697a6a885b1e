// Resizing: tf.image.resize (TF2 semantics), TF 1's resize ops (ResizeV1,
// ResizeImagesV1: align_corners and legacy pixel centres), and
// ResizeFlipNormalize, the fused resize -> horizontal flip -> normalise path
// of training pipelines.
//
// Each of Resize's methods is a separable two-pass resampler: weights and
// source indices are precomputed once per axis, then each needed input row is
// filtered horizontally into a float32 buffer and output rows are accumulated
// vertically (a contiguous multiply-add over width * channels that the
// compiler vectorises). Sampling follows TF2's tf.image.resize exactly:
//   kBilinear         ResizeBilinear, half_pixel_centers=True
//   kNearestNeighbor  ResizeNearestNeighbor, half_pixel_centers=True
//   kBicubic          ResizeBicubic, half_pixel_centers=True (Keys a=-0.5,
//                     TF's 1024-entry weight table, out-of-image taps dropped
//                     and the rest renormalised)
//   kArea             ResizeArea (exact pixel-area coverage)
//   kLanczos3/5, kGaussian, kMitchellCubic, and kBilinear/kBicubic with
//                     antialias: ScaleAndTranslate with TF's kernels
//                     (triangle / Keys cubic for bilinear / bicubic); with
//                     antialias the kernel is widened by the downscale factor.
// Results equal TF's up to float32 rounding in a different summation order:
// within 2e-4 absolute on 0..255 inputs, about 1e-6 on [0, 1] inputs.
//
// Plain functions: thread-safe, inputs never written (see image.h).
#ifndef SLUICE_IMAGE_RESIZE_H_
#define SLUICE_IMAGE_RESIZE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/image/image.h"  // CropWindow
#include "sluice/image/normalize.h"

namespace sluice::image {

// tf.image.ResizeMethod.
enum class ResizeMethod {
  kBilinear,
  kNearestNeighbor,
  kBicubic,
  kArea,
  kLanczos3,
  kLanczos5,
  kGaussian,
  kMitchellCubic,
};

// TF's names: "bilinear", "nearest", "bicubic", "area", "lanczos3",
// "lanczos5", "gaussian", "mitchellcubic".
std::string_view ResizeMethodName(ResizeMethod method);
// Inverse of ResizeMethodName; nullopt for an unknown name.
std::optional<ResizeMethod> ResizeMethodFromName(std::string_view name);

// The arguments of tf.image.resize after `images`.
struct ResizeOptions {
  int64_t height = 0;  // size[0], > 0
  int64_t width = 0;   // size[1], > 0
  ResizeMethod method = ResizeMethod::kBilinear;
  // Fit inside height x width keeping the input's aspect ratio (TF: the scale
  // min(height / h, width / w) in float32, sizes rounded half to even).
  bool preserve_aspect_ratio = false;
  // Low-pass filter when downsampling; only kBilinear and kBicubic change
  // (kArea and kNearestNeighbor ignore it; the ScaleAndTranslate kernels use it).
  bool antialias = false;
};

// tf.image.resize(images, [height, width], method, preserve_aspect_ratio,
// antialias). `images`: [h, w, c] or [n, h, w, c] of uint8, int8, uint16,
// int16, int32, int64, float32 or float64 (kNearestNeighbor: any non-string
// dtype). Output: float32 of rank and batch of the input, or the input dtype
// for kNearestNeighbor. Values are not clamped (bicubic and lanczos overshoot).
// Errors (InvalidArgument, naming "resize"): rank not 3 or 4; height or width
// <= 0; an input with zero height or width; an unsupported dtype.
Result<Tensor> Resize(const Tensor& images, const ResizeOptions& options);

// tf.image.resize_with_pad: resizes keeping the aspect ratio so the image
// fits target_height x target_width, then pads with zeros, centred (TF's float
// arithmetic for the sizes and offsets). Output dtype as Resize.
// Errors: Resize's, and InvalidArgument if a target size is <= 0.
Result<Tensor> ResizeWithPad(const Tensor& images, int64_t target_height, int64_t target_width,
                             ResizeMethod method = ResizeMethod::kBilinear, bool antialias = false);

// TF 1's resize kernels: the ResizeBilinear, ResizeNearestNeighbor,
// ResizeBicubic and ResizeArea ops with their align_corners and
// half_pixel_centers attributes (tf.compat.v1.image.resize_bilinear, ...).
// Only the first four ResizeMethods exist here. Sampling follows TF's
// kernels (image_resizer_state.h), which differ from Resize's TF2 rules:
//   scale        in / out, or (in - 1) / (out - 1) with align_corners when
//                in > 1 and out > 1 (float32);
//   source       legacy (the default): i * scale, pixel corners at integers;
//                half_pixel_centers: (i + 0.5) * scale - 0.5;
//   bilinear     lerp of the two neighbours, edges clamped;
//   nearest      floor of the source (legacy: i * scale; half pixel:
//                (i + 0.5) * scale, no -0.5), or round half away from zero
//                with align_corners; the input dtype is kept;
//   bicubic      legacy: Keys a = -0.75, the four taps clamped to the edge
//                (edge pixels repeated); half_pixel_centers: a = -0.5, taps
//                off the image dropped and the rest renormalised; both from
//                TF's 1024-entry weight table;
//   area         exact box average over [i * scale, (i + 1) * scale) (TF has
//                no half_pixel_centers for it: it was always centred).
// Float32 arithmetic in TF's order, so results equal TF's to a few ulps.
struct ResizeV1Options {
  int64_t height = 0;  // size[0], > 0
  int64_t width = 0;   // size[1], > 0
  // kBilinear, kNearestNeighbor, kBicubic or kArea.
  ResizeMethod method = ResizeMethod::kBilinear;
  bool align_corners = false;
  // Not with align_corners, nor with kArea.
  bool half_pixel_centers = false;
};

// One of TF 1's resize ops on `images`, [h, w, c] or [n, h, w, c] (TF's ops
// take rank 4 only; rank 3 is a convenience). Dtypes: uint8, int8, uint16,
// int16, int32, int64, float32, float64 (each value read as float32, as TF
// does); kNearestNeighbor also float16 and bfloat16. Output: float32, or the
// input dtype for kNearestNeighbor, of rank and batch of the input.
// Errors (InvalidArgument, naming the op, e.g. "resize_bilinear", with TF's
// wording): rank not 3 or 4; zero channels; an input of zero height or
// width; height or width <= 0; half_pixel_centers with align_corners or
// kArea; another method; an unsupported dtype.
Result<Tensor> ResizeV1(const Tensor& images, const ResizeV1Options& options);

// The arguments of tf.compat.v1.image.resize_images after `images`.
struct ResizeImagesV1Options {
  int64_t height = 0;
  int64_t width = 0;
  ResizeMethod method = ResizeMethod::kBilinear;  // as ResizeV1Options
  bool align_corners = false;
  // As ResizeOptions::preserve_aspect_ratio.
  bool preserve_aspect_ratio = false;
};

// tf.compat.v1.image.resize_images: ResizeV1 (legacy pixel centres), except
// that an output size equal to the input's returns a copy of `images` in its
// own dtype (TF returns the input when the sizes match, before any check).
// Errors: ResizeV1's, naming "resize_images".
Result<Tensor> ResizeImagesV1(const Tensor& images, const ResizeImagesV1Options& options);

// Options of ResizeFlipNormalize: the resize of a (cropped) image, an optional
// mirror, then Normalize's per-channel (x / 255 - mean) / stddev and layout.
struct ResizeFlipNormalizeOptions {
  int64_t height = 0;  // output size, > 0
  int64_t width = 0;
  ResizeMethod method = ResizeMethod::kBilinear;
  bool antialias = false;
  // Resample only this window of the input (the box of
  // SampleDistortedBoundingBox); nullopt: the whole image.
  std::optional<CropWindow> crop;
  bool flip_left_right = false;
  // mean / stddev / data_format, as Normalize (default layout there is HWC;
  // CHW is the usual choice here).
  NormalizeOptions normalize;
};

// Equals Normalize(FlipLeftRight(Resize(Crop(image)))) to float32 rounding
// (within 2e-6 on the normalised scale), but reads the input once and writes
// the output once: the crop is an offset, the flip is folded into the
// horizontal weights, and normalisation and the CHW transpose happen as each
// output row is finished. 3-channel images whose axes need at most two taps
// (bilinear, and the methods that reduce to it) take a hand-vectorised
// kernel (AVX2+FMA or SSE2, chosen at run time: src/image/resize_kernels.h),
// the rest a portable one. kNearestNeighbor is allowed (its result is exact
// in float32).
// `image`: [h, w, c] uint8. Output: float32 [height, width, c] or
// [c, height, width].
// Errors (InvalidArgument, naming "resize_flip_normalize" and the argument):
// image not rank 3 or not uint8; crop outside the image or empty; height or
// width <= 0; Normalize's errors for mean / stddev.
Result<Tensor> ResizeFlipNormalize(const Tensor& image, const ResizeFlipNormalizeOptions& options);

// As ResizeFlipNormalize, writing into `out`, a float32 tensor of exactly the
// output shape; `out` may be a Slice of a batch tensor, so a batch is filled
// in place. Does not allocate the output. Errors: as above, and
// InvalidArgument if `out` has the wrong dtype or shape.
Status ResizeFlipNormalizeInto(const Tensor& image, const ResizeFlipNormalizeOptions& options,
                               const Tensor& out);

}  // namespace sluice::image

#endif  // SLUICE_IMAGE_RESIZE_H_
