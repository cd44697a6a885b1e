#include "sluice/io/record_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/io_test_util.h"
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

}  // namespace
}  // namespace sluice::io
