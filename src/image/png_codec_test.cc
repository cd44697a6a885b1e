// DecodePng and EncodePng against PngSuite, Pillow's and libpng's test
// images (tests/data/SOURCES.md §3.3-3.5).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "codec_test_util.h"
#include "sluice/image/codec.h"

namespace sluice::image {
namespace {

using testing::At;
using testing::ReadImage;

Tensor MustDecode(const std::string& file, int channels = 0, DType dtype = DType::kUInt8) {
  Result<Tensor> r = DecodePng(ReadImage(file), {.channels = channels, .dtype = dtype});
  EXPECT_TRUE(r.ok()) << file << ": " << r.status();
  return r.ok() ? *r : Tensor();
}

// Zero samples in the colour channels (pngtest -m's count, README).
template <class T>
int64_t ZeroColourSamples(const Tensor& t, int colour_channels) {
  const int64_t c = t.shape().dim(2);
  int64_t zeros = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) zeros += (i % c) < colour_channels && t.data<T>()[i] == 0;
  return zeros;
}

TEST(DecodePngTest, PngSuiteShapesAndZeroCountsMatchTheReadme) {
  struct Case {
    const char* name;
    int64_t channels;
    int colour;
    bool sixteen;
    int64_t zeros;
  };
  const Case cases[] = {
      {"basn0g01", 1, 1, false, 524}, {"basn0g08", 1, 1, false, 3},    {"basn0g16", 1, 1, true, 1},
      {"basn2c08", 3, 3, false, 6},   {"basn2c16", 3, 3, true, 592},   {"basn3p08", 3, 3, false, -1},
      {"basn4a08", 2, 1, false, 32},  {"basn6a08", 4, 3, false, 160},  {"basn6a16", 4, 3, true, 1072},
      {"basn3p04", 3, 3, false, -1},  {"ftbbn3p08", 4, 3, false, -1},  {"ibasn2c08", 3, 3, false, 6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file = std::string("png/pngsuite/") + c.name + ".png";
    Tensor t = MustDecode(file, 0, c.sixteen ? DType::kUInt16 : DType::kUInt8);
    EXPECT_EQ(t.shape(), (TensorShape{32, 32, c.channels}));
    if (c.zeros < 0) continue;
    EXPECT_EQ(c.sixteen ? ZeroColourSamples<uint16_t>(t, c.colour) : ZeroColourSamples<uint8_t>(t, c.colour),
              c.zeros);
  }
}

TEST(DecodePngTest, SixteenBitValues) {
  Tensor g = MustDecode("png/pngsuite/basn0g16.png", 0, DType::kUInt16);
  ASSERT_EQ(g.dtype(), DType::kUInt16);
  auto [lo, hi] = std::minmax_element(g.flat<uint16_t>().begin(), g.flat<uint16_t>().end());
  EXPECT_EQ(*lo, 0);
  EXPECT_EQ(*hi, 65535);
  EXPECT_EQ(At<uint16_t>(g, 0, 1, 0), 2304);  // TF's value
  Tensor rgb = MustDecode("png/pngsuite/basn2c16.png", 0, DType::kUInt16);
  EXPECT_EQ(At<uint16_t>(rgb, 0, 0, 0), 65535);
  EXPECT_EQ(At<uint16_t>(rgb, 0, 0, 1), 65535);
  EXPECT_EQ(At<uint16_t>(rgb, 0, 0, 2), 0);
  EXPECT_EQ(At<uint16_t>(rgb, 0, 1, 0), 63421);
}

// TF keeps the high byte going down and multiplies by 257 going up.
TEST(DecodePngTest, BitDepthConversionsAreTensorFlows) {
  for (const char* name : {"png/pngsuite/basn2c16.png", "png/pngsuite/basn6a16.png", "png/pillow/i_trns.png"}) {
    Tensor wide = MustDecode(name, 0, DType::kUInt16);
    Tensor narrow = MustDecode(name, 0, DType::kUInt8);
    ASSERT_EQ(wide.shape(), narrow.shape());
    for (int64_t i = 0; i < wide.num_elements(); ++i) {
      ASSERT_EQ(narrow.data<uint8_t>()[i], wide.data<uint16_t>()[i] >> 8) << name << " " << i;
    }
  }
  Tensor narrow = MustDecode("png/pngsuite/basn0g08.png", 3);
  Tensor wide = MustDecode("png/pngsuite/basn0g08.png", 3, DType::kUInt16);
  for (int64_t i = 0; i < wide.num_elements(); ++i) {
    ASSERT_EQ(wide.data<uint16_t>()[i], narrow.data<uint8_t>()[i] * 257);
  }
}

TEST(DecodePngTest, InterlacedEqualsNonInterlaced) {
  for (int channels : {0, 1, 4}) {
    EXPECT_TRUE(ValuesEqual(MustDecode("png/pngsuite/ibasn2c08.png", channels),
                            MustDecode("png/pngsuite/basn2c08.png", channels)));
  }
  EXPECT_EQ(MustDecode("png/pillow/pil123rgba.png").shape(), (TensorShape{150, 162, 4}));
}

TEST(DecodePngTest, ChannelConversions) {
  // Gray to RGB repeats; opaque alpha is added; RGB to gray uses 0.299/0.587.
  Tensor gray = MustDecode("png/pngsuite/basn0g08.png");
  Tensor rgba = MustDecode("png/pngsuite/basn0g08.png", 4);
  EXPECT_EQ(At<uint8_t>(rgba, 0, 1, 0), At<uint8_t>(gray, 0, 1, 0));
  EXPECT_EQ(At<uint8_t>(rgba, 0, 1, 2), At<uint8_t>(gray, 0, 1, 0));
  EXPECT_EQ(At<uint8_t>(rgba, 0, 1, 3), 255);
  Tensor hopper_gray = MustDecode("png/pillow/hopper.png", 1);
  EXPECT_EQ(At<uint8_t>(hopper_gray, 0, 0, 0), 28);  // TF's value (gamma-aware libpng)
  // Alpha stripped.
  EXPECT_EQ(MustDecode("png/pngsuite/basn6a08.png", 3).shape(), (TensorShape{32, 32, 3}));
  // TF's quirk kept: the filler of a 1-bit file is 1, in the file's depth.
  EXPECT_EQ(At<uint8_t>(MustDecode("png/pngsuite/basn0g01.png", 4), 0, 0, 3), 1);
}

TEST(DecodePngTest, PaletteTransparencyBecomesAlpha) {
  Tensor t = MustDecode("png/pillow/p_trns_single.png");
  ASSERT_EQ(t.shape(), (TensorShape{64, 64, 4}));
  int64_t transparent = 0;
  for (int64_t i = 3; i < t.num_elements(); i += 4) transparent += t.data<uint8_t>()[i] == 0;
  EXPECT_GT(transparent, 0);
  Tensor ft = MustDecode("png/pngsuite/ftbbn3p08.png");
  EXPECT_EQ(At<uint8_t>(ft, 0, 0, 3), 0);
  EXPECT_EQ(MustDecode("png/pngsuite/ftbbn3p08.png", 3).shape(), (TensorShape{32, 32, 3}));
  EXPECT_EQ(MustDecode("png/pillow/i_trns.png", 4, DType::kUInt16).shape(), (TensorShape{64, 64, 4}));
}

TEST(DecodePngTest, CorruptAndTruncatedFilesAreInvalidArgument) {
  const char* bad[] = {"png/libpng_crashers/badcrc.png", "png/libpng_crashers/badadler.png",
                       "png/pillow/truncated_image.png"};
  for (const char* file : bad) {
    Result<Tensor> r = DecodePng(ReadImage(file));
    EXPECT_TRUE(errors::IsInvalidArgument(r.status())) << file << ": " << r.status();
    EXPECT_NE(r.status().message().find("PNG"), std::string::npos);
  }
  EXPECT_NE(DecodePng(ReadImage("png/libpng_crashers/badcrc.png")).status().message().find("CRC"),
            std::string::npos);
  EXPECT_NE(DecodePng(ReadImage("png/pillow/truncated_image.png")).status().message().find("truncated"),
            std::string::npos);
}

TEST(DecodePngTest, PrefixesAndBitFlipsNeverCrash) {
  const std::string full = ReadImage("png/pngsuite/basn6a16.png");
  for (size_t n = 0; n < full.size(); n += 7) {
    Result<Tensor> r = DecodePng(std::string_view(full).substr(0, n));
    EXPECT_TRUE(errors::IsInvalidArgument(r.status())) << n << ": " << r.status();
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i) {
    std::string bytes = full;
    bytes[8 + rng() % (bytes.size() - 8)] ^= static_cast<char>(1 + rng() % 255);
    Result<Tensor> r = DecodePng(bytes, {.channels = static_cast<int>(rng() % 2) * 3});
    if (!r.ok()) {
        EXPECT_TRUE(errors::IsInvalidArgument(r.status())) << r.status();
      }
  }
}

template <class T>
Tensor Pattern(int64_t h, int64_t w, int64_t c, uint32_t seed) {
  Tensor t(DTypeOf<T>(), TensorShape{h, w, c});
  std::mt19937 rng(seed);
  for (T& v : t.flat<T>()) v = static_cast<T>(rng());
  return t;
}

TEST(EncodePngTest, RoundTripsExactly) {
  for (int64_t c = 1; c <= 4; ++c) {
    for (int compression : {-1, 0, 9}) {
      Tensor image = Pattern<uint8_t>(17, 23, c, static_cast<uint32_t>(c));
      Result<std::string> bytes = EncodePng(image, compression);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      Result<Tensor> back = DecodePng(*bytes);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_TRUE(ValuesEqual(*back, image)) << c << " " << compression;
    }
    Tensor wide = Pattern<uint16_t>(9, 5, c, 100 + static_cast<uint32_t>(c));
    Result<std::string> bytes = EncodePng(wide);
    ASSERT_TRUE(bytes.ok());
    Result<Tensor> back = DecodePng(*bytes, {.dtype = DType::kUInt16});
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(ValuesEqual(*back, wide)) << c;
  }
}

TEST(EncodePngTest, BadImagesAreInvalidArgument) {
  EXPECT_EQ(EncodePng(Pattern<uint8_t>(2, 2, 5, 1)).status().message(),
            "image must have 1, 2, 3, or 4 channels, got 5");
  EXPECT_TRUE(errors::IsInvalidArgument(EncodePng(Tensor(DType::kUInt8, TensorShape{2, 0, 3})).status()));
  EXPECT_TRUE(errors::IsInvalidArgument(EncodePng(Tensor(DType::kFloat32, TensorShape{2, 2, 3})).status()));
  EXPECT_TRUE(errors::IsInvalidArgument(EncodePng(Pattern<uint8_t>(2, 2, 3, 1), 10).status()));
  EXPECT_TRUE(errors::IsInvalidArgument(EncodePng(Tensor(DType::kUInt8, TensorShape{4, 4})).status()));
}

}  // namespace
}  // namespace sluice::image
