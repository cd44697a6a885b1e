// Pixel-moving transforms. Each is a gather of whole pixels
// (channels * dtype-size bytes) or of whole row segments, with memcpy, so one
// implementation serves every dtype.
#include "sluice/image/geometry.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "image/internal.h"
#include "sluice/image/image.h"

namespace sluice::image {
namespace {

Status CheckPlain(const Tensor& t, const char* op) {
  if (!IsPlainDType(t.dtype())) {
    return errors::InvalidArgument(op, ": unsupported dtype ", DTypeName(t.dtype()));
  }
  return Status::OK();
}

TensorShape ImageShape(const ImageGeometry& g, int64_t h, int64_t w) {
  return g.is_batch ? TensorShape{g.batch, h, w, g.channels} : TensorShape{h, w, g.channels};
}

// out[b, y, x] = in[b, src(b, y, x)] for every pixel; src returns the source
// (row, column) of output (y, x) in image b.
using PixelMap = std::function<std::pair<int64_t, int64_t>(int64_t b, int64_t y, int64_t x)>;

Tensor GatherPixels(const Tensor& in, const ImageGeometry& g, int64_t out_h, int64_t out_w, const PixelMap& src) {
  Tensor out(in.dtype(), ImageShape(g, out_h, out_w));
  const size_t pixel = static_cast<size_t>(g.channels) * DTypeSize(in.dtype());
  const auto* s = static_cast<const uint8_t*>(in.raw_data());
  auto* d = static_cast<uint8_t*>(out.raw_data());
  const int64_t n = g.is_batch ? g.batch : 1;
  for (int64_t b = 0; b < n; ++b) {
    const uint8_t* image = s + static_cast<size_t>(b * g.height * g.width) * pixel;
    for (int64_t y = 0; y < out_h; ++y) {
      for (int64_t x = 0; x < out_w; ++x, d += pixel) {
        const auto [sy, sx] = src(b, y, x);
        std::memcpy(d, image + static_cast<size_t>(sy * g.width + sx) * pixel, pixel);
      }
    }
  }
  return out;
}

// Copies the [h, w] window at (y0, x0) of each image of `in` to (dy, dx) of
// each image of `out` (both with g's batch and channels).
void CopyWindow(const Tensor& in, const ImageGeometry& g, int64_t y0, int64_t x0, int64_t h, int64_t w,
                const Tensor& out, int64_t out_h, int64_t out_w, int64_t dy, int64_t dx) {
  const size_t pixel = static_cast<size_t>(g.channels) * DTypeSize(in.dtype());
  const auto* s = static_cast<const uint8_t*>(in.raw_data());
  auto* d = static_cast<uint8_t*>(out.raw_data());
  const int64_t n = g.is_batch ? g.batch : 1;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < h; ++y) {
      const uint8_t* from = s + static_cast<size_t>((b * g.height + y0 + y) * g.width + x0) * pixel;
      uint8_t* to = d + static_cast<size_t>((b * out_h + dy + y) * out_w + dx) * pixel;
      std::memcpy(to, from, static_cast<size_t>(w) * pixel);
    }
  }
}

Result<ImageGeometry> Geometry(const Tensor& image, const char* op) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, GetGeometry(image, op));
  SLUICE_RETURN_IF_ERROR(CheckPlain(image, op));
  return g;
}

// Flips the images of `flip` (one flag per image) left-right or up-down.
Tensor FlipSome(const Tensor& image, const ImageGeometry& g, bool left_right, const std::vector<bool>& flip) {
  return GatherPixels(image, g, g.height, g.width, [&](int64_t b, int64_t y, int64_t x) {
    if (!flip[b]) return std::pair{y, x};
    return left_right ? std::pair{y, g.width - 1 - x} : std::pair{g.height - 1 - y, x};
  });
}

Result<Tensor> RandomFlip(const Tensor& image, uint64_t seed, bool left_right, const char* op) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, Geometry(image, op));
  internal::Rng rng(seed);
  std::vector<bool> flip(g.is_batch ? g.batch : 1);
  for (size_t i = 0; i < flip.size(); ++i) flip[i] = rng.Coin();
  return FlipSome(image, g, left_right, flip);
}

}  // namespace

Result<Tensor> CropToBoundingBox(const Tensor& image, int64_t offset_height, int64_t offset_width,
                                 int64_t target_height, int64_t target_width) {
  constexpr const char* op = "crop_to_bounding_box";
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, Geometry(image, op));
  if (offset_width < 0) return errors::InvalidArgument(op, ": offset_width must be >= 0.");
  if (offset_height < 0) return errors::InvalidArgument(op, ": offset_height must be >= 0.");
  if (target_width <= 0) return errors::InvalidArgument(op, ": target_width must be > 0.");
  if (target_height <= 0) return errors::InvalidArgument(op, ": target_height must be > 0.");
  if (g.width < target_width + offset_width) {
    return errors::InvalidArgument(op, ": width must be >= target + offset.");
  }
  if (g.height < target_height + offset_height) {
    return errors::InvalidArgument(op, ": height must be >= target + offset.");
  }
  Tensor out(image.dtype(), ImageShape(g, target_height, target_width));
  CopyWindow(image, g, offset_height, offset_width, target_height, target_width, out, target_height, target_width,
             0, 0);
  return out;
}

Result<Tensor> PadToBoundingBox(const Tensor& image, int64_t offset_height, int64_t offset_width,
                                int64_t target_height, int64_t target_width) {
  constexpr const char* op = "pad_to_bounding_box";
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, Geometry(image, op));
  if (offset_height < 0) return errors::InvalidArgument(op, ": offset_height must be >= 0");
  if (offset_width < 0) return errors::InvalidArgument(op, ": offset_width must be >= 0");
  if (target_width - offset_width < g.width) {
    return errors::InvalidArgument(op, ": width must be <= target - offset");
  }
  if (target_height - offset_height < g.height) {
    return errors::InvalidArgument(op, ": height must be <= target - offset");
  }
  Tensor out = Tensor::Zeros(image.dtype(), ImageShape(g, target_height, target_width));
  CopyWindow(image, g, 0, 0, g.height, g.width, out, target_height, target_width, offset_height, offset_width);
  return out;
}

Result<Tensor> CentralCrop(const Tensor& image, double central_fraction) {
  constexpr const char* op = "central_crop";
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, Geometry(image, op));
  if (!(central_fraction > 0.0 && central_fraction <= 1.0)) {
    return errors::InvalidArgument(op, ": central_fraction must be within (0, 1], got ", central_fraction);
  }
  if (central_fraction == 1.0) return image;
  const double h = static_cast<double>(g.height), w = static_cast<double>(g.width);
  const int64_t top = static_cast<int64_t>((h - h * central_fraction) / 2);
  const int64_t left = static_cast<int64_t>((w - w * central_fraction) / 2);
  const int64_t out_h = g.height - 2 * top, out_w = g.width - 2 * left;
  Tensor out(image.dtype(), ImageShape(g, out_h, out_w));
  CopyWindow(image, g, top, left, out_h, out_w, out, out_h, out_w, 0, 0);
  return out;
}

Result<Tensor> FlipLeftRight(const Tensor& image) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, Geometry(image, "flip_left_right"));
  return FlipSome(image, g, true, std::vector<bool>(g.is_batch ? g.batch : 1, true));
}

Result<Tensor> FlipUpDown(const Tensor& image) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, Geometry(image, "flip_up_down"));
  return FlipSome(image, g, false, std::vector<bool>(g.is_batch ? g.batch : 1, true));
}

Result<Tensor> Rot90(const Tensor& image, int64_t k) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, Geometry(image, "rot90"));
  const int64_t turns = ((k % 4) + 4) % 4;
  const int64_t h = g.height, w = g.width;
  switch (turns) {
    case 0: return image.DeepCopy();
    case 1: return GatherPixels(image, g, w, h, [&](int64_t, int64_t y, int64_t x) { return std::pair{x, w - 1 - y}; });
    case 2:
      return GatherPixels(image, g, h, w,
                          [&](int64_t, int64_t y, int64_t x) { return std::pair{h - 1 - y, w - 1 - x}; });
    default:
      return GatherPixels(image, g, w, h, [&](int64_t, int64_t y, int64_t x) { return std::pair{h - 1 - x, y}; });
  }
}

Result<Tensor> Transpose(const Tensor& image) {
  SLUICE_ASSIGN_OR_RETURN(ImageGeometry g, Geometry(image, "transpose"));
  return GatherPixels(image, g, g.width, g.height, [](int64_t, int64_t y, int64_t x) { return std::pair{x, y}; });
}

Result<Tensor> RandomCrop(const Tensor& value, std::span<const int64_t> size, uint64_t seed) {
  constexpr const char* op = "random_crop";
  SLUICE_RETURN_IF_ERROR(CheckPlain(value, op));
  const int rank = value.rank();
  if (static_cast<int>(size.size()) != rank) {
    return errors::InvalidArgument(op, ": 'size' has ", size.size(), " elements but 'value' has rank ", rank);
  }
  for (int i = 0; i < rank; ++i) {
    if (size[i] < 0 || size[i] > value.shape().dim(i)) {
      return errors::InvalidArgument(op, ": Need value.shape >= size, got shape ", value.shape().DebugString(),
                                     " and size ", TensorShape(size).DebugString());
    }
  }
  internal::Rng rng(seed);
  std::vector<int64_t> offset(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t room = value.shape().dim(i) - size[i] + 1;
    offset[i] = static_cast<int64_t>(rng.UniformInt(static_cast<uint32_t>(room)));
  }
  Tensor out(value.dtype(), TensorShape(size));
  if (out.num_elements() == 0) return out;
  if (rank == 0) {
    std::memcpy(out.raw_data(), value.raw_data(), DTypeSize(value.dtype()));
    return out;
  }
  // Strides in elements of the input; the last dimension is copied whole.
  std::vector<int64_t> stride(rank, 1);
  for (int i = rank - 2; i >= 0; --i) stride[i] = stride[i + 1] * value.shape().dim(i + 1);
  const size_t elem = DTypeSize(value.dtype());
  const auto* src = static_cast<const uint8_t*>(value.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  const size_t run = static_cast<size_t>(size[rank - 1]) * elem;
  std::vector<int64_t> index(rank, 0);  // position in the output, last dim fixed at 0
  while (true) {
    int64_t at = 0;
    for (int i = 0; i < rank; ++i) at += (offset[i] + index[i]) * stride[i];
    std::memcpy(dst, src + static_cast<size_t>(at) * elem, run);
    dst += run;
    int d = rank - 2;
    while (d >= 0 && ++index[d] == size[d]) index[d--] = 0;
    if (d < 0) break;
  }
  return out;
}

Result<Tensor> RandomFlipLeftRight(const Tensor& image, uint64_t seed) {
  return RandomFlip(image, seed, true, "random_flip_left_right");
}

Result<Tensor> RandomFlipUpDown(const Tensor& image, uint64_t seed) {
  return RandomFlip(image, seed, false, "random_flip_up_down");
}

}  // namespace sluice::image
