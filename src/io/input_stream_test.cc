#include "sluice/io/input_stream.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

#include "io/buffered_input.h"
#include "io/io_test_util.h"
#include "sluice/io/fault_injection_file_system.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;
using testing::WriteFileOrDie;

std::string SomeText(size_t n, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  static const char* kWords[] = {"alpha ", "beta ", "gamma ", "delta\n", "epsilon ", "0123456789 "};
  std::string out;
  while (out.size() < n) out += kWords[rng() % 6];
  out.resize(n);
  return out;
}

Result<std::unique_ptr<InputStream>> OpenStream(const std::string& path, CompressionType type,
                                                FileSystem* fs = nullptr, ZlibOptions options = {}) {
  SLUICE_ASSIGN_OR_RETURN(auto file, OrDefault(fs)->NewRandomAccessFile(path));
  return NewInputStream(std::move(file), type, options);
}

std::string ReadAll(InputStream* s, size_t chunk) {
  std::string out;
  std::string buf(chunk, '\0');
  for (;;) {
    auto got = s->Read(chunk, buf.data());
    EXPECT_TRUE(IsOk(got));
    if (!got.ok() || *got == 0) break;
    out.append(buf.data(), *got);
  }
  return out;
}

TEST(CompressionTypeTest, ParsesTensorFlowNames) {
  EXPECT_EQ(*ParseCompressionType(""), CompressionType::kNone);
  EXPECT_EQ(*ParseCompressionType("NONE"), CompressionType::kNone);
  EXPECT_EQ(*ParseCompressionType("ZLIB"), CompressionType::kZlib);
  EXPECT_EQ(*ParseCompressionType("GZIP"), CompressionType::kGzip);
  EXPECT_TRUE(HasError(ParseCompressionType("BZIP2"), Code::kInvalidArgument, "BZIP2"));
  EXPECT_EQ(CompressionTypeName(CompressionType::kGzip), "GZIP");
}

class ZlibInputStreamTest : public ::testing::TestWithParam<CompressionType> {
 protected:
  std::string Compress(std::string_view data) {
    return GetParam() == CompressionType::kZlib ? testing::ZlibCompress(data) : testing::Gzip(data);
  }
  ScratchDir dir_;
};

TEST_P(ZlibInputStreamTest, DecompressesTheWholeStreamInAnyReadSize) {
  const std::string text = SomeText(300000);
  WriteFileOrDie(dir_.File("z"), Compress(text));
  for (size_t chunk : {1u, 7u, 4096u, 1u << 20}) {
    ZlibOptions options;
    options.input_buffer_size = chunk < 1024 ? 1024 : 65536;
    SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(dir_.File("z"), GetParam(), nullptr, options));
    if (chunk == 1) {  // byte at a time over a prefix only, to stay fast
      std::string prefix;
      char c;
      for (int i = 0; i < 5000; ++i) {
        ASSERT_EQ(*s->Read(1, &c), 1u);
        prefix.push_back(c);
      }
      EXPECT_EQ(prefix, text.substr(0, 5000));
      continue;
    }
    EXPECT_EQ(ReadAll(s.get(), chunk), text) << "chunk " << chunk;
    EXPECT_EQ(s->Tell(), text.size());
  }
}

TEST_P(ZlibInputStreamTest, SeeksForwardAndBackward) {
  const std::string text = SomeText(100000, 2);
  WriteFileOrDie(dir_.File("z"), Compress(text));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(dir_.File("z"), GetParam()));
  char buf[10];
  for (uint64_t off : {50000u, 10u, 99990u, 0u, 70000u}) {
    ASSERT_TRUE(IsOk(s->Seek(off)));
    EXPECT_EQ(s->Tell(), off);
    SLUICE_ASSERT_OK_AND_ASSIGN(size_t got, s->Read(10, buf));
    EXPECT_EQ(std::string(buf, got), text.substr(off, 10));
  }
  SLUICE_ASSERT_OK_AND_ASSIGN(uint64_t skipped, s->Skip(1000000));
  EXPECT_EQ(skipped, text.size() - 70010);
}

TEST_P(ZlibInputStreamTest, TruncatedStreamServesItsBytesThenIsDataLossNamingFileAndOffset) {
  const std::string text = SomeText(200000, 3);
  const std::string z = Compress(text);
  const std::string path = dir_.File("z");
  WriteFileOrDie(path, z.substr(0, z.size() / 2));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(path, GetParam()));
  std::string got_bytes;
  std::string buf(8192, '\0');
  Status error;
  for (;;) {
    auto got = s->Read(buf.size(), buf.data());
    if (!got.ok()) {
      error = got.status();
      break;
    }
    ASSERT_GT(*got, 0u) << "a truncated stream must not end cleanly";
    got_bytes.append(buf.data(), *got);
  }
  EXPECT_TRUE(HasError(error, Code::kDataLoss, "truncated compressed stream in " + path));
  EXPECT_GT(got_bytes.size(), 0u);
  EXPECT_EQ(got_bytes, text.substr(0, got_bytes.size()));
  EXPECT_EQ(error.GetPayload("file"), path);
  EXPECT_EQ(error.GetPayload("offset"), std::to_string(got_bytes.size()));
  EXPECT_NE(error.message().find("at uncompressed offset " + std::to_string(got_bytes.size())), std::string::npos);
  // The error repeats: the input really ends there.
  EXPECT_TRUE(HasError(s->Read(buf.size(), buf.data()), Code::kDataLoss, "truncated"));
}

TEST_P(ZlibInputStreamTest, CorruptDataIsDataLoss) {
  std::string z = Compress(SomeText(50000, 4));
  for (size_t i = z.size() / 3; i < z.size() / 3 + 16; ++i) z[i] = static_cast<char>(z[i] ^ 0x55);
  WriteFileOrDie(dir_.File("z"), z);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(dir_.File("z"), GetParam()));
  std::string buf(100000, '\0');
  Status error;
  for (int i = 0; i < 10 && error.ok(); ++i) {
    auto got = s->Read(buf.size(), buf.data());
    error = got.status();
    if (got.ok() && *got == 0) break;
  }
  EXPECT_TRUE(HasError(error, Code::kDataLoss, dir_.File("z")));
}

TEST_P(ZlibInputStreamTest, EmptyFileIsAnEmptyStream) {
  WriteFileOrDie(dir_.File("e"), "");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(dir_.File("e"), GetParam()));
  char c;
  SLUICE_ASSERT_OK_AND_ASSIGN(size_t got, s->Read(1, &c));
  EXPECT_EQ(got, 0u);
}

// TensorFlow's tf_record_test testZLibFlushRecord: a stream with a full
// flush after every byte, then two extra full flushes, must read back.
TEST_P(ZlibInputStreamTest, CopesWithAFullFlushAfterEveryByte) {
  const std::string text = SomeText(3000, 5);
  z_stream z{};
  ASSERT_EQ(deflateInit2(&z, 9, Z_DEFLATED, GetParam() == CompressionType::kGzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out;
  char buf[256];
  auto run = [&](const char* in, size_t n, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
    z.avail_in = static_cast<uInt>(n);
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof(buf);
      deflate(&z, flush);
      out.append(buf, sizeof(buf) - z.avail_out);
    } while (z.avail_out == 0);
  };
  for (char c : text) run(&c, 1, Z_FULL_FLUSH);
  run(nullptr, 0, Z_FULL_FLUSH);
  run(nullptr, 0, Z_FULL_FLUSH);
  run(nullptr, 0, Z_FINISH);
  deflateEnd(&z);
  WriteFileOrDie(dir_.File("f"), out);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(dir_.File("f"), GetParam()));
  EXPECT_EQ(ReadAll(s.get(), 1000), text);
}

TEST_P(ZlibInputStreamTest, ReadErrorOfTheFileIsReturnedAndRetryable) {
  const std::string text = SomeText(100000, 6);
  const std::string z = Compress(text);
  const std::string path = dir_.File("z");
  WriteFileOrDie(path, z);
  FaultInjectionFileSystem fs;
  ZlibOptions options;
  options.input_buffer_size = 4096;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(path, GetParam(), &fs, options));
  fs.FailReadsAt(path, z.size() / 2, errors::Unavailable("flaky"), 1);
  std::string got_bytes, buf(4096, '\0');
  int errors_seen = 0;
  for (;;) {
    auto got = s->Read(buf.size(), buf.data());
    if (!got.ok()) {
      EXPECT_TRUE(HasError(got, Code::kUnavailable, "flaky"));
      ++errors_seen;
      continue;
    }
    if (*got == 0) break;
    got_bytes.append(buf.data(), *got);
  }
  EXPECT_EQ(errors_seen, 1);
  EXPECT_EQ(got_bytes, text);
}

INSTANTIATE_TEST_SUITE_P(Containers, ZlibInputStreamTest,
                         ::testing::Values(CompressionType::kZlib, CompressionType::kGzip),
                         [](const auto& info) { return std::string(CompressionTypeName(info.param)); });

TEST(GzipInputStreamTest, ReadsConcatenatedMembers) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("g"), testing::Gzip("first member|") + testing::Gzip("second member"));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(dir.File("g"), CompressionType::kGzip));
  EXPECT_EQ(ReadAll(s.get(), 5), "first member|second member");
}

TEST(ZlibInputStreamOptionsTest, BadWindowBitsIsInvalidArgument) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("x"), "");
  ZlibOptions options;
  options.window_bits = 20;
  EXPECT_TRUE(HasError(OpenStream(dir.File("x"), CompressionType::kZlib, nullptr, options), Code::kInvalidArgument,
                       "window_bits"));
}

Result<std::string> CompressWithOutputStream(const std::string& path, std::string_view data, CompressionType type,
                                             ZlibOptions options, size_t piece) {
  SLUICE_ASSIGN_OR_RETURN(auto file, DefaultFileSystem()->NewWritableFile(path));
  SLUICE_ASSIGN_OR_RETURN(auto z, NewZlibOutputStream(std::move(file), type, options));
  for (size_t i = 0; i < data.size(); i += piece) SLUICE_RETURN_IF_ERROR(z->Append(data.substr(i, piece)));
  SLUICE_RETURN_IF_ERROR(z->Close());
  return ReadFileToString(nullptr, path);
}

TEST(ZlibOutputStreamTest, DefaultZlibOutputEqualsCompressForSmallInputs) {
  ScratchDir dir;
  const std::string text = SomeText(12000, 7);
  for (size_t piece : {1u, 19u, 12000u}) {
    SLUICE_ASSERT_OK_AND_ASSIGN(std::string z,
                                CompressWithOutputStream(dir.File("z"), text, CompressionType::kZlib, {}, piece));
    EXPECT_EQ(z, testing::ZlibCompress(text)) << "piece " << piece;
  }
}

TEST(ZlibOutputStreamTest, MemLevel8OutputEqualsCompressForLargeInputsAndSmallBuffers) {
  ScratchDir dir;
  const std::string text = SomeText(1 << 20, 8);
  ZlibOptions options;
  options.mem_level = 8;
  options.input_buffer_size = 1000;
  options.output_buffer_size = 777;
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string z,
                              CompressWithOutputStream(dir.File("z"), text, CompressionType::kZlib, options, 4099));
  EXPECT_EQ(z, testing::ZlibCompress(text));
}

TEST(ZlibOutputStreamTest, GzipOutputRoundTrips) {
  ScratchDir dir;
  const std::string text = SomeText(100000, 9);
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string z,
                              CompressWithOutputStream(dir.File("g"), text, CompressionType::kGzip, {}, 333));
  ASSERT_GE(z.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(z[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(z[1]), 0x8b);
  EXPECT_EQ(testing::Inflate(z, 31), text);
}

TEST(ZlibOutputStreamTest, FullFlushMakesWrittenBytesReadableBeforeClose) {
  ScratchDir dir;
  const std::string path = dir.File("f");
  ZlibOptions options;
  options.flush_mode = Z_FULL_FLUSH;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, DefaultFileSystem()->NewWritableFile(path));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto z, NewZlibOutputStream(std::move(file), CompressionType::kZlib, options));
  ASSERT_TRUE(IsOk(z->Append("first part;")));
  ASSERT_TRUE(IsOk(z->Flush()));
  // The stream is unfinished, but what was flushed decompresses.
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(path, CompressionType::kZlib));
  char buf[64];
  SLUICE_ASSERT_OK_AND_ASSIGN(size_t got, s->Read(11, buf));
  EXPECT_EQ(std::string(buf, got), "first part;");
  ASSERT_TRUE(IsOk(z->Append("second")));
  ASSERT_TRUE(IsOk(z->Close()));
  EXPECT_TRUE(HasError(z->Append("x"), Code::kFailedPrecondition));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string all, ReadFileToString(nullptr, path));
  EXPECT_EQ(testing::Inflate(all, 15), "first part;second");
}

TEST(ZlibOutputStreamTest, RejectsNoneAndBadOptions) {
  ScratchDir dir;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, DefaultFileSystem()->NewWritableFile(dir.File("x")));
  EXPECT_TRUE(HasError(NewZlibOutputStream(std::move(file), CompressionType::kNone), Code::kInvalidArgument));
  SLUICE_ASSERT_OK_AND_ASSIGN(file, DefaultFileSystem()->NewWritableFile(dir.File("y")));
  ZlibOptions options;
  options.compression_level = 11;
  EXPECT_TRUE(HasError(NewZlibOutputStream(std::move(file), CompressionType::kZlib, options), Code::kInvalidArgument,
                       "compression_level"));
}

TEST(BufferedInputTest, EnsureGrowsForLargeRequestsAndServesViews) {
  ScratchDir dir;
  const std::string text = SomeText(100000, 10);
  WriteFileOrDie(dir.File("b"), text);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto s, OpenStream(dir.File("b"), CompressionType::kNone));
  BufferedInput in(std::move(s), 1024);
  SLUICE_ASSERT_OK_AND_ASSIGN(size_t got, in.Ensure(10));
  EXPECT_EQ(got, 10u);
  EXPECT_EQ(std::string(in.data(), 10), text.substr(0, 10));
  in.Consume(5);
  SLUICE_ASSERT_OK_AND_ASSIGN(got, in.Ensure(50000));
  EXPECT_EQ(got, 50000u);
  EXPECT_EQ(std::string(in.data(), 50000), text.substr(5, 50000));
  ASSERT_TRUE(IsOk(in.Seek(99990)));
  SLUICE_ASSERT_OK_AND_ASSIGN(got, in.Ensure(100));
  EXPECT_EQ(got, 10u);
  EXPECT_EQ(in.Tell(), 99990u);
  ASSERT_TRUE(IsOk(in.Seek(3)));
  SLUICE_ASSERT_OK_AND_ASSIGN(uint64_t skipped, in.Skip(7));
  EXPECT_EQ(skipped, 7u);
  SLUICE_ASSERT_OK_AND_ASSIGN(got, in.Ensure(4));
  EXPECT_EQ(std::string(in.data(), 4), text.substr(10, 4));
}

}  // namespace
}  // namespace sluice::io
