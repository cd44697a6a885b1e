// Cross-check with the io layer: the penguin TFRecords, read by io's
// TFRecordIterator (GZIP, CRCs checked) and parsed here, equal the companion
// CSV read by io's LineIterator and decoded with DecodeCSV (SOURCES.md §1.2).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "sluice/io/record_iterator.h"
#include "sluice/io/record_reader.h"
#include "sluice/ops/decode_csv.h"
#include "sluice/ops/parse_example.h"
#include "test_util.h"

namespace sluice::ops {
namespace {

using testing::TestdataPath;

std::vector<std::string> ReadWithIo(const std::string& path) {
  std::vector<std::string> out;
  auto options = io::RecordReaderOptions::FromCompressionType("GZIP");
  EXPECT_TRUE(options.ok()) << options.status();
  if (!options.ok()) return out;
  auto it = io::TFRecordIterator::Open(path, *options);
  EXPECT_TRUE(it.ok()) << it.status();
  if (!it.ok()) return out;
  while (true) {
    Result<std::optional<std::string>> r = (*it)->Next();
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok() || !r->has_value()) break;
    out.push_back(std::move(**r));
  }
  return out;
}

// species, then the four measurements, per row.
using Row = std::vector<double>;

std::vector<Row> ParsedRows(const std::vector<std::string>& records) {
  const char* cols[] = {"culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"};
  FeatureSpec spec{{"species", FixedLenFeature({}, DType::kInt64)}};
  for (const char* c : cols) spec.emplace(c, FixedLenFeature({}, DType::kFloat32));
  auto parsed = ParseExample(testing::Views(records), spec);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  std::vector<Row> rows(records.size());
  if (!parsed.ok()) return rows;
  for (size_t i = 0; i < records.size(); ++i) {
    rows[i].push_back(static_cast<double>(testing::DenseOf(*parsed, "species").data<int64_t>()[i]));
    for (const char* c : cols) rows[i].push_back(testing::DenseOf(*parsed, c).data<float>()[i]);
  }
  return rows;
}

std::vector<Row> CsvRows() {
  auto lines_it = io::LineIterator::Open(TestdataPath("csv/tfx/penguins_processed.csv"));
  EXPECT_TRUE(lines_it.ok()) << lines_it.status();
  std::vector<std::string> lines;
  while (lines_it.ok()) {
    Result<std::optional<std::string>> line = (*lines_it)->Next();
    EXPECT_TRUE(line.ok()) << line.status();
    if (!line.ok() || !line->has_value()) break;
    lines.push_back(std::move(**line));
  }
  if (lines.empty()) return {};
  lines.erase(lines.begin());  // header
  std::vector<Tensor> defaults = {Tensor(DType::kInt64, TensorShape{0})};
  for (int c = 0; c < 4; ++c) defaults.emplace_back(DType::kFloat32, TensorShape{0});
  auto cols = DecodeCSV(Tensor::FromStrings(lines), defaults);
  EXPECT_TRUE(cols.ok()) << cols.status();
  std::vector<Row> rows(lines.size());
  if (!cols.ok()) return rows;
  for (size_t i = 0; i < lines.size(); ++i) {
    rows[i].push_back(static_cast<double>((*cols)[0].data<int64_t>()[i]));
    for (size_t c = 1; c < 5; ++c) rows[i].push_back((*cols)[c].data<float>()[i]);
  }
  return rows;
}

TEST(IoCrossCheckTest, PenguinRecordsReadByTheIoLayerEqualTheCsvRows) {
  const std::string train_path = TestdataPath("tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz");
  const std::string eval_path = TestdataPath("tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz");
  const std::vector<std::string> train = ReadWithIo(train_path);
  const std::vector<std::string> eval = ReadWithIo(eval_path);
  ASSERT_EQ(train.size(), 234u);
  ASSERT_EQ(eval.size(), 100u);
  EXPECT_EQ(train, testing::ReadTFRecords(train_path));  // io agrees with the tests' own framing reader
  std::vector<Row> records = ParsedRows(train);
  const std::vector<Row> eval_rows = ParsedRows(eval);
  records.insert(records.end(), eval_rows.begin(), eval_rows.end());
  std::vector<Row> csv = CsvRows();
  ASSERT_EQ(csv.size(), 334u);
  std::sort(records.begin(), records.end());
  std::sort(csv.begin(), csv.end());
  EXPECT_EQ(records, csv);
}

}  // namespace
}  // namespace sluice::ops
