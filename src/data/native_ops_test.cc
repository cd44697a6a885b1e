// The native element ops as map functions: output signatures, a fused chain
// (CIFAR-10's distorted inputs), and per-element randomness that depends on
// (seed, epoch, index) only.
#include "sluice/data/native_ops.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/data_test_util.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Must;
using V = std::vector<int64_t>;

constexpr int kRecordBytes = 1 + 32 * 32 * 3;

// n CIFAR-10 records: label i % 10, then the image, depth-major.
DatasetPtr CifarRecords(int n) {
  std::vector<std::string> records;
  for (int i = 0; i < n; ++i) {
    std::string r(kRecordBytes, '\0');
    r[0] = static_cast<char>(i % 10);
    for (int j = 1; j < kRecordBytes; ++j) r[j] = static_cast<char>((i * 7 + j) % 256);
    records.push_back(r);
  }
  return Must(FromTensorSlices(Element({Tensor::FromStrings(records)})));
}

// decode_raw -> [label, image] -> the CIFAR-10 distortions, one fused map.
NativeMap DistortedInputs(const ElementSpec& spec, uint64_t seed) {
  std::vector<NativeMap> maps;
  auto add = [&](Result<NativeMap> m) {
    EXPECT_TRUE(m.ok()) << m.status();
    maps.push_back(std::move(*m));
  };
  add(DecodeRawMap(spec, 0, DType::kUInt8));
  add(SelectMap(maps.back().spec, {0, 0}));
  add(StridedSliceMap(maps.back().spec, 0, {.begin = {0}, .end = {1}, .strides = {}}));
  add(CastMap(maps.back().spec, 0, DType::kInt32));
  add(StridedSliceMap(maps.back().spec, 1, {.begin = {1}, .end = {kRecordBytes}, .strides = {}}));
  add(ReshapeMap(maps.back().spec, 1, {3, 32, 32}));
  add(TransposeMap(maps.back().spec, 1, {1, 2, 0}));
  add(CastMap(maps.back().spec, 1, DType::kFloat32));
  add(RandomCropMap(maps.back().spec, 1, {24, 24, 3}, seed));
  add(RandomFlipLeftRightMap(maps.back().spec, 1, seed + 1));
  add(RandomBrightnessMap(maps.back().spec, 1, 63, seed + 2));
  add(RandomContrastMap(maps.back().spec, 1, 0.2f, 1.8f, seed + 3));
  add(PerImageStandardizationMap(maps.back().spec, 1));
  return Compose(std::move(maps));
}

TEST(NativeOpsTest, ComposedChainGivesTheLastSignature) {
  DatasetPtr records = CifarRecords(4);
  NativeMap m = DistortedInputs(records->element_spec(), 1);
  ASSERT_EQ(m.spec.size(), 2u);
  EXPECT_EQ(m.spec.dtypes[0], DType::kInt32);
  EXPECT_EQ(m.spec.shapes[0], PartialShape({-1}));  // the record length is not known
  EXPECT_EQ(m.spec.dtypes[1], DType::kFloat32);
  EXPECT_EQ(m.spec.shapes[1], PartialShape({24, 24, 3}));
}

TEST(NativeOpsTest, ChainValuesDoNotDependOnParallelism) {
  DatasetPtr records = CifarRecords(16);
  auto run = [&](int64_t npc) {
    NativeMap m = DistortedInputs(records->element_spec(), 9);
    return Elements(Must(MapWithIndex(records, m.fn, m.spec, {.num_parallel_calls = npc})));
  };
  std::vector<Element> one = run(1), four = run(4);
  ASSERT_EQ(one.size(), 16u);
  ASSERT_EQ(four.size(), 16u);
  bool differ = false;
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i][0].scalar<int32_t>(), static_cast<int32_t>(i % 10));
    EXPECT_TRUE(ValuesEqual(one[i][1], four[i][1])) << i;
    if (i > 0 && !ValuesEqual(one[i][1], one[0][1])) differ = true;
    // per_image_standardization: mean 0.
    double sum = 0;
    for (float v : one[i][1].flat<float>()) sum += v;
    EXPECT_NEAR(sum / one[i][1].num_elements(), 0.0, 1e-4);
  }
  EXPECT_TRUE(differ);
}

TEST(NativeOpsTest, TransposeAfterReshapeGivesHwcPixels) {
  DatasetPtr records = CifarRecords(1);
  ElementSpec spec = records->element_spec();
  NativeMap raw = *DecodeRawMap(spec, 0, DType::kUInt8);
  NativeMap slice = *SliceMap(raw.spec, 0, {1}, {-1});
  NativeMap shape = *ReshapeMap(slice.spec, 0, {3, 32, 32});
  NativeMap hwc = *TransposeMap(shape.spec, 0, {1, 2, 0});
  EXPECT_EQ(slice.spec.shapes[0], PartialShape({-1}));
  EXPECT_EQ(shape.spec.shapes[0], PartialShape({3, 32, 32}));
  NativeMap m = Compose({raw, slice, shape, hwc});
  std::vector<Element> out = Elements(Must(MapWithIndex(records, m.fn, m.spec)));
  ASSERT_EQ(out.size(), 1u);
  const Tensor& img = out[0][0];
  ASSERT_EQ(img.shape(), TensorShape({32, 32, 3}));
  // pixel (y, x, c) is record byte 1 + c * 1024 + y * 32 + x.
  const int y = 5, x = 7, c = 2;
  EXPECT_EQ(img.data<uint8_t>()[(y * 32 + x) * 3 + c], (1 + c * 1024 + y * 32 + x) % 256);
}

TEST(NativeOpsTest, BuildErrorsAreInvalidArgument) {
  ElementSpec ints{{DType::kInt64}, {PartialShape({4})}, {}};
  EXPECT_EQ(DecodeRawMap(ints, 0, DType::kUInt8).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(CastMap(ints, 1, DType::kFloat32).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ReshapeMap(ints, 0, {3}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(TransposeMap(ints, 0, {0, 1}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(RandomCropMap(ints, 0, {5}, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(RandomFlipLeftRightMap(ints, 0, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(RandomContrastMap(ints, 0, 1.0f, 0.5f, 0).status().code(), Code::kInvalidArgument);
}

TEST(NativeOpsTest, OneHotAndNormalize) {
  DatasetPtr labels = Must(FromTensorSlices(Element({Tensor::FromVector<int64_t>({0, 2})})));
  NativeMap m = *OneHotMap(labels->element_spec(), 0, 3);
  EXPECT_EQ(m.spec.shapes[0], PartialShape({3}));
  std::vector<Element> out = Elements(Must(MapWithIndex(labels, m.fn, m.spec)));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1][0].data<float>()[2], 1.0f);
  Tensor img(DType::kUInt8, TensorShape{1, 1, 1});
  img.data<uint8_t>()[0] = 255;
  DatasetPtr imgs = Must(FromTensors(Element({img})));
  NativeMap n = *NormalizeMap(imgs->element_spec(), 0, {0.5f}, {0.25f});
  out = Elements(Must(MapWithIndex(imgs, n.fn, n.spec)));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0][0].data<float>()[0], 2.0f, 1e-6);
}

TEST(NativeOpsTest, ScalarArithmeticRoundsInTheComponentsDtype) {
  DatasetPtr xs = Must(FromTensorSlices(Element({Tensor::FromVector<float>({255.0f, 3.0f})})));
  NativeMap mul = *ScalarArithmeticMap(xs->element_spec(), 0, ScalarOp::kMul, 1.0 / 255);
  NativeMap sub = *ScalarArithmeticMap(mul.spec, 0, ScalarOp::kSub, 0.5);
  NativeMap m = Compose({mul, sub});
  std::vector<Element> out = Elements(Must(MapWithIndex(xs, m.fn, m.spec)));
  ASSERT_EQ(out.size(), 2u);
  const float k = static_cast<float>(1.0 / 255);
  EXPECT_EQ(out[1][0].scalar<float>(), 3.0f * k - 0.5f);
  ElementSpec ints{{DType::kInt64}, {PartialShape({})}, {}};
  EXPECT_EQ(ScalarArithmeticMap(ints, 0, ScalarOp::kDiv, 2).status().code(), Code::kInvalidArgument);
}

TEST(NativeOpsTest, ProducerStageCountsCallsAsIndices) {
  int calls = 0;
  train::TypedProducer in{[&calls]() -> Result<Element> {
                            return Element({Tensor::Scalar<int64_t>(calls++)});
                          },
                          {DType::kInt64}, {PartialShape({})}, {}};
  NativeMap m = *OneHotMap(ElementSpec{in.dtypes, in.shapes, {}}, 0, 4);
  train::TypedProducer out = MapNativeProducer(in, m);
  EXPECT_EQ(out.shapes[0], PartialShape({4}));
  Result<Element> e = out.producer();
  ASSERT_TRUE(e.ok());
  e = out.producer();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)[0].data<float>()[1], 1.0f);
}

}  // namespace
}  // namespace sluice::data
