#include "sluice/image/image.h"

namespace sluice::image {

Result<ImageGeometry> GetGeometry(const Tensor& image, std::string_view op, bool allow_batch) {
  const TensorShape& s = image.shape();
  if (s.rank() == 3) return ImageGeometry{0, s.dim(0), s.dim(1), s.dim(2), false};
  if (s.rank() == 4 && allow_batch) return ImageGeometry{s.dim(0), s.dim(1), s.dim(2), s.dim(3), true};
  return errors::InvalidArgument(op, ": 'image' (shape ", s.DebugString(), ") must be ",
                                 allow_batch ? "3- or 4-dimensional" : "3-dimensional");
}

}  // namespace sluice::image
