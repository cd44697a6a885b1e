// DecodeJpeg, DecodeAndCropJpeg, ExtractJpegShape and EncodeJpeg against the
// shared test images (tests/data/SOURCES.md §3.1, §3.2).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "codec_test_util.h"
#include "sluice/image/codec.h"

namespace sluice::image {
namespace {

using testing::At;
using testing::CropCopy;
using testing::MaxAbsDiff;
using testing::ReadImage;

Tensor MustDecode(const std::string& bytes, const DecodeJpegOptions& o = {}) {
  Result<Tensor> r = DecodeJpeg(bytes, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : Tensor();
}

DecodeJpegOptions Accurate(int channels) {
  DecodeJpegOptions o;
  o.channels = channels;
  o.dct_method = "INTEGER_ACCURATE";
  return o;
}

// jpeg-decoder's reftest: each JPEG against the PNG beside it, within the
// tolerance SOURCES.md §3.1 measured for libjpeg-turbo's accurate DCT.
TEST(DecodeJpegTest, MatchesJpegDecoderReferencePngs) {
  struct Case {
    const char* name;
    int channels;
    int64_t height, width;
    int64_t tolerance;
  };
  const Case cases[] = {
      {"mozilla/jpg-gray", 1, 32, 32, 0},         {"mozilla/jpg-cmyk-1", 3, 32, 32, 1},
      {"mozilla/jpg-progressive", 3, 32, 32, 0}, {"mozilla/jpg-size-33x33", 3, 33, 33, 0},
      {"mozilla/jpg-size-1x1", 3, 1, 1, 0},       {"restarts", 3, 33, 33, 2},
      {"extraneous-data", 3, 16, 16, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string base = std::string("jpeg/jpeg-decoder/") + c.name;
    Tensor got = MustDecode(ReadImage(base + ".jpg"), Accurate(c.channels));
    Result<Tensor> want = DecodePng(ReadImage(base + ".png"), {.channels = c.channels});
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(got.shape(), (TensorShape{c.height, c.width, c.channels}));
    EXPECT_GE(MaxAbsDiff<uint8_t>(got, *want), 0);
    EXPECT_LE(MaxAbsDiff<uint8_t>(got, *want), c.tolerance);
  }
}

TEST(DecodeJpegTest, ChannelsZeroKeepsGrayAndMakesCmykRgb) {
  EXPECT_EQ(MustDecode(ReadImage("jpeg/pillow/hopper_gray.jpg")).shape(), (TensorShape{128, 128, 1}));
  EXPECT_EQ(MustDecode(ReadImage("jpeg/pillow/hopper.jpg")).shape(), (TensorShape{128, 128, 3}));
  EXPECT_EQ(MustDecode(ReadImage("jpeg/pillow/pil_sample_cmyk.jpg")).shape(), (TensorShape{100, 100, 3}));
  // Pillow's size (2, 1) is width 2, height 1.
  EXPECT_EQ(MustDecode(ReadImage("jpeg/pillow/orientation_rectangle.jpg")).shape(), (TensorShape{1, 2, 3}));
  for (const char* name : {"hopper_orientation_3", "hopper_orientation_6", "hopper_orientation_8"}) {
    EXPECT_EQ(MustDecode(ReadImage(std::string("jpeg/pillow/") + name + ".jpg")).shape(),
              (TensorShape{128, 128, 3}));
  }
}

// SOURCES.md §3.2: Pillow's CMYK (0,242,230,0) at (0,0) is red, and the
// (99,99) corner is nearly black.
TEST(DecodeJpegTest, AdobeYcckBecomesRgbAsTensorFlowConvertsIt) {
  Tensor rgb = MustDecode(ReadImage("jpeg/pillow/pil_sample_cmyk.jpg"));
  EXPECT_EQ(At<uint8_t>(rgb, 0, 0, 0), 255);
  EXPECT_EQ(At<uint8_t>(rgb, 0, 0, 1), 13);
  EXPECT_EQ(At<uint8_t>(rgb, 0, 0, 2), 25);
  for (int c = 0; c < 3; ++c) EXPECT_LE(At<uint8_t>(rgb, 99, 99, c), 6) << c;
}

TEST(DecodeJpegTest, CmykToGrayscaleIsRefused) {
  DecodeJpegOptions o;
  o.channels = 1;
  Result<Tensor> r = DecodeJpeg(ReadImage("jpeg/pillow/pil_sample_cmyk.jpg"), o);
  EXPECT_TRUE(errors::IsInvalidArgument(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("Unsupported color conversion"), std::string::npos);
}

TEST(DecodeJpegTest, GrayToThreeChannelsRepeatsTheValue) {
  const std::string bytes = ReadImage("jpeg/pillow/hopper_gray.jpg");
  Tensor gray = MustDecode(bytes);
  DecodeJpegOptions o;
  o.channels = 3;
  Tensor rgb = MustDecode(bytes, o);
  ASSERT_EQ(rgb.shape(), (TensorShape{128, 128, 3}));
  for (int64_t y = 0; y < 128; y += 7) {
    for (int64_t x = 0; x < 128; x += 5) {
      for (int c = 0; c < 3; ++c) ASSERT_EQ(At<uint8_t>(rgb, y, x, c), At<uint8_t>(gray, y, x, 0));
    }
  }
}

TEST(DecodeJpegTest, RatioScalesWhileDecoding) {
  const std::string bytes = ReadImage("jpeg/jpeg-decoder/mozilla/jpg-size-33x33.jpg");
  const int64_t expected[] = {33, 17, 9, 5};
  int i = 0;
  for (int ratio : {1, 2, 4, 8}) {
    DecodeJpegOptions o;
    o.ratio = ratio;
    EXPECT_EQ(MustDecode(bytes, o).shape(), (TensorShape{expected[i], expected[i], 3})) << ratio;
    ++i;
  }
}

TEST(DecodeJpegTest, DctMethodsDifferSlightly) {
  const std::string bytes = ReadImage("jpeg/pillow/hopper.jpg");
  Tensor fast = MustDecode(bytes);
  Tensor accurate = MustDecode(bytes, Accurate(0));
  const int64_t diff = MaxAbsDiff<uint8_t>(fast, accurate);
  EXPECT_GT(diff, 0);  // the default really is INTEGER_FAST
  EXPECT_LE(diff, 16);
}

TEST(DecodeJpegTest, BadOptionsAreInvalidArgument) {
  const std::string bytes = ReadImage("jpeg/pillow/hopper.jpg");
  DecodeJpegOptions o;
  o.ratio = 3;
  EXPECT_EQ(DecodeJpeg(bytes, o).status().message(), "ratio must be 1, 2, 4, or 8, got 3");
  o = {};
  o.channels = 2;
  EXPECT_EQ(DecodeJpeg(bytes, o).status().message(), "`channels` must be 0, 1, 3 or 4 but got 2");
  o.channels = 4;
  EXPECT_EQ(DecodeJpeg(bytes, o).status().message(), "JPEG does not support 4 channels");
  o = {};
  o.dct_method = "FOO";
  EXPECT_TRUE(errors::IsInvalidArgument(DecodeJpeg(bytes, o).status()));
}

TEST(DecodeJpegTest, CorruptFilesAreInvalidArgumentNamingTheProblem) {
  Result<Tensor> sos = DecodeJpeg(ReadImage("jpeg/jpeg-decoder/crashtest/missing-sos.jpg"));
  EXPECT_TRUE(errors::IsInvalidArgument(sos.status()));
  EXPECT_NE(sos.status().message().find("missing SOS marker"), std::string::npos) << sos.status();
  Result<Tensor> sof = DecodeJpeg(ReadImage("jpeg/jpeg-decoder/crashtest/missing-sof.jpg"));
  EXPECT_TRUE(errors::IsInvalidArgument(sof.status()));
  EXPECT_NE(sof.status().message().find("ends inside the JPEG header"), std::string::npos) << sof.status();
}

TEST(DecodeJpegTest, TruncatedProgressiveFailsUnlessRecovering) {
  const std::string bytes = ReadImage("jpeg/pillow/truncated_jpeg.jpg");
  DecodeJpegOptions o;
  o.acceptable_fraction = 0;  // no help for a multi-scan file, as in TF
  Result<Tensor> r = DecodeJpeg(bytes, o);
  EXPECT_TRUE(errors::IsInvalidArgument(r.status()));
  EXPECT_NE(r.status().message().find("Premature end of JPEG data"), std::string::npos);
  o.try_recover_truncated = true;
  Tensor image = MustDecode(bytes, o);
  ASSERT_EQ(image.shape(), (TensorShape{100, 100, 3}));
  int64_t nonzero = 0;
  for (uint8_t v : image.flat<uint8_t>()) nonzero += v != 0;
  EXPECT_GT(nonzero, 100 * 100);  // Pillow's test: not blank
}

TEST(DecodeJpegTest, TruncatedBaselineKeepsAcceptableFractionOfRows) {
  const std::string full = ReadImage("jpeg/pillow/hopper.jpg");
  const std::string cut = full.substr(0, full.size() - 2);  // EOI and some data missing
  Tensor whole = MustDecode(full);
  EXPECT_TRUE(errors::IsInvalidArgument(DecodeJpeg(cut).status()));
  DecodeJpegOptions o;
  o.acceptable_fraction = 0.5f;
  Tensor partial = MustDecode(cut, o);
  ASSERT_EQ(partial.shape(), whole.shape());
  // TF gives 110 decoded rows and 18 zero rows here.
  const int64_t row = 128 * 3;
  int64_t zero_rows = 0, equal_rows = 0;
  for (int64_t y = 0; y < 128; ++y) {
    const uint8_t* p = partial.data<uint8_t>() + y * row;
    zero_rows += std::all_of(p, p + row, [](uint8_t v) { return v == 0; });
    equal_rows += std::equal(p, p + row, whole.data<uint8_t>() + y * row);
  }
  EXPECT_EQ(zero_rows, 18);
  EXPECT_EQ(equal_rows, 110);
  // Half the file is below one half of the rows.
  EXPECT_TRUE(errors::IsInvalidArgument(DecodeJpeg(full.substr(0, full.size() / 2), o).status()));
  o.try_recover_truncated = true;  // grey blocks instead of zero rows
  Tensor recovered = MustDecode(cut, o);
  EXPECT_EQ(At<uint8_t>(recovered, 127, 127, 0), 132);
}

// Every prefix and a few thousand corruptions: an answer, never a crash.
TEST(DecodeJpegTest, PrefixesAndBitFlipsNeverCrash) {
  const std::string full = ReadImage("jpeg/pillow/hopper.jpg");
  for (bool recover : {false, true}) {
    DecodeJpegOptions o;
    o.try_recover_truncated = recover;
    o.acceptable_fraction = 0.25f;
    for (size_t n = 0; n < full.size(); n += 13) {
      Result<Tensor> r = DecodeJpeg(std::string_view(full).substr(0, n), o);
      if (!r.ok()) {
        EXPECT_TRUE(errors::IsInvalidArgument(r.status())) << r.status();
      }
    }
  }
  std::mt19937 rng(42);
  for (int i = 0; i < 300; ++i) {
    std::string bytes = full;
    for (int k = 0; k < 4; ++k) bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
    Result<Tensor> r = DecodeJpeg(bytes);
    if (!r.ok()) {
        EXPECT_TRUE(errors::IsInvalidArgument(r.status())) << r.status();
      }
  }
}

// decode_and_crop equals decode then crop, for random windows on 4:2:0,
// 4:4:4, odd sizes, gray, CMYK and progressive files, at every ratio.
// Exact without fancy upsampling and for files without chroma subsampling.
// With fancy upsampling of subsampled chroma, libjpeg-turbo's
// jpeg_crop_scanline/jpeg_skip_scanlines change the upsampler's neighbours
// at the window's edges, so a few pixels near them differ slightly;
// TensorFlow's decode_and_crop_jpeg gives the same pixels as this one
// (python/src/test_image_codec.py checks that), so the test bounds the
// difference there.
TEST(DecodeAndCropJpegTest, EqualsDecodeThenCrop) {
  struct File {
    const char* name;
    bool subsampled;
  };
  const File files[] = {{"jpeg/pillow/hopper.jpg", true},
                        {"jpeg/jpeg-decoder/restarts.jpg", false},
                        {"jpeg/jpeg-decoder/mozilla/jpg-size-33x33.jpg", true},
                        {"jpeg/pillow/hopper_gray.jpg", false},
                        {"jpeg/pillow/pil_sample_cmyk.jpg", true},
                        {"jpeg/jpeg-decoder/mozilla/jpg-progressive.jpg", true}};
  std::mt19937 rng(7);
  int exact = 0, bounded = 0;
  for (const File& file : files) {
    const std::string bytes = ReadImage(file.name);
    for (int ratio : {1, 2, 4, 8}) {
      for (int channels : {0, 1, 3}) {
        for (bool fancy : {false, true}) {
          DecodeJpegOptions o;
          o.ratio = ratio;
          o.channels = channels;
          o.fancy_upscaling = fancy;
          o.dct_method = rng() % 2 == 0 ? "INTEGER_ACCURATE" : "";
          Result<Tensor> whole = DecodeJpeg(bytes, o);
          if (!whole.ok()) continue;  // CMYK with channels 1
          const int64_t h = whole->shape().dim(0), w = whole->shape().dim(1);
          for (int k = 0; k < 8; ++k) {
            CropWindow win;
            win.y = rng() % h;
            win.x = rng() % w;
            win.height = 1 + rng() % (h - win.y);
            win.width = 1 + rng() % (w - win.x);
            if (k == 0) win = {0, 0, h, w};
            Result<Tensor> crop = DecodeAndCropJpeg(bytes, win, o);
            ASSERT_TRUE(crop.ok()) << crop.status();
            const Tensor want = CropCopy(*whole, win.y, win.x, win.height, win.width);
            const int64_t diff = MaxAbsDiff<uint8_t>(*crop, want);
            const bool must_be_exact = !fancy || !file.subsampled || k == 0 || ratio == 8;
            ASSERT_GE(diff, 0);
            ASSERT_LE(diff, must_be_exact ? 0 : 48)
                << file.name << " ratio " << ratio << " channels " << channels << " fancy " << fancy
                << " window " << win.y << "," << win.x << "," << win.height << "," << win.width;
            ++(must_be_exact ? exact : bounded);
          }
        }
      }
    }
  }
  EXPECT_GT(exact, 500);
  EXPECT_GT(bounded, 100);
}

TEST(DecodeAndCropJpegTest, WindowsOutsideTheImageAreInvalidArgument) {
  const std::string bytes = ReadImage("jpeg/pillow/hopper.jpg");
  const CropWindow bad[] = {{120, 120, 10, 10}, {0, 0, 0, 5}, {-1, 0, 5, 5}, {0, 0, 129, 5}, {0, 0, 5, 0}};
  for (const CropWindow& w : bad) {
    Result<Tensor> r = DecodeAndCropJpeg(bytes, w);
    EXPECT_TRUE(errors::IsInvalidArgument(r.status())) << w.y << "," << w.x;
    EXPECT_NE(r.status().message().find("crop window"), std::string::npos);
  }
  DecodeJpegOptions half;
  half.ratio = 2;  // the window is in scaled pixels: 64x64
  EXPECT_TRUE(DecodeAndCropJpeg(bytes, {60, 60, 4, 4}, half).ok());
  EXPECT_FALSE(DecodeAndCropJpeg(bytes, {60, 60, 5, 4}, half).ok());
}

TEST(ExtractJpegShapeTest, ReadsTheHeaderOnly) {
  auto shape = [](const std::string& file) {
    Result<Tensor> r = ExtractJpegShape(ReadImage(file));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::vector<int32_t>(r->flat<int32_t>().begin(), r->flat<int32_t>().end())
                  : std::vector<int32_t>{};
  };
  EXPECT_EQ(shape("jpeg/pillow/hopper.jpg"), (std::vector<int32_t>{128, 128, 3}));
  EXPECT_EQ(shape("jpeg/pillow/hopper_gray.jpg"), (std::vector<int32_t>{128, 128, 1}));
  EXPECT_EQ(shape("jpeg/pillow/pil_sample_cmyk.jpg"), (std::vector<int32_t>{100, 100, 4}));
  EXPECT_EQ(shape("jpeg/pillow/orientation_rectangle.jpg"), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(shape("jpeg/pillow/truncated_jpeg.jpg"), (std::vector<int32_t>{100, 100, 3}));
  Result<Tensor> wide = ExtractJpegShape(ReadImage("jpeg/pillow/hopper.jpg"), DType::kInt64);
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->dtype(), DType::kInt64);
  EXPECT_EQ(wide->flat<int64_t>()[0], 128);
  Result<Tensor> png = ExtractJpegShape(ReadImage("png/pillow/hopper.png"));
  EXPECT_TRUE(errors::IsInvalidArgument(png.status()));
  EXPECT_NE(png.status().message().find("Invalid JPEG data, size 30605"), std::string::npos);
  EXPECT_TRUE(errors::IsInvalidArgument(
      ExtractJpegShape(ReadImage("jpeg/jpeg-decoder/crashtest/missing-sof.jpg")).status()));
}

// A smooth test pattern (JPEG's best case).
Tensor Gradient(int64_t h, int64_t w, int64_t c) {
  Tensor t(DType::kUInt8, TensorShape{h, w, c});
  uint8_t* p = t.data<uint8_t>();
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int64_t k = 0; k < c; ++k) *p++ = static_cast<uint8_t>(x * 2 + y + 20 * k);
    }
  }
  return t;
}

double MeanAbsDiff(const Tensor& a, const Tensor& b) {
  double sum = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    sum += std::abs(int{a.data<uint8_t>()[i]} - int{b.data<uint8_t>()[i]});
  }
  return sum / static_cast<double>(a.num_elements());
}

TEST(EncodeJpegTest, RoundTripsWithinJpegError) {
  for (int64_t c : {1, 3}) {
    Tensor image = Gradient(48, 64, c);
    for (bool progressive : {false, true}) {
      for (bool chroma : {false, true}) {
        EncodeJpegOptions o;
        o.progressive = progressive;
        o.chroma_downsampling = chroma;
        o.optimize_size = progressive;
        Result<std::string> bytes = EncodeJpeg(image, o);
        ASSERT_TRUE(bytes.ok()) << bytes.status();
        EXPECT_TRUE(IsJpeg(*bytes));
        Tensor back = MustDecode(*bytes, Accurate(0));
        ASSERT_EQ(back.shape(), image.shape());
        EXPECT_LT(MeanAbsDiff(image, back), 2.0) << c << progressive << chroma;
      }
    }
  }
}

TEST(EncodeJpegTest, QualityDensityAndXmpReachTheFile) {
  Tensor image = Gradient(32, 32, 3);
  EncodeJpegOptions low;
  low.quality = 10;
  Result<std::string> small = EncodeJpeg(image, low);
  Result<std::string> large = EncodeJpeg(image);
  ASSERT_TRUE(small.ok() && large.ok());
  EXPECT_LT(small->size(), large->size());
  // JFIF APP0: version 1.1, unit 1 (inch), 300 x 300.
  EXPECT_EQ(large->substr(2, 16), std::string("\xff\xe0\x00\x10JFIF\x00\x01\x01\x01\x01\x2c\x01\x2c", 16));
  EncodeJpegOptions xmp;
  xmp.xmp_metadata = "<x:xmpmeta>sluice</x:xmpmeta>";
  xmp.density_unit = "cm";
  Result<std::string> with_xmp = EncodeJpeg(image, xmp);
  ASSERT_TRUE(with_xmp.ok());
  const std::string marker = std::string("http://ns.adobe.com/xap/1.0/") + '\0' + xmp.xmp_metadata;
  EXPECT_NE(with_xmp->find(marker), std::string::npos);
  EXPECT_EQ((*with_xmp)[13], '\x02');  // density unit cm
}

TEST(EncodeJpegTest, BadImagesAndOptionsAreInvalidArgument) {
  EXPECT_EQ(EncodeJpeg(Gradient(2, 2, 2)).status().message(), "image must have 1 or 3 channels, got [2,2,2]");
  EXPECT_TRUE(errors::IsInvalidArgument(EncodeJpeg(Gradient(2, 0, 3)).status()));
  EXPECT_TRUE(errors::IsInvalidArgument(EncodeJpeg(Tensor(DType::kUInt16, TensorShape{2, 2, 3})).status()));
  EncodeJpegOptions o;
  o.quality = 101;
  EXPECT_TRUE(errors::IsInvalidArgument(EncodeJpeg(Gradient(2, 2, 3), o).status()));
  o = {};
  o.format = "grayscale";
  EXPECT_TRUE(errors::IsInvalidArgument(EncodeJpeg(Gradient(2, 2, 3), o).status()));
  EXPECT_TRUE(EncodeJpeg(Gradient(2, 2, 1), o).ok());
}

}  // namespace
}  // namespace sluice::image
