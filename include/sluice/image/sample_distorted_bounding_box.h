// tf.image.sample_distorted_bounding_box: draws a random crop of an image
// that covers enough of the given object boxes, the first step of
// Inception-style "random resized crop" augmentation.
//
// The algorithm is TensorFlow's (sample_distorted_bounding_box_op.cc): up to
// max_attempts times, draw an aspect ratio uniformly from aspect_ratio_range,
// a height between those giving area_range's smallest and largest areas
// (rounding as TF), a position uniformly, and keep the first crop that covers
// at least min_object_covered of some box; if none does, the whole image.
// The draws come from sluice's Philox stream keyed by `seed` (same seed, same
// box), not TF's stream, so the boxes differ from TF's for the same seed but
// follow the same distribution.
//
// A plain function: thread-safe.
#ifndef SLUICE_IMAGE_SAMPLE_DISTORTED_BOUNDING_BOX_H_
#define SLUICE_IMAGE_SAMPLE_DISTORTED_BOUNDING_BOX_H_

#include <array>
#include <cstdint>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::image {

// TF's attributes, with TF's defaults.
struct SampleDistortedBoundingBoxOptions {
  uint64_t seed = 0;
  float min_object_covered = 0.1f;                  // fraction of a box, >= 0
  std::array<float, 2> aspect_ratio_range = {0.75f, 1.33f};  // width / height, > 0
  std::array<float, 2> area_range = {0.05f, 1.0f};  // fraction of the image, in (0, 1]
  int32_t max_attempts = 100;                       // > 0
  // With no box given, sample against the whole image instead of failing.
  bool use_image_if_no_bounding_boxes = false;
};

// The result, as TF's three outputs: slice begin [y, x, 0] and size
// [height, width, -1] for tf.slice, and the crop as one normalised box
// [ymin, xmin, ymax, xmax] (TF's `bboxes`, shape [1, 1, 4]).
struct DistortedBoundingBox {
  std::array<int32_t, 3> begin;
  std::array<int32_t, 3> size;
  std::array<float, 4> box;
};

// `image_height`, `image_width`: the image (TF's image_size[:2]), > 0.
// `bounding_boxes`: float32 [batch, N, 4] or [N, 4] boxes [ymin, xmin, ymax,
// xmax] in [0, 1] (any number, including none).
// Errors (InvalidArgument, naming "sample_distorted_bounding_box" and the
// argument): a non-positive image size; boxes not float32 with last dim 4,
// with a coordinate outside [0, 1] or ymin > ymax / xmin > xmax; no boxes and
// use_image_if_no_bounding_boxes false; min_object_covered < 0; an
// aspect_ratio_range or area_range that is not an increasing pair of positive
// values (area_range also <= 1); max_attempts <= 0.
Result<DistortedBoundingBox> SampleDistortedBoundingBox(int64_t image_height, int64_t image_width,
                                                        const Tensor& bounding_boxes,
                                                        const SampleDistortedBoundingBoxOptions& options);

}  // namespace sluice::image

#endif  // SLUICE_IMAGE_SAMPLE_DISTORTED_BOUNDING_BOX_H_
