// The decode limit (codec.h "Decode limit"): headers that claim a huge image
// are refused before the image is allocated; normal images still decode; the
// limit can be lowered per call or for the process.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sluice/image/codec.h"

namespace sluice::image {
namespace {

bool Contains(const Status& s, const std::string& part) {
  return s.message().find(part) != std::string::npos;
}

// A small image with some structure, HWC uint8.
Tensor Pattern(int64_t height, int64_t width, int64_t channels) {
  Tensor t(DType::kUInt8, TensorShape{height, width, channels});
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 7);
  return t;
}

void PutBigEndian(std::string* s, size_t at, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * (bytes - 1 - i)));
}

// A 16x16 baseline JPEG whose frame header (SOF0) claims width x height.
std::string JpegClaiming(uint32_t width, uint32_t height) {
  std::string jpeg = *EncodeJpeg(Pattern(16, 16, 3));
  const size_t sof = jpeg.find("\xff\xc0");
  EXPECT_NE(sof, std::string::npos);
  PutBigEndian(&jpeg, sof + 5, height, 2);  // marker, length (2), precision (1)
  PutBigEndian(&jpeg, sof + 7, width, 2);
  return jpeg;
}

// PNG's CRC-32 (ISO 3309), bit by bit.
uint32_t Crc32(std::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// A 1x1 RGBA PNG whose IHDR claims width x height (CRC fixed up).
std::string PngClaiming(uint32_t width, uint32_t height) {
  std::string png = *EncodePng(Pattern(1, 1, 4));
  // Signature (8), IHDR length (4) and type (4), then width, height.
  PutBigEndian(&png, 16, width, 4);
  PutBigEndian(&png, 20, height, 4);
  PutBigEndian(&png, 29, Crc32(std::string_view(png).substr(12, 17)), 4);
  return png;
}

// JPEG options with a decode limit (designated initializers would skip
// dct_method, which gcc warns about).
DecodeJpegOptions JpegLimit(int64_t max_bytes, int ratio = 1, bool try_recover_truncated = false) {
  DecodeJpegOptions o;
  o.max_decode_bytes = max_bytes;
  o.ratio = ratio;
  o.try_recover_truncated = try_recover_truncated;
  return o;
}

// Restores the process-wide limit when a test changed it.
class DecodeLimitTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = *DefaultMaxDecodeBytes(); }
  void TearDown() override { EXPECT_TRUE(SetDefaultMaxDecodeBytes(saved_).ok()); }

 private:
  int64_t saved_ = 0;
};

TEST_F(DecodeLimitTest, DefaultIsOneGibibyte) {
  // SLUICE_MAX_DECODE_BYTES is unset in the test environment.
  EXPECT_EQ(*DefaultMaxDecodeBytes(), int64_t{1} << 30);
  EXPECT_EQ(kDefaultMaxDecodeBytes, int64_t{1} << 30);
}

TEST_F(DecodeLimitTest, JpegClaimingAHugeImageFailsFromItsHeader) {
  const std::string jpeg = JpegClaiming(13000, 13000);
  ASSERT_LT(jpeg.size(), 4096u);
  // As float32, the 13000 x 13000 x 3 image is 2 GB: over the default.
  const Status s = DecodeImage(jpeg, {.dtype = DType::kFloat32}).status();
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  EXPECT_EQ(s.message(),
            "JPEG image too large to decode: 13000x13000 (width x height) x 3 channels of float32 is "
            "2028000000 bytes, over the decode limit of 1073741824 bytes; raise it with "
            "sluice.image.set_decode_limit(), the SLUICE_MAX_DECODE_BYTES environment variable or the "
            "max_decode_bytes option");
  // Recovering a truncated file would fill all 507 MB; the limit stops it first.
  const Status r = DecodeJpeg(jpeg, JpegLimit(64 << 20, 1, true)).status();
  EXPECT_TRUE(Contains(r, "13000x13000 (width x height) x 3 channels of uint8 is 507000000 bytes")) << r;
  EXPECT_TRUE(Contains(r, "over the decode limit of 67108864 bytes")) << r;
}

TEST_F(DecodeLimitTest, ForgedJpegDecodesToTheClaimedSizeUnlessTheLimitStopsIt) {
  // libjpeg pads the missing data (a warning), so without a limit the forged
  // header alone decides the allocation: 2000 x 2000 x 3 = 12 MB from ~700 B.
  const std::string jpeg = JpegClaiming(2000, 2000);
  Result<Tensor> decoded = DecodeJpeg(jpeg);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->shape(), (TensorShape{2000, 2000, 3}));
  const Status refused = DecodeJpeg(jpeg, JpegLimit(1 << 20)).status();
  EXPECT_TRUE(Contains(refused, "is 12000000 bytes, over the decode limit of 1048576 bytes")) << refused;
}

TEST_F(DecodeLimitTest, PngClaimingAHugeImageFailsFromItsHeader) {
  const std::string png = PngClaiming(20000, 20000);
  const Status s = DecodePng(png).status();
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(Contains(s, "PNG image too large to decode: 20000x20000 (width x height) x 4 channels of uint8 "
                          "is 1600000000 bytes, over the decode limit of 1073741824 bytes"))
      << s;
  EXPECT_TRUE(Contains(DecodeImage(png, {.dtype = DType::kUInt16}).status(), "of uint16 is 3200000000 bytes"));
  EXPECT_TRUE(Contains(DecodeJpeg(png).status(), "PNG image too large to decode"));  // PNG via decode_jpeg
  // Small enough: the decoder runs and finds the rows missing.
  const Status decoded = DecodePng(PngClaiming(300, 300)).status();
  EXPECT_FALSE(Contains(decoded, "too large to decode")) << decoded;
  EXPECT_TRUE(errors::IsInvalidArgument(decoded)) << decoded;
}

TEST_F(DecodeLimitTest, ALimitOfExactlyTheImageDecodesIt) {
  const std::string jpeg = *EncodeJpeg(Pattern(40, 30, 3));
  const std::string png = *EncodePng(Pattern(40, 30, 4));
  EXPECT_TRUE(DecodeJpeg(jpeg).ok());
  EXPECT_TRUE(DecodeJpeg(jpeg, JpegLimit(40 * 30 * 3)).ok());
  EXPECT_TRUE(Contains(DecodeJpeg(jpeg, JpegLimit(40 * 30 * 3 - 1)).status(),
                       "30x40 (width x height) x 3 channels of uint8 is 3600 bytes"));
  EXPECT_TRUE(DecodePng(png, {.max_decode_bytes = 40 * 30 * 4}).ok());
  EXPECT_FALSE(DecodePng(png, {.max_decode_bytes = 40 * 30 * 4 - 1}).ok());
  // Counted in the output dtype: float64 is 8 bytes a value.
  EXPECT_TRUE(DecodeImage(png, {.dtype = DType::kFloat64, .max_decode_bytes = 40 * 30 * 4 * 8}).ok());
  EXPECT_FALSE(DecodeImage(png, {.dtype = DType::kFloat64, .max_decode_bytes = 40 * 30 * 4 * 8 - 1}).ok());
}

TEST_F(DecodeLimitTest, ScaledDecodeCountsTheScaledSizeAndCropsTheWholeImage) {
  const std::string jpeg = *EncodeJpeg(Pattern(64, 64, 3));
  // ratio 2: 32 x 32 x 3 = 3072 bytes.
  EXPECT_TRUE(DecodeJpeg(jpeg, JpegLimit(3072, 2)).ok());
  EXPECT_FALSE(DecodeJpeg(jpeg, JpegLimit(3071, 2)).ok());
  // An 8 x 8 crop still counts the 64 x 64 image it is decoded from.
  const CropWindow window{8, 8, 8, 8};
  EXPECT_TRUE(DecodeAndCropJpeg(jpeg, window, JpegLimit(64 * 64 * 3)).ok());
  EXPECT_TRUE(Contains(DecodeAndCropJpeg(jpeg, window, JpegLimit(64 * 64 * 3 - 1)).status(),
                       "64x64 (width x height) x 3 channels"));
}

TEST_F(DecodeLimitTest, ProcessWideDefaultCanBeLoweredAndRaised) {
  const std::string jpeg = *EncodeJpeg(Pattern(40, 30, 3));
  ASSERT_TRUE(SetDefaultMaxDecodeBytes(1000).ok());
  EXPECT_EQ(*DefaultMaxDecodeBytes(), 1000);
  const Status s = DecodeJpeg(jpeg).status();
  EXPECT_TRUE(Contains(s, "is 3600 bytes, over the decode limit of 1000 bytes")) << s;
  EXPECT_FALSE(DecodeImage(jpeg).ok());
  EXPECT_TRUE(DecodeJpeg(jpeg, JpegLimit(3600)).ok());  // the option overrides it
  ASSERT_TRUE(SetDefaultMaxDecodeBytes(3600).ok());
  EXPECT_TRUE(DecodeJpeg(jpeg).ok());
}

TEST_F(DecodeLimitTest, BadLimitsAreInvalidArgument) {
  EXPECT_TRUE(errors::IsInvalidArgument(SetDefaultMaxDecodeBytes(0)));
  EXPECT_TRUE(errors::IsInvalidArgument(SetDefaultMaxDecodeBytes(-5)));
  EXPECT_EQ(*DefaultMaxDecodeBytes(), int64_t{1} << 30);  // unchanged
  const Status s = DecodeJpeg(*EncodeJpeg(Pattern(8, 8, 3)), JpegLimit(-1)).status();
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(Contains(s, "max_decode_bytes must be > 0 (or 0 for the default), got -1")) << s;
}

}  // namespace
}  // namespace sluice::image
