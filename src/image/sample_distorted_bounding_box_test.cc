#include "sluice/image/sample_distorted_bounding_box.h"

#include <gtest/gtest.h>

#include "transforms_test_util.h"

namespace sluice::image {
namespace {

using testing::MakeTensor;

Tensor NoBoxes() { return Tensor(DType::kFloat32, {1, 0, 4}); }

TEST(SampleDistortedBoundingBoxTest, ReproducibleAndWithinConstraints) {
  SampleDistortedBoundingBoxOptions o;
  o.use_image_if_no_bounding_boxes = true;
  o.area_range = {0.08f, 1.0f};
  o.aspect_ratio_range = {0.75f, 1.3333f};
  for (uint64_t seed = 0; seed < 200; ++seed) {
    o.seed = seed;
    Result<DistortedBoundingBox> a = SampleDistortedBoundingBox(240, 320, NoBoxes(), o);
    ASSERT_TRUE(a.ok()) << a.status();
    Result<DistortedBoundingBox> b = SampleDistortedBoundingBox(240, 320, NoBoxes(), o);
    EXPECT_EQ(a->begin, b->begin);
    EXPECT_EQ(a->size, b->size);
    const int32_t y = a->begin[0], x = a->begin[1], h = a->size[0], w = a->size[1];
    EXPECT_EQ(a->begin[2], 0);
    EXPECT_EQ(a->size[2], -1);
    ASSERT_GT(h, 0);
    ASSERT_GT(w, 0);
    EXPECT_LE(y + h, 240);
    EXPECT_LE(x + w, 320);
    const float area = static_cast<float>(h * w) / (240.0f * 320.0f);
    EXPECT_GE(area, 0.08f - 1e-6f);
    EXPECT_LE(area, 1.0f);
    EXPECT_FLOAT_EQ(a->box[0], y / 240.0f);
    EXPECT_FLOAT_EQ(a->box[3], (x + w) / 320.0f);
    if (h < 240 && w < 320) {
      const float aspect = static_cast<float>(w) / static_cast<float>(h);
      EXPECT_GT(aspect, 0.7f);
      EXPECT_LT(aspect, 1.4f);
    }
  }
}

TEST(SampleDistortedBoundingBoxTest, CoversTheObject) {
  // One object box in the top-left quarter; every crop must hold >= 90% of it.
  Tensor boxes = MakeTensor<float>({1, 1, 4}, {0.0f, 0.0f, 0.5f, 0.5f});
  SampleDistortedBoundingBoxOptions o;
  o.min_object_covered = 0.9f;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    o.seed = seed;
    Result<DistortedBoundingBox> r = SampleDistortedBoundingBox(100, 100, boxes, o);
    ASSERT_TRUE(r.ok()) << r.status();
    const int32_t y = r->begin[0], x = r->begin[1], h = r->size[0], w = r->size[1];
    const int32_t iy = std::max(0, std::min(50, y + h) - y), ix = std::max(0, std::min(50, x + w) - x);
    EXPECT_GE(static_cast<float>(iy * ix) / 2500.0f, 0.9f) << "seed " << seed;
  }
}

TEST(SampleDistortedBoundingBoxTest, FallsBackToWholeImage) {
  // An impossible constraint: every attempt fails, so the whole image.
  SampleDistortedBoundingBoxOptions o;
  o.use_image_if_no_bounding_boxes = true;
  o.area_range = {0.05f, 0.1f};
  o.min_object_covered = 1.0f;
  Result<DistortedBoundingBox> r = SampleDistortedBoundingBox(50, 60, NoBoxes(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->begin, (std::array<int32_t, 3>{0, 0, 0}));
  EXPECT_EQ(r->size, (std::array<int32_t, 3>{50, 60, -1}));
  EXPECT_EQ(r->box, (std::array<float, 4>{0, 0, 1, 1}));
}

TEST(SampleDistortedBoundingBoxTest, BadArguments) {
  SampleDistortedBoundingBoxOptions o;
  Status s = SampleDistortedBoundingBox(10, 10, NoBoxes(), o).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("use_image_if_no_bounding_boxes"), std::string::npos);
  o.use_image_if_no_bounding_boxes = true;
  EXPECT_EQ(SampleDistortedBoundingBox(0, 10, NoBoxes(), o).status().code(), Code::kInvalidArgument);
  Tensor bad = MakeTensor<float>({1, 1, 4}, {0.5f, 0.0f, 0.2f, 1.0f});
  EXPECT_EQ(SampleDistortedBoundingBox(10, 10, bad, o).status().code(), Code::kInvalidArgument);
  Tensor outside = MakeTensor<float>({1, 1, 4}, {0.0f, 0.0f, 1.5f, 1.0f});
  EXPECT_EQ(SampleDistortedBoundingBox(10, 10, outside, o).status().code(), Code::kInvalidArgument);
  SampleDistortedBoundingBoxOptions area = o;
  area.area_range = {0.5f, 0.1f};
  s = SampleDistortedBoundingBox(10, 10, NoBoxes(), area).status();
  EXPECT_NE(s.message().find("area_range"), std::string::npos) << s;
  SampleDistortedBoundingBoxOptions attempts = o;
  attempts.max_attempts = 0;
  EXPECT_EQ(SampleDistortedBoundingBox(10, 10, NoBoxes(), attempts).status().code(), Code::kInvalidArgument);
  SampleDistortedBoundingBoxOptions covered = o;
  covered.min_object_covered = -0.5f;
  EXPECT_EQ(SampleDistortedBoundingBox(10, 10, NoBoxes(), covered).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::image
