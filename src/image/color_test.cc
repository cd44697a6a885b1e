#include "sluice/image/color.h"

#include <gtest/gtest.h>

#include "transforms_test_util.h"

namespace sluice::image {
namespace {

using testing::ExpectNear;
using testing::MakeTensor;
using testing::Pattern;
using testing::Values;

// Golden values: TensorFlow 2.21, e.g.
//   tf.image.convert_image_dtype(np.array([0, 1, 127, 255], np.uint8), tf.uint16)
TEST(ConvertImageDtypeTest, MatchesTf) {
  Result<Tensor> up = ConvertImageDtype(MakeTensor<uint8_t>({4}, {0, 1, 127, 255}), DType::kUInt16);
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(Values<uint16_t>(*up), (std::vector<uint16_t>{0, 256, 32512, 65280}));
  Result<Tensor> down =
      ConvertImageDtype(MakeTensor<int16_t>({6}, {-32768, -1, 0, 255, 256, 32767}), DType::kInt8);
  EXPECT_EQ(Values<int8_t>(*down), (std::vector<int8_t>{-128, -1, 0, 0, 1, 127}));
  Result<Tensor> to_int = ConvertImageDtype(MakeTensor<float>({4}, {0.0f, 0.5f, 0.999f, 1.0f}), DType::kUInt8);
  EXPECT_EQ(Values<uint8_t>(*to_int), (std::vector<uint8_t>{0, 127, 255, 255}));
  Result<Tensor> to_float = ConvertImageDtype(MakeTensor<uint8_t>({2}, {0, 255}), DType::kFloat32);
  EXPECT_EQ(Values<float>(*to_float), (std::vector<float>{0.0f, 1.0f}));
  Result<Tensor> wrap = ConvertImageDtype(MakeTensor<int8_t>({1}, {-1}), DType::kUInt8);  // cast wraps, x2
  EXPECT_EQ(Values<uint8_t>(*wrap), (std::vector<uint8_t>{254}));
  Result<Tensor> sat = ConvertImageDtype(MakeTensor<int8_t>({1}, {-1}), DType::kUInt8, /*saturate=*/true);
  EXPECT_EQ(Values<uint8_t>(*sat), (std::vector<uint8_t>{0}));
  Tensor same = Pattern({2, 2, 1});
  EXPECT_TRUE(ConvertImageDtype(same, DType::kUInt8)->SharesBufferWith(same));
  EXPECT_EQ(ConvertImageDtype(same, DType::kString).status().code(), Code::kInvalidArgument);
}

TEST(ColorTest, HsvMatchesTfAndRoundTrips) {
  Tensor p = MakeTensor<float>({1, 1, 3}, {0.2f, 0.5f, 0.9f});
  Result<Tensor> hsv = RgbToHsv(p);
  ASSERT_TRUE(hsv.ok()) << hsv.status();
  ExpectNear(Values<float>(*hsv), {0.5952380896f, 0.7777777911f, 0.8999999762f}, 1e-6f);
  Result<Tensor> back = HsvToRgb(*hsv);
  ExpectNear(Values<float>(*back), {0.2f, 0.5f, 0.9f}, 1e-6f);
  EXPECT_EQ(RgbToHsv(Pattern({1, 1, 3})).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(RgbToHsv(MakeTensor<float>({1, 2}, {0, 0})).status().code(), Code::kInvalidArgument);
}

TEST(ColorTest, AdjustHueAndSaturationMatchTf) {
  Tensor p = MakeTensor<float>({1, 1, 3}, {0.2f, 0.5f, 0.9f});
  ExpectNear(Values<float>(*AdjustHue(p, 0.3f)), {0.8999999762f, 0.2000000030f, 0.6400000453f}, 1e-6f);
  ExpectNear(Values<float>(*AdjustSaturation(p, 0.5f)), {0.5499999523f, 0.6999999285f, 0.8999999762f}, 1e-6f);
  EXPECT_EQ(AdjustHue(p, 1.5f).status().code(), Code::kInvalidArgument);
  // Identity adjustments leave uint8 images unchanged.
  Tensor img = Pattern({4, 5, 3});
  EXPECT_TRUE(ValuesEqual(*AdjustHue(img, 0.0f), img));
  EXPECT_TRUE(ValuesEqual(*AdjustSaturation(img, 1.0f), img));
}

TEST(ColorTest, BrightnessSaturatesIntegers) {
  Tensor img = MakeTensor<uint8_t>({1, 2, 1}, {10, 250});
  // 250/255 + 0.1 > 1 saturates at 255; 10/255 + 0.1 = 0.1392 -> 35.
  EXPECT_EQ(Values<uint8_t>(*AdjustBrightness(img, 0.1f)), (std::vector<uint8_t>{35, 255}));
  Tensor f = MakeTensor<float>({1, 1, 1}, {0.95f});
  ExpectNear(Values<float>(*AdjustBrightness(f, 0.1f)), {1.05f}, 1e-6f);  // floats are not clamped
}

TEST(ColorTest, ContrastUsesPerChannelMean) {
  Tensor img = MakeTensor<float>({1, 2, 2}, {0.0f, 1.0f, 1.0f, 0.0f});
  ExpectNear(Values<float>(*AdjustContrast(img, 2.0f)), {-0.5f, 1.5f, 1.5f, -0.5f}, 1e-6f);
  EXPECT_EQ(AdjustContrast(MakeTensor<float>({2, 1}, {0, 0}), 1.0f).status().code(), Code::kInvalidArgument);
}

TEST(ColorTest, GammaAndGrayscale) {
  Tensor f = MakeTensor<float>({1, 1, 2}, {0.25f, 1.0f});
  ExpectNear(Values<float>(*AdjustGamma(f, 0.5f, 2.0f)), {1.0f, 2.0f}, 1e-6f);
  Status s = AdjustGamma(f, -1.0f).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Gamma should be a non-negative real number."), std::string::npos);
  // tf.image.rgb_to_grayscale(np.array([[[10, 200, 30]]], np.uint8)) == 124.
  Result<Tensor> gray = RgbToGrayscale(MakeTensor<uint8_t>({1, 1, 3}, {10, 200, 30}));
  ASSERT_TRUE(gray.ok()) << gray.status();
  EXPECT_EQ(gray->shape(), (TensorShape{1, 1, 1}));
  EXPECT_EQ(Values<uint8_t>(*gray), (std::vector<uint8_t>{124}));
  Result<Tensor> rgb = GrayscaleToRgb(*gray);
  EXPECT_EQ(Values<uint8_t>(*rgb), (std::vector<uint8_t>{124, 124, 124}));
  EXPECT_EQ(GrayscaleToRgb(Pattern({1, 1, 3})).status().code(), Code::kInvalidArgument);
}

TEST(ColorTest, RandomOpsAreReproducibleAndCheckRanges) {
  Tensor img = Pattern({6, 7, 3});
  EXPECT_TRUE(ValuesEqual(*RandomBrightness(img, 0.2f, 5), *RandomBrightness(img, 0.2f, 5)));
  EXPECT_TRUE(ValuesEqual(*RandomContrast(img, 0.5f, 1.5f, 5), *RandomContrast(img, 0.5f, 1.5f, 5)));
  EXPECT_TRUE(ValuesEqual(*RandomSaturation(img, 0.5f, 1.5f, 5), *RandomSaturation(img, 0.5f, 1.5f, 5)));
  EXPECT_TRUE(ValuesEqual(*RandomHue(img, 0.2f, 5), *RandomHue(img, 0.2f, 5)));
  bool differs = false;
  for (uint64_t seed = 6; seed < 12 && !differs; ++seed) {
    differs = !ValuesEqual(*RandomBrightness(img, 0.2f, 5), *RandomBrightness(img, 0.2f, seed));
  }
  EXPECT_TRUE(differs);
  EXPECT_EQ(RandomBrightness(img, -0.1f, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(RandomContrast(img, 1.0f, 1.0f, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(RandomSaturation(img, -1.0f, 1.0f, 1).status().code(), Code::kInvalidArgument);
  Status s = RandomHue(img, 0.6f, 1).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("max_delta must be <= 0.5."), std::string::npos);
}

}  // namespace
}  // namespace sluice::image
