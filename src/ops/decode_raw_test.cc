#include "sluice/ops/decode_raw.h"

#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::ops {
namespace {

using testing::Dims;
using testing::Values;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(DecodeRawTest, LittleEndianInt32) {
  auto r = DecodeRaw(Tensor::FromStrings({Bytes({1, 0, 0, 0, 0, 1, 0, 0}), Bytes({0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0})}),
                     DType::kInt32);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<int32_t>(*r), (std::vector<int32_t>{1, 256, -1, 2}));
}

TEST(DecodeRawTest, BigEndianSwapsEachElement) {
  auto r = DecodeRaw(Tensor::FromStrings({Bytes({0, 0, 1, 2, 0x3f, 0x80, 0, 0})}), DType::kInt32, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(*r), (std::vector<int32_t>{258, 0x3f800000}));
  auto f = DecodeRaw(Tensor::FromStrings({Bytes({0x3f, 0x80, 0, 0})}), DType::kFloat32, false);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Values<float>(*f), std::vector<float>{1.0f});
  auto u16 = DecodeRaw(Tensor::FromStrings({Bytes({1, 2})}), DType::kUInt16, false);
  ASSERT_TRUE(u16.ok());
  EXPECT_EQ(Values<uint16_t>(*u16), std::vector<uint16_t>{0x0102});
}

TEST(DecodeRawTest, BigEndianComplexSwapsEachPart) {
  // complex64 (1.0f, 2.0f), big-endian parts.
  auto r = DecodeRaw(Tensor::FromStrings({Bytes({0x3f, 0x80, 0, 0, 0x40, 0, 0, 0})}), DType::kComplex64, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::complex<float>>(*r), (std::vector<std::complex<float>>{{1.0f, 2.0f}}));
}

TEST(DecodeRawTest, Uint8KeepsTheBytesAndScalarInputGivesAVector) {
  auto r = DecodeRaw(Tensor::String("abc"), DType::kUInt8);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), std::vector<int64_t>{3});
  EXPECT_EQ(Values<uint8_t>(*r), (std::vector<uint8_t>{'a', 'b', 'c'}));
}

TEST(DecodeRawTest, UnequalLengthsAreInvalidArgument) {
  EXPECT_STATUS(DecodeRaw(Tensor::FromStrings({"abcd", "abcde"}), DType::kUInt8).status(), Code::kInvalidArgument,
                "DecodeRaw requires input strings to all be the same size, but element 1 has size 5 != 4");
}

TEST(DecodeRawTest, LengthNotAMultipleOfTheTypeIsInvalidArgument) {
  EXPECT_STATUS(DecodeRaw(Tensor::FromStrings({"abcde"}), DType::kFloat32).status(), Code::kInvalidArgument,
                "Input to DecodeRaw has length 5 that is not a multiple of 4, the size of float");
}

TEST(DecodeRawTest, EmptyInputGivesZeroWidth) {
  auto r = DecodeRaw(Tensor(DType::kString, TensorShape{0}), DType::kInt64);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (std::vector<int64_t>{0, 0}));
}

TEST(DecodeRawTest, FixedLengthPadsWithZerosAndTruncates) {
  auto r = DecodeRaw(Tensor::FromStrings({Bytes({1, 0}), Bytes({2, 0, 3, 0, 4, 0})}), DType::kInt16, true, 4);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<int16_t>(*r), (std::vector<int16_t>{1, 0, 2, 3}));
  EXPECT_STATUS(DecodeRaw(Tensor::FromStrings({"ab"}), DType::kInt16, true, 3).status(), Code::kInvalidArgument,
                "fixed_length (3) must be a multiple of the size of out_type (2)");
  EXPECT_STATUS(DecodeRaw(Tensor::FromStrings({"ab"}), DType::kInt16, true, -2).status(), Code::kInvalidArgument,
                "fixed_length must be >= 0");
}

TEST(DecodeRawTest, BadTypesAreInvalidArgument) {
  EXPECT_STATUS(DecodeRaw(Tensor::Scalar<int32_t>(1), DType::kUInt8).status(), Code::kInvalidArgument,
                "DecodeRaw needs a string tensor");
  EXPECT_STATUS(DecodeRaw(Tensor::String("a"), DType::kString).status(), Code::kInvalidArgument,
                "DecodeRaw cannot produce out_type string");
}

}  // namespace
}  // namespace sluice::ops
