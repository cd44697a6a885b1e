#include "sluice/ops/parse_example.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::ops {
namespace {

using testing::BytesFeature;
using testing::DenseOf;
using testing::Dims;
using testing::EmptyFeature;
using testing::FloatFeature;
using testing::Int64Feature;
using testing::MakeExample;
using testing::RaggedOf;
using testing::SparseOf;
using testing::Values;

Result<ParsedFeatures> ParseOne(const std::string& record, const FeatureSpec& spec) {
  return ParseSingleExample(record, spec);
}

Result<ParsedFeatures> ParseBatch(const std::vector<std::string>& records, const FeatureSpec& spec) {
  std::vector<std::string_view> views(records.begin(), records.end());
  return ParseExample(views, spec);
}

// --- FixedLenFeature -------------------------------------------------------

TEST(ParseExampleTest, FixedLenScalarsOfEachTypeParseWithoutBatchDimension) {
  const std::string ex = MakeExample({{"f", FloatFeature({1.5f})},
                                      {"i", Int64Feature({-7})},
                                      {"s", BytesFeature({"hello"})}});
  FeatureSpec spec{{"f", FixedLenFeature{{}, DType::kFloat32}},
                   {"i", FixedLenFeature{{}, DType::kInt64}},
                   {"s", FixedLenFeature{{}, DType::kString}}};
  auto r = ParseOne(ex, spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(DenseOf(*r, "f")), std::vector<int64_t>{});
  EXPECT_EQ(Values<float>(DenseOf(*r, "f")), std::vector<float>{1.5f});
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "i")), std::vector<int64_t>{-7});
  EXPECT_EQ(Values<std::string>(DenseOf(*r, "s")), std::vector<std::string>{"hello"});
  EXPECT_EQ(r->size(), 3u);
}

TEST(ParseExampleTest, FixedLenWithShapeFillsRowMajor) {
  const std::string ex = MakeExample({{"m", Int64Feature({1, 2, 3, 4, 5, 6})}});
  auto r = ParseOne(ex, {{"m", FixedLenFeature{{2, 3}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(DenseOf(*r, "m")), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "m")), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(ParseExampleTest, BatchStacksDenseFeaturesAlongANewFirstDimension) {
  std::vector<std::string> recs = {MakeExample({{"v", FloatFeature({1, 2})}}),
                                   MakeExample({{"v", FloatFeature({3, 4})}}),
                                   MakeExample({{"v", FloatFeature({5, 6})}})};
  auto r = ParseBatch(recs, {{"v", FixedLenFeature{{2}, DType::kFloat32}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(DenseOf(*r, "v")), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<float>(DenseOf(*r, "v")), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(ParseExampleTest, EmptyBatchGivesZeroRows) {
  auto r = ParseBatch({}, {{"v", FixedLenFeature{{2}, DType::kFloat32}}, {"s", VarLenFeature{DType::kString}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(DenseOf(*r, "v")), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(Values<int64_t>(SparseOf(*r, "s").dense_shape), (std::vector<int64_t>{0, 0}));
}

TEST(ParseExampleTest, MissingFeatureTakesTheDefault) {
  FeatureSpec spec{{"x", FixedLenFeature{{2}, DType::kInt64, Tensor::FromVector<int64_t>({-1, -2})}}};
  std::vector<std::string> recs = {MakeExample({{"x", Int64Feature({1, 2})}}), MakeExample({}),
                                   MakeExample({{"x", EmptyFeature()}})};
  auto r = ParseBatch(recs, spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "x")), (std::vector<int64_t>{1, 2, -1, -2, -1, -2}));
  auto single = ParseOne(MakeExample({}), spec);
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(*single, "x")), (std::vector<int64_t>{-1, -2}));
}

TEST(ParseExampleTest, StringDefaultIsCopiedIntoEachMissingRow) {
  FeatureSpec spec{{"s", FixedLenFeature{{}, DType::kString, Tensor::String("none")}}};
  auto r = ParseBatch({MakeExample({}), MakeExample({{"s", BytesFeature({"a"})}}), MakeExample({})}, spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(DenseOf(*r, "s")), (std::vector<std::string>{"none", "a", "none"}));
}

TEST(ParseExampleTest, MissingRequiredFeatureIsInvalidArgumentNamingKeyAndRecord) {
  FeatureSpec spec{{"label", FixedLenFeature{{}, DType::kFloat32}}};
  auto r = ParseBatch({MakeExample({{"label", FloatFeature({1})}}), MakeExample({{"other", FloatFeature({1})}})},
                      spec);
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Name: <unknown>, Key: label, Index: 1.  Feature: label (data type: float) is required but could "
                "not be found.");
  EXPECT_EQ(r.status().GetPayload("record"), "1");
  EXPECT_EQ(r.status().GetPayload("feature"), "label");
}

TEST(ParseExampleTest, RecordNamesAppearInErrors) {
  FeatureSpec spec{{"label", FixedLenFeature{{}, DType::kFloat32}}};
  std::vector<std::string> recs = {MakeExample({})};
  std::vector<std::string_view> views(recs.begin(), recs.end());
  std::vector<std::string> names = {"file.tfrecord:0"};
  auto r = ParseExample(views, spec, names);
  EXPECT_STATUS(r.status(), Code::kInvalidArgument, "Name: file.tfrecord:0, Key: label, Index: 0.");
  auto bad = ParseExample(views, spec, std::vector<std::string>{"a", "b"});
  EXPECT_STATUS(bad.status(), Code::kInvalidArgument, "example_names must be empty or have the correct number");
}

TEST(ParseExampleTest, WrongValueCountReportsSizeAndShape) {
  auto r = ParseBatch({MakeExample({{"v", FloatFeature({1, 2, 3, 4})}}), MakeExample({{"v", FloatFeature({1, 2, 3})}})},
                      {{"v", FixedLenFeature{{4}, DType::kFloat32}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Name: <unknown>, Key: v, Index: 1.  Number of float values != expected.  Values size: 3 but "
                "output shape: [4]");
  auto more = ParseOne(MakeExample({{"v", Int64Feature({1, 2, 3, 4, 5})}}), {{"v", FixedLenFeature{{2, 2}, DType::kInt64}}});
  EXPECT_STATUS(more.status(), Code::kInvalidArgument,
                "Number of int64 values != expected.  Values size: 5 but output shape: [2,2]");
  auto bytes = ParseOne(MakeExample({{"v", BytesFeature({})}}), {{"v", FixedLenFeature{{}, DType::kString}}});
  EXPECT_STATUS(bytes.status(), Code::kInvalidArgument,
                "Number of bytes values != expected.  Values size: 0 but output shape: []");
}

TEST(ParseExampleTest, WrongListTypeForDenseFeatureIsInvalidArgument) {
  auto r = ParseOne(MakeExample({{"v", Int64Feature({1})}}), {{"v", FixedLenFeature{{}, DType::kFloat32}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Name: <unknown>, Key: v, Index: 0.  Data types don't match. Data type: int64 but expected type: "
                "float");
}

TEST(ParseExampleTest, WrongListTypeForVarLenFeatureIsInvalidArgument) {
  auto r = ParseOne(MakeExample({{"v", BytesFeature({"x"})}}), {{"v", VarLenFeature{DType::kInt64}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Data types don't match. Expected type: int64, Actual type: string");
}

TEST(ParseExampleTest, MalformedRecordIsCouldNotParseExampleInputWithIndex) {
  const std::string good = MakeExample({{"v", FloatFeature({1})}});
  const std::string truncated = good.substr(0, good.size() - 2);
  auto r = ParseBatch({good, truncated}, {{"v", VarLenFeature{DType::kFloat32}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument, "Name: <unknown>, Index: 1.  Could not parse example input, value: '");
  EXPECT_EQ(r.status().GetPayload("record"), "1");
  EXPECT_STATUS(ParseOne("\xff\xff\xff", {}).status(), Code::kInvalidArgument, "Could not parse example input");
}

TEST(ParseExampleTest, MalformedValuesOfARequestedFeatureCannotBeParsed) {
  std::string feature;
  testing::PutBytes(&feature, 2, std::string("\x0a\x03\x00\x00\x00", 5));  // packed floats, 3 bytes
  auto r = ParseOne(MakeExample({{"v", feature}}), {{"v", VarLenFeature{DType::kFloat32}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument, "Name: <unknown>, Key: v, Index: 0.  Can't parse serialized Example.");
  // An unrequested feature is not decoded, as in TensorFlow's fast parser.
  auto other = ParseOne(MakeExample({{"v", feature}, {"w", FloatFeature({2})}}),
                        {{"w", FixedLenFeature{{}, DType::kFloat32}}});
  EXPECT_TRUE(other.ok()) << other.status();
}

TEST(ParseExampleTest, EmptyPackedListsHoldNoValues) {
  // Found by example_parser_fuzzer: a packed FloatList of length 0.
  std::string floats, ints, feature_f, feature_i;
  testing::PutBytes(&floats, 1, "");
  testing::PutBytes(&feature_f, 2, floats);
  testing::PutBytes(&ints, 1, "");
  testing::PutBytes(&feature_i, 3, ints);
  auto r = ParseOne(MakeExample({{"f", feature_f}, {"i", feature_i}}),
                    {{"f", VarLenFeature{DType::kFloat32}}, {"i", FixedLenSequenceFeature{{1}, DType::kInt64, true}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(SparseOf(*r, "f").values.num_elements(), 0);
  EXPECT_EQ(Dims(DenseOf(*r, "i")), (std::vector<int64_t>{0, 1}));
}

TEST(ParseExampleTest, EmptyRecordIsAnExampleWithNoFeatures) {
  auto r = ParseOne("", {{"v", VarLenFeature{DType::kFloat32}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(SparseOf(*r, "v").values.num_elements(), 0);
}

// --- Protobuf encoding rules -------------------------------------------------

TEST(ParseExampleTest, RepeatedKeyTakesItsLastValue) {
  auto r = ParseOne(MakeExample({{"v", Int64Feature({1})}, {"v", Int64Feature({2})}}),
                    {{"v", FixedLenFeature{{}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "v")), std::vector<int64_t>{2});
}

TEST(ParseExampleTest, RepeatedFeaturesFieldsMergeTheirMaps) {
  std::string ex = MakeExample({{"a", Int64Feature({1})}, {"b", Int64Feature({2})}});
  ex += MakeExample({{"b", Int64Feature({3})}});  // a second `features` field
  auto r = ParseOne(ex, {{"a", FixedLenFeature{{}, DType::kInt64}}, {"b", FixedLenFeature{{}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "a")), std::vector<int64_t>{1});
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "b")), std::vector<int64_t>{3});
}

TEST(ParseExampleTest, LastEmptyFeatureForARepeatedKeyMeansMissing) {
  auto r = ParseOne(MakeExample({{"v", Int64Feature({1})}, {"v", EmptyFeature()}}),
                    {{"v", FixedLenFeature{{}, DType::kInt64, Tensor::Scalar<int64_t>(9)}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "v")), std::vector<int64_t>{9});
}

TEST(ParseExampleTest, UnknownFieldsAreSkippedAtEveryLevel) {
  using testing::PutBytes;
  using testing::PutFixed32;
  using testing::PutTag;
  using testing::PutVarint;
  std::string list;  // Int64List: unknown fields around the packed values
  PutTag(&list, 7, 0);
  PutVarint(&list, 300);
  std::string packed;
  PutVarint(&packed, 5);
  PutVarint(&packed, 6);
  PutBytes(&list, 1, packed);
  PutFixed32(&list, 9, 1234);
  std::string feature;
  PutTag(&feature, 15, 1);  // fixed64 unknown
  feature.append(8, '\x01');
  PutBytes(&feature, 3, list);
  std::string entry;  // value before key, plus an unknown group
  PutBytes(&entry, 2, feature);
  PutTag(&entry, 5, 3);
  PutTag(&entry, 6, 0);
  PutVarint(&entry, 1);
  PutTag(&entry, 5, 4);
  PutBytes(&entry, 1, "v");
  std::string features;
  PutBytes(&features, 1, entry);
  PutBytes(&features, 2, "junk");
  std::string ex;
  PutTag(&ex, 3, 0);
  PutVarint(&ex, 77);
  PutBytes(&ex, 1, features);
  PutFixed32(&ex, 4, 1);
  auto r = ParseOne(ex, {{"v", FixedLenFeature{{2}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "v")), (std::vector<int64_t>{5, 6}));
}

TEST(ParseExampleTest, UnpackedAndMixedRepeatedNumbersAreAccepted) {
  std::string mixed = Int64Feature({1, 2}, /*packed=*/false);
  auto r = ParseOne(MakeExample({{"i", mixed}, {"f", FloatFeature({0.5f, -2.0f}, /*packed=*/false)}}),
                    {{"i", VarLenFeature{DType::kInt64}}, {"f", FixedLenFeature{{2}, DType::kFloat32}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(SparseOf(*r, "i").values), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Values<float>(DenseOf(*r, "f")), (std::vector<float>{0.5f, -2.0f}));
}

TEST(ParseExampleTest, NegativeAndExtremeInt64ValuesRoundTrip) {
  const std::vector<int64_t> v = {0, -1, INT64_MIN, INT64_MAX, 1LL << 40, -(1LL << 40)};
  auto r = ParseOne(MakeExample({{"i", Int64Feature(v)}}), {{"i", FixedLenFeature{{6}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(*r, "i")), v);
}

TEST(ParseExampleTest, OneofKeepsTheLastListAndMergesRepeatsOfIt) {
  // int64_list, then float_list [1], then float_list [2]: the Feature is the
  // float list [1, 2] (protobuf: oneof switches, then the same field merges).
  std::string feature = Int64Feature({9});
  feature += FloatFeature({1});
  feature += FloatFeature({2});
  auto r = ParseOne(MakeExample({{"v", feature}}), {{"v", VarLenFeature{DType::kFloat32}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<float>(SparseOf(*r, "v").values), (std::vector<float>{1, 2}));
}

// --- VarLenFeature ---------------------------------------------------------------

TEST(ParseExampleTest, VarLenSingleGivesRankOneSparseTensor) {
  auto r = ParseOne(MakeExample({{"s", BytesFeature({"a", "", "ccc"})}}), {{"s", VarLenFeature{DType::kString}}});
  ASSERT_TRUE(r.ok()) << r.status();
  const SparseTensor& st = SparseOf(*r, "s");
  EXPECT_EQ(Dims(st.indices), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Values<int64_t>(st.indices), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(Values<std::string>(st.values), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(Values<int64_t>(st.dense_shape), std::vector<int64_t>{3});
}

TEST(ParseExampleTest, VarLenBatchIndexesRecordAndPositionWithMaxLengthShape) {
  auto r = ParseBatch({MakeExample({{"v", Int64Feature({1, 2})}}), MakeExample({}),
                       MakeExample({{"v", Int64Feature({3, 4, 5})}})},
                      {{"v", VarLenFeature{DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  const SparseTensor& st = SparseOf(*r, "v");
  EXPECT_EQ(Values<int64_t>(st.indices), (std::vector<int64_t>{0, 0, 0, 1, 2, 0, 2, 1, 2, 2}));
  EXPECT_EQ(Values<int64_t>(st.values), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(Values<int64_t>(st.dense_shape), (std::vector<int64_t>{3, 3}));
}

// --- FixedLenSequenceFeature in an Example ------------------------------------------

TEST(ParseExampleTest, FixedLenSequenceFeaturePadsBatchWithDefault) {
  FeatureSpec spec{{"p", FixedLenSequenceFeature{{2}, DType::kFloat32, true, Tensor::Scalar<float>(-1)}}};
  auto r = ParseBatch({MakeExample({{"p", FloatFeature({1, 2, 3, 4})}}), MakeExample({}),
                       MakeExample({{"p", FloatFeature({5, 6})}})},
                      spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(DenseOf(*r, "p")), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(Values<float>(DenseOf(*r, "p")), (std::vector<float>{1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1}));
  auto single = ParseOne(MakeExample({{"p", FloatFeature({1, 2, 3, 4, 5, 6})}}), spec);
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(Dims(DenseOf(*single, "p")), (std::vector<int64_t>{3, 2}));
  auto none = ParseOne(MakeExample({}), spec);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(Dims(DenseOf(*none, "p")), (std::vector<int64_t>{0, 2}));
}

TEST(ParseExampleTest, FixedLenSequenceFeaturePadsStringsWithEmpty) {
  FeatureSpec spec{{"p", FixedLenSequenceFeature{{}, DType::kString, true}}};
  auto r = ParseBatch({MakeExample({{"p", BytesFeature({"a"})}}), MakeExample({{"p", BytesFeature({"b", "c"})}})},
                      spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(DenseOf(*r, "p")), (std::vector<std::string>{"a", "", "b", "c"}));
}

TEST(ParseExampleTest, FixedLenSequenceFeatureCountMustBeAMultipleOfTheRow) {
  auto r = ParseOne(MakeExample({{"p", Int64Feature({1, 2, 3})}}),
                    {{"p", FixedLenSequenceFeature{{2}, DType::kInt64, true}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Number of int64 values is not a multiple of stride length. Saw 3 values but output shape is: [?,2]");
}

TEST(ParseExampleTest, FixedLenSequenceFeatureInAnExampleNeedsAllowMissing) {
  auto r = ExampleParser::Create({{"p", FixedLenSequenceFeature{{2}, DType::kInt64, false}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument, "FixedLenSequenceFeature requires allow_missing to be True");
}

// --- SparseFeature -------------------------------------------------------------------

TEST(ParseExampleTest, SparseFeatureSortsIndicesByDefault) {
  FeatureSpec spec{{"sp", SparseFeature{{"ix"}, "val", DType::kFloat32, {10}}}};
  auto r = ParseOne(MakeExample({{"ix", Int64Feature({7, 2, 5})}, {"val", FloatFeature({0.7f, 0.2f, 0.5f})}}), spec);
  ASSERT_TRUE(r.ok()) << r.status();
  const SparseTensor& st = SparseOf(*r, "sp");
  EXPECT_EQ(Values<int64_t>(st.indices), (std::vector<int64_t>{2, 5, 7}));
  EXPECT_EQ(Values<float>(st.values), (std::vector<float>{0.2f, 0.5f, 0.7f}));
  EXPECT_EQ(Values<int64_t>(st.dense_shape), std::vector<int64_t>{10});
  EXPECT_EQ(r->count("ix"), 0u);  // helper keys are not outputs
}

TEST(ParseExampleTest, SparseFeatureAlreadySortedKeepsRecordOrder) {
  FeatureSpec spec{{"sp", SparseFeature{{"ix"}, "val", DType::kInt64, {10}, /*already_sorted=*/true}}};
  auto r = ParseOne(MakeExample({{"ix", Int64Feature({7, 2})}, {"val", Int64Feature({70, 20})}}), spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(SparseOf(*r, "sp").indices), (std::vector<int64_t>{7, 2}));
}

TEST(ParseExampleTest, SparseFeatureTwoDimensionalBatch) {
  FeatureSpec spec{{"sp", SparseFeature{{"r", "c"}, "val", DType::kString, {3, 4}}}};
  auto r = ParseBatch({MakeExample({{"r", Int64Feature({2, 0})}, {"c", Int64Feature({1, 3})}, {"val", BytesFeature({"x", "y"})}}),
                       MakeExample({{"r", Int64Feature({1})}, {"c", Int64Feature({0})}, {"val", BytesFeature({"z"})}})},
                      spec);
  ASSERT_TRUE(r.ok()) << r.status();
  const SparseTensor& st = SparseOf(*r, "sp");
  EXPECT_EQ(Dims(st.indices), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(Values<int64_t>(st.indices), (std::vector<int64_t>{0, 0, 3, 0, 2, 1, 1, 1, 0}));
  EXPECT_EQ(Values<std::string>(st.values), (std::vector<std::string>{"y", "x", "z"}));
  EXPECT_EQ(Values<int64_t>(st.dense_shape), (std::vector<int64_t>{2, 3, 4}));
}

TEST(ParseExampleTest, SparseFeatureIndexOutOfRangeIsInvalidArgument) {
  FeatureSpec spec{{"sp", SparseFeature{{"ix"}, "val", DType::kInt64, {4}}}};
  auto r = ParseOne(MakeExample({{"ix", Int64Feature({4})}, {"val", Int64Feature({1})}}), spec);
  EXPECT_STATUS(r.status(), Code::kInvalidArgument, "SparseFeature sp: index 4 of index_key ix is out of range [0, 4).");
}

TEST(ParseExampleTest, SparseFeatureCountMismatchIsInvalidArgument) {
  FeatureSpec spec{{"sp", SparseFeature{{"ix"}, "val", DType::kInt64, {4}}}};
  auto r = ParseBatch({MakeExample({}), MakeExample({{"ix", Int64Feature({1, 2})}, {"val", Int64Feature({1})}})}, spec);
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Name: <unknown>, Key: ix, Index: 1.  SparseFeature sp: index_key ix has 2 values but value_key val has 1.");
}

// --- RaggedFeature -------------------------------------------------------------------

TEST(ParseExampleTest, RaggedWithoutPartitionsIsFlatSingleAndOneSplitBatched) {
  FeatureSpec spec{{"r", RaggedFeature{DType::kInt64}}};
  auto one = ParseOne(MakeExample({{"r", Int64Feature({1, 2, 3})}}), spec);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(Values<int64_t>(RaggedOf(*one, "r").values), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(RaggedOf(*one, "r").nested_row_splits.empty());
  auto batch = ParseBatch({MakeExample({{"r", Int64Feature({1, 2, 3})}}), MakeExample({}),
                           MakeExample({{"r", Int64Feature({4})}})},
                          spec);
  ASSERT_TRUE(batch.ok()) << batch.status();
  const RaggedTensor& rt = RaggedOf(*batch, "r");
  ASSERT_EQ(rt.nested_row_splits.size(), 1u);
  EXPECT_EQ(Values<int32_t>(rt.nested_row_splits[0]), (std::vector<int32_t>{0, 3, 3, 4}));
  EXPECT_EQ(Values<int64_t>(rt.values), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(ParseExampleTest, RaggedValueKeyAndInt64Splits) {
  FeatureSpec spec{{"out", RaggedFeature{DType::kString, "words", {}, DType::kInt64}}};
  auto r = ParseBatch({MakeExample({{"words", BytesFeature({"a", "b"})}}), MakeExample({{"words", BytesFeature({"c"})}})},
                      spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(RaggedOf(*r, "out").nested_row_splits[0]), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(Values<std::string>(RaggedOf(*r, "out").values), (std::vector<std::string>{"a", "b", "c"}));
}

struct PartitionCase {
  const char* name;
  RaggedPartition partition;
  std::vector<int64_t> partition_values;  // empty for uniform
};

class RaggedPartitionTest : public ::testing::TestWithParam<PartitionCase> {};

// Each partition describes rows [[1, 2], [], [3, 4, 5]] of values 1..5 (the
// uniform one [[1], [2], ...] is checked separately).
TEST_P(RaggedPartitionTest, PartitionCutsValuesIntoTheSameRows) {
  const PartitionCase& c = GetParam();
  FeatureSpec spec{{"r", RaggedFeature{DType::kInt64, "v", {c.partition}}}};
  const std::string ex = MakeExample({{"v", Int64Feature({1, 2, 3, 4, 5})}, {"p", Int64Feature(c.partition_values)}});
  auto one = ParseOne(ex, spec);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(RaggedOf(*one, "r").nested_row_splits.size(), 1u);
  EXPECT_EQ(Values<int32_t>(RaggedOf(*one, "r").nested_row_splits[0]), (std::vector<int32_t>{0, 2, 2, 5}));
  auto batch = ParseBatch({ex, ex}, spec);
  ASSERT_TRUE(batch.ok()) << batch.status();
  const RaggedTensor& rt = RaggedOf(*batch, "r");
  ASSERT_EQ(rt.nested_row_splits.size(), 2u);
  EXPECT_EQ(Values<int32_t>(rt.nested_row_splits[0]), (std::vector<int32_t>{0, 3, 6}));
  EXPECT_EQ(Values<int32_t>(rt.nested_row_splits[1]), (std::vector<int32_t>{0, 2, 2, 5, 7, 7, 10}));
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, RaggedPartitionTest,
    ::testing::Values(PartitionCase{"RowSplits", RaggedPartition::RowSplits("p"), {0, 2, 2, 5}},
                      PartitionCase{"RowLengths", RaggedPartition::RowLengths("p"), {2, 0, 3}},
                      PartitionCase{"RowStarts", RaggedPartition::RowStarts("p"), {0, 2, 2}},
                      PartitionCase{"RowLimits", RaggedPartition::RowLimits("p"), {2, 2, 5}},
                      PartitionCase{"ValueRowIds", RaggedPartition::ValueRowIds("p"), {0, 0, 2, 2, 2}}),
    [](const ::testing::TestParamInfo<PartitionCase>& info) { return std::string(info.param.name); });

TEST(ParseExampleTest, RaggedUniformRowLengthAndNestedPartitions) {
  // values 1..6 -> uniform rows of 2 -> [[1,2],[3,4],[5,6]] -> row lengths [1, 2]
  FeatureSpec spec{{"r", RaggedFeature{DType::kInt64, "v",
                                       {RaggedPartition::RowLengths("outer"), RaggedPartition::UniformRowLength(2)},
                                       DType::kInt64}}};
  auto r = ParseOne(MakeExample({{"v", Int64Feature({1, 2, 3, 4, 5, 6})}, {"outer", Int64Feature({1, 2})}}), spec);
  ASSERT_TRUE(r.ok()) << r.status();
  const RaggedTensor& rt = RaggedOf(*r, "r");
  ASSERT_EQ(rt.nested_row_splits.size(), 2u);
  EXPECT_EQ(Values<int64_t>(rt.nested_row_splits[0]), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(Values<int64_t>(rt.nested_row_splits[1]), (std::vector<int64_t>{0, 2, 4, 6}));
}

TEST(ParseExampleTest, RaggedPartitionNotMatchingValuesIsInvalidArgument) {
  FeatureSpec spec{{"r", RaggedFeature{DType::kInt64, "v", {RaggedPartition::RowLengths("p")}}}};
  auto r = ParseBatch({MakeExample({{"v", Int64Feature({1, 2, 3})}, {"p", Int64Feature({1, 2})}}),
                       MakeExample({{"v", Int64Feature({1, 2, 3})}, {"p", Int64Feature({1, 1})}})},
                      spec);
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Name: <unknown>, Key: v, Index: 1.  RaggedFeature r: row_lengths partition does not fit the 3 items "
                "below it: they sum to 2");
  auto uniform = ParseOne(MakeExample({{"v", Int64Feature({1, 2, 3})}}),
                          {{"r", RaggedFeature{DType::kInt64, "v", {RaggedPartition::UniformRowLength(2)}}}});
  EXPECT_STATUS(uniform.status(), Code::kInvalidArgument, "uniform_row_length partition does not fit the 3 items");
}

TEST(ParseExampleTest, RaggedSplitsTakeTheConfiguredDtype) {
  FeatureSpec spec{{"a", RaggedFeature{DType::kFloat32, "", {}, DType::kInt32}},
                   {"b", RaggedFeature{DType::kFloat32, "", {}, DType::kInt64}}};
  auto r = ParseBatch({MakeExample({{"a", FloatFeature({1})}, {"b", FloatFeature({1})}})}, spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(RaggedOf(*r, "a").nested_row_splits[0].dtype(), DType::kInt32);
  EXPECT_EQ(RaggedOf(*r, "b").nested_row_splits[0].dtype(), DType::kInt64);
  EXPECT_STATUS(ExampleParser::Create({{"c", RaggedFeature{DType::kFloat32, "", {}, DType::kFloat32}}}).status(),
                Code::kInvalidArgument, "Invalid ragged_split_type: float");
}

// --- Config validation ----------------------------------------------------------------------

TEST(ParseExampleTest, UnsupportedDtypeIsInvalidArgument) {
  EXPECT_STATUS(ExampleParser::Create({{"x", VarLenFeature{DType::kInt32}}}).status(), Code::kInvalidArgument,
                "Invalid config dtype: int32");
  EXPECT_STATUS(ExampleParser::Create({{"x", FixedLenFeature{{}, DType::kInvalid}}}).status(),
                Code::kInvalidArgument, "Missing type for feature x.");
}

TEST(ParseExampleTest, DefaultWithWrongSizeOrTypeIsInvalidArgument) {
  EXPECT_STATUS(
      ExampleParser::Create({{"x", FixedLenFeature{{3}, DType::kInt64, Tensor::FromVector<int64_t>({1, 2})}}}).status(),
      Code::kInvalidArgument, "Default value for feature x has 2 values, but shape [3] needs 3.");
  EXPECT_STATUS(ExampleParser::Create({{"x", FixedLenFeature{{}, DType::kInt64, Tensor::Scalar<float>(1)}}}).status(),
                Code::kInvalidArgument, "Default value for feature x has dtype float");
}

TEST(ParseExampleTest, KeyUsedAsDenseAndSparseIsInvalidArgument) {
  FeatureSpec spec{{"d", FixedLenFeature{{}, DType::kInt64}}, {"sp", SparseFeature{{"d"}, "v", DType::kInt64, {3}}}};
  EXPECT_STATUS(ExampleParser::Create(spec).status(), Code::kInvalidArgument,
                "Dense and sparse keys must not intersect; intersection: {'d'}");
  FeatureSpec conflict{{"a", VarLenFeature{DType::kFloat32}}, {"sp", SparseFeature{{"a"}, "v", DType::kInt64, {3}}}};
  EXPECT_STATUS(ExampleParser::Create(conflict).status(), Code::kInvalidArgument,
                "Conflicting type float vs int64 for feature a.");
  FeatureSpec ragged{{"a", VarLenFeature{DType::kFloat32}}, {"r", RaggedFeature{DType::kFloat32, "a"}}};
  EXPECT_STATUS(ExampleParser::Create(ragged).status(), Code::kInvalidArgument,
                "Ragged and sparse keys must not intersect; intersection: {'a'}");
}

TEST(ParseExampleTest, SharedKeyIsReadOnceForSeveralOutputs) {
  FeatureSpec spec{{"ix", VarLenFeature{DType::kInt64}}, {"sp", SparseFeature{{"ix"}, "val", DType::kInt64, {5}}}};
  auto r = ParseOne(MakeExample({{"ix", Int64Feature({3})}, {"val", Int64Feature({30})}}), spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(SparseOf(*r, "ix").values), std::vector<int64_t>{3});
  EXPECT_EQ(Values<int64_t>(SparseOf(*r, "sp").values), std::vector<int64_t>{30});
}

TEST(ParseExampleTest, TensorInputMustBeRankOneStrings) {
  ASSERT_TRUE(ExampleParser::Create({}).ok());
  auto parser = *ExampleParser::Create({{"v", VarLenFeature{DType::kInt64}}});
  Tensor batch = Tensor::FromStrings({MakeExample({{"v", Int64Feature({1})}}), MakeExample({})});
  auto r = parser.Parse(batch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(SparseOf(*r, "v").dense_shape), (std::vector<int64_t>{2, 1}));
  EXPECT_STATUS(parser.Parse(Tensor::String("x")).status(), Code::kInvalidArgument,
                "serialized must be a rank-1 string tensor");
  EXPECT_EQ(parser.features().size(), 1u);
}


// --- ParseViews / ParseSingleViews (zero-copy bytes) ------------------------

// A spec with bytes in every output kind, and records that exercise each:
// present, missing (defaults, padding), repeated values.
FeatureSpec BytesEverywhereSpec() {
  return {{"dense", FixedLenFeature{{2}, DType::kString, Tensor::FromStrings({"d0", "d1"})}},
          {"num", FixedLenFeature{{}, DType::kInt64, Tensor::Scalar<int64_t>(-1)}},
          {"var", VarLenFeature{DType::kString}},
          {"seq", FixedLenSequenceFeature{{}, DType::kString, true, Tensor::String("pad")}},
          {"sparse", SparseFeature{{"ix"}, "sv", DType::kString, {10}}},
          {"ragged", RaggedFeature{DType::kString, "rv", {RaggedPartition::RowLengths("rl")}}}};
}

std::vector<std::string> BytesEverywhereRecords() {
  return {MakeExample({{"dense", BytesFeature({"a", "bb"})},
                       {"num", Int64Feature({5})},
                       {"var", BytesFeature({"x", "", "yyy"})},
                       {"seq", BytesFeature({"s1", "s2", "s3"})},
                       {"ix", Int64Feature({7, 2})},
                       {"sv", BytesFeature({"seven", "two"})},
                       {"rv", BytesFeature({"r1", "r2", "r3"})},
                       {"rl", Int64Feature({2, 1})}}),
          MakeExample({}),
          MakeExample({{"seq", BytesFeature({"only"})}, {"var", BytesFeature({"v"})}, {"rl", Int64Feature({})}})};
}

TEST(ParseExampleViewsTest, BatchMatchesTheCopyingParserWithoutCopyingBytes) {
  const std::vector<std::string> records = BytesEverywhereRecords();
  const std::vector<std::string_view> views(records.begin(), records.end());
  auto parser = ExampleParser::Create(BytesEverywhereSpec());
  ASSERT_TRUE(parser.ok()) << parser.status();
  auto copied = parser->Parse(views);
  ASSERT_TRUE(copied.ok()) << copied.status();
  auto got = parser->ParseViews(views);
  ASSERT_TRUE(got.ok()) << got.status();
  testing::ExpectViewsMatch(*copied, *got, views, {"", "d0", "d1", "pad"});
  int with_strings = 0;
  for (size_t i = 0; i < got->size(); ++i) with_strings += got->has_strings(i) ? 1 : 0;
  EXPECT_EQ(with_strings, 5);  // dense, var, seq, sparse, ragged
  const auto strings = [&](std::string_view name) {
    const std::span<const std::string_view> v = got->strings(static_cast<size_t>(got->Find(name)));
    return std::vector<std::string_view>(v.begin(), v.end());
  };
  EXPECT_EQ(strings("dense"), (std::vector<std::string_view>{"a", "bb", "d0", "d1", "d0", "d1"}));
  EXPECT_EQ(got->strings_shape(static_cast<size_t>(got->Find("seq"))), (TensorShape{3, 3}));
  EXPECT_EQ(strings("sparse"), (std::vector<std::string_view>{"two", "seven"}));  // sorted
  EXPECT_EQ(got->Find("nope"), -1);
}

TEST(ParseExampleViewsTest, SingleRecordsMatchTheCopyingParser) {
  auto parser = ExampleParser::Create(BytesEverywhereSpec());
  ASSERT_TRUE(parser.ok()) << parser.status();
  for (const std::string& r : BytesEverywhereRecords()) {
    auto copied = parser->ParseSingle(r);
    ASSERT_TRUE(copied.ok()) << copied.status();
    auto got = parser->ParseSingleViews(r);
    ASSERT_TRUE(got.ok()) << got.status();
    const std::string_view one[] = {r};
    testing::ExpectViewsMatch(*copied, *got, one, {"", "d0", "d1", "pad"});
  }
}

TEST(ParseExampleViewsTest, DefaultViewsStayValidAfterTheParserIsGone) {
  const std::string empty = MakeExample({});
  Result<ParsedFeatureViews> got = ParsedFeatureViews();
  {
    auto parser = ExampleParser::Create({{"s", FixedLenFeature{{}, DType::kString, Tensor::String("default")}}});
    ASSERT_TRUE(parser.ok()) << parser.status();
    got = parser->ParseSingleViews(empty);
  }
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  ASSERT_EQ(got->strings(0).size(), 1u);
  EXPECT_EQ(got->strings(0)[0], "default");
  EXPECT_EQ(got->strings_shape(0), TensorShape{});
  const ParsedFeatureViews copy = *got;  // copies have their own views, equal
  EXPECT_EQ(copy.strings(0)[0], "default");
}

TEST(ParseExampleViewsTest, ErrorsAreThoseOfTheCopyingParser) {
  const std::vector<std::string> records = {MakeExample({{"s", BytesFeature({"a"})}}),
                                            MakeExample({{"s", Int64Feature({1})}})};
  const std::vector<std::string_view> views(records.begin(), records.end());
  auto parser = ExampleParser::Create({{"s", FixedLenFeature{{}, DType::kString}}});
  ASSERT_TRUE(parser.ok()) << parser.status();
  const Status want = parser->Parse(views).status();
  const Status got = parser->ParseViews(views).status();
  EXPECT_EQ(got.code(), Code::kInvalidArgument);
  EXPECT_EQ(got.message(), want.message());
  EXPECT_STATUS(parser->ParseViews(views, std::vector<std::string>{"one"}).status(), Code::kInvalidArgument,
                "example_names must be empty");
  EXPECT_STATUS(parser->ParseSingleViews("\xff").status(), Code::kInvalidArgument,
                "Could not parse example input");
}

TEST(ParseExampleViewsTest, ReusedResultIsOverwrittenAndEarlierTensorsStayValid) {
  const std::string r1 = MakeExample({{"s", BytesFeature({"one"})}, {"i", Int64Feature({1})}});
  const std::string r2 = MakeExample({{"s", BytesFeature({"two"})}, {"i", Int64Feature({2})}});
  auto a = ExampleParser::Create({{"s", FixedLenFeature{{}, DType::kString}}, {"i", FixedLenFeature{{}, DType::kInt64}}});
  auto b = ExampleParser::Create({{"f", VarLenFeature{DType::kFloat32}}});
  ASSERT_TRUE(a.ok() && b.ok());
  ParsedFeatureViews out;
  ASSERT_TRUE(a->ParseSingleViews(r1, &out).ok());
  const size_t s = static_cast<size_t>(out.Find("s"));
  const size_t i = static_cast<size_t>(out.Find("i"));
  const Tensor first = std::get<Tensor>(out.value(i));
  const std::string_view first_view = out.strings(s)[0];
  ASSERT_TRUE(a->ParseSingleViews(r2, &out).ok());
  EXPECT_EQ(out.strings(s)[0], "two");
  EXPECT_EQ(std::get<Tensor>(out.value(i)).scalar<int64_t>(), 2);
  EXPECT_EQ(first.scalar<int64_t>(), 1);  // shared, not overwritten
  EXPECT_EQ(first_view, "one");           // a view into r1
  // Another parser's outputs replace these entirely.
  ASSERT_TRUE(b->ParseSingleViews(MakeExample({{"f", FloatFeature({0.5f})}}), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.name(0), "f");
  EXPECT_FALSE(out.has_strings(0));
  EXPECT_TRUE(out.strings(0).empty());
  // An error leaves it empty.
  EXPECT_STATUS(a->ParseSingleViews(r1.substr(0, r1.size() - 1), &out), Code::kInvalidArgument, "");
  EXPECT_EQ(out.size(), 0u);
}

TEST(ParseExampleViewsTest, NumericOnlySpecHasNoStrings) {
  const std::string r = MakeExample({{"f", FloatFeature({1, 2})}});
  auto parser = ExampleParser::Create({{"f", VarLenFeature{DType::kFloat32}}});
  ASSERT_TRUE(parser.ok()) << parser.status();
  auto got = parser->ParseSingleViews(r);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_FALSE(got->has_strings(0));
  EXPECT_TRUE(got->strings(0).empty());
  EXPECT_EQ(Values<float>(std::get<SparseTensor>(got->value(0)).values), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace sluice::ops
