#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "data/checkpoint_test_util.h"
#include "data/data_test_util.h"
#include "data/element_codec.h"
#include "sluice/data/datasets.h"
#include "sluice/data/map_ops.h"
#include "sluice/image/codec.h"

namespace sluice::data {
namespace {

using testing::ExpectCheckpointsExact;
using testing::Must;
using testing::RangeOf;

// x -> (x * 2, [x, x + 1, x + 2] as float32): a scalar and a vector.
IndexedMapFn TwoComponents() {
  return [](Element e, ElementIndex) -> Result<Element> {
    const int64_t x = e[0].scalar<int64_t>();
    Tensor v(DType::kFloat32, TensorShape({3}));
    for (int i = 0; i < 3; ++i) v.flat<float>()[i] = static_cast<float>(x + i);
    return Element{Tensor::Scalar<int64_t>(x * 2), v};
  };
}
ElementSpec TwoComponentSpec() {
  return ElementSpec{{DType::kInt64, DType::kFloat32}, {PartialShape({}), PartialShape({3})}, {}};
}

Options NoFusion() {
  Options o;
  o.optimization.map_and_batch_fusion = false;
  return o;
}

// The pipeline fused (the default) or not (Options).
DatasetPtr Pipeline(int64_t n, int64_t threads, int64_t batch, bool drop, bool fused, IndexedMapFn fn = TwoComponents(),
                    ElementSpec spec = TwoComponentSpec()) {
  DatasetPtr map = Must(MapWithIndex(RangeOf(n), std::move(fn), std::move(spec), {.num_parallel_calls = threads}));
  DatasetPtr ds = Must(Batch(map, batch, drop));
  return fused ? ds : Must(WithOptions(ds, NoFusion()));
}

std::vector<std::string> Encoded(const DatasetPtr& ds) {
  std::vector<std::string> out;
  for (const Element& e : testing::Elements(ds)) out.push_back(EncodeElement(e));
  return out;
}

// The results of every GetNext up to the end: the encoding or the error.
std::vector<std::string> Outcomes(const DatasetPtr& ds) {
  std::vector<std::string> out;
  auto it = ds->MakeIterator();
  for (int i = 0; i < 100; ++i) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    if (s.ok() && end) break;
    out.push_back(s.ok() ? EncodeElement(e) : s.ToString());
  }
  return out;
}

TEST(MapAndBatchTest, BatchOfAParallelMapIsFused) {
  EXPECT_EQ(Pipeline(10, 2, 4, false, true)->DebugName(), "MapAndBatch");
  DatasetPtr sequential = Must(Batch(Must(MapWithIndex(RangeOf(10), TwoComponents(), TwoComponentSpec())), 4));
  EXPECT_EQ(sequential->DebugName(), "Batch");
}

std::vector<std::string> StageNames(const DatasetPtr& ds) {
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  EXPECT_TRUE(it->GetNext(&e, &end).ok());
  std::vector<std::string> names;
  for (const StageStats& s : IteratorStats(*it)) names.push_back(s.name);
  return names;
}

TEST(MapAndBatchTest, OptionsTurnTheFusionOffFromAnOuterStage) {
  using V = std::vector<std::string>;
  EXPECT_EQ(StageNames(Pipeline(10, 2, 4, false, true)), (V{"MapAndBatch", "Root"}));
  EXPECT_EQ(StageNames(Pipeline(10, 2, 4, false, false)), (V{"ParallelMap", "Batch", "Root"}));
  Options on;
  on.optimization.map_and_batch_fusion = true;  // an outer stage's options win
  EXPECT_EQ(StageNames(Must(WithOptions(Pipeline(10, 2, 4, false, false), on))),
            (V{"MapAndBatch", "Root"}));
}

TEST(MapAndBatchTest, SameBatchesAsMapThenBatch) {
  for (int64_t threads : {1, 3, static_cast<int>(kAutotune)}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::vector<std::string> fused = Encoded(Pipeline(103, threads, 8, false, true));
    EXPECT_EQ(fused.size(), 13u);
    EXPECT_EQ(fused, Encoded(Pipeline(103, threads, 8, false, false)));
  }
}

TEST(MapAndBatchTest, PartialLastBatchHasTheRemainingRows) {
  std::vector<Element> batches = testing::Elements(Pipeline(10, 2, 4, false, true));
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2][0].shape(), TensorShape({2}));
  EXPECT_EQ(batches[2][1].shape(), TensorShape({2, 3}));
  EXPECT_EQ(batches[2][0].flat<int64_t>()[1], 18);
  EXPECT_EQ(Pipeline(10, 2, 4, false, true)->cardinality(), 3);
}

TEST(MapAndBatchTest, DropRemainderDropsThePartialBatch) {
  DatasetPtr ds = Pipeline(10, 2, 4, true, true);
  EXPECT_EQ(ds->cardinality(), 2);
  std::vector<Element> batches = testing::Elements(ds);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1][0].flat<int64_t>()[3], 14);
  EXPECT_EQ(testing::Elements(Pipeline(0, 2, 4, false, true)).size(), 0u);
}

// TF's fused op: the failed element's batch fails, the next starts at the
// next multiple of batch_size.
TEST(MapAndBatchTest, AFailedElementFailsItsBatchAndTheNextBatchFollows) {
  IndexedMapFn fn = [](Element e, ElementIndex at) -> Result<Element> {
    if (at.index == 5) return Status(Code::kInvalidArgument, "bad element");
    return TwoComponents()(std::move(e), at);
  };
  auto it = Pipeline(12, 3, 4, false, true, fn)->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].flat<int64_t>()[0], 0);
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("bad element"), std::string::npos);
  ASSERT_TRUE(s.GetPayload("element"));
  EXPECT_EQ(*s.GetPayload("element"), "5");
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  ASSERT_FALSE(end);
  EXPECT_EQ(e[0].flat<int64_t>()[0], 16);
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_TRUE(end);
}

TEST(MapAndBatchTest, AnOutOfRangeFromTheFunctionIsInvalidArgument) {
  IndexedMapFn fn = [](Element, ElementIndex) -> Result<Element> { return Status(Code::kOutOfRange, "stop"); };
  std::vector<std::string> out = Outcomes(Pipeline(4, 2, 2, false, true, fn));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[0].find("Function invocation produced OutOfRangeError"), std::string::npos) << out[0];
}

// Shapes unknown before iterating: rows alike batch, rows unlike fail their
// batch with TF's message, whichever row the batch was allocated for.
TEST(MapAndBatchTest, UnknownShapesBatchWhenAlikeAndFailWhenNot) {
  auto fill = [](int64_t (*len)(int64_t)) {
    return IndexedMapFn([len](Element e, ElementIndex) -> Result<Element> {
      const int64_t x = e[0].scalar<int64_t>();
      Tensor t(DType::kInt64, TensorShape({len(x)}));
      for (int64_t& v : t.flat<int64_t>()) v = x;
      return Element{t};
    });
  };
  ElementSpec spec{{DType::kInt64}, {PartialShape({-1})}, {}};
  DatasetPtr alike = Pipeline(9, 3, 4, false, true, fill([](int64_t) -> int64_t { return 2; }), spec);
  EXPECT_EQ(Encoded(alike), Encoded(Pipeline(9, 3, 4, false, false, fill([](int64_t) -> int64_t { return 2; }), spec)));
  IndexedMapFn unlike = fill([](int64_t x) -> int64_t { return x == 6 ? 1 : 2; });
  std::vector<std::string> out = Outcomes(Pipeline(8, 3, 4, false, true, unlike, spec));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], Encoded(alike)[0]);
  EXPECT_NE(out[1].find("Cannot add tensor to the batch: number of elements does not match. Shapes are: "
                        "[tensor]: [1], [batch]: [2]"),
            std::string::npos)
      << out[1];
}

TEST(MapAndBatchTest, AFunctionGivingAnotherShapeThanItsSpecFailsTheBatch) {
  ElementSpec wrong{{DType::kInt64, DType::kFloat32}, {PartialShape({}), PartialShape({4})}, {}};
  std::vector<std::string> out = Outcomes(Pipeline(4, 2, 2, false, true, TwoComponents(), wrong));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[0].find("Cannot add tensor to the batch"), std::string::npos) << out[0];
}

TEST(MapAndBatchTest, TheFusedCropEqualsTheCropThenBatch) {
  Tensor image(DType::kUInt8, TensorShape({40, 56, 3}));
  uint8_t* px = image.flat<uint8_t>().data();
  for (int64_t i = 0; i < image.num_elements(); ++i) px[i] = static_cast<uint8_t>((i * 7) % 251);
  Result<std::string> jpeg = image::EncodeJpeg(image);
  ASSERT_TRUE(jpeg.ok()) << jpeg.status();
  auto make = [&](bool fused) {
    std::vector<std::string> blobs(10, *jpeg);
    Tensor strings(DType::kString, TensorShape({10}));
    for (int i = 0; i < 10; ++i) strings.flat<std::string>()[i] = blobs[i];
    Tensor labels(DType::kInt64, TensorShape({10}));
    for (int i = 0; i < 10; ++i) labels.flat<int64_t>()[i] = i;
    DatasetPtr src = Must(FromTensorSlices({labels, strings}));
    image::RandomResizedCropOptions o;
    o.height = 16;
    o.width = 12;
    Result<NativeMap> crop = RandomResizedCropMap(src->element_spec(), 1, o, 7);
    EXPECT_TRUE(crop.ok()) << crop.status();
    DatasetPtr ds = Must(Batch(Must(MapWithIndex(src, crop->fn, crop->spec, {.num_parallel_calls = 3})), 4));
    if (fused) {
      EXPECT_EQ(ds->DebugName(), "MapAndBatch");
    }
    return fused ? ds : Must(WithOptions(ds, NoFusion()));
  };
  std::vector<std::string> fused = Encoded(make(true));
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_EQ(fused, Encoded(make(false)));
}

TEST(MapAndBatchTest, CheckpointsResumeWithTheSameBatches) {
  ExpectCheckpointsExact([] { return Pipeline(30, 3, 4, false, true); }, {0, 1, 3, 7, 8});
  ExpectCheckpointsExact([] { return Pipeline(30, 2, 4, true, true); }, {0, 1, 5, 7});
}

TEST(MapAndBatchTest, CheckpointsWithUnknownShapesResume) {
  IndexedMapFn fn = [](Element e, ElementIndex) -> Result<Element> {
    Tensor t(DType::kInt64, TensorShape({2}));
    for (int64_t& v : t.flat<int64_t>()) v = e[0].scalar<int64_t>();
    return Element{t};
  };
  ElementSpec spec{{DType::kInt64}, {PartialShape({-1})}, {}};
  ExpectCheckpointsExact([&] { return Pipeline(21, 2, 4, false, true, fn, spec); }, {0, 2, 5});
}

// Destroying the iterator while workers map, read and wait for space cancels
// and joins them (TSan: no race with the batches they write).
TEST(MapAndBatchTest, DestroyingTheIteratorStopsBlockedWorkers) {
  std::atomic<int64_t> calls{0};
  IndexedMapFn fn = [&calls](Element e, ElementIndex at) -> Result<Element> {
    calls.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::microseconds(at.index % 3 == 0 ? 200 : 0));  // uneven work
    return TwoComponents()(std::move(e), at);
  };
  DatasetPtr map = Must(MapWithIndex(Must(Repeat(RangeOf(10))), fn, TwoComponentSpec(), {.num_parallel_calls = 4}));
  for (int round = 0; round < 20; ++round) {
    auto it = Must(Batch(map, 3))->MakeIterator();
    Element e;
    bool end = false;
    ASSERT_TRUE(it->GetNext(&e, &end).ok());
    EXPECT_EQ(e[0].shape(), TensorShape({3}));
  }
  EXPECT_GT(calls.load(), 0);
}

}  // namespace
}  // namespace sluice::data
