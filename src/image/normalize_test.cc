#include "sluice/image/normalize.h"

#include <gtest/gtest.h>

#include "transforms_test_util.h"

namespace sluice::image {
namespace {

using testing::ExpectNear;
using testing::MakeTensor;
using testing::Values;

TEST(NormalizeTest, HwcAndChw) {
  Tensor img = MakeTensor<uint8_t>({1, 2, 2}, {0, 255, 51, 102});
  NormalizeOptions o;
  o.mean = {0.0f, 0.5f};
  o.stddev = {1.0f, 0.5f};
  Result<Tensor> hwc = Normalize(img, o);
  ASSERT_TRUE(hwc.ok()) << hwc.status();
  EXPECT_EQ(hwc->shape(), (TensorShape{1, 2, 2}));
  ExpectNear(Values<float>(*hwc), {0.0f, 1.0f, 0.2f, -0.2f}, 1e-6f);
  o.data_format = DataFormat::kCHW;
  Result<Tensor> chw = Normalize(img, o);
  EXPECT_EQ(chw->shape(), (TensorShape{2, 1, 2}));
  ExpectNear(Values<float>(*chw), {0.0f, 0.2f, 1.0f, -0.2f}, 1e-6f);
  Result<Tensor> batch = Normalize(MakeTensor<float>({2, 1, 1, 2}, {0.5f, 0.5f, 1.0f, 1.0f}), o);
  EXPECT_EQ(batch->shape(), (TensorShape{2, 2, 1, 1}));
  ExpectNear(Values<float>(*batch), {0.5f, 0.0f, 1.0f, 1.0f}, 1e-6f);
}

TEST(NormalizeTest, BadArguments) {
  Tensor img = MakeTensor<uint8_t>({1, 1, 3}, {0, 0, 0});
  NormalizeOptions o;
  o.mean = {0.1f, 0.2f};
  Status s = Normalize(img, o).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("normalize: 'mean'"), std::string::npos) << s;
  o.mean = {};
  o.stddev = {-1.0f};
  EXPECT_EQ(Normalize(img, o).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Normalize(MakeTensor<int32_t>({1, 1, 1}, {0}), {}).status().code(), Code::kInvalidArgument);
}

// tf.image.per_image_standardization(np.array([[[1], [2]], [[3], [4]]], np.uint8)).
TEST(PerImageStandardizationTest, MatchesTf) {
  Result<Tensor> out = PerImageStandardization(MakeTensor<uint8_t>({2, 2, 1}, {1, 2, 3, 4}));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>(*out), {-1.3416407108f, -0.4472135901f, 0.4472135901f, 1.3416407108f}, 1e-6f);
  // A constant image divides by 1/sqrt(n), not by 0.
  Result<Tensor> flat = PerImageStandardization(MakeTensor<float>({1, 2, 2}, {5, 5, 5, 5}));
  ExpectNear(Values<float>(*flat), {0, 0, 0, 0}, 0.0f);
  EXPECT_EQ(PerImageStandardization(MakeTensor<float>({2}, {1, 2})).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::image
