// RecordWriter and RecordReader: the wire format, round trips with every
// compression, byte-compatibility with zlib's compress(), and bad input.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/core/logging.h"
#include "sluice/io/fault_injection_file_system.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_reader.h"
#include "sluice/io/record_writer.h"
#include "sluice/io/tfrecord_options.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;
using testing::WriteFileOrDie;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records,
                  const RecordWriterOptions& options = {}) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path, options));
  for (const std::string& r : records) ASSERT_TRUE(IsOk(writer->Write(r)));
  ASSERT_TRUE(IsOk(writer->Close()));
}

// Reads to the end; returns the records and the final status.
std::vector<std::string> ReadAllRecords(RecordReader* reader, Status* end) {
  std::vector<std::string> out;
  std::string_view record;
  for (;;) {
    Status s = reader->ReadNext(&record);
    if (!s.ok()) {
      *end = s;
      return out;
    }
    out.emplace_back(record);
  }
}

std::vector<std::string> SampleRecords() {
  std::vector<std::string> records = {"", "a", "123", std::string(1000, 'x')};
  for (int i = 0; i < 200; ++i) records.push_back("Record " + std::to_string(i) + std::string(i % 37, '.'));
  std::string big(300000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 251);
  records.push_back(big);
  records.push_back("after the big one");
  return records;
}

TEST(RecordFormatTest, Record123EncodesToTheSpecBytes) {
  const std::string expected = Bytes({0x03, 0, 0, 0, 0, 0, 0, 0, 0xb0, 0x99, 0x49, 0x0e, 0x31, 0x32, 0x33, 0xce,
                                      0x0b, 0xe7, 0x01});
  EXPECT_EQ(EncodeRecord("123"), expected);
  ScratchDir dir;
  WriteRecords(dir.File("r"), {"123"});
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFileToString(nullptr, dir.File("r")));
  EXPECT_EQ(bytes, expected);
}

TEST(RecordFormatTest, EmptyRecordEncodesToTheSpecBytes) {
  EXPECT_EQ(EncodeRecord(""), Bytes({0, 0, 0, 0, 0, 0, 0, 0, 0x29, 0x03, 0x98, 0x07, 0xd8, 0xea, 0x82, 0xa2}));
}

TEST(RecordFormatTest, FooEncodesAsTensorFlowsPythonWriterDid) {
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string foo,
                              ReadFileToString(nullptr, testing::TestdataPath("tfrecord/beam_base64/python_foo.tfrecord")));
  EXPECT_EQ(EncodeRecord("foo"), foo);
  SLUICE_ASSERT_OK_AND_ASSIGN(
      std::string foo_bar,
      ReadFileToString(nullptr, testing::TestdataPath("tfrecord/beam_base64/python_foo_bar.tfrecord")));
  EXPECT_EQ(EncodeRecord("foo") + EncodeRecord("bar"), foo_bar);
}

class RecordRoundTripTest : public ::testing::TestWithParam<CompressionType> {};

TEST_P(RecordRoundTripTest, EveryRecordReadsBackWithItsOffset) {
  ScratchDir dir;
  const std::string path = dir.File("rt");
  RecordWriterOptions wopts;
  wopts.compression_type = GetParam();
  const std::vector<std::string> records = SampleRecords();
  WriteRecords(path, records, wopts);
  RecordReaderOptions ropts;
  ropts.compression_type = GetParam();
  ropts.buffer_size = 4096;  // smaller than the big record
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path, ropts));
  uint64_t expected_offset = 0;
  std::string_view record;
  for (size_t i = 0; i < records.size(); ++i) {
    ASSERT_TRUE(IsOk(reader->ReadNext(&record))) << "record " << i;
    ASSERT_EQ(record, records[i]) << "record " << i;
    EXPECT_EQ(reader->last_record_offset(), expected_offset);
    EXPECT_EQ(reader->last_record_index(), static_cast<int64_t>(i));
    expected_offset += records[i].size() + 16;
  }
  EXPECT_TRUE(HasError(reader->ReadNext(&record), Code::kOutOfRange));
  EXPECT_TRUE(HasError(reader->ReadNext(&record), Code::kOutOfRange));
  // Random access by offset, backwards too, with the copying overload.
  uint64_t offset = 16 + 1 + 16;  // record 2, "123"
  std::string copy;
  ASSERT_TRUE(IsOk(reader->ReadRecord(&offset, &copy)));
  EXPECT_EQ(copy, "123");
  EXPECT_EQ(offset, 16u + 17u + 19u);
  offset = 0;
  ASSERT_TRUE(IsOk(reader->ReadRecord(&offset, &copy)));
  EXPECT_EQ(copy, "");
}

TEST_P(RecordRoundTripTest, ReadsBackAStreamFlushedAfterEveryRecord) {
  ScratchDir dir;
  const std::string path = dir.File("fl");
  RecordWriterOptions wopts;
  wopts.compression_type = GetParam();
  wopts.zlib.flush_mode = Z_FULL_FLUSH;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path, wopts));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(IsOk(writer->Write("flushed " + std::to_string(i))));
    ASSERT_TRUE(IsOk(writer->Flush()));
  }
  ASSERT_TRUE(IsOk(writer->Close()));
  RecordReaderOptions ropts;
  ropts.compression_type = GetParam();
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path, ropts));
  Status end;
  std::vector<std::string> got = ReadAllRecords(reader.get(), &end);
  EXPECT_TRUE(HasError(end, Code::kOutOfRange));
  ASSERT_EQ(got.size(), 50u);
  EXPECT_EQ(got[49], "flushed 49");
}

INSTANTIATE_TEST_SUITE_P(Compression, RecordRoundTripTest,
                         ::testing::Values(CompressionType::kNone, CompressionType::kZlib, CompressionType::kGzip),
                         [](const auto& info) {
                           return info.param == CompressionType::kNone ? std::string("NONE")
                                                                       : std::string(CompressionTypeName(info.param));
                         });

// tf_record_test.py testZlibReadWrite / testWriteZlibRead: the ZLIB file is
// zlib.compress() of the uncompressed file.
TEST(RecordWriterTest, ZlibFileIsByteIdenticalToCompressOfThePlainFile) {
  ScratchDir dir;
  std::vector<std::string> records;
  for (int i = 0; i < 10; ++i) records.push_back("Record " + std::to_string(i) + " of file 0");
  records.push_back(std::string(5000, 'z'));
  WriteRecords(dir.File("plain"), records);
  RecordWriterOptions zopts;
  zopts.compression_type = CompressionType::kZlib;
  WriteRecords(dir.File("zlib"), records, zopts);
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string plain, ReadFileToString(nullptr, dir.File("plain")));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string zlib, ReadFileToString(nullptr, dir.File("zlib")));
  EXPECT_EQ(zlib, testing::ZlibCompress(plain));
  // And a ZLIB file made by compress() reads back (tf_record_test testZLibFlushRecord's input).
  WriteFileOrDie(dir.File("py"), testing::ZlibCompress(plain));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto options, RecordReaderOptions::FromCompressionType("ZLIB"));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(dir.File("py"), options));
  Status end;
  EXPECT_EQ(ReadAllRecords(reader.get(), &end), records);
}

TEST(RecordWriterTest, GzipFileRoundTripsThroughZlibsGunzip) {
  ScratchDir dir;
  const std::vector<std::string> records = {"foo", "bar", std::string(10000, 'q')};
  WriteRecords(dir.File("plain"), records);
  RecordWriterOptions gopts;
  gopts.compression_type = CompressionType::kGzip;
  WriteRecords(dir.File("gz"), records, gopts);
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string plain, ReadFileToString(nullptr, dir.File("plain")));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string gz, ReadFileToString(nullptr, dir.File("gz")));
  EXPECT_EQ(testing::Inflate(gz, 31), plain);
}

// TF: "corrupted record at 0 (Is this even a TFRecord file?)"; sluice also
// names the compression the bytes start with, and keeps the file and offset.
TEST(RecordReaderTest, CompressedFileReadAsPlainAsksIfItIsATFRecordFileAndNamesTheCompression) {
  ScratchDir dir;
  for (CompressionType type : {CompressionType::kGzip, CompressionType::kZlib}) {
    RecordWriterOptions wopts;
    wopts.compression_type = type;
    const std::string path = dir.File(type == CompressionType::kGzip ? "gz" : "zlib");
    WriteRecords(path, {"foo", "bar"}, wopts);
    SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path, {}));
    Status end;
    EXPECT_TRUE(ReadAllRecords(reader.get(), &end).empty());
    const char* name = type == CompressionType::kGzip ? "compression_type \"GZIP\"" : "compression_type \"ZLIB\"";
    EXPECT_TRUE(HasError(end, Code::kDataLoss, "corrupted record at 0 in " + path)) << end;
    EXPECT_TRUE(HasError(end, Code::kDataLoss, "(Is this even a TFRecord file?)")) << end;
    EXPECT_TRUE(HasError(end, Code::kDataLoss, name)) << end;
  }
}

// Past the first record the file is a TFRecord file: no hint.
TEST(RecordReaderTest, CorruptHeaderAfterTheFirstRecordHasNoFileTypeHint) {
  ScratchDir dir;
  WriteRecords(dir.File("r"), {"foo", "bar"});
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFileToString(nullptr, dir.File("r")));
  bytes[kRecordHeaderSize + 3 + kRecordFooterSize + 9] ^= 1;  // the second header's length checksum
  WriteFileOrDie(dir.File("r"), bytes);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(dir.File("r"), {}));
  Status end;
  EXPECT_EQ(ReadAllRecords(reader.get(), &end), std::vector<std::string>{"foo"});
  EXPECT_TRUE(HasError(end, Code::kDataLoss, "length checksum mismatch")) << end;
  EXPECT_EQ(end.message().find("Is this even"), std::string::npos) << end;
}

TEST(RecordWriterTest, ErrorsAreStickyAndCloseTwiceIsFailedPrecondition) {
  ScratchDir dir;
  FaultInjectionFileSystem fs;
  const std::string path = dir.File("w");
  fs.FailWritesAfter(path, 30, errors::ResourceExhausted("disk full"));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path, {}, &fs));
  EXPECT_TRUE(IsOk(writer->Write("123")));  // 19 bytes
  Status first = writer->Write("123");       // crosses 30
  EXPECT_TRUE(HasError(first, Code::kResourceExhausted, "disk full"));
  fs.ClearFaults();
  EXPECT_TRUE(HasError(writer->Write("123"), Code::kResourceExhausted, "disk full"));
  EXPECT_EQ(writer->records_written(), 1);
  EXPECT_TRUE(HasError(writer->Close(), Code::kResourceExhausted));
  EXPECT_TRUE(HasError(writer->Close(), Code::kFailedPrecondition));
  EXPECT_TRUE(HasError(writer->Write("x"), Code::kFailedPrecondition));
}

TEST(TFRecordOptionsTest, ConvertsToReaderAndWriterOptions) {
  TFRecordOptions o;
  o.compression_type = "GZIP";
  o.compression_level = 9;
  o.mem_level = 8;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordWriterOptions w, o.ToWriterOptions());
  EXPECT_EQ(w.compression_type, CompressionType::kGzip);
  EXPECT_EQ(w.zlib.compression_level, 9);
  EXPECT_EQ(w.zlib.mem_level, 8);
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordReaderOptions r, o.ToReaderOptions());
  EXPECT_EQ(r.compression_type, CompressionType::kGzip);
  o.compression_type = "LZ4";
  EXPECT_TRUE(HasError(o.ToWriterOptions(), Code::kInvalidArgument, "LZ4"));
  o.compression_type = "";
  o.window_bits = 3;
  EXPECT_TRUE(HasError(o.ToReaderOptions(), Code::kInvalidArgument, "window_bits"));
}

// ---------------------------------------------------------------------------
// Bad input.

class RecordCorruptionTest : public ::testing::Test {
 protected:
  // python_foo.tfrecord with `delta` added to byte `index`.
  std::string FooWith(size_t index, int delta) {
    std::string foo = EncodeRecord("foo");
    foo[index] = static_cast<char>(foo[index] + delta);
    return foo;
  }
  Status ReadFirst(const std::string& bytes, std::string_view* record = nullptr) {
    WriteFileOrDie(path_, bytes);
    auto reader = RecordReader::Open(path_);
    if (!reader.ok()) return reader.status();
    reader_ = std::move(reader).value();
    std::string_view r;
    return reader_->ReadNext(record != nullptr ? record : &r);
  }
  ScratchDir dir_;
  const std::string path_ = dir_.File("bad.tfrecord");
  std::unique_ptr<RecordReader> reader_;
};

// Beam's test_read_record_invalid_length_mask.
TEST_F(RecordCorruptionTest, CorruptLengthChecksumIsDataLossAtTheRecordOffset) {
  Status s = ReadFirst(FooWith(9, 1));
  EXPECT_TRUE(HasError(s, Code::kDataLoss, "corrupted record at 0"));
  EXPECT_NE(s.message().find(path_), std::string::npos);
  EXPECT_NE(s.message().find("(record 0)"), std::string::npos);
  EXPECT_EQ(s.GetPayload("file"), path_);
  EXPECT_EQ(s.GetPayload("record"), "0");
  EXPECT_EQ(s.GetPayload("offset"), "0");
}

// Beam's test_read_record_invalid_data_mask.
TEST_F(RecordCorruptionTest, CorruptDataChecksumIsDataLossTwelveBytesIn) {
  Status s = ReadFirst(FooWith(16, 1));
  EXPECT_TRUE(HasError(s, Code::kDataLoss, "corrupted record at 12"));
  EXPECT_EQ(s.GetPayload("offset"), "0");
}

TEST_F(RecordCorruptionTest, SecondRecordCorruptionNamesItsIndexAndOffset) {
  std::string bytes = EncodeRecord("foo") + EncodeRecord("bar");
  bytes[19 + 13] ^= 1;  // a data byte of "bar"
  WriteFileOrDie(path_, bytes);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path_));
  std::string_view r;
  ASSERT_TRUE(IsOk(reader->ReadNext(&r)));
  Status s = reader->ReadNext(&r);
  EXPECT_TRUE(HasError(s, Code::kDataLoss, "corrupted record at 31 in " + path_ + " (record 1)"));
  EXPECT_EQ(s.GetPayload("record"), "1");
  EXPECT_EQ(s.GetPayload("offset"), "19");
  // The reader stays where it was: the same error again (as TensorFlow)...
  EXPECT_TRUE(HasError(reader->ReadNext(&r), Code::kDataLoss, "corrupted record at 31"));
  // ...and reading at an earlier offset works.
  uint64_t offset = 0;
  ASSERT_TRUE(IsOk(reader->ReadRecord(&offset, &r)));
  EXPECT_EQ(r, "foo");
}

TEST_F(RecordCorruptionTest, TruncatedDataIsDataLossTruncatedRecord) {
  const std::string foo_bar = EncodeRecord("foo") + EncodeRecord("bar");
  for (size_t cut = 19 + 12; cut < foo_bar.size(); ++cut) {
    WriteFileOrDie(path_, foo_bar.substr(0, cut));
    SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path_));
    std::string_view r;
    ASSERT_TRUE(IsOk(reader->ReadNext(&r)));
    Status s = reader->ReadNext(&r);
    EXPECT_TRUE(HasError(s, Code::kDataLoss, "truncated record at 19")) << "cut " << cut;
    EXPECT_EQ(s.GetPayload("record"), "1");
  }
}

TEST_F(RecordCorruptionTest, PartialHeaderAtTheEndIsACleanEnd) {
  const std::string foo_bar = EncodeRecord("foo") + EncodeRecord("bar");
  for (size_t cut = 19; cut < 19 + 12; ++cut) {
    WriteFileOrDie(path_, foo_bar.substr(0, cut));
    SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path_));
    Status end;
    EXPECT_EQ(ReadAllRecords(reader.get(), &end), std::vector<std::string>{"foo"}) << "cut " << cut;
    EXPECT_TRUE(HasError(end, Code::kOutOfRange)) << "cut " << cut;
  }
}

TEST_F(RecordCorruptionTest, PartialHeaderWarningGoesToTheLogSinkOncePerReader) {
  std::vector<std::string> warnings;
  SetLogSink([&warnings](LogSeverity severity, std::string_view message) {
    if (severity == LogSeverity::kWarning) warnings.emplace_back(message);
  });
  WriteFileOrDie(path_, EncodeRecord("foo") + "12345");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path_));
  Status end;
  EXPECT_EQ(ReadAllRecords(reader.get(), &end), std::vector<std::string>{"foo"});
  std::string_view again;
  EXPECT_TRUE(HasError(reader->ReadNext(&again), Code::kOutOfRange));
  SetLogSink(nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path_), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("5 bytes after the last record at offset 19"), std::string::npos) << warnings[0];
}

TEST_F(RecordCorruptionTest, HugeLengthWithValidChecksumIsTruncatedWithoutAllocatingIt) {
  char header[kRecordHeaderSize];
  EncodeRecordHeader(header, uint64_t{1} << 40);
  Status s = ReadFirst(std::string(header, sizeof(header)) + "tiny");
  EXPECT_TRUE(HasError(s, Code::kDataLoss, "truncated record at 0"));
  EncodeRecordHeader(header, ~uint64_t{0});
  EXPECT_TRUE(HasError(ReadFirst(std::string(header, sizeof(header))), Code::kDataLoss, "record size too large"));
}

TEST_F(RecordCorruptionTest, TruncatedGzipStreamServesWholeRecordsThenIsDataLoss) {
  std::vector<std::string> records;
  for (int i = 0; i < 2000; ++i) records.push_back("record number " + std::to_string(i * 7919));
  std::string plain;
  for (const auto& r : records) plain += EncodeRecord(r);
  const std::string gz = testing::Gzip(plain);
  WriteFileOrDie(path_, gz.substr(0, gz.size() * 2 / 3));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto options, RecordReaderOptions::FromCompressionType("GZIP"));
  options.ignore_errors = true;  // cannot skip a broken stream: still an error
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path_, options));
  Status end;
  std::vector<std::string> got = ReadAllRecords(reader.get(), &end);
  EXPECT_TRUE(HasError(end, Code::kDataLoss, "truncated compressed stream in " + path_));
  EXPECT_EQ(end.GetPayload("file"), path_);
  ASSERT_TRUE(end.GetPayload("offset").has_value());
  ASSERT_GT(got.size(), 100u);
  ASSERT_LT(got.size(), records.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], records[i]);
}

TEST_F(RecordCorruptionTest, ReadErrorsOfTheFileNameItAndCanBeRetried) {
  const std::string bytes = EncodeRecord("foo") + EncodeRecord("bar");
  WriteFileOrDie(path_, bytes);
  FaultInjectionFileSystem fs;
  fs.FailReadsAt(path_, 0, errors::Unavailable("transient"), 1);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path_, {}, &fs));
  std::string_view r;
  Status s = reader->ReadNext(&r);
  EXPECT_TRUE(HasError(s, Code::kUnavailable, "transient"));
  EXPECT_EQ(s.GetPayload("offset"), "0");
  ASSERT_TRUE(IsOk(reader->ReadNext(&r)));
  EXPECT_EQ(r, "foo");
}

TEST_F(RecordCorruptionTest, IgnoreErrorsSkipsBadRecordsAndCountsThem) {
  std::vector<std::string> records;
  for (int i = 0; i < 10; ++i) records.push_back("record-" + std::to_string(i) + std::string(i * 3, '#'));
  std::vector<size_t> offsets;
  std::string bytes;
  for (const auto& r : records) {
    offsets.push_back(bytes.size());
    bytes += EncodeRecord(r);
  }
  bytes[offsets[3] + 14] ^= 0x10;      // data of record 3
  bytes[offsets[6] + 2] ^= 0x01;       // length of record 6
  bytes.resize(offsets[9] + 12 + 5);   // record 9 truncated
  WriteFileOrDie(path_, bytes);
  CountingReporter reporter;
  RecordReaderOptions options;
  options.ignore_errors = true;
  options.reporter = &reporter;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path_, options));
  Status end;
  std::vector<std::string> got = ReadAllRecords(reader.get(), &end);
  EXPECT_TRUE(HasError(end, Code::kOutOfRange));
  EXPECT_EQ(got, (std::vector<std::string>{records[0], records[1], records[2], records[4], records[5], records[7],
                                           records[8]}));
  EXPECT_EQ(reporter.corruptions(), 3);
  EXPECT_EQ(reporter.records_dropped(), 2);  // record 3 and the truncated 9; 6's count is unknown
  const uint64_t expected_bytes = (offsets[4] - offsets[3]) + (offsets[7] - offsets[6]) + (12 + 5);
  EXPECT_EQ(reporter.bytes_dropped(), expected_bytes);
  EXPECT_EQ(reader->bytes_skipped(), expected_bytes);
  EXPECT_EQ(reader->records_skipped(), 2);
  EXPECT_TRUE(HasError(reporter.last_error(), Code::kDataLoss, "truncated record"));
}

TEST_F(RecordCorruptionTest, IgnoreErrorsResyncsPastGarbage) {
  const std::string bytes = EncodeRecord("first") + std::string(100, '\x5a') + EncodeRecord("second");
  WriteFileOrDie(path_, bytes);
  RecordReaderOptions options;
  options.ignore_errors = true;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path_, options));
  Status end;
  EXPECT_EQ(ReadAllRecords(reader.get(), &end), (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(reader->bytes_skipped(), 100u);
  EXPECT_EQ(reader->last_record_offset(), 21u + 100u);
  EXPECT_EQ(reader->last_record_index(), -1);  // unknown after a resync
}

TEST(RecordReaderTest, ReadsAFileWithFewLargeReadsNotOnePerRecord) {
  const std::string path = testing::TestdataPath("tfrecord/tfx_mnist/mnist.tfrecord");
  FaultInjectionFileSystem fs;
  RecordReaderOptions options;
  options.buffer_size = 1 << 20;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path, options, &fs));
  Status end;
  std::vector<std::string> got = ReadAllRecords(reader.get(), &end);
  EXPECT_EQ(got.size(), 1000u);
  EXPECT_LE(fs.read_calls(path), 6);  // 3.2 MB in 1 MiB reads, plus the end
}

}  // namespace
}  // namespace sluice::io
