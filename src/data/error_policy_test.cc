// Error policies: a corrupt record, a truncated file, an undecodable JPEG and
// a parse error each reach the reader's or map's policy (fail, skip or
// replace), which reports them per kind; Options.error_policy applies where a
// stage has none.
#include "data/error_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/data_test_util.h"
#include "sluice/data/map_ops.h"
#include "sluice/image/codec.h"
#include "sluice/io/record_writer.h"
#include "sluice/ops/example_builder.h"

namespace sluice::data {
namespace {

using testing::Must;

std::string TempPath(const std::string& name) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test.begin(), test.end(), '/', '_');
  return ::testing::TempDir() + "/" + test + name;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto w = io::RecordWriter::Open(path);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) ASSERT_TRUE((*w)->Write(r).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

// A TFRecord record takes 8 (length) + 4 (its CRC) + data + 4 (data CRC) bytes.
constexpr int64_t kRecordOverhead = 16;

// Flips a byte of record 1's data in a file of 2-byte records.
void CorruptSecondRecord(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp((2 + kRecordOverhead) + 12);
  f.put('X');
}

struct Pass {
  std::vector<Element> elements;
  Status status;  // the first error (the pass stops there)
  std::unique_ptr<IteratorBase> it;
};

Pass RunPass(const DatasetPtr& ds) {
  Pass p;
  p.it = ds->MakeIterator();
  while (true) {
    Element e;
    bool end = false;
    p.status = p.it->GetNext(&e, &end);
    if (!p.status.ok() || end) return p;
    p.elements.push_back(std::move(e));
  }
}

std::vector<std::string> Strings(const std::vector<Element>& elements) {
  std::vector<std::string> out;
  for (const Element& e : elements) out.push_back(e[0].scalar<std::string>());
  return out;
}

// `reader` with its own policy.
DatasetPtr Reading(DatasetPtr reader, ErrorPolicy policy, std::optional<Element> replacement = std::nullopt) {
  return Must(WithStageErrorPolicy(reader, StageErrorPolicy{policy, std::move(replacement)}));
}

class ReaderPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = TempPath("a");
    b_ = TempPath("b");
    WriteRecords(a_, {"a0", "a1", "a2"});
    WriteRecords(b_, {"b0", "b1"});
  }
  std::string a_, b_;
};

TEST_F(ReaderPolicyTest, CorruptRecordFailsByDefault) {
  CorruptSecondRecord(a_);
  Pass p = RunPass(Must(TFRecordDataset({a_, b_})));
  EXPECT_EQ(p.status.code(), Code::kDataLoss);
  EXPECT_EQ(Strings(p.elements), (std::vector<std::string>{"a0"}));
}

TEST_F(ReaderPolicyTest, CorruptRecordIsSkippedWithTheRestOfItsFileAndReported) {
  CorruptSecondRecord(a_);
  Pass p = RunPass(Reading(Must(TFRecordDataset({a_, b_})), ErrorPolicy::kSkip));
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Strings(p.elements), (std::vector<std::string>{"a0", "b0", "b1"}));
  EXPECT_EQ(p.it->skipped_errors(), 1);
  std::vector<ErrorKindStats> report = IteratorErrors(*p.it);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].stage, "TFRecordDataset");
  EXPECT_EQ(report[0].code, Code::kDataLoss);
  EXPECT_EQ(report[0].policy, ErrorPolicy::kSkip);
  EXPECT_EQ(report[0].count, 1);
  ASSERT_EQ(report[0].examples.size(), 1u);
  EXPECT_EQ(report[0].examples[0].file, a_);
  EXPECT_EQ(report[0].examples[0].record, 1);
  EXPECT_EQ(report[0].examples[0].offset, 2 + kRecordOverhead);
}

TEST_F(ReaderPolicyTest, CorruptRecordIsReplacedByAnEmptyString) {
  CorruptSecondRecord(a_);
  Pass p = RunPass(Reading(Must(TFRecordDataset({a_, b_})), ErrorPolicy::kReplace));
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Strings(p.elements), (std::vector<std::string>{"a0", "", "b0", "b1"}));
  EXPECT_EQ(p.it->skipped_errors(), 0);
  ASSERT_EQ(IteratorErrors(*p.it).size(), 1u);
  EXPECT_EQ(IteratorErrors(*p.it)[0].policy, ErrorPolicy::kReplace);
}

TEST_F(ReaderPolicyTest, ReplacementGivenByTheUserStandsForTheRecord) {
  CorruptSecondRecord(a_);
  DatasetPtr reader = Must(TFRecordDataset({a_, b_}));
  Pass p = RunPass(Reading(reader, ErrorPolicy::kReplace, Element{Tensor::String("lost")}));
  EXPECT_EQ(Strings(p.elements), (std::vector<std::string>{"a0", "lost", "b0", "b1"}));
  EXPECT_EQ(WithStageErrorPolicy(reader, StageErrorPolicy{ErrorPolicy::kReplace, Element{Tensor::Scalar<int64_t>(1)}})
                .status()
                .code(),
            Code::kInvalidArgument);
}

TEST_F(ReaderPolicyTest, TruncatedFileReachesThePolicyInEachMode) {
  std::filesystem::resize_file(a_, std::filesystem::file_size(a_) - 5);  // cuts record 2
  EXPECT_FALSE(RunPass(Must(TFRecordDataset({a_, b_}))).status.ok());
  Pass skipped = RunPass(Reading(Must(TFRecordDataset({a_, b_})), ErrorPolicy::kSkip));
  EXPECT_TRUE(skipped.status.ok()) << skipped.status;
  EXPECT_EQ(Strings(skipped.elements), (std::vector<std::string>{"a0", "a1", "b0", "b1"}));
  Pass replaced = RunPass(Reading(Must(TFRecordDataset({a_, b_})), ErrorPolicy::kReplace));
  EXPECT_EQ(Strings(replaced.elements), (std::vector<std::string>{"a0", "a1", "", "b0", "b1"}));
}

TEST_F(ReaderPolicyTest, MissingFileIsSkippedWithParallelReads) {
  RecordDatasetOptions o;
  o.num_parallel_reads = 2;
  Pass p = RunPass(Reading(Must(TFRecordDataset({TempPath("missing"), b_}, o)), ErrorPolicy::kSkip));
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Strings(p.elements), (std::vector<std::string>{"b0", "b1"}));
  ASSERT_EQ(IteratorErrors(*p.it).size(), 1u);
  EXPECT_EQ(IteratorErrors(*p.it)[0].code, Code::kNotFound);
}

TEST_F(ReaderPolicyTest, OptionsErrorPolicyAppliesToReadersWithoutTheirOwn) {
  CorruptSecondRecord(a_);
  Options o;
  o.error_policy = ErrorPolicy::kSkip;
  Pass p = RunPass(Must(WithOptions(Must(TFRecordDataset({a_, b_})), o)));
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Strings(p.elements), (std::vector<std::string>{"a0", "b0", "b1"}));
}

TEST_F(ReaderPolicyTest, MapPolicyDoesNotHandleItsInputsErrors) {
  CorruptSecondRecord(a_);
  MapFn identity = [](Element e) -> Result<Element> { return e; };
  MapOptions m;
  m.error_policy.policy = ErrorPolicy::kSkip;
  Pass p = RunPass(Must(Map(Must(TFRecordDataset({a_, b_})), identity,
                        ElementSpec{{DType::kString}, {PartialShape({})}, {}}, m)));
  EXPECT_EQ(p.status.code(), Code::kDataLoss);
}

// ---- Map functions: an undecodable JPEG, an Example that does not parse -------------

std::string Jpeg() {
  Tensor image = Tensor::Zeros(DType::kUInt8, TensorShape{4, 4, 3});
  Result<std::string> jpeg = image::EncodeJpeg(image);
  EXPECT_TRUE(jpeg.ok()) << jpeg.status();
  return jpeg.ok() ? *jpeg : "";
}

DatasetPtr Strings(std::vector<std::string> values) {
  return Must(FromTensorSlices(Element{Tensor::FromStrings(values)}));
}

// decode_jpeg of ["jpeg", "not a jpeg", "jpeg"] under `policy`.
DatasetPtr DecodedImages(std::optional<ErrorPolicy> policy, std::optional<int64_t> parallel) {
  DatasetPtr files = Strings({Jpeg(), "not a jpeg", Jpeg()});
  Result<NativeMap> decode = DecodeJpegMap(files->element_spec(), 0);
  EXPECT_TRUE(decode.ok()) << decode.status();
  MapOptions m{.num_parallel_calls = parallel};
  m.error_policy.policy = policy;
  return Must(MapWithIndex(files, decode->fn, decode->spec, m));
}

class MapPolicyTest : public ::testing::TestWithParam<std::optional<int64_t>> {};

TEST_P(MapPolicyTest, UndecodableJpegFailsByDefault) {
  Pass p = RunPass(DecodedImages(std::nullopt, GetParam()));
  EXPECT_EQ(p.status.code(), Code::kInvalidArgument);
  EXPECT_EQ(p.elements.size(), 1u);
}

TEST_P(MapPolicyTest, UndecodableJpegIsSkippedAndReportedWithItsPosition) {
  Pass p = RunPass(DecodedImages(ErrorPolicy::kSkip, GetParam()));
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(p.elements.size(), 2u);
  EXPECT_EQ(p.it->skipped_errors(), 1);
  std::vector<ErrorKindStats> report = IteratorErrors(*p.it);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].stage, GetParam() ? "ParallelMap" : "Map");
  EXPECT_EQ(report[0].code, Code::kInvalidArgument);
  ASSERT_EQ(report[0].examples.size(), 1u);
  EXPECT_EQ(report[0].examples[0].element, 1);
}

TEST_P(MapPolicyTest, UndecodableJpegIsReplacedByZerosOfTheSpec) {
  Pass p = RunPass(DecodedImages(ErrorPolicy::kReplace, GetParam()));
  ASSERT_TRUE(p.status.ok()) << p.status;
  ASSERT_EQ(p.elements.size(), 3u);
  EXPECT_EQ(p.elements[0][0].shape(), (TensorShape{4, 4, 3}));
  EXPECT_EQ(p.elements[1][0].dtype(), DType::kUInt8);
  EXPECT_EQ(p.elements[1][0].num_elements(), 0);  // [0, 0, 3]: unknown dimensions are 0
}

// parse_example of [example, "garbage", example] under `policy`.
DatasetPtr ParsedExamples(std::optional<ErrorPolicy> policy, std::optional<int64_t> parallel,
                          std::optional<Element> replacement = std::nullopt) {
  ops::ExampleBuilder b;
  b.AddInt64s("label", {7});
  DatasetPtr records = Strings({b.Serialize(), "garbage", b.Serialize()});
  auto parser = ops::ExampleParser::Create(
      ops::FeatureSpec{{"label", ops::FixedLenFeature(TensorShape{}, DType::kInt64)}});
  EXPECT_TRUE(parser.ok()) << parser.status();
  Result<NativeMap> parse = ParseExampleMap(records->element_spec(), *parser);
  EXPECT_TRUE(parse.ok()) << parse.status();
  MapOptions m{.num_parallel_calls = parallel};
  m.error_policy = StageErrorPolicy{policy, std::move(replacement)};
  return Must(MapWithIndex(records, parse->fn, parse->spec, m));
}

std::vector<int64_t> Labels(const std::vector<Element>& elements) {
  std::vector<int64_t> out;
  for (const Element& e : elements) out.push_back(e[0].scalar<int64_t>());
  return out;
}

TEST_P(MapPolicyTest, SkippingMapHasUnknownCardinality) {
  EXPECT_EQ(ParsedExamples(std::nullopt, GetParam())->cardinality(), 3);
  EXPECT_EQ(ParsedExamples(ErrorPolicy::kReplace, GetParam())->cardinality(), 3);
  EXPECT_EQ(ParsedExamples(ErrorPolicy::kSkip, GetParam())->cardinality(), kUnknownCardinality);
}

TEST_P(MapPolicyTest, ParseErrorReachesEachPolicy) {
  Pass failed = RunPass(ParsedExamples(std::nullopt, GetParam()));
  EXPECT_EQ(failed.status.code(), Code::kInvalidArgument);
  Pass skipped = RunPass(ParsedExamples(ErrorPolicy::kSkip, GetParam()));
  EXPECT_EQ(Labels(skipped.elements), (std::vector<int64_t>{7, 7}));
  Pass zeros = RunPass(ParsedExamples(ErrorPolicy::kReplace, GetParam()));
  EXPECT_EQ(Labels(zeros.elements), (std::vector<int64_t>{7, 0, 7}));
  Pass given = RunPass(ParsedExamples(ErrorPolicy::kReplace, GetParam(), Element{Tensor::Scalar<int64_t>(-1)}));
  EXPECT_EQ(Labels(given.elements), (std::vector<int64_t>{7, -1, 7}));
}

TEST_P(MapPolicyTest, OptionsErrorPolicyAppliesToMapsWithoutTheirOwn) {
  Options o;
  o.error_policy = ErrorPolicy::kSkip;
  Pass p = RunPass(Must(WithOptions(ParsedExamples(std::nullopt, GetParam()), o)));
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(Labels(p.elements), (std::vector<int64_t>{7, 7}));
  // The stage's own policy wins over the options'.
  Pass own = RunPass(Must(WithOptions(ParsedExamples(ErrorPolicy::kFail, GetParam()), o)));
  EXPECT_EQ(own.status.code(), Code::kInvalidArgument);
}

TEST_P(MapPolicyTest, ReportKeepsTheFirstExamplesAndCountsEveryError) {
  std::vector<std::string> values(20, "garbage");
  DatasetPtr records = Strings(values);
  auto parser = ops::ExampleParser::Create(
      ops::FeatureSpec{{"label", ops::FixedLenFeature(TensorShape{}, DType::kInt64)}});
  ASSERT_TRUE(parser.ok());
  Result<NativeMap> parse = ParseExampleMap(records->element_spec(), *parser);
  ASSERT_TRUE(parse.ok());
  MapOptions m{.num_parallel_calls = GetParam()};
  m.error_policy.policy = ErrorPolicy::kSkip;
  Pass p = RunPass(Must(MapWithIndex(records, parse->fn, parse->spec, m)));
  EXPECT_TRUE(p.elements.empty());
  std::vector<ErrorKindStats> report = IteratorErrors(*p.it);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].count, 20);
  EXPECT_EQ(report[0].examples.size(), kMaxErrorExamples);
}

INSTANTIATE_TEST_SUITE_P(SequentialAndParallel, MapPolicyTest, ::testing::Values(std::nullopt, 3));

TEST(ErrorPolicyTest, ParseErrorPolicyKeepsTheThreeNames) {
  EXPECT_EQ(*ParseErrorPolicy("skip"), ErrorPolicy::kSkip);
  EXPECT_EQ(ErrorPolicyName(*ParseErrorPolicy("replace")), "replace");
  EXPECT_EQ(ParseErrorPolicy("ignore").status().code(), Code::kInvalidArgument);
}

TEST(ErrorPolicyTest, IgnoreErrorsCountsAndReportsWhatItSkips) {
  DatasetPtr ds = Must(IgnoreErrors(ParsedExamples(std::nullopt, std::nullopt)));
  Pass p = RunPass(ds);
  EXPECT_EQ(Labels(p.elements), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(p.it->skipped_errors(), 1);
  ASSERT_EQ(IteratorErrors(*p.it).size(), 1u);
  EXPECT_EQ(IteratorErrors(*p.it)[0].stage, "IgnoreErrors");
}

}  // namespace
}  // namespace sluice::data
