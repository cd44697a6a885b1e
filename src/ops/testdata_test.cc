// Parses the Example / SequenceExample payloads of the TFRecord files under
// tests/data and checks the values SOURCES.md documents. TFRecord
// framing is read by test_util.h (the io layer's reader is tested there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sluice/ops/decode_csv.h"
#include "sluice/ops/example_view.h"
#include "sluice/ops/parse_example.h"
#include "sluice/ops/parse_sequence_example.h"
#include "test_util.h"

namespace sluice::ops {
namespace {

using testing::DenseOf;
using testing::Dims;
using testing::RaggedOf;
using testing::ReadTFRecords;
using testing::SparseOf;
using testing::TestdataPath;
using testing::Values;
using testing::Views;

// --- ecosystem_hadoop: values asserted by TFRecordFileTest.java ----------------

class HadoopTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HadoopTest, DataFeatureMapsIndexToTheAssertedValue) {
  const std::vector<std::string> recs = ReadTFRecords(TestdataPath(GetParam()));
  ASSERT_EQ(recs.size(), 5u);
  auto r = ParseExample(Views(recs), {{"data", FixedLenFeature{{2}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "data")),
            (std::vector<int64_t>{0, -6519408338692630574, 1, -897291810407650440, 2, -2627029093267243214, 3,
                                  8452912497529882771, 4, 6197228047171027195}));
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, HadoopTest,
                         ::testing::Values("tfrecord/ecosystem_hadoop/tf-records/part-m-00000",
                                           "tfrecord/ecosystem_hadoop/zipped-tf-records/part-m-00000.gz"));

// --- tfx_mnist -----------------------------------------------------------------

TEST(TestdataTest, MnistLabelsAndPixelsMatchSources) {
  const std::vector<std::string> recs = ReadTFRecords(TestdataPath("tfrecord/tfx_mnist/mnist.tfrecord"));
  ASSERT_EQ(recs.size(), 1000u);
  auto parser = ExampleParser::Create({{"image_class", FixedLenFeature{{}, DType::kInt64}},
                                       {"image_floats", FixedLenFeature{{784}, DType::kFloat32}}});
  ASSERT_TRUE(parser.ok()) << parser.status();
  auto r = parser->Parse(Views(recs));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<int64_t> labels = Values<int64_t>(DenseOf(*r, "image_class"));
  EXPECT_EQ(std::vector<int64_t>(labels.begin(), labels.begin() + 10),
            (std::vector<int64_t>{9, 3, 6, 1, 8, 2, 2, 3, 5, 7}));
  std::vector<int> counts(10);
  for (int64_t l : labels) ++counts.at(static_cast<size_t>(l));
  EXPECT_EQ(counts, (std::vector<int>{87, 137, 87, 90, 118, 79, 78, 107, 120, 97}));
  const Tensor& pixels = DenseOf(*r, "image_floats");
  EXPECT_EQ(Dims(pixels), (std::vector<int64_t>{1000, 784}));
  int bad = 0;
  for (float v : pixels.flat<float>()) {
    const double k = std::round((static_cast<double>(v) + 0.5) * 255.0);
    if (k < 0 || k > 255 || std::fabs(v - static_cast<float>(k / 255.0 - 0.5)) > 1e-6f) ++bad;
  }
  EXPECT_EQ(bad, 0);
  // Single-record parse agrees with the batch.
  auto first = parser->ParseSingle(recs[0]);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(Values<float>(DenseOf(*first, "image_floats")),
            std::vector<float>(pixels.data<float>(), pixels.data<float>() + 784));
}

// --- tfx_penguin: equals the companion CSV --------------------------------------

struct Penguin {
  int64_t species;
  float values[4];
  friend bool operator==(const Penguin& a, const Penguin& b) {
    return a.species == b.species && std::equal(a.values, a.values + 4, b.values);
  }
  friend bool operator<(const Penguin& a, const Penguin& b) {
    if (a.species != b.species) return a.species < b.species;
    return std::lexicographical_compare(a.values, a.values + 4, b.values, b.values + 4);
  }
};

const char* const kPenguinColumns[] = {"culmen_length_mm", "culmen_depth_mm", "flipper_length_mm", "body_mass_g"};

std::vector<Penguin> PenguinRecords(const char* split) {
  const std::vector<std::string> recs =
      ReadTFRecords(TestdataPath(std::string("tfrecord/tfx_penguin/") + split + "/data_tfrecord-00000-of-00001.gz"));
  FeatureSpec spec{{"species", FixedLenFeature{{}, DType::kInt64}}};
  for (const char* c : kPenguinColumns) spec.emplace(c, FixedLenFeature{{}, DType::kFloat32});
  auto r = ParseExample(Views(recs), spec);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  std::vector<Penguin> out(recs.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    out[i].species = DenseOf(*r, "species").data<int64_t>()[i];
    for (int c = 0; c < 4; ++c) out[i].values[c] = DenseOf(*r, kPenguinColumns[c]).data<float>()[i];
  }
  return out;
}

std::vector<Penguin> PenguinCsv() {
  const std::string text = testing::ReadFileOrDie(TestdataPath("csv/tfx/penguins_processed.csv"));
  std::vector<std::string_view> lines;
  size_t start = text.find('\n') + 1;  // skip the header
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  std::vector<Tensor> defaults = {Tensor(DType::kInt64, TensorShape{0})};
  for (int c = 0; c < 4; ++c) defaults.emplace_back(DType::kFloat32, TensorShape{0});
  auto cols = DecodeCSV(lines, defaults);
  EXPECT_TRUE(cols.ok()) << cols.status();
  if (!cols.ok()) return {};
  std::vector<Penguin> out(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    out[i].species = (*cols)[0].data<int64_t>()[i];
    for (int c = 0; c < 4; ++c) out[i].values[c] = (*cols)[static_cast<size_t>(c) + 1].data<float>()[i];
  }
  return out;
}

bool IsSubsequence(const std::vector<Penguin>& part, const std::vector<Penguin>& whole) {
  size_t j = 0;
  for (const Penguin& p : whole) {
    if (j < part.size() && part[j] == p) ++j;
  }
  return j == part.size();
}

TEST(TestdataTest, PenguinSplitsHaveTheDocumentedCountsAndFirstRecords) {
  const std::vector<Penguin> train = PenguinRecords("Split-train");
  const std::vector<Penguin> eval = PenguinRecords("Split-eval");
  ASSERT_EQ(train.size(), 234u);
  ASSERT_EQ(eval.size(), 100u);
  auto species_counts = [](const std::vector<Penguin>& v) {
    std::vector<int> c(3);
    for (const Penguin& p : v) ++c.at(static_cast<size_t>(p.species));
    return c;
  };
  EXPECT_EQ(species_counts(train), (std::vector<int>{99, 46, 89}));
  EXPECT_EQ(species_counts(eval), (std::vector<int>{47, 22, 31}));
  EXPECT_EQ(train[0].species, 0);
  EXPECT_FLOAT_EQ(train[0].values[0], 0.25454545f);
  EXPECT_FLOAT_EQ(train[0].values[1], 0.6666667f);
  EXPECT_FLOAT_EQ(train[0].values[2], 0.15254237f);
  EXPECT_FLOAT_EQ(train[0].values[3], 0.29166666f);
  EXPECT_FLOAT_EQ(eval[0].values[0], 0.24727273f);
  EXPECT_FLOAT_EQ(eval[0].values[1], 0.5595238f);
  EXPECT_FLOAT_EQ(eval[0].values[3], 0.25694445f);
}

TEST(TestdataTest, PenguinRecordsEqualTheCsvRowsInOrder) {
  const std::vector<Penguin> train = PenguinRecords("Split-train");
  const std::vector<Penguin> eval = PenguinRecords("Split-eval");
  std::vector<Penguin> csv = PenguinCsv();
  ASSERT_EQ(csv.size(), 334u);
  EXPECT_TRUE(csv[0] == train[0]);  // CSV row 1
  EXPECT_TRUE(csv[5] == eval[0]);   // CSV row 6
  EXPECT_TRUE(IsSubsequence(train, csv));
  EXPECT_TRUE(IsSubsequence(eval, csv));
  std::vector<Penguin> all = train;
  all.insert(all.end(), eval.begin(), eval.end());
  std::sort(all.begin(), all.end());
  std::sort(csv.begin(), csv.end());
  EXPECT_TRUE(all == csv);
}

// --- tfx_tfrecord_sequence: closed-form SequenceExamples -------------------------

void CheckSequenceSplit(const char* path, int64_t first_k, size_t count) {
  const std::vector<std::string> recs = ReadTFRecords(TestdataPath(path));
  ASSERT_EQ(recs.size(), count);
  FeatureSpec context{{"i", VarLenFeature{DType::kInt64}}, {"f", VarLenFeature{DType::kFloat32}}};
  FeatureSpec sequence{{"s", RaggedFeature{DType::kString, "", {}, DType::kInt64}}};
  auto r = ParseSequenceExample(Views(recs), context, sequence);
  ASSERT_TRUE(r.ok()) << r.status();
  const SparseTensor& i = SparseOf(r->context, "i");
  const SparseTensor& f = SparseOf(r->context, "f");
  const RaggedTensor& s = RaggedOf(r->feature_lists, "s");
  const size_t empty = (count + 9) / 10;  // k % 10 == 0 (first_k is a multiple of 10)
  ASSERT_EQ(static_cast<size_t>(i.values.num_elements()), count - empty);
  ASSERT_EQ(s.nested_row_splits.size(), 2u);
  ASSERT_EQ(s.values.num_elements(), static_cast<int64_t>(2 * count));
  const int64_t* ix = i.indices.data<int64_t>();
  const int64_t* iv = i.values.data<int64_t>();
  const float* fv = f.values.data<float>();
  const std::string* sv = s.values.data<std::string>();
  const int64_t* rows = s.nested_row_splits[0].data<int64_t>();
  const int64_t* cols = s.nested_row_splits[1].data<int64_t>();
  size_t n = 0;
  int mismatches = 0;
  for (size_t rec = 0; rec < count; ++rec) {
    const int64_t k = first_k + static_cast<int64_t>(rec);
    if (k % 10 != 0) {
      mismatches += ix[2 * n] != static_cast<int64_t>(rec) || iv[n] != k || fv[n] != static_cast<float>(k);
      ++n;
    }
    mismatches += rows[rec] != static_cast<int64_t>(2 * rec);
    mismatches += cols[2 * rec + 1] - cols[2 * rec] != 1;
    mismatches += sv[2 * rec] != std::to_string(k) || sv[2 * rec + 1] != std::to_string(k + 1);
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(Values<int64_t>(i.dense_shape), (std::vector<int64_t>{static_cast<int64_t>(count), 1}));
}

TEST(TestdataTest, SequenceTrainSplitFollowsTheClosedFormPattern) {
  CheckSequenceSplit("tfrecord/tfx_tfrecord_sequence/Split-train/data_tfrecord_train.gz", 0, 10500);
}

TEST(TestdataTest, SequenceEvalSplitFollowsTheClosedFormPattern) {
  CheckSequenceSplit("tfrecord/tfx_tfrecord_sequence/Split-eval/data_tfrecord_eval.gz", 10500, 4500);
}

TEST(TestdataTest, SequenceEvalRecordZeroHasTheDocumentedBytes) {
  const std::vector<std::string> recs =
      ReadTFRecords(TestdataPath("tfrecord/tfx_tfrecord_sequence/Split-eval/data_tfrecord_eval.gz"));
  ASSERT_FALSE(recs.empty());
  const std::string hex = "0a0e0a050a016912000a050a01661200121d0a1b0a017312160a090a070a0531303530300a090a070a053130353031";
  std::string expected;
  for (size_t i = 0; i < hex.size(); i += 2) expected.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  EXPECT_EQ(recs[0], expected);
  // The empty context features take FixedLenFeature defaults.
  auto r = ParseSingleSequenceExample(recs[0], {{"i", FixedLenFeature{{}, DType::kInt64, Tensor::Scalar<int64_t>(-1)}}},
                                      {{"s", FixedLenSequenceFeature{{}, DType::kString}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(r->context, "i")), std::vector<int64_t>{-1});
  EXPECT_EQ(Values<std::string>(DenseOf(r->feature_lists, "s")), (std::vector<std::string>{"10500", "10501"}));
}

// --- tfx_tfjs_next_page ------------------------------------------------------------

TEST(TestdataTest, NextPageRecordsHaveTheDocumentedValues) {
  const std::vector<std::string> recs = ReadTFRecords(TestdataPath("tfrecord/tfx_tfjs_next_page/data.tfrecord.gz"));
  ASSERT_EQ(recs.size(), 100u);
  auto r = ParseExample(Views(recs), {{"cur_page", FixedLenFeature{{}, DType::kString}},
                                      {"label", FixedLenFeature{{}, DType::kString}},
                                      {"session_index", FixedLenFeature{{}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<std::string> cur = Values<std::string>(DenseOf(*r, "cur_page"));
  const std::vector<std::string> label = Values<std::string>(DenseOf(*r, "label"));
  const std::vector<int64_t> session = Values<int64_t>(DenseOf(*r, "session_index"));
  EXPECT_EQ(std::vector<std::string>(cur.begin(), cur.begin() + 3), (std::vector<std::string>{"page2", "page4", "page2"}));
  EXPECT_EQ(std::vector<std::string>(label.begin(), label.begin() + 3),
            (std::vector<std::string>{"page3", "page2", "page3"}));
  EXPECT_EQ(std::vector<int64_t>(session.begin(), session.begin() + 3), (std::vector<int64_t>{1, 1, 0}));
  std::map<std::string, int> cur_counts, label_counts;
  for (const std::string& s : cur) ++cur_counts[s];
  for (const std::string& s : label) ++label_counts[s];
  EXPECT_EQ(cur_counts, (std::map<std::string, int>{{"page1", 22}, {"page2", 24}, {"page3", 24}, {"page4", 30}}));
  EXPECT_EQ(label_counts, (std::map<std::string, int>{{"page1", 24}, {"page2", 27}, {"page3", 20}, {"page4", 29}}));
  EXPECT_TRUE(std::all_of(session.begin(), session.end(), [](int64_t s) { return s >= 0 && s <= 9; }));
  // The zero-copy view sees the same bytes, pointing into the record.
  auto view = ExampleView::Parse(recs[1]);
  ASSERT_TRUE(view.ok()) << view.status();
  std::vector<std::string_view> pages;
  ASSERT_TRUE(view->Find("cur_page")->AppendBytes(&pages).ok());
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0], "page4");
  EXPECT_TRUE(pages[0].data() >= recs[1].data() && pages[0].data() < recs[1].data() + recs[1].size());
}

TEST(TestdataTest, NextPageZeroCopyParseMatchesTheCopyingParse) {
  const std::vector<std::string> recs = ReadTFRecords(TestdataPath("tfrecord/tfx_tfjs_next_page/data.tfrecord.gz"));
  ASSERT_EQ(recs.size(), 100u);
  const std::vector<std::string_view> views = Views(recs);
  auto parser = ExampleParser::Create({{"cur_page", FixedLenFeature{{}, DType::kString}},
                                       {"label", VarLenFeature{DType::kString}},
                                       {"missing", FixedLenFeature{{2}, DType::kString, Tensor::FromStrings({"x", "y"})}},
                                       {"session_index", FixedLenFeature{{}, DType::kInt64}}});
  ASSERT_TRUE(parser.ok()) << parser.status();
  auto copied = parser->Parse(views);
  ASSERT_TRUE(copied.ok()) << copied.status();
  ParsedFeatureViews got;
  ASSERT_TRUE(parser->ParseViews(views, &got).ok());
  testing::ExpectViewsMatch(*copied, got, views, {"x", "y"});
  // Record by record into one reused result.
  for (size_t i = 0; i < recs.size(); ++i) {
    auto one = parser->ParseSingle(recs[i]);
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_TRUE(parser->ParseSingleViews(recs[i], &got).ok());
    testing::ExpectViewsMatch(*one, got, std::span<const std::string_view>(&views[i], 1), {"x", "y"});
  }
}

}  // namespace
}  // namespace sluice::ops
