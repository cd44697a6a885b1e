// DecodeImage, format sniffing, and the decoders' TF 2 habit of decoding
// whatever format they are given.
#include <gtest/gtest.h>

#include <string>

#include "codec_test_util.h"
#include "sluice/image/codec.h"

namespace sluice::image {
namespace {

using testing::At;
using testing::ReadImage;

TEST(SniffImageFormatTest, RecognisesMagicBytes) {
  EXPECT_EQ(SniffImageFormat(ReadImage("jpeg/pillow/hopper.jpg")), ImageFormat::kJpeg);
  EXPECT_EQ(SniffImageFormat(ReadImage("png/pillow/hopper.png")), ImageFormat::kPng);
  EXPECT_EQ(SniffImageFormat("GIF89a..."), ImageFormat::kGif);
  EXPECT_EQ(SniffImageFormat("BM......"), ImageFormat::kBmp);
  EXPECT_EQ(SniffImageFormat(std::string_view("RIFF\x10\0\0\0WEBPVP8 ", 16)), ImageFormat::kWebp);
  EXPECT_EQ(SniffImageFormat("\xff\xd8"), ImageFormat::kUnknown);  // too short for JPEG
  EXPECT_EQ(SniffImageFormat(""), ImageFormat::kUnknown);
  EXPECT_TRUE(IsJpeg("\xff\xd8\xff"));
  EXPECT_FALSE(IsJpeg("\x89PNG"));
}

TEST(DecodeImageTest, DecodesBothFormatsLikeTheirOwnDecoders) {
  const std::string jpeg = ReadImage("jpeg/pillow/hopper.jpg");
  const std::string png = ReadImage("png/pngsuite/basn4a08.png");
  Result<Tensor> a = DecodeImage(jpeg);
  Result<Tensor> b = DecodeJpeg(jpeg);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(ValuesEqual(*a, *b));
  Result<Tensor> c = DecodeImage(png);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->shape(), (TensorShape{32, 32, 2}));
}

TEST(DecodeImageTest, DtypesScaleAsConvertImageDtype) {
  const std::string jpeg = ReadImage("jpeg/pillow/hopper.jpg");
  Tensor u8 = *DecodeImage(jpeg);
  Result<Tensor> u16 = DecodeImage(jpeg, {.dtype = DType::kUInt16});
  Result<Tensor> f32 = DecodeImage(jpeg, {.dtype = DType::kFloat32});
  Result<Tensor> f64 = DecodeImage(jpeg, {.dtype = DType::kFloat64});
  ASSERT_TRUE(u16.ok() && f32.ok() && f64.ok());
  EXPECT_EQ(At<uint16_t>(*u16, 0, 0, 0), At<uint8_t>(u8, 0, 0, 0) * 256);  // 19 -> 4864 in TF
  EXPECT_FLOAT_EQ(At<float>(*f32, 0, 0, 0), At<uint8_t>(u8, 0, 0, 0) / 255.0f);
  EXPECT_DOUBLE_EQ(At<double>(*f64, 0, 0, 0), At<uint8_t>(u8, 0, 0, 0) * 256 / 65535.0);  // via uint16, as TF
  const std::string png16 = ReadImage("png/pngsuite/basn2c16.png");
  Result<Tensor> p16 = DecodeImage(png16, {.dtype = DType::kUInt16});
  Result<Tensor> pf = DecodeImage(png16, {.dtype = DType::kFloat32});
  ASSERT_TRUE(p16.ok() && pf.ok());
  EXPECT_FLOAT_EQ(At<float>(*pf, 0, 1, 0), At<uint16_t>(*p16, 0, 1, 0) / 65535.0f);  // all 16 bits kept
  EXPECT_TRUE(errors::IsInvalidArgument(DecodeImage(png16, {.dtype = DType::kInt32}).status()));
}

TEST(DecodeImageTest, ErrorsUseTensorFlowsWords) {
  EXPECT_EQ(DecodeImage("").status().message(), "Input is empty.");
  EXPECT_EQ(DecodeImage("hello world").status().message(),
            "Unknown image file format. One of JPEG, PNG required.");
  Result<Tensor> gif = DecodeImage("GIF89a\x01\0\x01\0\0\0\0;");
  EXPECT_TRUE(errors::IsInvalidArgument(gif.status()));
  EXPECT_NE(gif.status().message().find("GIF"), std::string::npos);
  EXPECT_EQ(DecodeImage(ReadImage("jpeg/pillow/hopper.jpg"), {.channels = 4}).status().message(),
            "JPEG does not support 4 channels");
  EXPECT_EQ(DecodeImage(ReadImage("png/pillow/hopper.png"), {.channels = 2}).status().message(),
            "`channels` must be 0, 1, 3 or 4 but got 2");
  EXPECT_EQ(DecodeJpeg("").status().message(), "Input is empty.");
  EXPECT_EQ(DecodePng("\xff\xd8").status().message(), "Unknown image file format. One of JPEG, PNG required.");
}

TEST(DecodeImageTest, DecodersAcceptTheOtherFormatAsTensorFlowTwo) {
  const std::string png = ReadImage("png/pillow/hopper.png");
  const std::string jpeg = ReadImage("jpeg/pillow/hopper.jpg");
  Result<Tensor> png_as_jpeg = DecodeJpeg(png);
  ASSERT_TRUE(png_as_jpeg.ok());
  EXPECT_TRUE(ValuesEqual(*png_as_jpeg, *DecodePng(png)));
  Result<Tensor> jpeg_as_png = DecodePng(jpeg, {.dtype = DType::kUInt16});
  ASSERT_TRUE(jpeg_as_png.ok());
  EXPECT_EQ(At<uint16_t>(*jpeg_as_png, 0, 0, 0), At<uint8_t>(*DecodeJpeg(jpeg), 0, 0, 0) * 256);
  EXPECT_EQ(DecodeAndCropJpeg(png, {0, 0, 4, 4}).status().message(),
            "DecodeAndCropJpeg operation can run on JPEG only, but detected PNG.");
}

}  // namespace
}  // namespace sluice::image
