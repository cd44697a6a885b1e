#include "sluice/io/record_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_writer.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;

std::vector<std::string> MakeRecords(int n, int salt = 0) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("rec" + std::to_string(i + salt) + std::string(i % 13, '+'));
  return out;
}

void Write(const std::string& path, const std::vector<std::string>& records, RecordWriterOptions options = {}) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path, options));
  for (const auto& r : records) ASSERT_TRUE(IsOk(writer->Write(r)));
  ASSERT_TRUE(IsOk(writer->Close()));
}

TEST(RecordIndexTest, BuildFindsEveryRecordOfMnist) {
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index,
                              RecordIndex::Build(testing::TestdataPath("tfrecord/tfx_mnist/mnist.tfrecord")));
  ASSERT_EQ(index.num_records(), 1000);
  for (int64_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(index.offset(i), static_cast<uint64_t>(i) * 3203);
    ASSERT_EQ(index.record_length(i), 3187u);
  }
  EXPECT_EQ(index.stream_length(), 3203000u);
  EXPECT_EQ(index.file_length(), 3203000u);
}

TEST(RecordIndexTest, RandomAccessReadsRecordI) {
  for (CompressionType type : {CompressionType::kNone, CompressionType::kGzip}) {
    ScratchDir dir;
    const std::string path = dir.File("r");
    const auto records = MakeRecords(300);
    RecordWriterOptions wopts;
    wopts.compression_type = type;
    Write(path, records, wopts);
    RecordReaderOptions ropts;
    ropts.compression_type = type;
    SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index, RecordIndex::Build(path, ropts));
    ASSERT_EQ(index.num_records(), 300);
    SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(path, ropts));
    std::string_view r;
    for (int64_t i : {150, 3, 299, 0, 151, 152, 42}) {
      ASSERT_TRUE(IsOk(index.ReadRecord(reader.get(), i, &r)));
      EXPECT_EQ(r, records[static_cast<size_t>(i)]);
      EXPECT_EQ(reader->last_record_index(), i);
      EXPECT_EQ(index.record_length(i), records[static_cast<size_t>(i)].size());
    }
    EXPECT_TRUE(HasError(index.ReadRecord(reader.get(), 300, &r), Code::kOutOfRange));
    EXPECT_TRUE(HasError(index.ReadRecord(reader.get(), -1, &r), Code::kOutOfRange));
  }
}

TEST(RecordIndexTest, ShardRangesAreContiguousBalancedAndCoverEverything) {
  ScratchDir dir;
  Write(dir.File("s"), MakeRecords(10));
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index, RecordIndex::Build(dir.File("s")));
  EXPECT_EQ(index.ShardRange(0, 3), (std::pair<int64_t, int64_t>{0, 4}));
  EXPECT_EQ(index.ShardRange(1, 3), (std::pair<int64_t, int64_t>{4, 7}));
  EXPECT_EQ(index.ShardRange(2, 3), (std::pair<int64_t, int64_t>{7, 10}));
  EXPECT_EQ(index.ShardRange(11, 12), (std::pair<int64_t, int64_t>{10, 10}));
  for (int64_t shards = 1; shards <= 13; ++shards) {
    int64_t next = 0;
    for (int64_t s = 0; s < shards; ++s) {
      auto [b, e] = index.ShardRange(s, shards);
      EXPECT_EQ(b, next);
      EXPECT_LE(e - b, 10 / shards + 1);
      next = e;
    }
    EXPECT_EQ(next, 10);
  }
}

TEST(RecordIndexTest, SavedIndexLoadsBackAndIsReusedWhileFresh) {
  ScratchDir dir;
  const std::string path = dir.File("f");
  Write(path, MakeRecords(50));
  bool rebuilt = false;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex first, RecordIndex::LoadOrBuild(path, {}, nullptr, "", &rebuilt));
  EXPECT_TRUE(rebuilt);
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex loaded, RecordIndex::Load(RecordIndex::IndexPath(path)));
  EXPECT_EQ(loaded.offsets(), first.offsets());
  EXPECT_EQ(loaded.stream_length(), first.stream_length());
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex second, RecordIndex::LoadOrBuild(path, {}, nullptr, "", &rebuilt));
  EXPECT_FALSE(rebuilt);
  EXPECT_EQ(second.num_records(), 50);
}

TEST(RecordIndexTest, StaleIndexIsRebuilt) {
  ScratchDir dir;
  const std::string path = dir.File("f");
  Write(path, MakeRecords(50));
  bool rebuilt = false;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex first, RecordIndex::LoadOrBuild(path, {}, nullptr, "", &rebuilt));
  ASSERT_EQ(first.num_records(), 50);
  Write(path, MakeRecords(70, 1000));  // a different size (and mtime)
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex second, RecordIndex::LoadOrBuild(path, {}, nullptr, "", &rebuilt));
  EXPECT_TRUE(rebuilt);
  EXPECT_EQ(second.num_records(), 70);
  // The rewritten side file is fresh now.
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex third, RecordIndex::LoadOrBuild(path, {}, nullptr, "", &rebuilt));
  EXPECT_FALSE(rebuilt);
  EXPECT_EQ(third.num_records(), 70);
  // Asking for another compression type also makes it stale.
  RecordReaderOptions gzip;
  gzip.compression_type = CompressionType::kGzip;
  EXPECT_FALSE(third.IsFreshFor(*DefaultFileSystem()->Stat(path), CompressionType::kGzip));
}

TEST(RecordIndexTest, EveryCorruptionOfTheSideFileIsDetectedAndRebuilt) {
  ScratchDir dir;
  const std::string path = dir.File("f");
  Write(path, MakeRecords(5));
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index, RecordIndex::Build(path));
  const std::string good = index.Serialize();
  const std::string idx = dir.File("f.idx");
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex parsed, RecordIndex::Parse(good, idx));
  EXPECT_EQ(parsed.offsets(), index.offsets());
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_TRUE(HasError(RecordIndex::Parse(bad, idx), Code::kDataLoss, "corrupt record index " + idx))
          << "byte " << i << " bit " << bit;
    }
  }
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_TRUE(HasError(RecordIndex::Parse(good.substr(0, n), idx), Code::kDataLoss)) << "length " << n;
  }
  EXPECT_TRUE(HasError(RecordIndex::Parse(good + "x", idx), Code::kDataLoss));
  std::string bad = good;
  bad[20] ^= 1;  // the stored file length
  testing::WriteFileOrDie(idx, bad);
  bool rebuilt = false;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex again, RecordIndex::LoadOrBuild(path, {}, nullptr, "", &rebuilt));
  EXPECT_TRUE(rebuilt);
  EXPECT_EQ(again.offsets(), index.offsets());
}

TEST(RecordIndexTest, WriterBuildsTheIndexItselfWhenAsked) {
  ScratchDir dir;
  const std::string path = dir.File("w");
  RecordWriterOptions options;
  options.write_index = true;
  Write(path, MakeRecords(40), options);
  bool rebuilt = true;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index, RecordIndex::LoadOrBuild(path, {}, nullptr, "", &rebuilt));
  EXPECT_FALSE(rebuilt);
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex scanned, RecordIndex::Build(path));
  EXPECT_EQ(index.offsets(), scanned.offsets());
  EXPECT_EQ(index.stream_length(), scanned.stream_length());
}

TEST(RecordIndexTest, BuildOfACorruptFileIsDataLossUnlessErrorsAreIgnored) {
  ScratchDir dir;
  const std::string path = dir.File("c");
  Write(path, MakeRecords(5));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFileToString(nullptr, path));
  bytes[12 + 1] ^= 1;  // data of record 0
  testing::WriteFileOrDie(path, bytes);
  EXPECT_TRUE(HasError(RecordIndex::Build(path), Code::kDataLoss, "corrupted record at 12"));
  RecordReaderOptions options;
  options.ignore_errors = true;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index, RecordIndex::Build(path, options));
  EXPECT_EQ(index.num_records(), 4);
}

// A file of MakeRecords(5) with the data of record 2 corrupted: records are
// 4..8 bytes long at offsets 0, 20, 41, 63, 86.
std::string WriteWithCorruptRecord2(ScratchDir& dir) {
  const std::string path = dir.File("lossy");
  Write(path, MakeRecords(5));
  Result<std::string> bytes = ReadFileToString(nullptr, path);
  EXPECT_TRUE(IsOk(bytes.status()));
  (*bytes)[41 + 12 + 1] ^= 1;
  testing::WriteFileOrDie(path, *bytes);
  return path;
}

TEST(RecordIndexTest, IgnoreErrorsBuildRecordsWhatItSkippedAndTrueLengths) {
  ScratchDir dir;
  const std::string path = WriteWithCorruptRecord2(dir);
  RecordReaderOptions options;
  options.ignore_errors = true;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index, RecordIndex::Build(path, options));
  EXPECT_TRUE(index.lossy());
  EXPECT_EQ(index.records_skipped(), 1);
  EXPECT_EQ(index.bytes_skipped(), 22u);
  EXPECT_EQ(index.offsets(), (std::vector<uint64_t>{0, 20, 63, 86}));
  // Record 1 is followed by the 22 skipped bytes, which are not its own.
  EXPECT_EQ(index.record_lengths(), (std::vector<uint64_t>{4, 5, 7, 8}));
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex parsed, RecordIndex::Parse(index.Serialize(), dir.File("x.idx")));
  EXPECT_EQ(parsed.offsets(), index.offsets());
  EXPECT_EQ(parsed.record_lengths(), index.record_lengths());
  EXPECT_EQ(parsed.records_skipped(), 1);
  EXPECT_EQ(parsed.bytes_skipped(), 22u);

}

TEST(RecordIndexTest, LossyIndexIsStaleForAStrictOpenAndReusedByIgnoreErrors) {
  ScratchDir dir;
  const std::string path = WriteWithCorruptRecord2(dir);
  RecordReaderOptions lenient;
  lenient.ignore_errors = true;
  bool rebuilt = false;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex first, RecordIndex::LoadOrBuild(path, lenient, nullptr, "", &rebuilt));
  EXPECT_TRUE(rebuilt);
  EXPECT_EQ(first.num_records(), 4);
  SLUICE_ASSERT_OK_AND_ASSIGN(FileStatistics stat, DefaultFileSystem()->Stat(path));
  EXPECT_TRUE(first.IsFreshFor(stat, CompressionType::kNone, /*ignore_errors=*/true));
  EXPECT_FALSE(first.IsFreshFor(stat, CompressionType::kNone));
  // An ignore_errors user may reuse the lossy side file.
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex second, RecordIndex::LoadOrBuild(path, lenient, nullptr, "", &rebuilt));
  EXPECT_FALSE(rebuilt);
  EXPECT_EQ(second.num_records(), 4);
  EXPECT_TRUE(second.lossy());
  // A strict user rebuilds, which fails as a scan without the cache does.
  EXPECT_TRUE(HasError(RecordIndex::LoadOrBuild(path), Code::kDataLoss, "corrupted record at 53"));
  EXPECT_TRUE(HasError(RecordIndex::LoadOrBuild(path), Code::kDataLoss, "(record 2)"));
}

TEST(RecordIndexTest, StrictIndexServesIgnoreErrorsUsers) {
  ScratchDir dir;
  const std::string path = dir.File("f");
  Write(path, MakeRecords(5));
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex first, RecordIndex::LoadOrBuild(path));
  EXPECT_FALSE(first.lossy());
  RecordReaderOptions lenient;
  lenient.ignore_errors = true;
  bool rebuilt = true;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex second, RecordIndex::LoadOrBuild(path, lenient, nullptr, "", &rebuilt));
  EXPECT_FALSE(rebuilt);
}

TEST(RecordIndexTest, SkippedCorruptHeaderMakesTheIndexLossy) {
  ScratchDir dir;
  const std::string path = dir.File("h");
  Write(path, MakeRecords(5));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFileToString(nullptr, path));
  bytes[41 + 9] ^= 1;  // header checksum of record 2
  testing::WriteFileOrDie(path, bytes);
  RecordReaderOptions options;
  options.ignore_errors = true;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index, RecordIndex::Build(path, options));
  EXPECT_EQ(index.records_skipped(), 0);  // the header hid how many records the bytes held
  EXPECT_EQ(index.bytes_skipped(), 22u);
  EXPECT_TRUE(index.lossy());
  EXPECT_EQ(index.record_length(1), 5u);
}

TEST(RecordIndexTest, VersionOneSideFileIsRefusedAndRebuilt) {
  ScratchDir dir;
  const std::string path = dir.File("f");
  Write(path, MakeRecords(3));
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex index, RecordIndex::Build(path));
  // A version 1 file: 48-byte header, offsets, checksum.
  std::string old = index.Serialize().substr(0, 48);
  EncodeFixed32(old.data() + 8, 1);
  for (uint64_t off : index.offsets()) {
    char buf[8];
    EncodeFixed64(buf, off);
    old.append(buf, 8);
  }
  char crc[4];
  EncodeFixed32(crc, crc32c::Mask(crc32c::Value(old.data(), old.size())));
  old.append(crc, 4);
  const std::string idx = RecordIndex::IndexPath(path);
  EXPECT_TRUE(HasError(RecordIndex::Parse(old, idx), Code::kDataLoss, "unknown version 1"));
  testing::WriteFileOrDie(idx, old);
  bool rebuilt = false;
  SLUICE_ASSERT_OK_AND_ASSIGN(RecordIndex again, RecordIndex::LoadOrBuild(path, {}, nullptr, "", &rebuilt));
  EXPECT_TRUE(rebuilt);
  EXPECT_EQ(again.offsets(), index.offsets());
}

}  // namespace
}  // namespace sluice::io
