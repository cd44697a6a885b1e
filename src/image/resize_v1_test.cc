#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/image/resize.h"
#include "transforms_test_util.h"

namespace sluice::image {
namespace {

using testing::ExpectNear;
using testing::MakeTensor;
using testing::Pattern;
using testing::Values;

ResizeV1Options V1(int64_t h, int64_t w, ResizeMethod m, bool align_corners = false, bool half_pixel = false) {
  ResizeV1Options o;
  o.height = h;
  o.width = w;
  o.method = m;
  o.align_corners = align_corners;
  o.half_pixel_centers = half_pixel;
  return o;
}

Tensor Ramp(TensorShape shape) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

std::vector<float> Resized(const Tensor& in, const ResizeV1Options& o) {
  Result<Tensor> out = ResizeV1(in, o);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ(out->dtype(), DType::kFloat32);
  return Values<float>(*out);
}

std::vector<uint8_t> RunNearest(const Tensor& in, const ResizeV1Options& o) {
  Result<Tensor> out = ResizeV1(in, o);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ(out->dtype(), DType::kUInt8);
  return Values<uint8_t>(*out);
}

// Golden values in these tests come from TensorFlow 2.21:
//   tf.compat.v1.image.resize_<method>(x[None], size, align_corners=...,
//   half_pixel_centers=...) on the inputs shown.
TEST(ResizeV1Test, BilinearLegacyCornersAreNotCentred) {
  // TF2's resize gives 0, 0.5, 1, ... here: the legacy source is i * 2/3.
  const Tensor in = Ramp({2, 2, 1});
  ExpectNear(Resized(in, V1(3, 3, ResizeMethod::kBilinear)),
             {0.0f, 0.6666666865f, 1.0f, 1.333333373f, 2.0f, 2.333333492f, 2.0f, 2.666666746f, 3.0f}, 1e-6f);
}

TEST(ResizeV1Test, BilinearAlignCornersAndHalfPixelMatchTf) {
  const Tensor in = Ramp({2, 2, 1});
  const std::vector<float> want = {0.0f, 0.5f, 1.0f, 1.0f, 1.5f, 2.0f, 2.0f, 2.5f, 3.0f};
  ExpectNear(Resized(in, V1(3, 3, ResizeMethod::kBilinear, /*align_corners=*/true)), want, 1e-6f);
  ExpectNear(Resized(in, V1(3, 3, ResizeMethod::kBilinear, false, /*half_pixel=*/true)), want, 1e-6f);
}

TEST(ResizeV1Test, NearestRoundingRulesMatchTf) {
  const Tensor small = MakeTensor<uint8_t>({2, 2, 1}, {0, 1, 2, 3});
  EXPECT_EQ(RunNearest(small, V1(3, 3, ResizeMethod::kNearestNeighbor)),
            (std::vector<uint8_t>{0, 0, 1, 0, 0, 1, 2, 2, 3}));
  EXPECT_EQ(RunNearest(small, V1(3, 3, ResizeMethod::kNearestNeighbor, true)),
            (std::vector<uint8_t>{0, 1, 1, 2, 3, 3, 2, 3, 3}));
  std::vector<uint8_t> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[i] = static_cast<uint8_t>(i);
  const Tensor big = MakeTensor<uint8_t>({4, 4, 1}, ramp);
  EXPECT_EQ(RunNearest(big, V1(3, 3, ResizeMethod::kNearestNeighbor)),
            (std::vector<uint8_t>{0, 1, 2, 4, 5, 6, 8, 9, 10}));
  EXPECT_EQ(RunNearest(big, V1(3, 3, ResizeMethod::kNearestNeighbor, true)),
            (std::vector<uint8_t>{0, 2, 3, 8, 10, 11, 12, 14, 15}));
  EXPECT_EQ(RunNearest(big, V1(3, 3, ResizeMethod::kNearestNeighbor, false, true)),
            (std::vector<uint8_t>{0, 2, 3, 8, 10, 11, 12, 14, 15}));
}

TEST(ResizeV1Test, BicubicLegacyUsesClampedTapsAndA075) {
  ExpectNear(Resized(Ramp({4, 4, 1}), V1(3, 3, ResizeMethod::kBicubic)),
             {0.0f, 1.370099187f, 2.741012096f, 5.480396748f, 6.850495338f, 8.221409798f, 10.96404839f,
              12.33414745f, 13.70506096f},
             1e-5f);
  ExpectNear(Resized(Ramp({2, 2, 1}), V1(3, 3, ResizeMethod::kBicubic)),
             {0.0f, 0.6855378151f, 1.111111045f, 1.37107563f, 2.056613445f, 2.482186794f, 2.22222209f,
              2.907760143f, 3.333333492f},
             1e-5f);
}

TEST(ResizeV1Test, BicubicHalfPixelAndAlignCornersMatchTf) {
  const Tensor in = Ramp({4, 4, 1});
  ExpectNear(Resized(in, V1(3, 3, ResizeMethod::kBicubic, false, true)),
             {0.5154085755f, 1.912326813f, 3.309244871f, 6.103081703f, 7.5f, 8.896918297f, 11.69075394f,
              13.08767128f, 14.48459053f},
             1e-5f);
  ExpectNear(Resized(in, V1(3, 3, ResizeMethod::kBicubic, true)),
             {0.0f, 1.5f, 3.0f, 6.0f, 7.5f, 9.0f, 12.0f, 13.5f, 15.0f}, 1e-5f);
}

TEST(ResizeV1Test, AreaAveragesBoxesAsTf) {
  ExpectNear(Resized(Ramp({3, 3, 1}), V1(2, 2, ResizeMethod::kArea)),
             {1.333333373f, 2.666666746f, 5.333333492f, 6.666666508f}, 1e-6f);
  ExpectNear(Resized(Ramp({3, 3, 1}), V1(2, 2, ResizeMethod::kArea, true)), {2.0f, 3.5f, 6.5f, 8.0f}, 1e-6f);
  // Upscaling: TF's float32 rounding shows (0.9999998 where 1 is exact).
  ExpectNear(Resized(Ramp({2, 2, 1}), V1(3, 3, ResizeMethod::kArea)),
             {0.0f, 0.5f, 0.9999998212f, 1.0f, 1.5f, 1.999999762f, 1.999999642f, 2.499999523f, 2.999999285f},
             1e-7f);
}

TEST(ResizeV1Test, AlignCornersMeansNothingForAOnePixelAxis) {
  // The scale is in / out (1/3 down), not (in - 1) / (out - 1) = 0; a zero
  // scale would average no rows and give NaN.
  const Tensor in = MakeTensor<float>({1, 1, 1}, {216.0f});
  const std::vector<float> out = Resized(in, V1(3, 4, ResizeMethod::kArea, /*align_corners=*/true));
  ASSERT_EQ(out.size(), 12u);
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(out[i], 216.0f) << i;
  for (int i = 8; i < 12; ++i) EXPECT_NEAR(out[i], 215.99997f, 1e-5f) << i;
}

TEST(ResizeV1Test, BatchAndChannelsAreIndependent) {
  const Tensor batch = Pattern({3, 5, 7, 3});
  Result<Tensor> all = ResizeV1(batch, V1(4, 9, ResizeMethod::kBicubic));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->shape(), (TensorShape{3, 4, 9, 3}));
  Result<Tensor> second = ResizeV1(batch.Slice(1), V1(4, 9, ResizeMethod::kBicubic));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(Values<float>(all->Slice(1)), Values<float>(*second));
}

TEST(ResizeV1Test, BilinearSameSizeIsACast) {
  const Tensor in = Pattern({4, 5, 2});
  const std::vector<float> out = Resized(in, V1(4, 5, ResizeMethod::kBilinear));
  ASSERT_EQ(out.size(), 40u);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], static_cast<float>(in.data<uint8_t>()[i]));
}

TEST(ResizeV1Test, EmptyBatchGivesEmptyOutput) {
  Result<Tensor> out = ResizeV1(Tensor(DType::kFloat32, {0, 3, 4, 2}), V1(5, 7, ResizeMethod::kArea));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (TensorShape{0, 5, 7, 2}));
}

TEST(ResizeV1Test, BadArgumentsAreInvalidArgumentWithTfWording) {
  const Tensor in = Pattern({4, 4, 1});
  const auto code = [&](const Tensor& t, const ResizeV1Options& o) { return ResizeV1(t, o).status().code(); };
  const auto message = [&](const Tensor& t, const ResizeV1Options& o) {
    return ResizeV1(t, o).status().message();
  };
  EXPECT_EQ(code(in, V1(2, 2, ResizeMethod::kBilinear, true, true)), Code::kInvalidArgument);
  EXPECT_NE(message(in, V1(2, 2, ResizeMethod::kBilinear, true, true)).find("align_corners must be False"),
            std::string::npos);
  EXPECT_EQ(code(in, V1(2, 2, ResizeMethod::kArea, false, true)), Code::kInvalidArgument);
  EXPECT_NE(message(in, V1(0, 2, ResizeMethod::kBicubic)).find("output dimensions must be positive"),
            std::string::npos);
  EXPECT_NE(message(Pattern({0, 4, 1}), V1(2, 2, ResizeMethod::kBilinear)).find("non-zero size"), std::string::npos);
  EXPECT_NE(message(Pattern({4, 4, 0}), V1(2, 2, ResizeMethod::kNearestNeighbor)).find("at least one channel"),
            std::string::npos);
  EXPECT_EQ(code(Pattern({4, 4}), V1(2, 2, ResizeMethod::kBilinear)), Code::kInvalidArgument);
  EXPECT_EQ(code(in, V1(2, 2, ResizeMethod::kLanczos3)), Code::kInvalidArgument);
  EXPECT_EQ(code(Tensor(DType::kBool, {4, 4, 1}), V1(2, 2, ResizeMethod::kNearestNeighbor)),
            Code::kInvalidArgument);
  EXPECT_EQ(code(Tensor(DType::kString, {4, 4, 1}), V1(2, 2, ResizeMethod::kBilinear)),
            Code::kInvalidArgument);
}

ResizeImagesV1Options Images(int64_t h, int64_t w, ResizeMethod m, bool preserve_aspect_ratio = false) {
  ResizeImagesV1Options o;
  o.height = h;
  o.width = w;
  o.method = m;
  o.preserve_aspect_ratio = preserve_aspect_ratio;
  return o;
}

TEST(ResizeV1Test, ResizeImagesOfSameSizeReturnsACopyInTheInputDtype) {
  const Tensor in = Pattern({2, 3, 4, 3});
  Result<Tensor> out = ResizeImagesV1(in, Images(3, 4, ResizeMethod::kBicubic));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), DType::kUInt8);
  EXPECT_EQ(Values<uint8_t>(*out), Values<uint8_t>(in));
  EXPECT_NE(out->raw_data(), in.raw_data());
}

TEST(ResizeV1Test, ResizeImagesPreservesAspectRatioAsTf) {
  Result<Tensor> out = ResizeImagesV1(Pattern({30, 20, 1}), Images(10, 10, ResizeMethod::kArea, true));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (TensorShape{10, 7, 1}));
  EXPECT_EQ(out->dtype(), DType::kFloat32);
}

TEST(ResizeV1Test, ResizeImagesUsesLegacyCentres) {
  Result<Tensor> out = ResizeImagesV1(Ramp({2, 2, 1}), Images(3, 3, ResizeMethod::kBilinear));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>(*out),
             {0.0f, 0.6666666865f, 1.0f, 1.333333373f, 2.0f, 2.333333492f, 2.0f, 2.666666746f, 3.0f}, 1e-6f);
}

}  // namespace
}  // namespace sluice::image
