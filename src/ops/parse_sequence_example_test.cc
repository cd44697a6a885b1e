#include "sluice/ops/parse_sequence_example.h"

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
using testing::MakeFeatureList;
using testing::MakeSequenceExample;
using testing::RaggedOf;
using testing::SparseOf;
using testing::Values;

// context: id (int64), feature lists: tokens (one bytes per row), pos (2 floats per row)
std::string Record(int64_t id, const std::vector<std::string>& tokens) {
  std::vector<std::string> token_rows, pos_rows;
  for (size_t i = 0; i < tokens.size(); ++i) {
    token_rows.push_back(BytesFeature({tokens[i]}));
    pos_rows.push_back(FloatFeature({static_cast<float>(i), static_cast<float>(id)}));
  }
  return MakeSequenceExample({{"id", Int64Feature({id})}},
                             {{"tokens", MakeFeatureList(token_rows)}, {"pos", MakeFeatureList(pos_rows)}});
}

TEST(ParseSequenceExampleTest, SingleRecordContextAndDenseFeatureLists) {
  FeatureSpec context{{"id", FixedLenFeature{{}, DType::kInt64}}};
  FeatureSpec sequence{{"tokens", FixedLenSequenceFeature{{}, DType::kString}},
                       {"pos", FixedLenSequenceFeature{{2}, DType::kFloat32}}};
  auto r = ParseSingleSequenceExample(Record(7, {"a", "b", "c"}), context, sequence);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(r->context, "id")), std::vector<int64_t>{7});
  EXPECT_EQ(Values<std::string>(DenseOf(r->feature_lists, "tokens")), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Dims(DenseOf(r->feature_lists, "pos")), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<float>(DenseOf(r->feature_lists, "pos")), (std::vector<float>{0, 7, 1, 7, 2, 7}));
  EXPECT_EQ(Values<int64_t>(r->lengths.at("tokens")), std::vector<int64_t>{3});
  EXPECT_EQ(r->lengths.at("tokens").rank(), 0);
}

TEST(ParseSequenceExampleTest, BatchPadsDenseFeatureListsAndReportsLengths) {
  FeatureSpec sequence{{"pos", FixedLenSequenceFeature{{2}, DType::kFloat32}}};
  std::vector<std::string> recs = {Record(1, {"a"}), Record(2, {"a", "b", "c"}), Record(3, {})};
  std::vector<std::string_view> views(recs.begin(), recs.end());
  auto r = ParseSequenceExample(views, {}, sequence);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(DenseOf(r->feature_lists, "pos")), (std::vector<int64_t>{3, 3, 2}));
  EXPECT_EQ(Values<float>(DenseOf(r->feature_lists, "pos")),
            (std::vector<float>{0, 1, 0, 0, 0, 0, 0, 2, 1, 2, 2, 2, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Values<int64_t>(r->lengths.at("pos")), (std::vector<int64_t>{1, 3, 0}));
}

TEST(ParseSequenceExampleTest, MissingDenseFeatureListIsRequiredUnlessAllowMissing) {
  const std::string rec = MakeSequenceExample({{"id", Int64Feature({1})}}, {});
  auto r = ParseSingleSequenceExample(rec, {}, {{"s", FixedLenSequenceFeature{{}, DType::kInt64}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Name: <unknown>, Index: 0, Feature list 's' is required but could not be found.");
  auto ok = ParseSingleSequenceExample(rec, {}, {{"s", FixedLenSequenceFeature{{}, DType::kInt64, true}}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(Dims(DenseOf(ok->feature_lists, "s")), std::vector<int64_t>{0});
  EXPECT_EQ(Values<int64_t>(ok->lengths.at("s")), std::vector<int64_t>{0});
}

TEST(ParseSequenceExampleTest, DenseRowWithWrongCountNamesTheRow) {
  const std::string rec =
      MakeSequenceExample({}, {{"s", MakeFeatureList({Int64Feature({1, 2}), Int64Feature({1, 2, 3})})}});
  auto r = ParseSingleSequenceExample(rec, {}, {{"s", FixedLenSequenceFeature{{2}, DType::kInt64}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Name: <unknown>, Key: s, Index: 1.  Number of values != expected.  values size: 3 but output "
                "shape: [2]");
  EXPECT_EQ(r.status().GetPayload("record"), "0");
}

TEST(ParseSequenceExampleTest, FeatureListRowOfWrongTypeIsInvalidArgument) {
  const std::string rec = MakeSequenceExample({}, {{"s", MakeFeatureList({BytesFeature({"x"}), Int64Feature({1})})}});
  auto r = ParseSingleSequenceExample(rec, {}, {{"s", VarLenFeature{DType::kString}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument,
                "Name: <unknown>, Feature list: s, Index: 1.  Data types don't match. Expected type: string");
}

TEST(ParseSequenceExampleTest, VarLenFeatureListIndexesRowAndPosition) {
  const std::string rec = MakeSequenceExample(
      {}, {{"v", MakeFeatureList({Int64Feature({1, 2}), EmptyFeature(), Int64Feature({3}), Int64Feature({})})}});
  auto one = ParseSingleSequenceExample(rec, {}, {{"v", VarLenFeature{DType::kInt64}}});
  ASSERT_TRUE(one.ok()) << one.status();
  const SparseTensor& st = SparseOf(one->feature_lists, "v");
  EXPECT_EQ(Values<int64_t>(st.indices), (std::vector<int64_t>{0, 0, 0, 1, 2, 0}));
  EXPECT_EQ(Values<int64_t>(st.values), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Values<int64_t>(st.dense_shape), (std::vector<int64_t>{4, 2}));

  std::vector<std::string> recs = {MakeSequenceExample({}, {}), rec};
  std::vector<std::string_view> views(recs.begin(), recs.end());
  auto batch = ParseSequenceExample(views, {}, {{"v", VarLenFeature{DType::kInt64}}});
  ASSERT_TRUE(batch.ok()) << batch.status();
  const SparseTensor& bt = SparseOf(batch->feature_lists, "v");
  EXPECT_EQ(Values<int64_t>(bt.indices), (std::vector<int64_t>{1, 0, 0, 1, 0, 1, 1, 2, 0}));
  EXPECT_EQ(Values<int64_t>(bt.dense_shape), (std::vector<int64_t>{2, 4, 2}));
}

TEST(ParseSequenceExampleTest, RaggedFeatureListHasARowPerFeatureAndABatchLevel) {
  const std::string a = MakeSequenceExample({}, {{"w", MakeFeatureList({BytesFeature({"x", "y"}), BytesFeature({})})}});
  const std::string b = MakeSequenceExample({}, {{"w", MakeFeatureList({BytesFeature({"z"})})}});
  FeatureSpec seq{{"w", RaggedFeature{DType::kString}}};
  auto one = ParseSingleSequenceExample(a, {}, seq);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(RaggedOf(one->feature_lists, "w").nested_row_splits.size(), 1u);
  EXPECT_EQ(Values<int32_t>(RaggedOf(one->feature_lists, "w").nested_row_splits[0]), (std::vector<int32_t>{0, 2, 2}));
  std::vector<std::string_view> views = {a, b};
  auto batch = ParseSequenceExample(views, {}, seq);
  ASSERT_TRUE(batch.ok()) << batch.status();
  const RaggedTensor& rt = RaggedOf(batch->feature_lists, "w");
  ASSERT_EQ(rt.nested_row_splits.size(), 2u);
  EXPECT_EQ(Values<int32_t>(rt.nested_row_splits[0]), (std::vector<int32_t>{0, 2, 3}));
  EXPECT_EQ(Values<int32_t>(rt.nested_row_splits[1]), (std::vector<int32_t>{0, 2, 2, 3}));
  EXPECT_EQ(Values<std::string>(rt.values), (std::vector<std::string>{"x", "y", "z"}));
}

TEST(ParseSequenceExampleTest, RaggedFeatureListWithPartitionFromAnotherList) {
  // Row 0: values [1,2,3] cut by lengths [1,2]; row 1: values [4] cut by [1].
  const std::string rec = MakeSequenceExample(
      {}, {{"v", MakeFeatureList({Int64Feature({1, 2, 3}), Int64Feature({4})})},
           {"len", MakeFeatureList({Int64Feature({1, 2}), Int64Feature({1})})}});
  FeatureSpec seq{{"r", RaggedFeature{DType::kInt64, "v", {RaggedPartition::RowLengths("len")}, DType::kInt64}}};
  auto r = ParseSingleSequenceExample(rec, {}, seq);
  ASSERT_TRUE(r.ok()) << r.status();
  const RaggedTensor& rt = RaggedOf(r->feature_lists, "r");
  ASSERT_EQ(rt.nested_row_splits.size(), 2u);
  EXPECT_EQ(Values<int64_t>(rt.nested_row_splits[0]), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(Values<int64_t>(rt.nested_row_splits[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  const std::string misaligned =
      MakeSequenceExample({}, {{"v", MakeFeatureList({Int64Feature({1})})}, {"len", MakeFeatureList({})}});
  EXPECT_STATUS(ParseSingleSequenceExample(misaligned, {}, seq).status(), Code::kInvalidArgument,
                "Feature r: values and partitions are not aligned");
}

TEST(ParseSequenceExampleTest, ContextFeaturesBehaveAsInAnExample) {
  FeatureSpec context{{"label", FixedLenFeature{{}, DType::kInt64, Tensor::Scalar<int64_t>(-1)}},
                      {"tags", VarLenFeature{DType::kString}},
                      {"r", RaggedFeature{DType::kFloat32}}};
  const std::string a = MakeSequenceExample({{"tags", BytesFeature({"p", "q"})}, {"r", FloatFeature({1})}}, {});
  const std::string b = MakeSequenceExample({{"label", Int64Feature({4})}, {"label", EmptyFeature()}}, {});
  std::vector<std::string_view> views = {a, b};
  auto r = ParseSequenceExample(views, context, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(r->context, "label")), (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(Values<int64_t>(SparseOf(r->context, "tags").dense_shape), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<int32_t>(RaggedOf(r->context, "r").nested_row_splits[0]), (std::vector<int32_t>{0, 1, 1}));
  auto wrong = ParseSingleSequenceExample(a, {{"tags", FixedLenFeature{{2}, DType::kFloat32}}}, {});
  EXPECT_STATUS(wrong.status(), Code::kInvalidArgument, "Data types don't match. Data type: string but expected type: float");
}

TEST(ParseSequenceExampleTest, FeatureKindsAreCheckedPerPart) {
  EXPECT_STATUS(SequenceExampleParser::Create({{"c", FixedLenSequenceFeature{{}, DType::kInt64, true}}}, {}).status(),
                Code::kInvalidArgument, "Unsupported FixedLenSequenceFeature for context feature c.");
  EXPECT_STATUS(SequenceExampleParser::Create({}, {{"s", FixedLenFeature{{}, DType::kInt64}}}).status(),
                Code::kInvalidArgument, "Unsupported FixedLenFeature for sequence feature s.");
  EXPECT_STATUS(SequenceExampleParser::Create({}, {{"s", SparseFeature{{"i"}, "v", DType::kInt64, {2}}}}).status(),
                Code::kInvalidArgument, "Unsupported SparseFeature for sequence feature s.");
  EXPECT_STATUS(SequenceExampleParser::Create(
                    {}, {{"s", FixedLenSequenceFeature{{}, DType::kInt64, true, Tensor::Scalar<int64_t>(0)}}})
                    .status(),
                Code::kInvalidArgument, "feature_list_dense_defaults[s] must be None");
}

TEST(ParseSequenceExampleTest, SameNameMayBeContextAndFeatureList) {
  const std::string rec =
      MakeSequenceExample({{"x", Int64Feature({1})}}, {{"x", MakeFeatureList({Int64Feature({2}), Int64Feature({3})})}});
  auto r = ParseSingleSequenceExample(rec, {{"x", FixedLenFeature{{}, DType::kInt64}}},
                                      {{"x", FixedLenSequenceFeature{{}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(r->context, "x")), std::vector<int64_t>{1});
  EXPECT_EQ(Values<int64_t>(DenseOf(r->feature_lists, "x")), (std::vector<int64_t>{2, 3}));
}

TEST(ParseSequenceExampleTest, MalformedRecordIsCouldNotParseExampleInput) {
  std::string rec = Record(1, {"a"});
  rec.back() = '\xff';
  rec += "\x12";
  auto r = ParseSingleSequenceExample(rec, {}, {{"tokens", VarLenFeature{DType::kString}}});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument, "Name: <unknown>, Index: 0.  Could not parse example input");
}

TEST(ParseSequenceExampleTest, RepeatedFeatureListKeyTakesTheLastList) {
  const std::string rec = MakeSequenceExample(
      {}, {{"s", MakeFeatureList({Int64Feature({1})})}, {"s", MakeFeatureList({Int64Feature({2}), Int64Feature({3})})}});
  auto r = ParseSingleSequenceExample(rec, {}, {{"s", FixedLenSequenceFeature{{}, DType::kInt64}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(DenseOf(r->feature_lists, "s")), (std::vector<int64_t>{2, 3}));
}

}  // namespace
}  // namespace sluice::ops
