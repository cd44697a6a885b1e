#include "sluice/io/record_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/io/record_iterator.h"
#include "sluice/io/record_writer.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;
using testing::WriteFileOrDie;

const std::vector<std::string>& Records() {
  static const std::vector<std::string> records = {"first", "second record", "third"};
  return records;
}

uint64_t FrameSize(const std::string& record) { return 16 + record.size(); }

class RecordScanTest : public ::testing::Test {
 protected:
  // Writes Records() to `name` and returns its path.
  std::string Write(const std::string& name, CompressionType compression = CompressionType::kNone) {
    const std::string path = dir_.File(name);
    RecordWriterOptions options;
    options.compression_type = compression;
    auto writer = RecordWriter::Open(path, options);
    EXPECT_TRUE(IsOk(writer.status()));
    for (const std::string& r : Records()) EXPECT_TRUE(IsOk((*writer)->Write(r)));
    EXPECT_TRUE(IsOk((*writer)->Close()));
    return path;
  }

  // Rewrites `path` with byte `pos` flipped.
  static void Flip(const std::string& path, size_t pos) {
    auto bytes = ReadFileToString(nullptr, path);
    ASSERT_TRUE(IsOk(bytes.status()));
    (*bytes)[pos] = static_cast<char>((*bytes)[pos] ^ 0x40);
    WriteFileOrDie(path, *bytes);
  }

  ScratchDir dir_;
};

TEST_F(RecordScanTest, CleanFileCountsAndCopiesEveryRecord) {
  const std::string in = Write("in");
  const std::string out_path = dir_.File("out");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto out, RecordWriter::Open(out_path, {}));
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordScanResult r, ScanRecords(in, {}, out.get()));
  ASSERT_TRUE(IsOk(out->Close()));
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.records, 3);
  EXPECT_EQ(r.payload_bytes, 5u + 13u + 5u);
  EXPECT_EQ(r.stream_bytes, FrameSize("first") + FrameSize("second record") + FrameSize("third"));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto a, ReadFileToString(nullptr, in));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto b, ReadFileToString(nullptr, out_path));
  EXPECT_EQ(a, b);
}

TEST_F(RecordScanTest, BadDataChecksumIsListedWithIndexAndOffsetAndTheScanGoesOn) {
  const std::string in = Write("in");
  const uint64_t second = FrameSize(Records()[0]);
  Flip(in, second + 12 + 2);  // a payload byte of record 1
  const std::string out_path = dir_.File("salvaged");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto out, RecordWriter::Open(out_path, {}));
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordScanResult r, ScanRecords(in, {}, out.get()));
  ASSERT_TRUE(IsOk(out->Close()));
  EXPECT_FALSE(r.clean());
  EXPECT_TRUE(IsOk(r.stopped));
  EXPECT_EQ(r.records, 2);
  ASSERT_EQ(r.corruptions.size(), 1u);
  const RecordCorruption& c = r.corruptions[0];
  EXPECT_EQ(c.offset, second);
  EXPECT_EQ(c.record, 1);
  EXPECT_EQ(c.records_before, 1);
  EXPECT_EQ(c.bytes, FrameSize(Records()[1]));
  EXPECT_EQ(c.records, 1);
  EXPECT_TRUE(HasError(c.reason, Code::kDataLoss, "data checksum"));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto it, TFRecordIterator::Open(out_path));
  std::vector<std::string> salvaged;
  for (;;) {
    SLUICE_ASSERT_OK_AND_ASSIGN(auto next, it->Next());
    if (!next.has_value()) break;
    salvaged.push_back(*next);
  }
  EXPECT_EQ(salvaged, (std::vector<std::string>{"first", "third"}));
}

TEST_F(RecordScanTest, StrictScanStopsAtTheFirstCorruption) {
  const std::string in = Write("in");
  Flip(in, FrameSize(Records()[0]) + 12 + 2);
  RecordScanOptions options;
  options.keep_going = false;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordScanResult r, ScanRecords(in, options));
  EXPECT_EQ(r.records, 1);
  EXPECT_TRUE(HasError(r.stopped, Code::kDataLoss, in));
  ASSERT_EQ(r.corruptions.size(), 1u);
  EXPECT_EQ(r.corruptions[0].record, 1);
  EXPECT_EQ(r.corruptions[0].offset, FrameSize(Records()[0]));
  EXPECT_EQ(r.stream_bytes, FrameSize(Records()[0]));
}

TEST_F(RecordScanTest, CorruptHeaderIsSkippedToTheNextValidRecord) {
  const std::string in = Write("in");
  const uint64_t second = FrameSize(Records()[0]);
  Flip(in, second + 1);  // the length of record 1
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordScanResult r, ScanRecords(in, {}));
  EXPECT_EQ(r.records, 2);
  ASSERT_EQ(r.corruptions.size(), 1u);
  EXPECT_EQ(r.corruptions[0].offset, second);
  EXPECT_EQ(r.corruptions[0].record, 1);
  EXPECT_EQ(r.corruptions[0].bytes, FrameSize(Records()[1]));
  EXPECT_EQ(r.corruptions[0].records, 0);  // the header hid it
  EXPECT_TRUE(HasError(r.corruptions[0].reason, Code::kDataLoss, "length checksum"));
}

TEST_F(RecordScanTest, TruncatedGzipStreamStopsTheScanWithDataLoss) {
  const std::string in = Write("in.gz", CompressionType::kGzip);
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFileToString(nullptr, in));
  WriteFileOrDie(in, bytes.substr(0, bytes.size() - 10));
  RecordScanOptions options;
  options.reader.compression_type = CompressionType::kGzip;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordScanResult r, ScanRecords(in, options));
  EXPECT_FALSE(r.clean());
  EXPECT_TRUE(HasError(r.stopped, Code::kDataLoss));
  EXPECT_EQ(r.corruptions.size(), 1u);
}

TEST_F(RecordScanTest, MissingFileIsNotFound) {
  EXPECT_TRUE(HasError(ScanRecords(dir_.File("absent"), {}).status(), Code::kNotFound));
}

}  // namespace
}  // namespace sluice::io
