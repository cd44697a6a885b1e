// Per-image and per-channel normalisation: tf.image.per_image_standardization
// and sluice's fused Normalize, the last step of most training input
// pipelines ((x / 255 - mean) / std, optionally transposed to CHW).
//
// Plain functions: thread-safe, inputs never written (see image.h).
#ifndef SLUICE_IMAGE_NORMALIZE_H_
#define SLUICE_IMAGE_NORMALIZE_H_

#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::image {

// Memory layout of a normalised output: TF's channels-last [h, w, c] or the
// channels-first [c, h, w] that PyTorch-style models consume. A batch keeps
// its leading dimension: [n, h, w, c] or [n, c, h, w].
enum class DataFormat { kHWC, kCHW };

// Per-channel statistics of Normalize. Each vector holds one value per channel
// or a single value for every channel; empty means mean 0 / stddev 1. Values
// are on the [0, 1] scale (ImageNet: mean {0.485, 0.456, 0.406}, stddev
// {0.229, 0.224, 0.225}).
struct NormalizeOptions {
  std::vector<float> mean;
  std::vector<float> stddev;
  DataFormat data_format = DataFormat::kHWC;
};

// out = (v - mean[c]) / stddev[c] as float32, where v is the pixel on the
// [0, 1] scale: x / 255 for uint8, x / 65535 for uint16, x itself for float32
// and float64. Computed as one multiply-add per value (x * a[c] + b[c]), so it
// may differ from the two-step formula by a few float32 ulps.
// `image`: [h, w, c] or [n, h, w, c]; the output has the same rank, in
// `data_format`.
// Errors (InvalidArgument, naming "normalize" and the argument): rank not 3 or
// 4; dtype not uint8/uint16/float32/float64; mean or stddev with a size other
// than 0, 1 or c; a stddev value <= 0 or not finite.
Result<Tensor> Normalize(const Tensor& image, const NormalizeOptions& options);

// tf.image.per_image_standardization: each image is cast to float32 (not
// rescaled) and mapped to (x - mean) / max(stddev, 1 / sqrt(h * w * c)),
// mean and stddev taken over the whole image. `image`: [h, w, c] or
// [n, h, w, c] of any real dtype; float32 output of the same shape. The
// statistics are accumulated in float64 (TF: float32 reductions), so results
// agree with TF to about 1e-5 relative.
// Errors: InvalidArgument for a rank other than 3 or 4 or an unsupported dtype.
Result<Tensor> PerImageStandardization(const Tensor& image);

namespace internal {
// The per-channel multiply-add of Normalize: a[c] = scale / stddev[c],
// b[c] = -mean[c] / stddev[c], for `channels` channels. `op` names the caller
// in errors. Used by the fused resize path (resize.h).
Status NormalizeCoefficients(const NormalizeOptions& options, int64_t channels, float scale,
                             const char* op, std::vector<float>* a, std::vector<float>* b);
}  // namespace internal

}  // namespace sluice::image

#endif  // SLUICE_IMAGE_NORMALIZE_H_
