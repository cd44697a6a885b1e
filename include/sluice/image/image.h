// Conventions shared by sluice::image, the C++ side of tf.image.
//
// An image is a Tensor of rank 3, [height, width, channels] (HWC, TF's
// layout), or a batch of them, rank 4 [batch, height, width, channels].
// Pixel types follow tf.image: uint8 and uint16 hold integers on their full
// range, float32/float64 hold values in [0, 1] (convert_image_dtype's
// convention). Ops that produce a new image allocate it; none writes its
// input. Every op is a plain function, thread-safe on distinct outputs.
#ifndef SLUICE_IMAGE_IMAGE_H_
#define SLUICE_IMAGE_IMAGE_H_

#include <cstdint>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::image {

// A rectangle of an image: rows [y, y + height), columns [x, x + width).
// The crop window of DecodeAndCropJpeg (codec.h), ResizeFlipNormalize
// (resize.h) and DecodeRandomResizedCrop (random_resized_crop.h).
struct CropWindow {
  int64_t y = 0;
  int64_t x = 0;
  int64_t height = 0;
  int64_t width = 0;
};

// The geometry of an image or a batch of images.
struct ImageGeometry {
  int64_t batch = 0;  // 0 for a single rank-3 image
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 0;
  bool is_batch = false;  // rank 4 (which may hold 0 images)
};

// The geometry of `image`: InvalidArgument naming `op` unless it has rank 3
// (or rank 4 where `allow_batch`), as TF's "'image' (shape ...) must be at
// least three-dimensional".
Result<ImageGeometry> GetGeometry(const Tensor& image, std::string_view op, bool allow_batch = true);

}  // namespace sluice::image

#endif  // SLUICE_IMAGE_IMAGE_H_
