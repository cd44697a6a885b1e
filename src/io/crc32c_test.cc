#include "sluice/io/crc32c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sluice::io::crc32c {
namespace {

struct Vector {
  std::string data;
  uint32_t crc;
};

std::string Iscsi48() {
  const unsigned char pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  return std::string(reinterpret_cast<const char*>(pdu), sizeof(pdu));
}

// RFC 3720 §B.4, as TensorFlow's crc32c_test.cc (CRC.StandardResults).
std::vector<Vector> StandardVectors() {
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  for (int i = 31; i >= 0; --i) descending.push_back(static_cast<char>(i));
  const std::string pdu = Iscsi48();
  return {
      {"123456789", 0xE3069283u},
      {std::string(32, '\0'), 0x8A9136AAu},
      {std::string(32, '\xff'), 0x62A8AB43u},
      {ascending, 0x46DD794Eu},
      {descending, 0x113FDB5Cu},
      {pdu, 0xD9963A56u},
      {pdu.substr(0, 41), 0xDD1B19BEu},
      {pdu.substr(1, 44), 0x4930C4B1u},
      {"", 0u},
  };
}

TEST(Crc32cTest, StandardVectorsMatchWithTheChosenPath) {
  for (const Vector& v : StandardVectors()) EXPECT_EQ(Value(v.data), v.crc) << "input size " << v.data.size();
}

TEST(Crc32cTest, StandardVectorsMatchWithThePortablePath) {
  for (const Vector& v : StandardVectors()) {
    EXPECT_EQ(ExtendPortable(0, v.data.data(), v.data.size()), v.crc) << "input size " << v.data.size();
  }
}

TEST(Crc32cTest, StandardVectorsMatchWithTheHardwarePath) {
  uint32_t crc = 0;
  if (!ExtendHardware(0, "", 0, &crc)) GTEST_SKIP() << "no SSE4.2 on this CPU";
  for (const Vector& v : StandardVectors()) {
    ASSERT_TRUE(ExtendHardware(0, v.data.data(), v.data.size(), &crc));
    EXPECT_EQ(crc, v.crc) << "input size " << v.data.size();
  }
}

TEST(Crc32cTest, ExtendConcatenates) {
  EXPECT_EQ(Extend(Value("hello "), "world", 5), Value("hello world"));
  EXPECT_EQ(Value("hello world"), 0xC99465AAu);
}

// Every length around the interleaving thresholds, at every alignment, and
// split at arbitrary points: the hardware path (3 streams + shift tables)
// must agree with the portable one bit for bit.
TEST(Crc32cTest, HardwareMatchesPortableForAllLengthsAlignmentsAndSplits) {
  uint32_t probe = 0;
  if (!ExtendHardware(0, "", 0, &probe)) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937 rng(42);
  std::string buf(3 * 4096 * 3 + 64, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 80; ++n) lengths.push_back(n);
  for (size_t base : {3 * 512, 3 * 4096, 2 * 3 * 4096}) {
    for (size_t d = 0; d < 20; ++d) {
      lengths.push_back(base - 10 + d);
    }
  }
  lengths.push_back(3187);
  lengths.push_back(3 * 4096 * 3 + 17);
  for (size_t align = 0; align < 8; ++align) {
    for (size_t n : lengths) {
      const char* p = buf.data() + align;
      uint32_t hw = 0;
      ASSERT_TRUE(ExtendHardware(0x12345678u, p, n, &hw));
      ASSERT_EQ(hw, ExtendPortable(0x12345678u, p, n)) << "n=" << n << " align=" << align;
    }
  }
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = rng() % (buf.size() - 8);
    const size_t split = n == 0 ? 0 : rng() % n;
    uint32_t first = 0, whole = 0;
    ASSERT_TRUE(ExtendHardware(0, buf.data(), split, &first));
    ASSERT_TRUE(ExtendHardware(first, buf.data() + split, n - split, &whole));
    ASSERT_EQ(whole, ExtendPortable(0, buf.data(), n)) << "n=" << n << " split=" << split;
  }
}

TEST(Crc32cTest, FoldingMatchesPortableForAllLengthsAlignmentsAndSplits) {
  uint32_t probe = 0;
  if (!ExtendFolding(0, "", 0, &probe)) GTEST_SKIP() << "no AVX-512 VPCLMULQDQ on this CPU";
  for (const Vector& v : StandardVectors()) {
    uint32_t crc = 0;
    ASSERT_TRUE(ExtendFolding(0, v.data.data(), v.data.size(), &crc));
    EXPECT_EQ(crc, v.crc);
  }
  std::mt19937 rng(7);
  std::string buf(70000, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  std::vector<size_t> lengths;
  // Every tail length around each loop boundary: 256 (start), 256 + 64k
  // (the 64-byte loop), + 16k (the 16-byte loop), + 0-15 (the CRC32 tail).
  for (size_t n = 240; n < 1100; ++n) lengths.push_back(n);
  for (size_t n : {4095, 4096, 4097, 65536, 65537, 69999}) lengths.push_back(n);
  for (size_t align = 0; align < 64; align += 7) {
    for (size_t n : lengths) {
      if (align + n > buf.size()) continue;
      const char* p = buf.data() + align;
      uint32_t got = 0;
      ASSERT_TRUE(ExtendFolding(0xCAFEF00Du, p, n, &got));
      ASSERT_EQ(got, ExtendPortable(0xCAFEF00Du, p, n)) << "n=" << n << " align=" << align;
    }
  }
  // All zeros and all ones: no key may cancel out.
  for (char fill : {'\0', '\xff'}) {
    const std::string same(5000, fill);
    uint32_t got = 0;
    ASSERT_TRUE(ExtendFolding(0, same.data(), same.size(), &got));
    EXPECT_EQ(got, ExtendPortable(0, same.data(), same.size()));
  }
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = rng() % buf.size();
    const size_t split = n == 0 ? 0 : rng() % n;
    uint32_t first = 0, whole = 0;
    ASSERT_TRUE(ExtendFolding(0, buf.data(), split, &first));
    ASSERT_TRUE(ExtendFolding(first, buf.data() + split, n - split, &whole));
    ASSERT_EQ(whole, ExtendPortable(0, buf.data(), n)) << "n=" << n << " split=" << split;
    EXPECT_EQ(whole, Extend(0, buf.data(), n));
  }
}

TEST(Crc32cTest, MaskMatchesTheSpecAndUnmaskInvertsIt) {
  EXPECT_EQ(Mask(0x8A9136AAu), 0x0FD7FFFAu);
  EXPECT_EQ(Mask(0x62A8AB43u), 0xF909B029u);
  EXPECT_EQ(Mask(0x46DD794Eu), 0x951F7892u);
  EXPECT_EQ(Mask(0x113FDB5Cu), 0x593B0D57u);
  EXPECT_EQ(Mask(0xD9963A56u), 0x17309E04u);
  EXPECT_EQ(Mask(Value("foo")), 0xFEBE8A61u);
  EXPECT_EQ(Mask(Value("bar")), 0xC8E50046u);
  EXPECT_EQ(Mask(Value(std::string("\x03\0\0\0\0\0\0\0", 8))), 0x0E4999B0u);
  EXPECT_EQ(Mask(Value("")), 0xA282EAD8u);
  const uint32_t crc = Value("foo");
  EXPECT_NE(Mask(crc), crc);
  EXPECT_NE(Mask(Mask(crc)), crc);
  EXPECT_EQ(Unmask(Mask(crc)), crc);
  EXPECT_EQ(Unmask(Unmask(Mask(Mask(crc)))), crc);
  for (uint32_t c : {0u, 1u, 0xFFFFFFFFu, 0x80000000u, 0xDEADBEEFu}) EXPECT_EQ(Unmask(Mask(c)), c);
}

}  // namespace
}  // namespace sluice::io::crc32c
