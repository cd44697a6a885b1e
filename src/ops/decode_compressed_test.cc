#include "sluice/ops/decode_compressed.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::ops {
namespace {

using testing::Values;

// zlib (window 15) or gzip (window 31) compression for the round trips.
std::string Compress(const std::string& data, bool gzip, int level = Z_DEFAULT_COMPRESSION) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, gzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string RandomText(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>('a' + rng() % 4);  // compressible
  return s;
}

class RoundTripTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTripTest, DecompressesWhatZlibCompressed) {
  const bool gzip = std::string(GetParam()) == "GZIP";
  const std::vector<std::string> plain = {"", "hello", RandomText(100000, 1), std::string(1 << 20, 'z')};
  std::vector<std::string> packed;
  for (const std::string& p : plain) packed.push_back(Compress(p, gzip));
  auto r = DecodeCompressed(Tensor::FromStrings(packed), GetParam());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(*r), plain);
}

INSTANTIATE_TEST_SUITE_P(Types, RoundTripTest, ::testing::Values("ZLIB", "GZIP"));

TEST(DecodeCompressedTest, NoCompressionCopies) {
  auto r = DecodeCompressed(Tensor::FromStrings({"a", "bc"}), "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(*r), (std::vector<std::string>{"a", "bc"}));
}

TEST(DecodeCompressedTest, ConcatenatedGzipMembersAreJoined) {
  auto r = DecompressString(Compress("abc", true) + Compress("def", true), "GZIP");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "abcdef");
}

TEST(DecodeCompressedTest, GzipFileFromTestdataMatchesThePlainFile) {
  const std::string gz =
      testing::ReadFileOrDie(testing::TestdataPath("tfrecord/ecosystem_hadoop/zipped-tf-records/part-m-00000.gz"));
  const std::string plain =
      testing::ReadFileOrDie(testing::TestdataPath("tfrecord/ecosystem_hadoop/tf-records/part-m-00000"));
  auto r = DecompressString(gz, "GZIP");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, plain);
}

TEST(DecodeCompressedTest, CorruptDataIsDataLossNamingTheElement) {
  std::string bad = Compress(RandomText(1000, 2), false);
  bad[bad.size() / 2] ^= 0x55;
  bad[bad.size() / 2 + 1] ^= 0x55;
  auto r = DecodeCompressed(Tensor::FromStrings({Compress("ok", false), bad}), "ZLIB");
  EXPECT_STATUS(r.status(), Code::kDataLoss, "Element 1: ");
  EXPECT_EQ(r.status().GetPayload("element"), "1");
}

TEST(DecodeCompressedTest, TruncatedDataIsDataLoss) {
  const std::string full = Compress(RandomText(1000, 3), true);
  EXPECT_STATUS(DecompressString(full.substr(0, full.size() - 6), "GZIP").status(), Code::kDataLoss,
                "Truncated GZIP data");
  const std::string zlib = Compress("abc", false);
  EXPECT_STATUS(DecompressString(zlib.substr(0, 4), "ZLIB").status(), Code::kDataLoss, "Truncated ZLIB data");
  EXPECT_STATUS(DecompressString(zlib.substr(0, 1), "ZLIB").status(), Code::kDataLoss, "Truncated ZLIB data");
  // A second gzip member cut short is truncation too.
  EXPECT_STATUS(DecompressString(Compress("abc", true) + Compress("def", true).substr(0, 10), "GZIP").status(),
                Code::kDataLoss, "Truncated GZIP data");
}

// The cases below follow tf.io.decode_compressed in TF 2.21.
TEST(DecodeCompressedTest, EmptyInputIsEmptyOutputForEveryType) {
  for (const char* type : {"", "ZLIB", "GZIP"}) {
    auto r = DecompressString("", type);
    ASSERT_TRUE(r.ok()) << type << ": " << r.status();
    EXPECT_EQ(*r, "");
  }
  auto r = DecodeCompressed(Tensor::FromStrings({"", Compress("x", true)}), "GZIP");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(*r), (std::vector<std::string>{"", "x"}));
}

TEST(DecodeCompressedTest, BytesAfterAZlibStreamAreIgnored) {
  const std::string z = Compress("abc", false);
  for (const std::string& tail : {std::string("\n"), std::string("xyz"), z, std::string(100, '\0')}) {
    auto r = DecompressString(z + tail, "ZLIB");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, "abc");
  }
}

TEST(DecodeCompressedTest, GarbageAfterAGzipMemberIsDataLoss) {
  const std::string g = Compress("abc", true);
  EXPECT_STATUS(DecompressString(g + "xyz", "GZIP").status(), Code::kDataLoss,
                "3 bytes of trailing data after the GZIP stream");
  EXPECT_STATUS(DecompressString(g + std::string(8, '\0'), "GZIP").status(), Code::kDataLoss, "trailing data");
  EXPECT_STATUS(DecompressString(g + g + "xy", "GZIP").status(), Code::kDataLoss, "trailing data");
}

TEST(DecodeCompressedTest, OneByteAfterAGzipMemberIsIgnored) {
  // Too short for zlib to read a header, so TF ignores it.
  for (const char* tail : {"\n", "\x1f"}) {
    auto r = DecompressString(Compress("abc", true) + tail, "GZIP");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, "abc");
  }
}

TEST(DecodeCompressedTest, UnknownTypeIsInvalidArgument) {
  EXPECT_STATUS(DecodeCompressed(Tensor::FromStrings({"a"}), "BZIP2").status(), Code::kInvalidArgument,
                "Only ZLIB, GZIP or NONE are supported compressions");
  EXPECT_STATUS(DecodeCompressed(Tensor::Scalar<int32_t>(1), "").status(), Code::kInvalidArgument,
                "DecodeCompressed needs a string tensor");
}

}  // namespace
}  // namespace sluice::ops
