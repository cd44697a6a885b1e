#include "sluice/io/record_iterator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_writer.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;
using testing::WriteFileOrDie;

TEST(TFRecordIteratorTest, ReportsTheEndApartFromErrors) {
  SLUICE_ASSERT_OK_AND_ASSIGN(
      auto it, TFRecordIterator::Open(testing::TestdataPath("tfrecord/beam_base64/python_bar_foo.tfrecord")));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto a, it->Next());
  EXPECT_EQ(a, std::optional<std::string>("bar"));
  std::string_view r;
  bool end = true;
  ASSERT_TRUE(IsOk(it->GetNext(&r, &end)));
  EXPECT_FALSE(end);
  EXPECT_EQ(r, "foo");
  ASSERT_TRUE(IsOk(it->GetNext(&r, &end)));
  EXPECT_TRUE(end);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto none, it->Next());
  EXPECT_FALSE(none.has_value());
}

TEST(TFRecordIteratorTest, PositionSavesAndRestores) {
  ScratchDir dir;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(dir.File("f")));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(IsOk(writer->Write("r" + std::to_string(i))));
  ASSERT_TRUE(IsOk(writer->Close()));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto it, TFRecordIterator::Open(dir.File("f")));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(IsOk(it->Next()));
  const uint64_t offset = it->offset();
  const int64_t index = it->record_index();
  EXPECT_EQ(index, 4);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto fresh, TFRecordIterator::Open(dir.File("f")));
  ASSERT_TRUE(IsOk(fresh->Seek(offset, index)));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto next, fresh->Next());
  EXPECT_EQ(next, std::optional<std::string>("r4"));
  EXPECT_EQ(fresh->record_index(), 5);
}

TEST(TFRecordIteratorTest, CorruptionIsAnErrorNotTheEnd) {
  ScratchDir dir;
  std::string bytes = EncodeRecord("foo");
  bytes[9] = static_cast<char>(bytes[9] + 1);
  WriteFileOrDie(dir.File("bad"), bytes);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto it, TFRecordIterator::Open(dir.File("bad")));
  EXPECT_TRUE(HasError(it->Next(), Code::kDataLoss, "corrupted record at 0"));
}

TEST(LineIteratorTest, ReadsLinesOfPlainAndCompressedFiles) {
  ScratchDir dir;
  const std::string text = "one\r\ntwo\n\nfour";
  WriteFileOrDie(dir.File("p"), text);
  WriteFileOrDie(dir.File("g"), testing::Gzip(text));
  for (auto [name, type] : {std::pair{"p", CompressionType::kNone}, std::pair{"g", CompressionType::kGzip}}) {
    LineIteratorOptions options;
    options.compression_type = type;
    SLUICE_ASSERT_OK_AND_ASSIGN(auto it, LineIterator::Open(dir.File(name), options));
    std::vector<std::string> lines;
    for (;;) {
      SLUICE_ASSERT_OK_AND_ASSIGN(auto line, it->Next());
      if (!line) break;
      lines.push_back(*line);
    }
    EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "", "four"}));
    EXPECT_EQ(it->line_number(), 4);
  }
}

TEST(LineIteratorTest, PositionSavesAndRestores) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("p"), "a\nb\nc\nd\n");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto it, LineIterator::Open(dir.File("p")));
  ASSERT_TRUE(IsOk(it->Next()));
  ASSERT_TRUE(IsOk(it->Next()));
  const uint64_t offset = it->offset();
  EXPECT_EQ(offset, 4u);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto fresh, LineIterator::Open(dir.File("p")));
  ASSERT_TRUE(IsOk(fresh->Seek(offset, it->line_number())));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto line, fresh->Next());
  EXPECT_EQ(line, std::optional<std::string>("c"));
  EXPECT_EQ(fresh->line_number(), 3);
}

TEST(LineIteratorTest, TruncatedGzipIsDataLossNamingTheFile) {
  ScratchDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i * 31) + "\n";
  const std::string gz = testing::Gzip(text);
  WriteFileOrDie(dir.File("g"), gz.substr(0, gz.size() / 2));
  LineIteratorOptions options;
  options.compression_type = CompressionType::kGzip;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto it, LineIterator::Open(dir.File("g"), options));
  Status s;
  int lines = 0;
  for (;;) {
    auto line = it->Next();
    if (!line.ok()) {
      s = line.status();
      break;
    }
    ASSERT_TRUE(line->has_value()) << "a truncated stream must not end cleanly";
    ++lines;
  }
  EXPECT_GT(lines, 100);
  EXPECT_TRUE(HasError(s, Code::kDataLoss, dir.File("g")));
  EXPECT_EQ(s.GetPayload("record"), std::to_string(lines));
}

}  // namespace
}  // namespace sluice::io
