#include "sluice/image/sample_distorted_bounding_box.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "image/internal.h"

namespace sluice::image {
namespace {

constexpr const char* kOp = "sample_distorted_bounding_box";

// A pixel rectangle [min_x, max_x) x [min_y, max_y).
struct Rect {
  int64_t min_x = 0, min_y = 0, max_x = 0, max_y = 0;
  int64_t Area() const { return max_x > min_x && max_y > min_y ? (max_x - min_x) * (max_y - min_y) : 0; }
  Rect Intersect(const Rect& o) const {
    return {std::max(min_x, o.min_x), std::max(min_y, o.min_y), std::min(max_x, o.max_x), std::min(max_y, o.max_y)};
  }
};

// One crop of the given aspect ratio with an area in [min_area, max_area]
// (fractions of the image), rounding as TF's GenerateRandomCrop; false if
// rounding leaves no such crop.
bool GenerateRandomCrop(int64_t width, int64_t height, float min_fraction, float max_fraction, float aspect,
                        internal::Rng& rng, Rect* crop) {
  const float min_area = min_fraction * static_cast<float>(width) * static_cast<float>(height);
  const float max_area = max_fraction * static_cast<float>(width) * static_cast<float>(height);
  int64_t h = lrintf(std::sqrt(min_area / aspect));
  int64_t max_h = lrintf(std::sqrt(max_area / aspect));
  if (lrintf(static_cast<float>(max_h) * aspect) > width) {
    // The largest height whose rounded width still fits.
    constexpr float kEps = 0.0000001f;
    max_h = static_cast<int64_t>((static_cast<float>(width) + 0.5f - kEps) / aspect);
    if (lrintf(static_cast<float>(max_h) * aspect) > width) max_h -= 1;
  }
  max_h = std::min(max_h, height);
  h = std::min(h, max_h);
  if (h < max_h) h += rng.UniformInt(static_cast<uint32_t>(max_h - h + 1));
  int64_t w = lrintf(static_cast<float>(h) * aspect);
  float area = static_cast<float>(w * h);
  if (area < min_area) {  // rounding made it too small: one step up
    h += 1;
    w = lrintf(static_cast<float>(h) * aspect);
    area = static_cast<float>(w * h);
  }
  if (area < min_area) return false;
  if (area > max_area) {  // too large: one step down
    h -= 1;
    w = lrintf(static_cast<float>(h) * aspect);
    area = static_cast<float>(w * h);
  }
  if (area < min_area || area > max_area || w > width || h > height || w <= 0 || h <= 0) return false;
  const int64_t y = h < height ? rng.UniformInt(static_cast<uint32_t>(height - h)) : 0;
  const int64_t x = w < width ? rng.UniformInt(static_cast<uint32_t>(width - w)) : 0;
  *crop = {x, y, x + w, y + h};
  return true;
}

// TF's SatisfiesOverlapConstraints: the crop holds pixels and covers at
// least `min_covered` of some non-empty box.
bool CoversEnough(const Rect& crop, float min_covered, const std::vector<Rect>& boxes) {
  if (crop.Area() < 1) return false;
  for (const Rect& box : boxes) {
    const float area = static_cast<float>(box.Area());
    if (area < 1.0f) continue;
    if (static_cast<float>(crop.Intersect(box).Area()) / area >= min_covered) return true;
  }
  return false;
}

Status CheckRange(const std::array<float, 2>& r, const char* name, bool at_most_one) {
  if (!(r[0] > 0.0f && r[0] <= r[1]) || (at_most_one && r[1] > 1.0f)) {
    return errors::InvalidArgument(kOp, ": ", name, " must be an increasing pair of positive values",
                                   at_most_one ? " at most 1" : "", ", got [", r[0], ", ", r[1], "]");
  }
  return Status::OK();
}

Result<std::vector<Rect>> ParseBoxes(const Tensor& t, int64_t height, int64_t width) {
  if (t.dtype() != DType::kFloat32 || t.rank() < 1 || t.shape().dim(t.rank() - 1) != 4) {
    return errors::InvalidArgument(kOp, ": 'bounding_boxes' must be float32 [batch, N, 4], got ",
                                   DTypeName(t.dtype()), " ", t.shape().DebugString());
  }
  std::vector<Rect> boxes;
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements() / 4; ++i, p += 4) {
    for (int k = 0; k < 4; ++k) {
      if (!(p[k] >= 0.0f && p[k] <= 1.0f)) {
        return errors::InvalidArgument(kOp, ": all bounding box coordinates must be in [0.0, 1.0], box ", i,
                                       " has ", p[k]);
      }
    }
    if (p[0] > p[2] || p[1] > p[3]) {
      return errors::InvalidArgument(kOp, ": bounding box ", i, " has ymin > ymax or xmin > xmax");
    }
    // TF truncates the scaled coordinates to int.
    boxes.push_back({static_cast<int64_t>(p[1] * static_cast<float>(width)),
                     static_cast<int64_t>(p[0] * static_cast<float>(height)),
                     static_cast<int64_t>(p[3] * static_cast<float>(width)),
                     static_cast<int64_t>(p[2] * static_cast<float>(height))});
  }
  return boxes;
}

}  // namespace

Result<DistortedBoundingBox> SampleDistortedBoundingBox(int64_t image_height, int64_t image_width,
                                                        const Tensor& bounding_boxes,
                                                        const SampleDistortedBoundingBoxOptions& o) {
  if (image_height <= 0 || image_width <= 0 || image_height > INT32_MAX || image_width > INT32_MAX) {
    return errors::InvalidArgument(kOp, ": 'image_size' must be positive, got [", image_height, ", ", image_width,
                                   "]");
  }
  if (!(o.min_object_covered >= 0.0f)) {
    return errors::InvalidArgument(kOp, ": min_object_covered must be non-negative, got ", o.min_object_covered);
  }
  SLUICE_RETURN_IF_ERROR(CheckRange(o.aspect_ratio_range, "aspect_ratio_range", false));
  SLUICE_RETURN_IF_ERROR(CheckRange(o.area_range, "area_range", true));
  if (o.max_attempts <= 0) {
    return errors::InvalidArgument(kOp, ": max_attempts must be positive, got ", o.max_attempts);
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<Rect> boxes, ParseBoxes(bounding_boxes, image_height, image_width));
  const Rect image{0, 0, image_width, image_height};
  if (boxes.empty()) {
    if (!o.use_image_if_no_bounding_boxes) {
      return errors::InvalidArgument(kOp,
                                     ": No bounding boxes provided as input. One must enable "
                                     "use_image_if_no_bounding_boxes if you wish to not provide any bounding "
                                     "boxes.");
    }
    boxes.push_back(image);
  }
  internal::Rng rng(o.seed);
  Rect crop = image;
  const auto [min_aspect, max_aspect] = o.aspect_ratio_range;
  for (int32_t attempt = 0; attempt < o.max_attempts; ++attempt) {
    const float aspect = rng.UniformFloat() * (max_aspect - min_aspect) + min_aspect;
    Rect candidate;
    if (GenerateRandomCrop(image_width, image_height, o.area_range[0], o.area_range[1], aspect, rng, &candidate) &&
        CoversEnough(candidate, o.min_object_covered, boxes)) {
      crop = candidate;
      break;
    }
  }
  DistortedBoundingBox out;
  out.begin = {static_cast<int32_t>(crop.min_y), static_cast<int32_t>(crop.min_x), 0};
  out.size = {static_cast<int32_t>(crop.max_y - crop.min_y), static_cast<int32_t>(crop.max_x - crop.min_x), -1};
  const float h = static_cast<float>(image_height), w = static_cast<float>(image_width);
  out.box = {static_cast<float>(crop.min_y) / h, static_cast<float>(crop.min_x) / w,
             static_cast<float>(crop.max_y) / h, static_cast<float>(crop.max_x) / w};
  return out;
}

}  // namespace sluice::image
