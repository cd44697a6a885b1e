// Corruption at every byte position of a small TFRecord file, plain, ZLIB and
// GZIP: each byte flipped (every single bit, and all eight), and the file cut
// at every length. The record iterator must detect each corruption
// (DataLoss naming the file) or, for a cut, end as documented (a partial
// header after the last whole record is a clean end), and must never return
// a record whose payload differs from what was written. A strict index build
// fails the same way; an ignore_errors read returns only original records,
// in order, none twice.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_iterator.h"
#include "sluice/io/record_writer.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;
using testing::WriteFileOrDie;

const std::vector<std::string>& Records() {
  static const std::vector<std::string> records = {"", "a", "0123456789abcdef0123456789", "\xff\x00\x7f tail"};
  return records;
}

// Reads `path` to the end or the first error; returns that error (OK at the
// end).
Status ReadAll(const std::string& path, const RecordReaderOptions& options, std::vector<std::string>* got) {
  SLUICE_ASSIGN_OR_RETURN(auto it, TFRecordIterator::Open(path, options));
  for (;;) {
    std::string_view record;
    bool end = false;
    SLUICE_RETURN_IF_ERROR(it->GetNext(&record, &end));
    if (end) return Status::OK();
    got->emplace_back(record);
  }
}

::testing::AssertionResult IsPrefixOfRecords(const std::vector<std::string>& got) {
  if (got.size() > Records().size()) return ::testing::AssertionFailure() << "too many records: " << got.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != Records()[i]) return ::testing::AssertionFailure() << "record " << i << " changed";
  }
  return ::testing::AssertionSuccess();
}

// Original records, in order, none twice.
::testing::AssertionResult IsSubsequenceOfRecords(const std::vector<std::string>& got) {
  size_t next = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    while (next < Records().size() && Records()[next] != got[i]) ++next;
    if (next == Records().size()) return ::testing::AssertionFailure() << "record " << i << " is not an original";
    ++next;
  }
  return ::testing::AssertionSuccess();
}

class RecordCorruptionSweepTest : public ::testing::TestWithParam<CompressionType> {
 protected:
  void SetUp() override {
    RecordWriterOptions options;
    options.compression_type = GetParam();
    path_ = dir_.File("written");
    SLUICE_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path_, options));
    for (const std::string& r : Records()) ASSERT_TRUE(IsOk(writer->Write(r)));
    ASSERT_TRUE(IsOk(writer->Close()));
    SLUICE_ASSERT_OK_AND_ASSIGN(original_, ReadFileToString(nullptr, path_));
    for (const std::string& r : Records()) plain_ += EncodeRecord(r);
    options_.compression_type = GetParam();
  }

  // True when `bytes` still hold the written stream: equal, or a compressed
  // stream that zlib itself inflates, checksum and all, to the same bytes
  // (a gzip header's MTIME, XFL and OS bytes and FTEXT bit are covered by no
  // checksum; some deflate bits do not change what they decode to).
  bool SameContent(const std::string& bytes) const {
    if (GetParam() == CompressionType::kNone) return bytes == original_;
    z_stream z{};
    if (inflateInit2(&z, GetParam() == CompressionType::kGzip ? 31 : 15) != Z_OK) return false;
    std::string out(plain_.size() + 1, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(bytes.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&z, Z_FINISH);
    const bool same = rc == Z_STREAM_END && z.avail_in == 0 && z.total_out == plain_.size() &&
                      out.compare(0, plain_.size(), plain_) == 0;
    inflateEnd(&z);
    return same;
  }

  // Writes a variant to a fresh file (rewriting one file in place makes
  // ext4 flush it on every close) and makes it path_.
  void WriteVariant(std::string_view bytes) {
    ASSERT_TRUE(IsOk(DefaultFileSystem()->DeleteFile(path_)));
    path_ = dir_.File("variant-" + std::to_string(++variants_));
    WriteFileOrDie(path_, bytes);
  }

  ScratchDir dir_;
  std::string path_;
  int variants_ = 0;
  std::string original_;  // the file as written
  std::string plain_;     // its records, uncompressed
  RecordReaderOptions options_;
};

TEST_P(RecordCorruptionSweepTest, EveryFlippedByteIsDetectedAndNoRecordChanges) {
  for (size_t pos = 0; pos < original_.size(); ++pos) {
    for (int mask : {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF}) {
      SCOPED_TRACE("byte " + std::to_string(pos) + " ^ " + std::to_string(mask));
      std::string bytes = original_;
      bytes[pos] = static_cast<char>(bytes[pos] ^ mask);
      WriteVariant(bytes);
      std::vector<std::string> got;
      const Status s = ReadAll(path_, options_, &got);
      ASSERT_TRUE(IsPrefixOfRecords(got));
      if (SameContent(bytes)) {
        ASSERT_TRUE(IsOk(s));
        ASSERT_EQ(got, Records());
        continue;
      }
      ASSERT_TRUE(HasError(s, Code::kDataLoss, path_));
      ASSERT_TRUE(HasError(RecordIndex::Build(path_, options_), Code::kDataLoss, path_));
      // Skipping what is corrupt returns only records as written.
      RecordReaderOptions skipping = options_;
      skipping.ignore_errors = true;
      got.clear();
      const Status skipped = ReadAll(path_, skipping, &got);
      ASSERT_TRUE(IsSubsequenceOfRecords(got));
      if (GetParam() == CompressionType::kNone) {
        ASSERT_TRUE(IsOk(skipped));  // a plain file's corruption can always be skipped
      }
    }
  }
}

TEST_P(RecordCorruptionSweepTest, EveryCutIsDetectedOrTheDocumentedCleanEnd) {
  std::vector<uint64_t> ends = {0};  // offsets where records end (plain)
  for (const std::string& r : Records()) ends.push_back(ends.back() + kRecordHeaderSize + r.size() + kRecordFooterSize);
  for (size_t length = 0; length < original_.size(); ++length) {
    SCOPED_TRACE("cut to " + std::to_string(length) + " bytes");
    WriteVariant(std::string_view(original_).substr(0, length));
    std::vector<std::string> got;
    const Status s = ReadAll(path_, options_, &got);
    ASSERT_TRUE(IsPrefixOfRecords(got));
    if (GetParam() != CompressionType::kNone) {
      // An empty file is an empty stream; any other cut loses the end marker.
      if (length == 0) {
        ASSERT_TRUE(IsOk(s));
        ASSERT_TRUE(got.empty());
      } else {
        ASSERT_TRUE(HasError(s, Code::kDataLoss, "truncated compressed stream in " + path_));
      }
      continue;
    }
    const size_t whole = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), length) - ends.begin() - 1);
    ASSERT_EQ(got.size(), whole);
    if (length - ends[whole] < kRecordHeaderSize) {
      ASSERT_TRUE(IsOk(s));  // nothing, or a partial header: the clean end
    } else {
      ASSERT_TRUE(HasError(s, Code::kDataLoss, "truncated record at " + std::to_string(ends[whole])));
      ASSERT_EQ(s.GetPayload("file"), path_);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Compression, RecordCorruptionSweepTest,
                         ::testing::Values(CompressionType::kNone, CompressionType::kZlib, CompressionType::kGzip),
                         [](const auto& info) {
                           return info.param == CompressionType::kNone ? std::string("NONE")
                                                                       : std::string(CompressionTypeName(info.param));
                         });

}  // namespace
}  // namespace sluice::io
