// Readers and writers under file-system faults (FaultInjectionFileSystem):
// read errors at every offset, files that vanish or shrink while read,
// permission denied on open, and a disk that fills up while a TFRecord file
// is written. Each fault must become an error naming the file (message and
// "file" payload) and, for record readers, the record's offset ("offset"
// payload); nothing already read may be lost, repeated or changed, and a
// reader retried after the fault heals goes on where it stopped.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/core/tensor.h"
#include "sluice/io/fault_injection_file_system.h"
#include "sluice/io/readers.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_iterator.h"
#include "sluice/io/record_reader.h"
#include "sluice/io/record_writer.h"
#include "sluice/queue/queue.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;
using testing::WriteFileOrDie;
using Pair = std::pair<std::string, std::string>;

constexpr CompressionType kAllCompressions[] = {CompressionType::kNone, CompressionType::kZlib,
                                                CompressionType::kGzip};

std::string Label(CompressionType c) {
  return c == CompressionType::kNone ? std::string("NONE") : std::string(CompressionTypeName(c));
}

// Pseudo-random bytes: they do not compress, so a compressed file is about as
// long as the plain one and a fault offset lands inside any record.
std::string RandomBytes(size_t n, std::mt19937* rng) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>((*rng)() & 0xFF);
  return s;
}

// `n` records of 0..max_size random bytes (the first one empty).
std::vector<std::string> MakeRecords(int n, size_t max_size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> records = {""};
  while (static_cast<int>(records.size()) < n) records.push_back(RandomBytes(rng() % (max_size + 1), &rng));
  return records;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records, CompressionType c) {
  RecordWriterOptions options;
  options.compression_type = c;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path, options));
  for (const std::string& r : records) ASSERT_TRUE(IsOk(writer->Write(r)));
  ASSERT_TRUE(IsOk(writer->Close()));
}

uint64_t FileSize(const std::string& path) {
  Result<uint64_t> size = DefaultFileSystem()->GetFileSize(path);
  EXPECT_TRUE(IsOk(size));
  return size.ok() ? *size : 0;
}

// Small buffers, so that a file is read in many calls and a fault can land
// between records, inside one, or inside a compressed block.
RecordReaderOptions SmallBuffers(CompressionType c) {
  RecordReaderOptions options;
  options.compression_type = c;
  options.buffer_size = 64;
  options.zlib.input_buffer_size = 1024;
  return options;
}

// Offset in the uncompressed stream of each record, and of the end.
std::vector<uint64_t> RecordOffsets(const std::vector<std::string>& records) {
  std::vector<uint64_t> offsets = {0};
  for (const std::string& r : records) offsets.push_back(offsets.back() + kRecordHeaderSize + r.size() + kRecordFooterSize);
  return offsets;
}

// The error of reading record `index` of `path` from `offset`: names the file
// in its message and payload, and the record in its payloads.
::testing::AssertionResult NamesRecord(const Status& s, const std::string& path, int64_t index, uint64_t offset) {
  if (s.message().find(path) == std::string::npos) {
    return ::testing::AssertionFailure() << "message does not name " << path << ": " << s;
  }
  if (s.GetPayload("file") != path) return ::testing::AssertionFailure() << "no file payload: " << s;
  if (s.GetPayload("offset") != std::to_string(offset)) {
    return ::testing::AssertionFailure() << "offset payload is not " << offset << ": " << s;
  }
  if (index >= 0 && s.GetPayload("record") != std::to_string(index)) {
    return ::testing::AssertionFailure() << "record payload is not " << index << ": " << s;
  }
  return ::testing::AssertionSuccess();
}

// Reads on with `it` until the end or an error, appending to `got`. Returns
// OK at the end, else the error.
Status ReadOn(TFRecordIterator* it, std::vector<std::string>* got) {
  for (;;) {
    std::string_view record;
    bool end = false;
    SLUICE_RETURN_IF_ERROR(it->GetNext(&record, &end));
    if (end) return Status::OK();
    got->emplace_back(record);
  }
}

// `got` is a prefix of `expected`.
::testing::AssertionResult IsPrefix(const std::vector<std::string>& got, const std::vector<std::string>& expected) {
  if (got.size() > expected.size()) return ::testing::AssertionFailure() << got.size() << " records, too many";
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != expected[i]) return ::testing::AssertionFailure() << "record " << i << " differs";
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------
// The record iterator (and so RecordReader) under read faults.

class RecordIteratorFaultTest : public ::testing::TestWithParam<CompressionType> {
 protected:
  void SetUp() override {
    records_ = MakeRecords(24, 90, 17);
    WriteRecords(path_, records_, GetParam());
    size_ = FileSize(path_);
  }

  Result<std::unique_ptr<TFRecordIterator>> Open() { return TFRecordIterator::Open(path_, SmallBuffers(GetParam()), &fs_); }

  ScratchDir dir_;
  const std::string path_ = dir_.File("faulty.tfrecord");
  FaultInjectionFileSystem fs_;
  std::vector<std::string> records_;
  uint64_t size_ = 0;
};

TEST_P(RecordIteratorFaultTest, ReadErrorAtEveryOffsetIsRepeatedThenHealsWithoutLosingARecord) {
  const std::vector<uint64_t> offsets = RecordOffsets(records_);
  for (uint64_t fault = 0; fault < size_; ++fault) {
    SCOPED_TRACE("fault at file offset " + std::to_string(fault));
    fs_.ClearFaults();
    SLUICE_ASSERT_OK_AND_ASSIGN(auto it, Open());
    fs_.FailReadsAt(path_, fault, errors::Unknown("Input/output error"));
    std::vector<std::string> got;
    const Status first = ReadOn(it.get(), &got);
    ASSERT_TRUE(HasError(first, Code::kUnknown, "Input/output error"));
    ASSERT_TRUE(IsPrefix(got, records_));
    const int64_t index = static_cast<int64_t>(got.size());
    ASSERT_TRUE(NamesRecord(first, path_, index, offsets[got.size()]));
    // The reader stays on the record that failed: the same error again.
    const Status again = ReadOn(it.get(), &got);
    ASSERT_EQ(again.code(), Code::kUnknown) << again;
    ASSERT_EQ(got.size(), static_cast<size_t>(index));
    ASSERT_EQ(again.GetPayload("offset"), first.GetPayload("offset"));
    fs_.ClearFaults();
    ASSERT_TRUE(IsOk(ReadOn(it.get(), &got)));
    ASSERT_EQ(got, records_);
  }
}

TEST_P(RecordIteratorFaultTest, FileVanishingAfterEachRecordIsNotFoundNamingItAndKeepsWhatWasRead) {
  const std::vector<uint64_t> offsets = RecordOffsets(records_);
  for (size_t k = 0; k <= records_.size(); ++k) {
    SCOPED_TRACE("vanishes after " + std::to_string(k) + " records");
    fs_.ClearFaults();
    SLUICE_ASSERT_OK_AND_ASSIGN(auto it, Open());
    std::vector<std::string> got;
    for (size_t i = 0; i < k; ++i) {
      SLUICE_ASSERT_OK_AND_ASSIGN(std::optional<std::string> r, it->Next());
      ASSERT_TRUE(r.has_value());
      got.push_back(*r);
    }
    fs_.Vanish(path_);
    // Bytes already buffered are still served; then the file is gone.
    const Status s = ReadOn(it.get(), &got);
    ASSERT_TRUE(IsPrefix(got, records_));
    if (s.ok()) {
      ASSERT_EQ(got, records_);  // everything was buffered before it vanished
    } else {
      ASSERT_TRUE(HasError(s, Code::kNotFound, "No such file or directory"));
      ASSERT_TRUE(NamesRecord(s, path_, static_cast<int64_t>(got.size()), offsets[got.size()]));
      ASSERT_EQ(ReadOn(it.get(), &got).code(), Code::kNotFound);
    }
    ASSERT_TRUE(HasError(Open(), Code::kNotFound, path_));
  }
}

TEST_P(RecordIteratorFaultTest, FileShrinkingWhileReadEndsCleanlyOrIsDataLossNeverAWrongRecord) {
  const std::vector<uint64_t> offsets = RecordOffsets(records_);
  for (uint64_t length = 0; length < size_; ++length) {
    for (size_t k : {size_t{0}, size_t{5}}) {
      SCOPED_TRACE("shrinks to " + std::to_string(length) + " bytes after " + std::to_string(k) + " records");
      fs_.ClearFaults();
      SLUICE_ASSERT_OK_AND_ASSIGN(auto it, Open());
      std::vector<std::string> got;
      for (size_t i = 0; i < k; ++i) ASSERT_TRUE(IsOk(it->Next()));
      got.assign(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(k));
      fs_.Truncate(path_, length);
      const Status s = ReadOn(it.get(), &got);
      ASSERT_TRUE(IsPrefix(got, records_));
      if (!s.ok()) {
        ASSERT_EQ(s.code(), Code::kDataLoss) << s;
        ASSERT_TRUE(NamesRecord(s, path_, -1, offsets[got.size()]));
      }
      if (GetParam() == CompressionType::kNone) {
        // Every record still wholly in the file comes back (more may, from
        // bytes buffered before the file shrank).
        const size_t whole = static_cast<size_t>(
            std::upper_bound(offsets.begin(), offsets.end(), length) - offsets.begin() - 1);
        ASSERT_GE(got.size(), whole);
        if (k == 0) {
          // Nothing was buffered: exactly those, then the documented end (a
          // partial header) or DataLoss (a cut after a whole header).
          ASSERT_EQ(got.size(), whole);
          if (length - offsets[whole] < kRecordHeaderSize) {
            ASSERT_TRUE(IsOk(s));
          } else {
            ASSERT_TRUE(HasError(s, Code::kDataLoss, "truncated record at " + std::to_string(offsets[whole])));
          }
        }
      }
    }
  }
}

TEST_P(RecordIteratorFaultTest, PermissionDeniedOnOpenNamesTheFile) {
  fs_.FailOpen(path_, errors::PermissionDenied("Permission denied"));
  for (const Status& s : {Open().status(), RecordReader::Open(path_, SmallBuffers(GetParam()), &fs_).status(),
                          RecordIndex::Build(path_, SmallBuffers(GetParam()), &fs_).status()}) {
    EXPECT_TRUE(HasError(s, Code::kPermissionDenied, path_ + ": Permission denied"));
    EXPECT_EQ(s.GetPayload("file"), path_);
  }
}

INSTANTIATE_TEST_SUITE_P(Compression, RecordIteratorFaultTest, ::testing::ValuesIn(kAllCompressions),
                         [](const auto& info) { return Label(info.param); });

// ---------------------------------------------------------------------------
// The queue-fed readers.

std::shared_ptr<queue::Queue> FilenameQueue(const std::vector<std::string>& names) {
  queue::QueueOptions o;
  o.dtypes = {DType::kString};
  o.shapes = {PartialShape(std::vector<int64_t>{})};
  auto q = queue::NewFIFOQueue(o);
  EXPECT_TRUE(IsOk(q));
  for (const auto& n : names) EXPECT_TRUE(IsOk((*q)->Enqueue(Element{Tensor::String(n)})));
  EXPECT_TRUE(IsOk((*q)->Close()));
  return *q;
}

queue::WaitOptions Safe() { return queue::WaitOptions::Timeout(std::chrono::seconds(10)); }

// Reads until OutOfRange (the filename queue drained) or another error;
// returns that error (OK for the clean end).
Status ReadPairs(ReaderBase& reader, queue::Queue& q, std::vector<Pair>* got) {
  for (;;) {
    Result<ReaderBase::Record> r = reader.Read(q, Safe());
    if (errors::IsOutOfRange(r.status())) return Status::OK();
    SLUICE_RETURN_IF_ERROR(r.status());
    got->emplace_back(r->key, r->value);
  }
}

// How a reader treats a unit whose read failed.
enum class OnError {
  kRetry,     // the unit stays current: the next read retries it
  kSkipUnit,  // the error came while starting the unit (a header skipped at
              // open), which consumes it, as in TensorFlow
};

// Reads `files` with a fresh reader from `make`, injecting `fault` on
// `files[0]` before the first read, clearing it after the first error and
// reading on: the error must name the file, and the pairs must then equal a
// clean read's (without files[0]'s when the error skipped it).
template <class Make>
void ExpectFaultHealsWithoutLoss(Make make, const std::vector<std::string>& files, FaultInjectionFileSystem& fs,
                                 const std::function<void()>& fault, Code code, OnError on_error) {
  const std::string& path = files[0];
  std::vector<Pair> clean;
  {
    std::unique_ptr<ReaderBase> reader = make();
    auto q = FilenameQueue(files);
    ASSERT_TRUE(IsOk(ReadPairs(*reader, *q, &clean)));
  }
  std::unique_ptr<ReaderBase> reader = make();
  auto q = FilenameQueue(files);
  fault();
  std::vector<Pair> got;
  const Status s = ReadPairs(*reader, *q, &got);
  ASSERT_EQ(s.code(), code) << s;
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
  EXPECT_EQ(s.GetPayload("file"), path) << s;
  if (on_error == OnError::kRetry) {
    const size_t before = got.size();
    ASSERT_EQ(ReadPairs(*reader, *q, &got).code(), code);
    ASSERT_EQ(got.size(), before);
  } else {
    ASSERT_TRUE(got.empty());
    clean.erase(std::remove_if(clean.begin(), clean.end(),
                               [&](const Pair& p) { return p.first.compare(0, path.size() + 1, path + ":") == 0; }),
                clean.end());
  }
  fs.ClearFaults();
  ASSERT_TRUE(IsOk(ReadPairs(*reader, *q, &got)));
  ASSERT_EQ(got, clean);
}

TEST(TFRecordReaderFaultTest, ReadErrorAtEveryOffsetHealsWithTheSameKeysAndValues) {
  for (CompressionType c : kAllCompressions) {
    ScratchDir dir;
    const std::string a = dir.File("a.tfrecord"), b = dir.File("b.tfrecord");
    WriteRecords(a, MakeRecords(12, 90, 3), c);
    WriteRecords(b, MakeRecords(3, 20, 4), c);
    FaultInjectionFileSystem fs;
    auto make = [&] {
      TFRecordReaderOptions options;
      options.compression_type = std::string(CompressionTypeName(c));
      options.record_options = SmallBuffers(c);
      options.file_system = &fs;
      return std::move(NewTFRecordReader(options)).value();
    };
    const uint64_t size = FileSize(a);
    for (uint64_t fault = 0; fault < size; ++fault) {
      SCOPED_TRACE(Label(c) + ", fault at file offset " + std::to_string(fault));
      ExpectFaultHealsWithoutLoss(
          make, {a, b}, fs, [&] { fs.FailReadsAt(a, fault, errors::Unknown("Input/output error")); },
          Code::kUnknown, OnError::kRetry);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(TFRecordReaderFaultTest, PermissionDeniedFileIsReportedAndSkipped) {
  ScratchDir dir;
  const std::string a = dir.File("a.tfrecord"), b = dir.File("b.tfrecord");
  WriteRecords(a, {"a0", "a1"}, CompressionType::kNone);
  WriteRecords(b, {"b0"}, CompressionType::kNone);
  FaultInjectionFileSystem fs;
  fs.FailOpen(a, errors::PermissionDenied("Permission denied"));
  TFRecordReaderOptions options;
  options.file_system = &fs;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader(options));
  auto q = FilenameQueue({a, b});
  Result<ReaderBase::Record> r = reader->Read(*q, Safe());
  EXPECT_TRUE(HasError(r, Code::kPermissionDenied, a + ": Permission denied"));
  EXPECT_EQ(r.status().GetPayload("file"), a);
  std::vector<Pair> got;
  ASSERT_TRUE(IsOk(ReadPairs(*reader, *q, &got)));
  EXPECT_EQ(got, (std::vector<Pair>{{b + ":0", "b0"}}));
}

TEST(TFRecordReaderFaultTest, VanishedFileIsNotFoundOnEveryReadUntilReset) {
  ScratchDir dir;
  const std::string a = dir.File("a.tfrecord"), b = dir.File("b.tfrecord");
  const std::vector<std::string> records = MakeRecords(20, 90, 5);
  WriteRecords(a, records, CompressionType::kNone);
  WriteRecords(b, {"b0"}, CompressionType::kNone);
  FaultInjectionFileSystem fs;
  TFRecordReaderOptions options;
  options.file_system = &fs;
  options.record_options.buffer_size = 64;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader(options));
  auto q = FilenameQueue({a, b});
  SLUICE_ASSERT_OK_AND_ASSIGN(ReaderBase::Record first, reader->Read(*q, Safe()));
  EXPECT_EQ(first.value, records[0]);
  fs.Vanish(a);
  std::vector<Pair> got;
  Status s = ReadPairs(*reader, *q, &got);
  ASSERT_TRUE(HasError(s, Code::kNotFound, a));
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].second, records[i + 1]);
  EXPECT_EQ(s.GetPayload("offset"), std::to_string(RecordOffsets(records)[got.size() + 1]));
  EXPECT_TRUE(HasError(reader->Read(*q, Safe()), Code::kNotFound, a));
  ASSERT_TRUE(IsOk(reader->Reset()));
  got.clear();
  ASSERT_TRUE(IsOk(ReadPairs(*reader, *q, &got)));
  EXPECT_EQ(got, (std::vector<Pair>{{b + ":0", "b0"}}));
}

// Lines "line <i> " padded to varied lengths, `bytes` in all (about).
std::string Lines(size_t bytes) {
  std::string text;
  for (int i = 0; text.size() < bytes; ++i) text += StrCat("line ", i, " ", std::string(static_cast<size_t>(i % 150), 'x'), "\n");
  return text;
}

// Offsets where a fault tests the readers whose buffer is the default
// 256 KiB: the first read, inside it, and around the second and third.
std::vector<uint64_t> BufferBoundaryOffsets(uint64_t size) {
  std::vector<uint64_t> offsets = {0, 1, 100000};
  for (uint64_t b : {uint64_t{256} << 10, uint64_t{512} << 10}) {
    for (uint64_t o : {b - 1, b, b + 1, b + 333}) offsets.push_back(o);
  }
  offsets.push_back(size - 1);
  offsets.erase(std::remove_if(offsets.begin(), offsets.end(), [size](uint64_t o) { return o >= size; }),
                offsets.end());
  return offsets;
}

TEST(TextLineReaderFaultTest, ReadErrorHealsWithTheSameLineNumbers) {
  ScratchDir dir;
  const std::string a = dir.File("a.txt"), b = dir.File("b.txt");
  WriteFileOrDie(a, Lines(600000));
  WriteFileOrDie(b, "last\n");
  FaultInjectionFileSystem fs;
  auto make = [&] {
    TextLineReaderOptions options;
    options.file_system = &fs;
    return std::move(NewTextLineReader(options)).value();
  };
  for (uint64_t fault : BufferBoundaryOffsets(FileSize(a))) {
    SCOPED_TRACE("fault at file offset " + std::to_string(fault));
    ExpectFaultHealsWithoutLoss(
        make, {a, b}, fs, [&] { fs.FailReadsAt(a, fault, errors::Unknown("Input/output error")); },
        Code::kUnknown, OnError::kRetry);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(FixedLengthRecordReaderFaultTest, ReadErrorHealsWithTheSameRecords) {
  std::mt19937 rng(9);
  const std::string raw = RandomBytes(700000, &rng);
  for (const char* encoding : {"", "ZLIB", "GZIP"}) {
    for (int64_t hop : {0, 1500}) {
      ScratchDir dir;
      const std::string a = dir.File("a.bin"), b = dir.File("b.bin");
      const std::string b_raw = raw.substr(0, 2100);
      if (std::string_view(encoding).empty()) {
        WriteFileOrDie(a, raw);
        WriteFileOrDie(b, b_raw);
      } else {
        const int bits = std::string_view(encoding) == "GZIP" ? 31 : 15;
        WriteFileOrDie(a, testing::Deflate(raw, bits));
        WriteFileOrDie(b, testing::Deflate(b_raw, bits));
      }
      FaultInjectionFileSystem fs;
      auto make = [&] {
        FixedLengthRecordReaderOptions options;
        options.file_system = &fs;
        options.header_bytes = 10;
        options.record_bytes = 1000;
        options.hop_bytes = hop;
        options.encoding = encoding;
        return std::move(NewFixedLengthRecordReader(options)).value();
      };
      for (uint64_t fault : BufferBoundaryOffsets(FileSize(a))) {
        SCOPED_TRACE(StrCat("encoding '", encoding, "', hop ", hop, ", fault at file offset ", fault));
        // A compressed file's first chunk is read to skip the header, when
        // the unit starts.
        const bool at_open = !std::string_view(encoding).empty() && fault < ZlibOptions().input_buffer_size;
        ExpectFaultHealsWithoutLoss(
            make, {a, b}, fs, [&] { fs.FailReadsAt(a, fault, errors::Unknown("Input/output error")); },
            Code::kUnknown, at_open ? OnError::kSkipUnit : OnError::kRetry);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(LineIteratorFaultTest, ReadErrorAtEveryOffsetHealsWithTheSameLines) {
  for (CompressionType c : kAllCompressions) {
    ScratchDir dir;
    const std::string path = dir.File("lines");
    const std::string text = Lines(3000);
    if (c == CompressionType::kNone) {
      WriteFileOrDie(path, text);
    } else {
      WriteFileOrDie(path, testing::Deflate(text, c == CompressionType::kGzip ? 31 : 15));
    }
    FaultInjectionFileSystem fs;
    LineIteratorOptions options;
    options.compression_type = c;
    options.buffer_size = 64;
    options.zlib.input_buffer_size = 1024;
    std::vector<std::string> clean;
    {
      SLUICE_ASSERT_OK_AND_ASSIGN(auto it, LineIterator::Open(path, options, &fs));
      for (;;) {
        SLUICE_ASSERT_OK_AND_ASSIGN(std::optional<std::string> line, it->Next());
        if (!line.has_value()) break;
        clean.push_back(*line);
      }
    }
    const uint64_t size = FileSize(path);
    for (uint64_t fault = 0; fault < size; ++fault) {
      SCOPED_TRACE(Label(c) + ", fault at file offset " + std::to_string(fault));
      fs.ClearFaults();
      SLUICE_ASSERT_OK_AND_ASSIGN(auto it, LineIterator::Open(path, options, &fs));
      fs.FailReadsAt(path, fault, errors::Unknown("Input/output error"), /*times=*/1);
      std::vector<std::string> got;
      int errors_seen = 0;
      for (;;) {
        Result<std::optional<std::string>> line = it->Next();
        if (!line.ok()) {
          ASSERT_TRUE(HasError(line, Code::kUnknown, path));
          ASSERT_EQ(line.status().GetPayload("record"), std::to_string(got.size()));
          ++errors_seen;
          continue;
        }
        if (!line->has_value()) break;
        got.push_back(**line);
        ASSERT_EQ(it->line_number(), static_cast<int64_t>(got.size()));
      }
      ASSERT_EQ(errors_seen, 1);
      ASSERT_EQ(got, clean);
    }
  }
}

// ---------------------------------------------------------------------------
// A disk that fills up under the writer.

// Writes `records` through `fs` until the first error; returns what Write
// accepted and the first error (from Write or Close).
int64_t WriteUntilFull(FaultInjectionFileSystem& fs, const std::string& path, const std::vector<std::string>& records,
                       CompressionType c, Status* error) {
  RecordWriterOptions options;
  options.compression_type = c;
  Result<std::unique_ptr<RecordWriter>> writer = RecordWriter::Open(path, options, &fs);
  EXPECT_TRUE(IsOk(writer));
  if (!writer.ok()) return 0;
  *error = Status::OK();
  for (const std::string& r : records) {
    *error = (*writer)->Write(r);
    if (!error->ok()) break;
  }
  const Status closed = (*writer)->Close();
  if (error->ok()) *error = closed;
  return (*writer)->records_written();
}

TEST(RecordWriterFaultTest, DiskFullAtEveryByteLeavesOnlyWholeRecordsOrADetectedTail) {
  const std::vector<std::string> records = MakeRecords(8, 60, 21);
  for (CompressionType c : kAllCompressions) {
    ScratchDir dir;
    const std::string full = dir.File("full");
    WriteRecords(full, records, c);
    const uint64_t size = FileSize(full);
    const std::vector<uint64_t> offsets = RecordOffsets(records);
    for (uint64_t room = 0; room < size; ++room) {
      SCOPED_TRACE(Label(c) + ", disk full after " + std::to_string(room) + " bytes");
      // A fresh file each time: rewriting one in place makes ext4 flush it
      // on every close.
      const std::string path = dir.File("w" + std::to_string(room));
      FaultInjectionFileSystem fs;
      fs.FailWritesWhenFullAfter(path, room);
      Status error;
      const int64_t accepted = WriteUntilFull(fs, path, records, c, &error);
      ASSERT_TRUE(HasError(error, Code::kResourceExhausted, path + ": write: No space left on device"));
      ASSERT_EQ(error.GetPayload("file"), path);
      ASSERT_EQ(FileSize(path), room);  // the short write stored what fitted
      RecordReaderOptions read_options;
      read_options.compression_type = c;
      SLUICE_ASSERT_OK_AND_ASSIGN(auto it, TFRecordIterator::Open(path, read_options));
      std::vector<std::string> got;
      const Status end = ReadOn(it.get(), &got);
      ASSERT_TRUE(IsPrefix(got, records));
      ASSERT_LE(static_cast<int64_t>(got.size()), accepted);
      if (c != CompressionType::kNone) {
        // A cut compressed stream is DataLoss, unless nothing was written.
        if (room == 0) {
          ASSERT_TRUE(IsOk(end));
        } else {
          ASSERT_TRUE(HasError(end, Code::kDataLoss, path));
        }
        continue;
      }
      // Plain: exactly the records wholly on disk, all of them accepted; a
      // cut inside a header (< 12 bytes) is the documented clean end, a cut
      // after it DataLoss "truncated record".
      const size_t whole = static_cast<size_t>(
          std::upper_bound(offsets.begin(), offsets.end(), room) - offsets.begin() - 1);
      ASSERT_EQ(got.size(), whole);
      ASSERT_EQ(accepted, static_cast<int64_t>(whole));
      if (room - offsets[whole] < kRecordHeaderSize) {
        ASSERT_TRUE(IsOk(end));
      } else {
        ASSERT_TRUE(HasError(end, Code::kDataLoss, "truncated record at " + std::to_string(offsets[whole])));
      }
    }
  }
}

}  // namespace
}  // namespace sluice::io
