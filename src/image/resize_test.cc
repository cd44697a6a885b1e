#include "sluice/image/resize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "resize_kernels.h"
#include "transforms_test_util.h"
#include "sluice/image/geometry.h"

namespace sluice::image {
namespace {

using testing::ExpectNear;
using testing::MakeTensor;
using testing::Pattern;
using testing::Values;

ResizeOptions Size(int64_t h, int64_t w, ResizeMethod m = ResizeMethod::kBilinear, bool antialias = false) {
  ResizeOptions o;
  o.height = h;
  o.width = w;
  o.method = m;
  o.antialias = antialias;
  return o;
}

// Golden values in these tests come from TensorFlow 2.21:
//   tf.image.resize(x, size, method, antialias=...) on the inputs shown.
TEST(ResizeTest, BilinearHalfPixelMatchesTf) {
  Tensor in = MakeTensor<float>({2, 2, 1}, {0, 1, 2, 3});
  Result<Tensor> out = Resize(in, Size(3, 3));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), DType::kFloat32);
  EXPECT_EQ(out->shape(), (TensorShape{3, 3, 1}));
  ExpectNear(Values<float>(*out), {0.0f, 0.5f, 1.0f, 1.0f, 1.5f, 2.0f, 2.0f, 2.5f, 3.0f}, 1e-6f);
}

TEST(ResizeTest, NearestKeepsDtypeAndMatchesTf) {
  Tensor in = MakeTensor<uint8_t>({2, 2, 1}, {0, 1, 2, 3});
  Result<Tensor> out = Resize(in, Size(3, 3, ResizeMethod::kNearestNeighbor));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), DType::kUInt8);
  EXPECT_EQ(Values<uint8_t>(*out), (std::vector<uint8_t>{0, 1, 1, 2, 3, 3, 2, 3, 3}));
}

TEST(ResizeTest, BicubicMatchesTf) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  Result<Tensor> out = Resize(MakeTensor<float>({4, 4, 1}, v), Size(3, 3, ResizeMethod::kBicubic));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>(*out),
             {0.5154085755f, 1.9123268127f, 3.3092448711f, 6.1030817032f, 7.5f, 8.8969182968f, 11.6907539368f,
              13.0876712799f, 14.4845905304f},
             2e-5f);
}

TEST(ResizeTest, AreaMatchesTf) {
  std::vector<float> v(9);
  for (int i = 0; i < 9; ++i) v[i] = static_cast<float>(i);
  Result<Tensor> out = Resize(MakeTensor<float>({3, 3, 1}, v), Size(2, 2, ResizeMethod::kArea));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>(*out), {1.3333333731f, 2.6666667461f, 5.3333334923f, 6.6666665077f}, 1e-5f);
}

TEST(ResizeTest, AntialiasedKernelsMatchTf) {
  std::vector<float> v(36);
  for (int i = 0; i < 36; ++i) v[i] = static_cast<float>(i);
  Tensor in = MakeTensor<float>({6, 6, 1}, v);
  Result<Tensor> lanczos = Resize(in, Size(4, 4, ResizeMethod::kLanczos3, true));
  ASSERT_TRUE(lanczos.ok()) << lanczos.status();
  ExpectNear(Values<float>(*lanczos),
             {1.7945957184f, 3.2560501099f, 4.8204016685f, 6.2818541527f, 10.5633182526f, 12.0247735977f,
              13.5891246796f, 15.0505771637f, 19.9494228363f, 21.4108753204f, 22.9752292633f, 24.4366798401f,
              28.7181396484f, 30.1796016693f, 31.7439498901f, 33.2053985596f},
             1e-4f);
  Result<Tensor> bilinear = Resize(in, Size(2, 3, ResizeMethod::kBilinear, true));
  ASSERT_TRUE(bilinear.ok()) << bilinear.status();
  ExpectNear(Values<float>(*bilinear), {8.2142868042f, 10.0f, 11.7857151031f, 23.2142868042f, 25.0f, 26.7857170105f},
             1e-4f);
}

TEST(ResizeTest, IdentitySizeReproducesInputForEveryMethod) {
  Tensor in = Pattern({5, 7, 3});
  for (ResizeMethod m : {ResizeMethod::kBilinear, ResizeMethod::kNearestNeighbor, ResizeMethod::kBicubic,
                         ResizeMethod::kArea, ResizeMethod::kLanczos3, ResizeMethod::kLanczos5,
                         ResizeMethod::kGaussian, ResizeMethod::kMitchellCubic}) {
    if (m == ResizeMethod::kGaussian || m == ResizeMethod::kMitchellCubic) continue;  // smoothing kernels
    Result<Tensor> out = Resize(in, Size(5, 7, m));
    ASSERT_TRUE(out.ok()) << ResizeMethodName(m) << ": " << out.status();
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      const float got = m == ResizeMethod::kNearestNeighbor ? out->data<uint8_t>()[i] : out->data<float>()[i];
      ASSERT_NEAR(got, in.data<uint8_t>()[i], 1e-3f) << ResizeMethodName(m) << " at " << i;
    }
  }
}

TEST(ResizeTest, BatchResizesEachImageAlike) {
  Tensor batch = Pattern({3, 9, 11, 3});
  Result<Tensor> all = Resize(batch, Size(4, 6, ResizeMethod::kBicubic));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->shape(), (TensorShape{3, 4, 6, 3}));
  for (int64_t b = 0; b < 3; ++b) {
    Result<Tensor> one = Resize(batch.Slice(b), Size(4, 6, ResizeMethod::kBicubic));
    ASSERT_TRUE(one.ok());
    EXPECT_TRUE(ValuesEqual(*one, all->Slice(b))) << "image " << b;
  }
}

TEST(ResizeTest, PreserveAspectRatioRoundsLikeTf) {
  ResizeOptions o = Size(10, 10);
  o.preserve_aspect_ratio = true;
  Result<Tensor> out = Resize(Pattern({30, 20, 1}), o);  // tf: [10, 7] (6.6667 rounded)
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (TensorShape{10, 7, 1}));
}

TEST(ResizeTest, BadArgumentsAreInvalidArgument) {
  Result<Tensor> rank2 = Resize(Pattern({4, 4}), Size(2, 2));
  EXPECT_EQ(rank2.status().code(), Code::kInvalidArgument);
  EXPECT_NE(rank2.status().message().find("resize"), std::string::npos);
  Result<Tensor> zero = Resize(Pattern({4, 4, 1}), Size(0, 2));
  EXPECT_EQ(zero.status().code(), Code::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("must be positive"), std::string::npos);
  Result<Tensor> empty = Resize(Pattern({0, 4, 1}), Size(2, 2));
  EXPECT_EQ(empty.status().code(), Code::kInvalidArgument);
  Result<Tensor> strings = Resize(Tensor(DType::kString, {2, 2, 1}), Size(2, 2));
  EXPECT_EQ(strings.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ResizeMethodFromName("lanczos5"), ResizeMethod::kLanczos5);
  EXPECT_EQ(ResizeMethodFromName("cubic"), std::nullopt);
}

TEST(ResizeWithPadTest, FitsAndCentres) {
  Tensor in = MakeTensor<float>({2, 4, 1}, {1, 1, 1, 1, 1, 1, 1, 1});
  Result<Tensor> out = ResizeWithPad(in, 4, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (TensorShape{4, 4, 1}));
  // Resized to 2x4, padded one row above and below.
  ExpectNear(Values<float>(*out), {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 1e-6f);
  EXPECT_EQ(ResizeWithPad(in, 0, 4).status().code(), Code::kInvalidArgument);
}

using internal::ResizeKernel;
using internal::ScopedResizeKernelForTesting;

// The fused op's tests run once per kernel (resize_kernels.h), each forced,
// so that the baseline path is tested on CPUs that would pick AVX2.
class ResizeFlipNormalizeKernelTest : public ::testing::TestWithParam<ResizeKernel> {
 protected:
  void SetUp() override {
    if (!internal::ResizeKernelSupported(GetParam())) {
      GTEST_SKIP() << internal::ResizeKernelName(GetParam()) << " is not supported on this build or CPU";
    }
    force_.emplace(GetParam());
  }
  void TearDown() override { force_.reset(); }

 private:
  std::optional<ScopedResizeKernelForTesting> force_;
};

INSTANTIATE_TEST_SUITE_P(Kernels, ResizeFlipNormalizeKernelTest,
                         ::testing::Values(ResizeKernel::kPortable, ResizeKernel::kSse2, ResizeKernel::kAvx2,
                                           ResizeKernel::kAvx512),
                         [](const auto& info) { return std::string(internal::ResizeKernelName(info.param)); });

// The fused path equals the op-by-op path.
TEST_P(ResizeFlipNormalizeKernelTest, EqualsResizeFlipNormalize) {
  Tensor in = Pattern({37, 53, 3});
  ResizeFlipNormalizeOptions o;
  o.height = 16;
  o.width = 20;
  o.crop = CropWindow{3, 5, 30, 41};
  o.flip_left_right = true;
  o.normalize.mean = {0.485f, 0.456f, 0.406f};
  o.normalize.stddev = {0.229f, 0.224f, 0.225f};
  for (DataFormat format : {DataFormat::kHWC, DataFormat::kCHW}) {
    for (ResizeMethod m : {ResizeMethod::kBilinear, ResizeMethod::kBicubic, ResizeMethod::kArea,
                           ResizeMethod::kNearestNeighbor}) {
      o.method = m;
      o.normalize.data_format = format;
      Result<Tensor> fused = ResizeFlipNormalize(in, o);
      ASSERT_TRUE(fused.ok()) << fused.status();
      Result<Tensor> crop = CropToBoundingBox(in, 3, 5, 30, 41);
      ASSERT_TRUE(crop.ok());
      Result<Tensor> resized = Resize(*crop, Size(16, 20, m));
      ASSERT_TRUE(resized.ok());
      Result<Tensor> flipped = FlipLeftRight(*resized);
      ASSERT_TRUE(flipped.ok());
      NormalizeOptions n = o.normalize;
      n.stddev = {0.229f * 255.0f, 0.224f * 255.0f, 0.225f * 255.0f};  // float input on 0..255
      n.mean = {0.485f * 255.0f, 0.456f * 255.0f, 0.406f * 255.0f};
      if (m == ResizeMethod::kNearestNeighbor) {
        Result<Tensor> f = Normalize(*flipped, o.normalize);  // uint8 input: x / 255
        ASSERT_TRUE(f.ok());
        ExpectNear(Values<float>(*fused), Values<float>(*f), 2e-5f);
        continue;
      }
      Result<Tensor> expected = Normalize(*flipped, n);
      ASSERT_TRUE(expected.ok()) << expected.status();
      EXPECT_EQ(fused->shape(), expected->shape());
      ExpectNear(Values<float>(*fused), Values<float>(*expected), 2e-5f);
    }
  }
}

TEST_P(ResizeFlipNormalizeKernelTest, WritesIntoABatchSlice) {
  Tensor in = Pattern({10, 12, 3});
  ResizeFlipNormalizeOptions o;
  o.height = 4;
  o.width = 5;
  o.normalize.data_format = DataFormat::kCHW;
  Tensor batch(DType::kFloat32, {2, 3, 4, 5});
  ASSERT_TRUE(ResizeFlipNormalizeInto(in, o, batch.Slice(1)).ok());
  Result<Tensor> alone = ResizeFlipNormalize(in, o);
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE(ValuesEqual(*alone, batch.Slice(1)));
  EXPECT_EQ(ResizeFlipNormalizeInto(in, o, batch).code(), Code::kInvalidArgument);
}

ResizeFlipNormalizeOptions Fused(int64_t h, int64_t w, ResizeMethod m, bool antialias, bool flip, DataFormat f) {
  ResizeFlipNormalizeOptions o;
  o.height = h;
  o.width = w;
  o.method = m;
  o.antialias = antialias;
  o.flip_left_right = flip;
  o.normalize.mean = {0.485f, 0.456f, 0.406f};
  o.normalize.stddev = {0.229f, 0.224f, 0.225f};
  o.normalize.data_format = f;
  return o;
}

// The hand-written two-tap kernel against the portable resampler, on
// windows of every shape class: 1-pixel axes, up- and downscales, widths
// that leave vector tails (not multiples of 4 or 8), windows touching the
// image's last row and column (over-reads would show under ASan), both
// layouts and flips, and methods that reduce to two taps (or do not, then
// both run the portable path).
TEST_P(ResizeFlipNormalizeKernelTest, MatchesPortableResampler) {
  const Tensor image = Pattern({300, 410, 3});
  struct Case {
    CropWindow crop;
    int64_t h, w;
  };
  const Case cases[] = {
      {{0, 0, 1, 1}, 1, 1},         {{299, 409, 1, 1}, 3, 5},     {{10, 20, 1, 9}, 7, 9},
      {{10, 20, 9, 1}, 9, 7},       {{5, 7, 2, 3}, 16, 20},       {{0, 0, 300, 410}, 224, 224},
      {{30, 50, 270, 360}, 224, 224}, {{100, 100, 60, 70}, 224, 224}, {{1, 2, 299, 408}, 31, 33},
      {{250, 300, 50, 110}, 13, 17}, {{0, 0, 300, 410}, 300, 410}, {{0, 0, 300, 410}, 100, 137},
      // Horizontal downscales of 1.8x, 2.6x and 4.1x over 16 or more
      // columns: the AVX-512 kernel's three ways to reach the taps (a
      // 32-float run, a 48-float run, gathers).
      {{3, 0, 200, 410}, 50, 224},  {{3, 0, 200, 410}, 50, 160},  {{3, 0, 200, 410}, 50, 100},
  };
  float worst = 0.0f;
  for (const Case& c : cases) {
    for (ResizeMethod m : {ResizeMethod::kBilinear, ResizeMethod::kNearestNeighbor, ResizeMethod::kArea}) {
      for (bool antialias : {false, true}) {
        for (bool flip : {false, true}) {
          for (DataFormat f : {DataFormat::kCHW, DataFormat::kHWC}) {
            ResizeFlipNormalizeOptions o = Fused(c.h, c.w, m, antialias, flip, f);
            o.crop = c.crop;
            Result<Tensor> got = ResizeFlipNormalize(image, o);
            ASSERT_TRUE(got.ok()) << got.status();
            const Result<Tensor> want = [&] {
              ScopedResizeKernelForTesting portable(ResizeKernel::kPortable);
              return ResizeFlipNormalize(image, o);
            }();
            ASSERT_TRUE(want.ok()) << want.status();
            ASSERT_EQ(got->shape(), want->shape());
            const float* g = got->data<float>();
            const float* e = want->data<float>();
            for (int64_t i = 0; i < got->num_elements(); ++i) {
              ASSERT_TRUE(std::isfinite(g[i])) << i;
              worst = std::max(worst, std::abs(g[i] - e[i]));
              // float32 rounding of another summation order (vertical
              // first; FMA on AVX2), on the normalised scale
              // (docs/perf/resize-kernels.md); resize.h promises 2e-6.
              ASSERT_NEAR(g[i], e[i], 2e-6f) << ResizeMethodName(m) << " crop " << c.crop.height << "x"
                                             << c.crop.width << " -> " << c.h << "x" << c.w << " flip " << flip
                                             << " chw " << (f == DataFormat::kCHW) << " at " << i;
            }
          }
        }
      }
    }
  }
  RecordProperty("max_abs_diff", std::to_string(worst));
}

TEST(ResizeKernelTest, AutomaticChoiceIsTheBestSupportedAndForcingOverridesIt) {
  const ResizeKernel best = internal::ResizeKernelSupported(ResizeKernel::kAvx512) ? ResizeKernel::kAvx512
                            : internal::ResizeKernelSupported(ResizeKernel::kAvx2)   ? ResizeKernel::kAvx2
                            : internal::ResizeKernelSupported(ResizeKernel::kSse2)   ? ResizeKernel::kSse2
                                                                                     : ResizeKernel::kPortable;
  EXPECT_EQ(internal::ResizeKernelInUse(), best);
  EXPECT_TRUE(internal::ResizeKernelSupported(ResizeKernel::kPortable));
  {
    ScopedResizeKernelForTesting force(ResizeKernel::kPortable);
    EXPECT_EQ(internal::ResizeKernelInUse(), ResizeKernel::kPortable);
  }
  EXPECT_EQ(internal::ResizeKernelInUse(), best);
#if defined(__x86_64__)
  EXPECT_TRUE(internal::ResizeKernelSupported(ResizeKernel::kSse2));  // baseline x86-64
#endif
}

TEST(ResizeFlipNormalizeTest, BadArgumentsNameTheArgument) {
  Tensor in = Pattern({10, 12, 3});
  ResizeFlipNormalizeOptions o;
  o.height = 4;
  o.width = 4;
  o.crop = CropWindow{5, 5, 6, 4};
  Status s = ResizeFlipNormalize(in, o).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'crop'"), std::string::npos) << s;
  o.crop.reset();
  o.normalize.stddev = {1.0f, 0.0f, 1.0f};
  s = ResizeFlipNormalize(in, o).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'std'"), std::string::npos) << s;
  o.normalize.stddev = {1.0f, 1.0f};
  EXPECT_EQ(ResizeFlipNormalize(in, o).status().code(), Code::kInvalidArgument);
  o.normalize.stddev = {};
  EXPECT_EQ(ResizeFlipNormalize(MakeTensor<float>({1, 1, 1}, {0}), o).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::image
