// Fused "random resized crop": the training-time augmentation of ImageNet
// pipelines (torchvision's RandomResizedCrop + RandomHorizontalFlip +
// ToTensor + Normalize, or tf.image's sample_distorted_bounding_box ->
// decode_and_crop_jpeg -> resize -> flip) as one call from encoded bytes to a
// normalised float32 tensor:
//
//   1. read the image size from the JPEG header (ExtractJpegShape);
//   2. sample a crop box (SampleRandomResizedCrop below) and a flip;
//   3. decode only that box, as DecodeAndCropJpeg does (the rows of the box
//      and the iMCU columns that cover it, libjpeg's jpeg_skip_scanlines and
//      jpeg_crop_scanline), so the full image is never materialised; unlike
//      DecodeAndCropJpeg it keeps those columns as decoded instead of
//      copying each row to the box's exact width;
//   4. resize the box to height x width, mirror it and normalise it in one
//      pass (ResizeFlipNormalizeInto, resize.h), writing the output once.
//
// A PNG cannot be decoded partially: it is decoded whole, and step 4 reads
// the box out of it in place (no copy of the crop).
//
// The result equals the composition of the separate ops
//   Normalize(FlipLeftRight(Resize(DecodeAndCropJpeg(contents, box))))
// with the same box and flip, to float32 rounding (within 2e-6 on the
// normalised scale; the tests check 1e-5), unless dct_scaling is on.
//
// Randomness: the box and the flip are a pure function of (image size,
// options, seed): the same seed gives the same output, on any thread. The
// stream is sluice's Philox, so the boxes are not torchvision's or TF's for
// the same seed, only drawn by the same algorithm.
//
// Plain functions: thread-safe and reentrant; `contents` is only read during
// the call.
#ifndef SLUICE_IMAGE_RANDOM_RESIZED_CROP_H_
#define SLUICE_IMAGE_RANDOM_RESIZED_CROP_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/image/image.h"
#include "sluice/image/normalize.h"
#include "sluice/image/resize.h"

namespace sluice::image {

// How the crop box is drawn.
enum class CropSampler {
  // torchvision.transforms.RandomResizedCrop.get_params (the default): up to
  // max_attempts times, draw an area fraction uniformly in `scale` and an
  // aspect ratio (width / height) log-uniformly in `ratio`; w =
  // round(sqrt(area * ratio)), h = round(sqrt(area / ratio)) (round half to
  // even, as Python's round); keep the first box that fits, at a uniform
  // position. If none fits: a centre crop of the whole image, narrowed to the
  // nearest ratio bound when the image's own ratio is outside `ratio`.
  kTorchvision,
  // tf.image.sample_distorted_bounding_box (sample_distorted_bounding_box.h)
  // with the whole image as the only object box, min_object_covered 0,
  // area_range = scale, aspect_ratio_range = ratio (ratio drawn uniformly,
  // not log-uniformly); the whole image when no attempt fits. scale[1] must
  // then be <= 1.
  kTensorFlow,
};

// Options of DecodeRandomResizedCrop; the defaults are torchvision's
// RandomResizedCrop(224) + RandomHorizontalFlip() + Normalize(ImageNet).
struct RandomResizedCropOptions {
  int64_t height = 224;  // output size, > 0
  int64_t width = 224;
  // Area of the box as a fraction of the image: 0 < scale[0] <= scale[1].
  std::array<double, 2> scale = {0.08, 1.0};
  // Aspect ratio (width / height) of the box: 0 < ratio[0] <= ratio[1].
  std::array<double, 2> ratio = {3.0 / 4.0, 4.0 / 3.0};
  int32_t max_attempts = 10;  // > 0 (torchvision: 10; TF's op: 100)
  CropSampler sampler = CropSampler::kTorchvision;
  // Probability of a horizontal mirror, in [0, 1].
  float flip_probability = 0.5f;
  // The resize (resize.h). Bilinear without antialias is tf.image.resize's
  // default; torchvision on PIL images filters like antialias = true.
  ResizeMethod method = ResizeMethod::kBilinear;
  bool antialias = false;
  // (x / 255 - mean[c]) / stddev[c] and the layout; ImageNet's statistics
  // and channels-first by default (torchvision's tensor layout).
  NormalizeOptions normalize = {{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}, DataFormat::kCHW};
  // Decoded channels: 3 (RGB; grayscale images are expanded) or 1.
  int channels = 3;
  // JPEG only, off by default. Decode at 1/2, 1/4 or 1/8 scale (libjpeg's
  // DCT scaling: the largest factor that leaves the box at least height x
  // width) when the box is that much larger than the output. Decoding gets
  // cheaper, but the result is no longer the composition above: libjpeg's
  // scaled IDCT is a box-like filter, and the box snaps outwards to whole
  // pixels of the scaled image, so pixels differ from the plain path (see
  // docs/perf/jpeg-decode.md: size of the difference and the speed-up).
  bool dct_scaling = false;
  // libjpeg's IDCT: "" or "INTEGER_FAST" (TF's default), "INTEGER_ACCURATE".
  std::string dct_method;
};

// A sampled augmentation: the crop box in the pixels of the full image, and
// whether the output is mirrored.
struct RandomResizedCropParams {
  CropWindow window;
  bool flip = false;
};

// The box and flip that DecodeRandomResizedCrop uses for an image of
// image_height x image_width with this `seed` (steps 2 of the header).
// Always inside the image and non-empty.
// Errors (InvalidArgument, naming "decode_random_resized_crop" and the
// argument): a non-positive image size; options as DecodeRandomResizedCrop.
Result<RandomResizedCropParams> SampleRandomResizedCrop(int64_t image_height, int64_t image_width,
                                                        const RandomResizedCropOptions& options, uint64_t seed);

// The output shape for `options`: [c, height, width] (kCHW) or
// [height, width, c] (kHWC), c = options.channels. Errors: as the options
// checks of DecodeRandomResizedCrop.
Result<TensorShape> RandomResizedCropShape(const RandomResizedCropOptions& options);

// Decodes `contents` (JPEG or PNG) and returns the normalised float32 crop.
// Errors (InvalidArgument):
//   - options: height or width <= 0; scale or ratio not an increasing pair of
//     positive values (kTensorFlow: scale[1] also <= 1); max_attempts <= 0;
//     flip_probability outside [0, 1]; channels not 1 or 3; mean / stddev as
//     Normalize (size 0, 1 or channels; stddev > 0); an unknown dct_method;
//   - contents: empty, not JPEG or PNG, or corrupt/truncated (the decoders'
//     messages, codec.h; a truncated JPEG is an error, never grey rows).
Result<Tensor> DecodeRandomResizedCrop(std::string_view contents, const RandomResizedCropOptions& options,
                                       uint64_t seed);

// As DecodeRandomResizedCrop, writing into `out`: a float32 tensor of
// exactly RandomResizedCropShape(options), typically out_batch.Slice(i) so a
// batch is filled in place. `out` is checked before anything is decoded; on
// an error its contents are unspecified.
// Errors: as DecodeRandomResizedCrop, and InvalidArgument if `out` has the
// wrong dtype or shape.
Status DecodeRandomResizedCropInto(std::string_view contents, const RandomResizedCropOptions& options,
                                   uint64_t seed, const Tensor& out);

}  // namespace sluice::image

#endif  // SLUICE_IMAGE_RANDOM_RESIZED_CROP_H_
