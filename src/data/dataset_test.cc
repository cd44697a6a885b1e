// Sources and sequential transformations: order, remainders, cardinality,
// errors (cross-checked with TensorFlow by python/src/test_data_tf_compat.py).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "data/data_test_util.h"
#include "sluice/data/map_ops.h"
#include "sluice/io/record_writer.h"
#include "sluice/ops/example_builder.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Ints;
using testing::Must;
using testing::RangeOf;
using V = std::vector<int64_t>;

TEST(RangeTest, CountsFromStartToStopByStep) {
  EXPECT_EQ(Ints(Must(Range(2, 11, 3))), (V{2, 5, 8}));
  EXPECT_EQ(Ints(Must(Range(5, 0, -2))), (V{5, 3, 1}));
  EXPECT_EQ(Must(Range(2, 11, 3))->cardinality(), 3);
  EXPECT_EQ(Must(Range(5, 0, -2))->cardinality(), 3);
  EXPECT_EQ(Must(Range(5, 5))->cardinality(), 0);
}

TEST(RangeTest, ZeroStepIsInvalidArgument) { EXPECT_EQ(Range(0, 5, 0).status().code(), Code::kInvalidArgument); }

TEST(FromTensorSlicesTest, SlicesEveryComponentAlongTheFirstDimension) {
  DatasetPtr ds = Must(FromTensorSlices(
      Element{Tensor::FromVector<int64_t>({1, 2, 3}), Tensor::FromStrings({"a", "b", "c"})}, {"x", "y"}));
  EXPECT_EQ(ds->cardinality(), 3);
  EXPECT_EQ(ds->element_spec().names, (std::vector<std::string>{"x", "y"}));
  std::vector<Element> got = Elements(ds);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2][0].scalar<int64_t>(), 3);
  EXPECT_EQ(got[2][1].scalar<std::string>(), "c");
}

TEST(FromTensorSlicesTest, DifferentFirstDimensionsAreInvalidArgument) {
  auto r = FromTensorSlices(Element{Tensor::FromVector<int64_t>({1, 2}), Tensor::FromVector<int64_t>({1})});
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(FromTensorsTest, IsOneElement) {
  DatasetPtr ds = Must(FromTensors(Element{Tensor::FromVector<int64_t>({1, 2})}));
  EXPECT_EQ(ds->cardinality(), 1);
  EXPECT_EQ(Elements(ds).size(), 1u);
}

TEST(MapTest, AppliesTheFunctionInOrder) {
  DatasetPtr ds = Must(Map(RangeOf(4), testing::Times(10), testing::Int64Scalar()));
  EXPECT_EQ(Ints(ds), (V{0, 10, 20, 30}));
  EXPECT_EQ(ds->cardinality(), 4);
}

TEST(MapTest, FunctionOutOfRangeBecomesInvalidArgument) {
  DatasetPtr ds = Must(Map(RangeOf(3), [](Element) -> Result<Element> { return errors::OutOfRange("stop"); },
                           testing::Int64Scalar()));
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("OutOfRange"), std::string::npos);
}

TEST(FilterTest, KeepsWhatThePredicateAccepts) {
  DatasetPtr ds =
      Must(Filter(RangeOf(10), [](const Element& e) -> Result<bool> { return e[0].scalar<int64_t>() % 3 == 0; }));
  EXPECT_EQ(Ints(ds), (V{0, 3, 6, 9}));
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
}

TEST(BatchTest, KeepsOrDropsTheRemainder) {
  DatasetPtr kept = Must(Batch(RangeOf(7), 3));
  DatasetPtr dropped = Must(Batch(RangeOf(7), 3, true));
  EXPECT_EQ(kept->cardinality(), 3);
  EXPECT_EQ(dropped->cardinality(), 2);
  std::vector<Element> got = Elements(kept);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2][0].shape(), (TensorShape{1}));
  EXPECT_EQ(got[1][0].flat<int64_t>()[2], 5);
  EXPECT_EQ(Elements(dropped).size(), 2u);
  EXPECT_EQ(dropped->element_spec().shapes[0], PartialShape({3}));
  EXPECT_EQ(kept->element_spec().shapes[0], PartialShape({-1}));
}

TEST(BatchTest, StacksNonScalarComponents) {
  DatasetPtr ds = Must(Batch(Must(FromTensorSlices(Element{Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6})})), 1));
  std::vector<Element> got = Elements(Must(Batch(ds, 2)));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0][0].shape(), (TensorShape{2, 1}));
  EXPECT_EQ(got[2][0].flat<int64_t>()[1], 6);
}

TEST(BatchTest, DifferentShapesAreInvalidArgument) {
  DatasetPtr ragged = Must(Map(
      RangeOf(2),
      [](Element e) -> Result<Element> {
        return Element{Tensor::Zeros(DType::kInt64, TensorShape{e[0].scalar<int64_t>() + 1})};
      },
      ElementSpec{{DType::kInt64}, {PartialShape({-1})}, {}}));
  auto it = Must(Batch(ragged, 2))->MakeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Cannot batch tensors with different shapes in component 0"), std::string::npos);
}

TEST(PaddedBatchTest, PadsToTheLongestWithThePaddingValue) {
  DatasetPtr ragged = Must(Map(
      Must(Range(1, 4)),
      [](Element e) -> Result<Element> {
        const int64_t n = e[0].scalar<int64_t>();
        return Element{Tensor::FromVector<int64_t>(std::vector<int64_t>(static_cast<size_t>(n), n))};
      },
      ElementSpec{{DType::kInt64}, {PartialShape({-1})}, {}}));
  std::vector<Element> got =
      Elements(Must(PaddedBatch(ragged, 2, {}, Element{Tensor::Scalar<int64_t>(-1)})));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0][0].shape(), (TensorShape{2, 2}));
  EXPECT_EQ(std::vector<int64_t>(got[0][0].flat<int64_t>().begin(), got[0][0].flat<int64_t>().end()),
            (V{1, -1, 2, 2}));
  EXPECT_EQ(got[1][0].shape(), (TensorShape{1, 3}));
  std::vector<Element> fixed = Elements(Must(PaddedBatch(ragged, 3, {PartialShape({5})})));
  EXPECT_EQ(fixed[0][0].shape(), (TensorShape{3, 5}));
  auto small = Must(PaddedBatch(ragged, 3, {PartialShape({2})}))->MakeIterator();
  Element e;
  bool end = false;
  EXPECT_EQ(small->GetNext(&e, &end).code(), Code::kInvalidArgument);
}

TEST(UnbatchTest, UndoesBatch) {
  EXPECT_EQ(Ints(Must(Unbatch(Must(Batch(RangeOf(7), 3))))), (V{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Must(Unbatch(Must(Batch(RangeOf(7), 3, true))))->cardinality(), 6);
}

TEST(ShuffleTest, IsAPermutationRepeatableWithASeed) {
  auto order = [](int64_t seed) { return Ints(Must(Shuffle(RangeOf(50), 10, 87654321, seed))); };
  V a = order(7);
  EXPECT_EQ(a, order(7));
  EXPECT_NE(a, order(8));
  V sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, Ints(RangeOf(50)));
  EXPECT_NE(a, sorted);
}

TEST(ShuffleTest, GivesTensorFlowsOrderForTheSameSeeds) {
  // tf.data.Dataset.range(10).shuffle(4, seed=3) in TF 2 (seeds (87654321, 3)).
  EXPECT_EQ(Ints(Must(Shuffle(RangeOf(10), 4, 87654321, 3))), (V{0, 3, 2, 1, 4, 7, 6, 5, 8, 9}));
}

TEST(ShuffleTest, ReshufflesEachIterationUnlessTold) {
  DatasetPtr re = Must(Shuffle(RangeOf(20), 20, 87654321, 1));
  EXPECT_NE(Ints(re), Ints(re));
  DatasetPtr same = Must(Shuffle(RangeOf(20), 20, 87654321, 1, false));
  EXPECT_EQ(Ints(same), Ints(same));
  V two_epochs = Ints(Must(Repeat(re, 2)));
  EXPECT_NE(V(two_epochs.begin(), two_epochs.begin() + 20), V(two_epochs.begin() + 20, two_epochs.end()));
}

TEST(RepeatTest, RepeatsCountTimesOrForEver) {
  EXPECT_EQ(Ints(Must(Repeat(RangeOf(2), 3))), (V{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(Must(Repeat(RangeOf(2), 3))->cardinality(), 6);
  DatasetPtr forever = Must(Repeat(RangeOf(2)));
  EXPECT_EQ(forever->cardinality(), kInfiniteCardinality);
  EXPECT_EQ(Ints(Must(Take(forever, 5))), (V{0, 1, 0, 1, 0}));
  EXPECT_EQ(Ints(Must(Repeat(RangeOf(0)))), V{});
}

TEST(TakeSkipTest, TakeAndSkipCountElements) {
  EXPECT_EQ(Ints(Must(Take(RangeOf(5), 2))), (V{0, 1}));
  EXPECT_EQ(Ints(Must(Take(RangeOf(5), -1))), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(Ints(Must(Skip(RangeOf(5), 2))), (V{2, 3, 4}));
  EXPECT_EQ(Ints(Must(Skip(RangeOf(5), -1))), V{});
  EXPECT_EQ(Must(Take(Must(Repeat(RangeOf(5))), 7))->cardinality(), 7);
  EXPECT_EQ(Must(Skip(RangeOf(5), 7))->cardinality(), 0);
}

TEST(ShardTest, TakesEveryNthFromIndex) {
  EXPECT_EQ(Ints(Must(Shard(RangeOf(10), 3, 1))), (V{1, 4, 7}));
  EXPECT_EQ(Must(Shard(RangeOf(10), 3, 0))->cardinality(), 4);
  EXPECT_EQ(Shard(RangeOf(10), 3, 3).status().code(), Code::kInvalidArgument);
}

TEST(ZipTest, EndsWithTheShortest) {
  DatasetPtr ds = Must(Zip({RangeOf(3), Must(Range(10, 20))}));
  EXPECT_EQ(ds->cardinality(), 3);
  EXPECT_EQ(Ints(ds, 1), (V{10, 11, 12}));
}

TEST(ConcatenateTest, AppendsAndChecksDtypes) {
  EXPECT_EQ(Ints(Must(Concatenate(RangeOf(2), Must(Range(5, 7))))), (V{0, 1, 5, 6}));
  EXPECT_EQ(Concatenate(RangeOf(2), Must(Range(0, 2, 1, DType::kInt32))).status().code(), Code::kInvalidArgument);
}

TEST(EnumerateTest, PrependsTheIndex) {
  DatasetPtr ds = Must(Enumerate(Must(Range(5, 8)), 2));
  EXPECT_EQ(Ints(ds, 0), (V{2, 3, 4}));
  EXPECT_EQ(Ints(ds, 1), (V{5, 6, 7}));
  EXPECT_EQ(ds->cardinality(), 3);
}

TEST(InterleaveTest, CyclesBlocksOfEachOpenDataset) {
  // TF's documented example: range(1, 6).interleave(lambda x: repeat(x, 6), cycle_length=2, block_length=4).
  InterleaveFn fn = [](Element e) { return Repeat(Must(FromTensors(std::move(e))), 6); };
  DatasetPtr ds = Must(Interleave(Must(Range(1, 6)), fn, testing::Int64Scalar(),
                                  InterleaveOptions{.cycle_length = 2, .block_length = 4, .num_parallel_calls = std::nullopt}));
  EXPECT_EQ(Ints(ds), (V{1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5}));
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
}

TEST(CacheTest, ReplaysTheFirstCompletePass) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  DatasetPtr counted = Must(Map(
      RangeOf(3), [calls](Element e) -> Result<Element> { ++*calls; return e; }, testing::Int64Scalar()));
  DatasetPtr cached = Must(Cache(counted));
  EXPECT_EQ(Ints(cached), (V{0, 1, 2}));
  EXPECT_EQ(Ints(cached), (V{0, 1, 2}));
  EXPECT_EQ(calls->load(), 3);
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + name;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto w = io::RecordWriter::Open(path);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) ASSERT_TRUE((*w)->Write(r).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

std::vector<std::string> Strings(const DatasetPtr& ds) {
  std::vector<std::string> out;
  for (const Element& e : Elements(ds)) out.push_back(e[0].scalar<std::string>());
  return out;
}

TEST(TFRecordDatasetTest, ReadsFilesInOrderOrInterleaved) {
  const std::string a = TempPath("a"), b = TempPath("b");
  WriteRecords(a, {"a0", "a1", "a2"});
  WriteRecords(b, {"b0"});
  EXPECT_EQ(Strings(Must(TFRecordDataset({a, b}))), (std::vector<std::string>{"a0", "a1", "a2", "b0"}));
  RecordDatasetOptions parallel;
  parallel.num_parallel_reads = 2;
  EXPECT_EQ(Strings(Must(TFRecordDataset({a, b}, parallel))), (std::vector<std::string>{"a0", "b0", "a1", "a2"}));
}

TEST(TFRecordDatasetTest, CorruptRecordIsDataLossNamingFileAndRecord) {
  const std::string a = TempPath("a");
  WriteRecords(a, {"good", "soon bad"});
  {
    std::fstream f(a, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(16 + 4 + 12 + 2);
    f.put('X');
  }
  auto it = Must(TFRecordDataset({a}))->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_EQ(s.GetPayload("file"), a);
  EXPECT_EQ(s.GetPayload("record"), "1");
}

TEST(TFRecordDatasetTest, MissingFileIsNotFound) {
  auto it = Must(TFRecordDataset({TempPath("missing")}))->MakeIterator();
  Element e;
  bool end = false;
  EXPECT_EQ(it->GetNext(&e, &end).code(), Code::kNotFound);
}

TEST(TextLineDatasetTest, ReadsLines) {
  const std::string a = TempPath("a");
  std::ofstream(a) << "one\ntwo\r\nthree";
  EXPECT_EQ(Strings(Must(TextLineDataset({a}))), (std::vector<std::string>{"one", "two", "three"}));
}

TEST(FixedLengthRecordDatasetTest, SkipsHeaderAndFooter) {
  const std::string a = TempPath("a");
  std::ofstream(a) << "HHabcdefFF";
  FixedLengthOptions fixed{.record_bytes = 3, .header_bytes = 2, .footer_bytes = 2};
  EXPECT_EQ(Strings(Must(FixedLengthRecordDataset({a}, fixed))), (std::vector<std::string>{"abc", "def"}));
}

TEST(FixedLengthRecordDatasetTest, BodyOfPartialRecordsIsInvalidArgument) {
  const std::string a = TempPath("a");
  std::ofstream(a) << "HHabcdefgFF";
  FixedLengthOptions fixed{.record_bytes = 3, .header_bytes = 2, .footer_bytes = 2};
  auto it = Must(FixedLengthRecordDataset({a}, fixed))->MakeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("not an exact multiple of the record length (3 bytes)"), std::string::npos);
}

TEST(ParseExampleMapTest, ParsesRecordsIntoFeatures) {
  ops::ExampleBuilder b;
  b.AddInt64s("label", {7});
  b.AddFloats("x", {1.5f, 2.5f});
  DatasetPtr records = Must(FromTensors(Element{Tensor::String(b.Serialize())}));
  auto parser = ops::ExampleParser::Create(ops::FeatureSpec{{"label", ops::FixedLenFeature(TensorShape{}, DType::kInt64)},
                                                           {"x", ops::FixedLenFeature(TensorShape{2}, DType::kFloat32)}});
  ASSERT_TRUE(parser.ok()) << parser.status();
  auto map = ParseExampleMap(records->element_spec(), *parser);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->spec.names, (std::vector<std::string>{"label", "x"}));
  std::vector<Element> got = Elements(Must(MapWithIndex(records, map->fn, map->spec)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0][0].scalar<int64_t>(), 7);
  EXPECT_EQ(got[0][1].flat<float>()[1], 2.5f);
  EXPECT_EQ(ParseExampleMap(testing::Int64Scalar(), *parser).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::data
