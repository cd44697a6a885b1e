// ChooseFromDatasets and SampleFromDatasets.
#include <gtest/gtest.h>

#include "data/data_test_util.h"

namespace sluice::data {
namespace {

using testing::Ints;
using testing::Must;
using V = std::vector<int64_t>;

DatasetPtr Choices(std::vector<int64_t> c) { return Must(FromTensorSlices(Element{Tensor::FromVector<int64_t>(c)})); }

TEST(ChooseFromDatasetsTest, TakesEachElementFromTheChosenInput) {
  DatasetPtr ds = Must(ChooseFromDatasets({Must(Range(0, 3)), Must(Range(100, 200))}, Choices({0, 1, 1, 0, 1})));
  EXPECT_EQ(Ints(ds), (V{0, 100, 101, 1, 102}));
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
}

TEST(ChooseFromDatasetsTest, AnExhaustedInputEndsTheSequenceOrIsSkipped) {
  std::vector<DatasetPtr> in{Must(Range(0, 1)), Must(Range(100, 200))};
  EXPECT_EQ(Ints(Must(ChooseFromDatasets(in, Choices({0, 0, 1}), true))), (V{0}));
  EXPECT_EQ(Ints(Must(ChooseFromDatasets(in, Choices({0, 0, 1}), false))), (V{0, 100}));
}

TEST(ChooseFromDatasetsTest, IndexOutOfRangeIsInvalidArgument) {
  auto it = Must(ChooseFromDatasets({testing::RangeOf(3)}, Choices({5})))->MakeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "Selector index out of range: 5 >= 1");
}

TEST(ChooseFromDatasetsTest, ChoicesMustBeInt64Scalars) {
  DatasetPtr floats = Must(FromTensorSlices(Element{Tensor::FromVector<float>({0})}));
  EXPECT_EQ(ChooseFromDatasets({testing::RangeOf(3)}, floats).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ChooseFromDatasets({}, Choices({0})).status().code(), Code::kInvalidArgument);
}

// TF 2.21: tf.data.Dataset.sample_from_datasets([range(0, 100), range(100, 200)],
// weights=[0.3, 0.7], seed=5) (seeds (87654321, 5)).
TEST(SampleFromDatasetsTest, SeededSamplingGivesTensorFlowsOrder) {
  DatasetPtr ds = Must(SampleFromDatasets({Must(Range(0, 100)), Must(Range(100, 200))}, {0.3, 0.7}, 87654321, 5));
  EXPECT_EQ(Ints(Must(Take(ds, 12))), (V{0, 1, 2, 100, 101, 3, 102, 103, 104, 4, 105, 106}));
}

TEST(SampleFromDatasetsTest, DrawsInProportionToTheWeights) {
  DatasetPtr ds = Must(SampleFromDatasets({Must(Repeat(Must(Range(0, 1)))), Must(Repeat(Must(Range(1, 2))))},
                                          {1.0, 3.0}, 87654321, 11));
  V got = Ints(Must(Take(ds, 4000)));
  const int64_t ones = std::count(got.begin(), got.end(), 1);
  EXPECT_NEAR(static_cast<double>(ones) / 4000, 0.75, 0.03);
  EXPECT_EQ(ds->cardinality(), kInfiniteCardinality);
}

TEST(SampleFromDatasetsTest, ExhaustedInputsAreSkippedUntilAllAre) {
  DatasetPtr ds = Must(SampleFromDatasets({Must(Range(0, 5)), Must(Range(100, 103))}, {}, 1, 2));
  V got = Ints(ds);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (V{0, 1, 2, 3, 4, 100, 101, 102}));
}

TEST(SampleFromDatasetsTest, ZeroWeightDatasetsAreDropped) {
  DatasetPtr ds = Must(SampleFromDatasets({Must(Range(0, 3)), Must(Range(100, 103))}, {0.0, 1.0}, 1, 2));
  EXPECT_EQ(Ints(ds), (V{100, 101, 102}));
  EXPECT_EQ(SampleFromDatasets({testing::RangeOf(1)}, {1.0, 2.0}).status().code(), Code::kInvalidArgument);
}

TEST(SampleFromDatasetsTest, RerandomizeDrawsAnotherSequenceEachEpoch) {
  std::vector<DatasetPtr> in{Must(Repeat(Must(Range(0, 1)))), Must(Repeat(Must(Range(1, 2))))};
  DatasetPtr fixed = Must(Repeat(Must(Take(Must(SampleFromDatasets(in, {}, 1, 2)), 30)), 2));
  DatasetPtr fresh = Must(Repeat(Must(Take(Must(SampleFromDatasets(in, {}, 1, 2, false, true)), 30)), 2));
  V a = Ints(fixed), b = Ints(fresh);
  EXPECT_EQ(V(a.begin(), a.begin() + 30), V(a.begin() + 30, a.end()));
  EXPECT_NE(V(b.begin(), b.begin() + 30), V(b.begin() + 30, b.end()));
}

TEST(SampleFromDatasetsTest, ADatasetOfWeightsPicksPerElementAndEndsTheSequence) {
  DatasetPtr weights = Must(FromTensorSlices(Element{Tensor::FromVector<float>({1, 0, 0, 1, 1, 0})}));
  weights = Must(Batch(weights, 2));  // [1, 0], [0, 1], [1, 0]
  DatasetPtr ds = Must(SampleFromDatasetsWithWeightDataset({Must(Range(0, 10)), Must(Range(100, 110))}, weights, 3, 4));
  EXPECT_EQ(Ints(ds), (V{0, 100, 1}));
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  DatasetPtr ints = Must(FromTensorSlices(Element{Tensor::FromVector<int64_t>({1})}));
  EXPECT_EQ(SampleFromDatasetsWithWeightDataset({testing::RangeOf(1), testing::RangeOf(1)}, ints).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::data
