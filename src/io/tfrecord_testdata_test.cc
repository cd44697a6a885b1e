// Reads every TFRecord file in tests/data/tfrecord and checks the facts
// tests/data/SOURCES.md §1 records about them.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_reader.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::TestdataPath;

struct FileContents {
  std::vector<std::string> records;
  std::vector<uint64_t> offsets;
  Status end;
};

FileContents ReadFile(const std::string& relative, CompressionType type) {
  FileContents out;
  RecordReaderOptions options;
  options.compression_type = type;
  auto reader = RecordReader::Open(TestdataPath(relative), options);
  EXPECT_TRUE(IsOk(reader));
  if (!reader.ok()) return out;
  std::string_view record;
  for (;;) {
    Status s = (*reader)->ReadNext(&record);
    if (!s.ok()) {
      out.end = s;
      break;
    }
    out.records.emplace_back(record);
    out.offsets.push_back((*reader)->last_record_offset());
  }
  return out;
}

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

CompressionType TypeFor(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0 ? CompressionType::kGzip
                                                                         : CompressionType::kNone;
}

TEST(TFRecordTestdataTest, EveryFileReadsToACleanEndWithAllChecksumsValid) {
  std::vector<std::string> files;
  for (const char* pattern : {"tfrecord/*/*", "tfrecord/*/*/*"}) {
    SLUICE_ASSERT_OK_AND_ASSIGN(auto matches, DefaultFileSystem()->GetMatchingPaths(TestdataPath(pattern)));
    for (const auto& m : matches) {
      if (m.size() > 6 && m.compare(m.size() - 6, 6, ".pbtxt") == 0) continue;
      SLUICE_ASSERT_OK_AND_ASSIGN(FileStatistics st, DefaultFileSystem()->Stat(m));
      if (!st.is_directory) files.push_back(m);
    }
  }
  ASSERT_EQ(files.size(), 11u);
  for (const std::string& path : files) {
    FileContents c = ReadFile(path.substr(std::string(SLUICE_TESTDATA_DIR).size() + 1), TypeFor(path));
    EXPECT_TRUE(HasError(c.end, Code::kOutOfRange)) << path << ": " << c.end;
    EXPECT_FALSE(c.records.empty()) << path;
  }
}

TEST(TFRecordTestdataTest, BeamFilesHoldFooAndBar) {
  EXPECT_EQ(ReadFile("tfrecord/beam_base64/python_foo.tfrecord", CompressionType::kNone).records,
            std::vector<std::string>{"foo"});
  EXPECT_EQ(ReadFile("tfrecord/beam_base64/python_foo_bar.tfrecord", CompressionType::kNone).records,
            (std::vector<std::string>{"foo", "bar"}));
  EXPECT_EQ(ReadFile("tfrecord/beam_base64/python_bar_foo.tfrecord", CompressionType::kNone).records,
            (std::vector<std::string>{"bar", "foo"}));
}

// Beam also reads these bytes after whole-file GZIP and zlib compression.
TEST(TFRecordTestdataTest, BeamFooBarReadsAfterGzipAndZlibCompression) {
  testing::ScratchDir dir;
  SLUICE_ASSERT_OK_AND_ASSIGN(
      std::string plain, ReadFileToString(nullptr, TestdataPath("tfrecord/beam_base64/python_foo_bar.tfrecord")));
  testing::WriteFileOrDie(dir.File("gz"), testing::Gzip(plain));
  testing::WriteFileOrDie(dir.File("zlib"), testing::ZlibCompress(plain));
  for (auto [name, type] : {std::pair{"gz", CompressionType::kGzip}, std::pair{"zlib", CompressionType::kZlib}}) {
    RecordReaderOptions options;
    options.compression_type = type;
    SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, RecordReader::Open(dir.File(name), options));
    std::string_view r;
    ASSERT_TRUE(IsOk(reader->ReadNext(&r)));
    EXPECT_EQ(r, "foo");
    ASSERT_TRUE(IsOk(reader->ReadNext(&r)));
    EXPECT_EQ(r, "bar");
    EXPECT_TRUE(HasError(reader->ReadNext(&r), Code::kOutOfRange));
  }
}

TEST(TFRecordTestdataTest, HadoopPlainAndGzipFilesHoldTheSameFiveExamples) {
  FileContents plain = ReadFile("tfrecord/ecosystem_hadoop/tf-records/part-m-00000", CompressionType::kNone);
  FileContents gz = ReadFile("tfrecord/ecosystem_hadoop/zipped-tf-records/part-m-00000.gz", CompressionType::kGzip);
  ASSERT_EQ(plain.records.size(), 5u);
  EXPECT_EQ(gz.records, plain.records);
  const size_t sizes[] = {27, 27, 27, 26, 26};
  uint64_t offset = 0;
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(plain.records[i].size(), sizes[i]) << i;
    EXPECT_EQ(plain.offsets[i], offset);
    offset += sizes[i] + 16;
  }
  EXPECT_EQ(offset, 213u);
  EXPECT_EQ(Hex(plain.records[0]).substr(0, 42), "0a190a170a0464617461120f1a0d0a0b00d2af8694");
  SLUICE_ASSERT_OK_AND_ASSIGN(
      std::string raw, ReadFileToString(nullptr, TestdataPath("tfrecord/ecosystem_hadoop/tf-records/part-m-00000")));
  EXPECT_EQ(Hex(raw.substr(0, 12)), "1b000000000000001a0d9e13");
}

TEST(TFRecordTestdataTest, PenguinSplitsHold234And100ExamplesOf136Bytes) {
  for (auto [file, count] : {std::pair{"Split-train/data_tfrecord-00000-of-00001.gz", 234u},
                             std::pair{"Split-eval/data_tfrecord-00000-of-00001.gz", 100u}}) {
    FileContents c = ReadFile(std::string("tfrecord/tfx_penguin/") + file, CompressionType::kGzip);
    ASSERT_EQ(c.records.size(), count) << file;
    for (const auto& r : c.records) ASSERT_EQ(r.size(), 136u) << file;
    EXPECT_NE(c.records[0].find("species"), std::string::npos);
  }
}

TEST(TFRecordTestdataTest, SequenceExampleSplitsFollowTheirClosedFormPattern) {
  FileContents train = ReadFile("tfrecord/tfx_tfrecord_sequence/Split-train/data_tfrecord_train.gz",
                                CompressionType::kGzip);
  FileContents eval = ReadFile("tfrecord/tfx_tfrecord_sequence/Split-eval/data_tfrecord_eval.gz",
                               CompressionType::kGzip);
  ASSERT_EQ(train.records.size(), 10500u);
  ASSERT_EQ(eval.records.size(), 4500u);
  EXPECT_EQ(Hex(eval.records[0]),
            "0a0e0a050a016912000a050a01661200121d0a1b0a017312160a090a070a0531303530300a090a070a053130353031");
  for (size_t i = 0; i < eval.records.size(); ++i) {
    const size_t k = 10500 + i;
    const std::string& r = eval.records[i];
    ASSERT_NE(r.find(std::to_string(k)), std::string::npos) << k;
    ASSERT_NE(r.find(std::to_string(k + 1)), std::string::npos) << k;
  }
  // Context features of records with k % 10 == 0 are empty Features ("12 00").
  EXPECT_NE(train.records[0].find(std::string("\x12\x00", 2)), std::string::npos);
}

TEST(TFRecordTestdataTest, TfjsFileHolds100ExamplesOf69BytesIn85ByteFrames) {
  FileContents c = ReadFile("tfrecord/tfx_tfjs_next_page/data.tfrecord.gz", CompressionType::kGzip);
  ASSERT_EQ(c.records.size(), 100u);
  for (size_t i = 0; i < c.records.size(); ++i) {
    ASSERT_EQ(c.records[i].size(), 69u);
    ASSERT_EQ(c.offsets[i], i * 85);
  }
  // Record 0 = (cur_page page2, label page3, session_index 1).
  EXPECT_NE(c.records[0].find("page2"), std::string::npos);
  EXPECT_NE(c.records[0].find("page3"), std::string::npos);
}

TEST(TFRecordTestdataTest, MnistHolds1000ExamplesOf3187Bytes) {
  FileContents c = ReadFile("tfrecord/tfx_mnist/mnist.tfrecord", CompressionType::kNone);
  ASSERT_EQ(c.records.size(), 1000u);
  for (size_t i = 0; i < c.records.size(); ++i) {
    ASSERT_EQ(c.records[i].size(), 3187u);
    ASSERT_EQ(c.offsets[i], i * 3203);
  }
  EXPECT_NE(c.records[0].find("image_class"), std::string::npos);
  EXPECT_NE(c.records[0].find("image_floats"), std::string::npos);
}

TEST(TFRecordTestdataTest, GzipFileReadAsZlibIsDataLoss) {
  FileContents c = ReadFile("tfrecord/tfx_tfjs_next_page/data.tfrecord.gz", CompressionType::kZlib);
  EXPECT_TRUE(c.records.empty());
  EXPECT_TRUE(HasError(c.end, Code::kDataLoss, "incorrect header check"));
}

}  // namespace
}  // namespace sluice::io
