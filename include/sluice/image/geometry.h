// Geometric transforms of tf.image: crops, pads, flips, rotations by 90
// degrees, and their random forms. They move whole pixels, so they work on
// every dtype except string and are exact (bit-for-bit equal to TF).
//
// `image` is [h, w, c] or [n, h, w, c] (image.h) unless stated. Error
// messages name the op and keep TF's wording ("offset_height must be >= 0.").
// Plain functions: thread-safe, inputs never written. Random ops take a
// `seed` and are reproducible (same seed, same result), but do not reproduce
// TensorFlow's random stream.
#ifndef SLUICE_IMAGE_GEOMETRY_H_
#define SLUICE_IMAGE_GEOMETRY_H_

#include <cstdint>
#include <span>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::image {

// tf.image.crop_to_bounding_box: rows [offset_height, offset_height +
// target_height) and columns [offset_width, offset_width + target_width).
// Errors (InvalidArgument): an offset < 0, a target size <= 0, or a box that
// does not fit ("height must be >= target + offset.").
Result<Tensor> CropToBoundingBox(const Tensor& image, int64_t offset_height, int64_t offset_width,
                                 int64_t target_height, int64_t target_width);

// tf.image.pad_to_bounding_box: places `image` at (offset_height,
// offset_width) in a zero image of target_height x target_width.
// Errors (InvalidArgument): an offset < 0, or the image not fitting
// ("height must be <= target - offset").
Result<Tensor> PadToBoundingBox(const Tensor& image, int64_t offset_height, int64_t offset_width,
                                int64_t target_height, int64_t target_width);

// tf.image.central_crop: keeps the central `central_fraction` of height and
// width, starting at int((h - h * fraction) / 2) (computed in double, as TF).
// 1.0 returns the input itself (sharing its buffer).
// Errors: InvalidArgument unless 0 < central_fraction <= 1.
Result<Tensor> CentralCrop(const Tensor& image, double central_fraction);

// tf.image.flip_left_right / flip_up_down (every image of a batch).
Result<Tensor> FlipLeftRight(const Tensor& image);
Result<Tensor> FlipUpDown(const Tensor& image);

// tf.image.rot90: rotates counter-clockwise by k * 90 degrees (any k; taken
// mod 4), as numpy.rot90 on the height and width axes.
Result<Tensor> Rot90(const Tensor& image, int64_t k = 1);

// tf.image.transpose: swaps height and width.
Result<Tensor> Transpose(const Tensor& image);

// tf.image.random_crop: a `size`-shaped slice of `value` (any rank, any
// non-string dtype) at offsets uniform in [0, value.dim(i) - size[i]].
// Errors (InvalidArgument): size.size() != rank, or a size < 0 or larger than
// the value ("Need value.shape >= size").
Result<Tensor> RandomCrop(const Tensor& value, std::span<const int64_t> size, uint64_t seed);

// tf.image.random_flip_left_right / random_flip_up_down: each image (each of
// a batch independently) is flipped with probability 1/2.
Result<Tensor> RandomFlipLeftRight(const Tensor& image, uint64_t seed);
Result<Tensor> RandomFlipUpDown(const Tensor& image, uint64_t seed);

}  // namespace sluice::image

#endif  // SLUICE_IMAGE_GEOMETRY_H_
