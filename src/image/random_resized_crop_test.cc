#include "sluice/image/random_resized_crop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "codec_test_util.h"
#include "resize_kernels.h"
#include "sluice/image/codec.h"
#include "sluice/image/geometry.h"
#include "sluice/image/normalize.h"
#include "sluice/image/resize.h"
#include "transforms_test_util.h"

namespace sluice::image {
namespace {

using testing::ReadImage;
using testing::Values;

RandomResizedCropOptions Options(int64_t size, DataFormat format = DataFormat::kCHW) {
  RandomResizedCropOptions o;
  o.height = size;
  o.width = size;
  o.normalize.data_format = format;
  return o;
}

// The separate ops, applied with the box and flip the fused op samples.
Tensor Composition(const Tensor& decoded_crop, const RandomResizedCropOptions& o, bool flip) {
  ResizeOptions r;
  r.height = o.height;
  r.width = o.width;
  r.method = o.method;
  r.antialias = o.antialias;
  Result<Tensor> resized = Resize(decoded_crop, r);
  EXPECT_TRUE(resized.ok()) << resized.status();
  Tensor t = *resized;
  for (float& v : t.flat<float>()) v /= 255.0f;  // Normalize takes floats on [0, 1]
  if (flip) t = *FlipLeftRight(t);
  Result<Tensor> normalized = Normalize(t, o.normalize);
  EXPECT_TRUE(normalized.ok()) << normalized.status();
  return *normalized;
}

float MaxAbsDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape()) return INFINITY;
  float worst = 0.0f;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max(worst, std::abs(a.data<float>()[i] - b.data<float>()[i]));
  }
  return worst;
}

// A smooth-plus-texture RGB picture, large enough for DCT scaling.
Tensor Picture(int64_t h, int64_t w) {
  Tensor t(DType::kUInt8, TensorShape{h, w, 3});
  uint8_t* p = t.data<uint8_t>();
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      *p++ = static_cast<uint8_t>(128 + 100 * std::sin(x * 0.02) * std::cos(y * 0.03));
      *p++ = static_cast<uint8_t>((x + 2 * y) % 256);
      *p++ = static_cast<uint8_t>(((x / 16 + y / 16) % 2) * 160 + 40);
    }
  }
  return t;
}

// Tolerance of fused vs separate: both compute in float32, summing in a
// different order (resize.h documents 2e-6 on the normalised scale).
constexpr float kCompositionTolerance = 1e-5f;

using internal::ResizeKernel;

// The tests that compare pixels run once per resize kernel
// (resize_kernels.h), each forced: the baseline path is tested too on CPUs
// that would pick AVX2.
class RandomResizedCropKernelTest : public ::testing::TestWithParam<ResizeKernel> {
 protected:
  void SetUp() override {
    if (!internal::ResizeKernelSupported(GetParam())) {
      GTEST_SKIP() << internal::ResizeKernelName(GetParam()) << " is not supported on this build or CPU";
    }
    force_.emplace(GetParam());
  }
  void TearDown() override { force_.reset(); }

 private:
  std::optional<internal::ScopedResizeKernelForTesting> force_;
};

INSTANTIATE_TEST_SUITE_P(Kernels, RandomResizedCropKernelTest,
                         ::testing::Values(ResizeKernel::kPortable, ResizeKernel::kSse2, ResizeKernel::kAvx2,
                                           ResizeKernel::kAvx512),
                         [](const auto& info) { return std::string(internal::ResizeKernelName(info.param)); });

TEST_P(RandomResizedCropKernelTest, JpegEqualsDecodeAndCropResizeFlipNormalize) {
  const std::string jpeg = ReadImage("jpeg/pillow/hopper.jpg");
  int flips = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    for (DataFormat format : {DataFormat::kCHW, DataFormat::kHWC}) {
      const RandomResizedCropOptions o = Options(48, format);
      Result<RandomResizedCropParams> p = SampleRandomResizedCrop(128, 128, o, seed);
      ASSERT_TRUE(p.ok()) << p.status();
      flips += p->flip ? 1 : 0;
      Result<Tensor> fused = DecodeRandomResizedCrop(jpeg, o, seed);
      ASSERT_TRUE(fused.ok()) << fused.status();
      EXPECT_EQ(fused->shape(), format == DataFormat::kCHW ? (TensorShape{3, 48, 48}) : (TensorShape{48, 48, 3}));
      Result<Tensor> crop = DecodeAndCropJpeg(jpeg, p->window);
      ASSERT_TRUE(crop.ok()) << crop.status();
      EXPECT_LE(MaxAbsDiff(*fused, Composition(*crop, o, p->flip)), kCompositionTolerance) << "seed " << seed;
    }
  }
  EXPECT_GT(flips, 0);   // both branches of the flip were compared
  EXPECT_LT(flips, 24);
}

// CMYK rows are converted through a scratch row, so they come out exactly
// cropped (no column offset): the other branch of the JPEG path.
TEST_P(RandomResizedCropKernelTest, CmykJpegEqualsComposition) {
  const std::string jpeg = ReadImage("jpeg/pillow/pil_sample_cmyk.jpg");
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const RandomResizedCropOptions o = Options(30, DataFormat::kHWC);
    Result<RandomResizedCropParams> p = SampleRandomResizedCrop(100, 100, o, seed);
    ASSERT_TRUE(p.ok());
    Result<Tensor> fused = DecodeRandomResizedCrop(jpeg, o, seed);
    ASSERT_TRUE(fused.ok()) << fused.status();
    Result<Tensor> crop = DecodeAndCropJpeg(jpeg, p->window);
    ASSERT_TRUE(crop.ok()) << crop.status();
    EXPECT_LE(MaxAbsDiff(*fused, Composition(*crop, o, p->flip)), kCompositionTolerance) << "seed " << seed;
  }
}

TEST_P(RandomResizedCropKernelTest, PngFallsBackToFullDecodeAndCrop) {
  const std::string png = ReadImage("png/pillow/hopper.png");
  for (uint64_t seed = 0; seed < 6; ++seed) {
    RandomResizedCropOptions o = Options(40);
    o.antialias = true;
    Result<RandomResizedCropParams> p = SampleRandomResizedCrop(128, 128, o, seed);
    ASSERT_TRUE(p.ok());
    Result<Tensor> fused = DecodeRandomResizedCrop(png, o, seed);
    ASSERT_TRUE(fused.ok()) << fused.status();
    const CropWindow& w = p->window;
    Result<Tensor> crop = CropToBoundingBox(*DecodePng(png), w.y, w.x, w.height, w.width);
    ASSERT_TRUE(crop.ok());
    EXPECT_LE(MaxAbsDiff(*fused, Composition(*crop, o, p->flip)), kCompositionTolerance) << "seed " << seed;
  }
}

TEST(RandomResizedCropTest, SameSeedSameOutputDifferentSeedDifferentBox) {
  const std::string jpeg = ReadImage("jpeg/pillow/hopper.jpg");
  const RandomResizedCropOptions o = Options(32);
  Result<Tensor> a = DecodeRandomResizedCrop(jpeg, o, 42);
  Result<Tensor> b = DecodeRandomResizedCrop(jpeg, o, 42);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Values<float>(*a), Values<float>(*b));
  Result<Tensor> c = DecodeRandomResizedCrop(jpeg, o, 43);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(Values<float>(*a), Values<float>(*c));
}

TEST(RandomResizedCropTest, TorchvisionBoxesRespectScaleRatioAndImage) {
  constexpr int64_t kH = 375, kW = 500;
  const RandomResizedCropOptions o = Options(224);
  const double area = double{kH} * kW;
  double area_sum = 0.0;
  int flips = 0, full_width = 0;
  constexpr int kDraws = 4000;
  for (uint64_t seed = 0; seed < kDraws; ++seed) {
    Result<RandomResizedCropParams> p = SampleRandomResizedCrop(kH, kW, o, seed);
    ASSERT_TRUE(p.ok());
    const CropWindow& w = p->window;
    ASSERT_GE(w.y, 0);
    ASSERT_GE(w.x, 0);
    ASSERT_GT(w.height, 0);
    ASSERT_GT(w.width, 0);
    ASSERT_LE(w.y + w.height, kH);
    ASSERT_LE(w.x + w.width, kW);
    const double fraction = double(w.height) * double(w.width) / area;
    const double ratio = double(w.width) / double(w.height);
    // Rounding w and h to integers moves area and ratio by about 1 / side.
    if (w.height == kH && w.width == kW) {
      ++full_width;  // the fallback (500/375 = 1.333 is inside the ratio range)
    } else {
      EXPECT_GE(fraction, 0.08 * (1 - 2.0 / double(w.height)) - 1e-9) << w.height << "x" << w.width;
      EXPECT_LE(fraction, 1.0);
      EXPECT_GE(ratio, 0.75 * (1 - 1.0 / double(w.height)) - 1e-9);
      EXPECT_LE(ratio, 4.0 / 3.0 * (1 + 1.0 / double(w.height)) + 1e-9);
    }
    area_sum += fraction;
    flips += p->flip ? 1 : 0;
  }
  // E[area fraction] of accepted draws is below the uniform mean 0.54 (large
  // boxes are rejected more often); the fallback is rare on this image.
  EXPECT_GT(area_sum / kDraws, 0.35);
  EXPECT_LT(area_sum / kDraws, 0.54);
  EXPECT_LT(full_width, kDraws / 20);
  EXPECT_NEAR(double(flips) / kDraws, 0.5, 0.04);
}

TEST(RandomResizedCropTest, FallbackIsCentreCropClippedToRatio) {
  RandomResizedCropOptions o = Options(8);
  o.ratio = {10.0, 20.0};  // never fits a 100x100 image
  Result<RandomResizedCropParams> p = SampleRandomResizedCrop(100, 100, o, 7);
  ASSERT_TRUE(p.ok());
  // in_ratio 1 < 10: full width, height round(100 / 10), centred.
  EXPECT_EQ(p->window.height, 10);
  EXPECT_EQ(p->window.width, 100);
  EXPECT_EQ(p->window.y, 45);
  EXPECT_EQ(p->window.x, 0);
  o.ratio = {0.05, 0.1};  // in_ratio 1 > 0.1: full height, width round(100 * 0.1)
  p = SampleRandomResizedCrop(100, 100, o, 7);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->window.height, 100);
  EXPECT_EQ(p->window.width, 10);
  EXPECT_EQ(p->window.x, 45);
}

TEST(RandomResizedCropTest, FlipProbabilityZeroAndOne) {
  RandomResizedCropOptions o = Options(8);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    o.flip_probability = 0.0f;
    EXPECT_FALSE(SampleRandomResizedCrop(64, 64, o, seed)->flip);
    o.flip_probability = 1.0f;
    EXPECT_TRUE(SampleRandomResizedCrop(64, 64, o, seed)->flip);
  }
}

TEST(RandomResizedCropTest, TensorFlowSamplerBoxesRespectAreaRange) {
  RandomResizedCropOptions o = Options(16);
  o.sampler = CropSampler::kTensorFlow;
  o.scale = {0.25, 0.5};
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Result<RandomResizedCropParams> p = SampleRandomResizedCrop(200, 300, o, seed);
    ASSERT_TRUE(p.ok()) << p.status();
    const CropWindow& w = p->window;
    const double fraction = double(w.height) * double(w.width) / (200.0 * 300.0);
    EXPECT_LE(w.y + w.height, 200);
    EXPECT_LE(w.x + w.width, 300);
    if (fraction < 1.0) {
      EXPECT_GE(fraction, 0.25);
      EXPECT_LE(fraction, 0.5);
    }
  }
}

TEST_P(RandomResizedCropKernelTest, IntoFillsBatchSliceAndChecksShape) {
  const std::string jpeg = ReadImage("jpeg/pillow/hopper.jpg");
  const RandomResizedCropOptions o = Options(24);
  Tensor batch(DType::kFloat32, TensorShape{3, 3, 24, 24});
  for (int64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(DecodeRandomResizedCropInto(jpeg, o, 100 + i, batch.Slice(i)).ok());
  }
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(Values<float>(batch.Slice(i)), Values<float>(*DecodeRandomResizedCrop(jpeg, o, 100 + i)));
  }
  Tensor wrong(DType::kFloat32, TensorShape{24, 24, 3});
  Status s = DecodeRandomResizedCropInto(jpeg, o, 1, wrong);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'out' must be float32 [3,24,24]"), std::string::npos) << s;
}

TEST(RandomResizedCropTest, CorruptInputIsInvalidArgument) {
  const RandomResizedCropOptions o = Options(16);
  const std::string jpeg = ReadImage("jpeg/pillow/hopper.jpg");
  Result<Tensor> truncated = DecodeRandomResizedCrop(std::string_view(jpeg).substr(0, jpeg.size() / 2), o, 1);
  EXPECT_EQ(truncated.status().code(), Code::kInvalidArgument);
  Result<Tensor> header = DecodeRandomResizedCrop(std::string_view(jpeg).substr(0, 40), o, 1);
  EXPECT_EQ(header.status().code(), Code::kInvalidArgument);
  EXPECT_NE(header.status().message().find("Invalid JPEG data"), std::string::npos) << header.status();
  Result<Tensor> empty = DecodeRandomResizedCrop("", o, 1);
  EXPECT_EQ(empty.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(empty.status().message(), "Input is empty.");
  Result<Tensor> unknown = DecodeRandomResizedCrop("not an image at all", o, 1);
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("Unknown image file format"), std::string::npos) << unknown.status();
  Result<Tensor> missing_sos = DecodeRandomResizedCrop(ReadImage("jpeg/jpeg-decoder/crashtest/missing-sos.jpg"), o, 1);
  EXPECT_EQ(missing_sos.status().code(), Code::kInvalidArgument);
}

TEST(RandomResizedCropTest, BadOptionsAreInvalidArgument) {
  const std::string jpeg = ReadImage("jpeg/pillow/hopper.jpg");
  const auto code = [&](auto mutate) {
    RandomResizedCropOptions o = Options(16);
    mutate(o);
    return DecodeRandomResizedCrop(jpeg, o, 1).status().code();
  };
  EXPECT_EQ(code([](auto& o) { o.height = 0; }), Code::kInvalidArgument);
  EXPECT_EQ(code([](auto& o) { o.scale = {0.5, 0.2}; }), Code::kInvalidArgument);
  EXPECT_EQ(code([](auto& o) { o.ratio = {0.0, 1.0}; }), Code::kInvalidArgument);
  EXPECT_EQ(code([](auto& o) { o.max_attempts = 0; }), Code::kInvalidArgument);
  EXPECT_EQ(code([](auto& o) { o.flip_probability = 1.5f; }), Code::kInvalidArgument);
  EXPECT_EQ(code([](auto& o) { o.channels = 4; }), Code::kInvalidArgument);
  EXPECT_EQ(code([](auto& o) { o.normalize.stddev = {0.0f}; }), Code::kInvalidArgument);
  EXPECT_EQ(code([](auto& o) { o.dct_method = "FLOAT"; }), Code::kInvalidArgument);
  EXPECT_EQ(code([](auto& o) {
              o.sampler = CropSampler::kTensorFlow;
              o.scale = {0.5, 1.5};
            }),
            Code::kInvalidArgument);
  EXPECT_EQ(code([](auto&) {}), Code::kOk);
  EXPECT_EQ(SampleRandomResizedCrop(0, 10, Options(8), 1).status().code(), Code::kInvalidArgument);
}

TEST(RandomResizedCropTest, GrayscaleOutputHasOneChannel) {
  RandomResizedCropOptions o = Options(16);
  o.channels = 1;
  o.normalize.mean = {0.5f};
  o.normalize.stddev = {0.25f};
  Result<Tensor> out = DecodeRandomResizedCrop(ReadImage("jpeg/pillow/hopper.jpg"), o, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (TensorShape{1, 16, 16}));
}

// DCT scaling decodes a box at least 2x the output at 1/2..1/8 scale: the
// pixels change a little (a different low-pass filter, box snapped to the
// scaled grid), so the mean difference to the plain path must stay small.
TEST(RandomResizedCropTest, DctScalingStaysCloseToPlainPath) {
  const std::string jpeg = *EncodeJpeg(Picture(768, 1024));
  RandomResizedCropOptions o = Options(64);
  o.scale = {0.5, 1.0};  // boxes >= ~540 px: factor 4 or 8 applies
  o.antialias = true;    // the plain path must low-pass too, or it aliases
  RandomResizedCropOptions scaled = o;
  scaled.dct_scaling = true;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    Result<Tensor> plain = DecodeRandomResizedCrop(jpeg, o, seed);
    Result<Tensor> fast = DecodeRandomResizedCrop(jpeg, scaled, seed);
    ASSERT_TRUE(plain.ok() && fast.ok()) << fast.status();
    double sum = 0.0;
    for (int64_t i = 0; i < plain->num_elements(); ++i) {
      sum += std::abs(plain->data<float>()[i] - fast->data<float>()[i]);
    }
    const double mean = sum / double(plain->num_elements());
    EXPECT_GT(mean, 0.0) << "DCT scaling did not engage";
    // A bound with room above what this hard picture gives (sharp 16 px
    // checks and sawtooth wraps; docs/perf/jpeg-decode.md); 0.3 * 0.225 *
    // 255 is about 17 grey levels.
    EXPECT_LT(mean, 0.3) << "seed " << seed;
  }
}

}  // namespace
}  // namespace sluice::image
