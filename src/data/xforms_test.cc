// window, scan, take_while, unique, ignore_errors, rebatch and
// group_by_window: orders, remainders, cardinality and errors
// (cross-checked with TensorFlow by python/src/test_data_xforms_tf_compat.py).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>
#include <vector>

#include "data/data_test_util.h"
#include "sluice/core/logging.h"
#include "sluice/io/record_writer.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Ints;
using testing::Must;
using testing::RangeOf;
using V = std::vector<int64_t>;
using VV = std::vector<V>;

// Each window's int64 scalars.
VV Windows(const DatasetPtr& windows) {
  VV out;
  for (const Element& w : Elements(windows)) {
    Result<std::vector<DatasetPtr>> parts = WindowDatasets(w, windows->element_spec());
    EXPECT_TRUE(parts.ok()) << parts.status();
    if (!parts.ok()) return out;
    out.push_back(Ints((*parts)[0]));
  }
  return out;
}

// Every element's int64 vector (component 0).
VV Rows(const DatasetPtr& ds) {
  VV out;
  for (const Element& e : Elements(ds)) {
    auto f = e[0].flat<int64_t>();
    out.emplace_back(f.begin(), f.end());
  }
  return out;
}

// Component 0's shape in the element spec.
V FirstShape(const DatasetPtr& ds) { return ds->element_spec().shapes[0].dims(); }

// Each GetNext's status code until the end (or 20 calls).
std::vector<Code> Codes(const DatasetPtr& ds) {
  std::vector<Code> out;
  auto it = ds->MakeIterator();
  for (int i = 0; i < 20; ++i) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    if (s.ok() && end) break;
    out.push_back(s.code());
  }
  return out;
}

TEST(WindowTest, ShiftStrideAndRemainderGiveTensorFlowsWindows) {
  EXPECT_EQ(Windows(Must(Window(RangeOf(10), 3))), (VV{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));
  EXPECT_EQ(Windows(Must(Window(RangeOf(10), 3, 2, 2))), (VV{{0, 2, 4}, {2, 4, 6}, {4, 6, 8}, {6, 8}, {8}}));
  EXPECT_EQ(Windows(Must(Window(RangeOf(10), 3, 1, 3, true))), (VV{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}, {3, 6, 9}}));
  EXPECT_EQ(Windows(Must(Window(RangeOf(10), 2, 5, 1, true))), (VV{{0, 1}, {5, 6}}));
  EXPECT_EQ(Windows(Must(Window(RangeOf(10), 3, 4))), (VV{{0, 1, 2}, {4, 5, 6}, {8, 9}}));
}

TEST(WindowTest, CardinalityFollowsTensorFlowsFormula) {
  EXPECT_EQ(Must(Window(RangeOf(10), 3))->cardinality(), 4);
  EXPECT_EQ(Must(Window(RangeOf(10), 3, 2, 2))->cardinality(), 5);
  EXPECT_EQ(Must(Window(RangeOf(10), 3, 1, 3, true))->cardinality(), 4);
  EXPECT_EQ(Must(Window(RangeOf(10), 2, 5, 1, true))->cardinality(), 2);
  EXPECT_EQ(Must(Window(RangeOf(2), 3, 1, 1, true))->cardinality(), 0);
  EXPECT_EQ(Must(Window(Must(Repeat(RangeOf(2))), 3))->cardinality(), kInfiniteCardinality);
}

TEST(WindowTest, WindowsShareTheInputTensorsAcrossComponents) {
  Tensor rows = Tensor::FromVector<int64_t>({1, 2, 3, 4});
  DatasetPtr ds = Must(Zip({Must(FromTensorSlices(Element{rows})), RangeOf(4)}));
  std::vector<Element> windows = Elements(Must(Window(ds, 2)));
  ASSERT_EQ(windows.size(), 2u);
  ASSERT_EQ(windows[1].size(), 4u);  // 2 elements x 2 components
  EXPECT_TRUE(windows[1][0].SharesBufferWith(rows));
  std::vector<DatasetPtr> parts = *WindowDatasets(windows[1], ds->element_spec());
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Ints(parts[0]), (V{3, 4}));
  EXPECT_EQ(Ints(parts[1]), (V{2, 3}));
  EXPECT_EQ(parts[1]->cardinality(), 2);
}

TEST(WindowTest, NonPositiveArgumentsAreInvalidArgumentWithTensorFlowsMessages) {
  EXPECT_EQ(Window(RangeOf(3), 0).status().message(), "Window size must be greater than zero.");
  EXPECT_EQ(Window(RangeOf(3), 2, 0).status().message(), "Window shift must be greater than zero.");
  EXPECT_EQ(Window(RangeOf(3), 2, 1, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(WindowDatasets(Element{}, RangeOf(1)->element_spec()).status().code(), Code::kInvalidArgument);
}

ScanFn RunningSum() {
  return [](const Element& state, Element e) -> Result<std::pair<Element, Element>> {
    const int64_t s = state[0].scalar<int64_t>();
    return std::make_pair(Element{Tensor::Scalar<int64_t>(s + e[0].scalar<int64_t>())},
                          Element{Tensor::Scalar<int64_t>(s * 2)});
  };
}

TEST(ScanTest, CarriesTheStateAndRestartsItPerIterator) {
  DatasetPtr ds = Must(Scan(RangeOf(5), Element{Tensor::Scalar<int64_t>(0)}, RunningSum(), testing::Int64Scalar()));
  EXPECT_EQ(Ints(ds), (V{0, 0, 2, 6, 12}));
  EXPECT_EQ(Ints(ds), (V{0, 0, 2, 6, 12}));
  EXPECT_EQ(ds->cardinality(), 5);
}

TEST(ScanTest, NewStateOfAnotherDtypeIsInvalidArgument) {
  ScanFn to_int32 = [](const Element&, Element e) -> Result<std::pair<Element, Element>> {
    return std::make_pair(Element{Tensor::Scalar<int32_t>(1)}, std::move(e));
  };
  DatasetPtr ds = Must(Scan(RangeOf(2), Element{Tensor::Scalar<int64_t>(0)}, to_int32, testing::Int64Scalar()));
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("must match the initial state"), std::string::npos) << s;
}

TEST(TakeWhileTest, StopsAtTheFirstRejectedElementAndReadsNoFurther) {
  auto reads = std::make_shared<std::atomic<int>>(0);
  DatasetPtr counted = Must(Map(RangeOf(10), [reads](Element e) -> Result<Element> {
    reads->fetch_add(1);
    return e;
  }, testing::Int64Scalar()));
  DatasetPtr ds = Must(TakeWhile(counted, [](const Element& e) -> Result<bool> { return e[0].scalar<int64_t>() < 4; }));
  EXPECT_EQ(Ints(ds), (V{0, 1, 2, 3}));
  EXPECT_EQ(reads->load(), 5);
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
}

TEST(UniqueTest, KeepsFirstAppearancesOfIntsAndStrings) {
  EXPECT_EQ(Ints(Must(Unique(Must(FromTensorSlices(Element{Tensor::FromVector<int64_t>({1, 3, 1, 2, 3}) 
  }))))), (V{1, 3, 2}));
  std::vector<Element> got = Elements(Must(Unique(Must(FromTensorSlices(Element{Tensor::FromStrings({"b", "a", "b", ""})})))));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0][0].scalar<std::string>(), "b");
  EXPECT_EQ(got[2][0].scalar<std::string>(), "");
  EXPECT_EQ(Must(Unique(RangeOf(3)))->cardinality(), kUnknownCardinality);
}

TEST(UniqueTest, OtherDtypesAndSeveralComponentsAreInvalidArgument) {
  Status f = Unique(Must(FromTensorSlices(Element{Tensor::FromVector<float>({1.f})}))).status();
  EXPECT_EQ(f.code(), Code::kInvalidArgument);
  EXPECT_EQ(f.message(), "`tf.data.Dataset.unique` does not support type float32 -- only `tf.int32`, `tf.int64`, "
                         "and `tf.string` are supported.");
  EXPECT_EQ(Unique(Must(Zip({RangeOf(2), RangeOf(2)}))).status().message(),
            "UniqueDataset only supports inputs with a single component.");
}

// x -> x, failing with DataLoss (a "record" payload) where x % 3 == 1.
DatasetPtr FailingEveryThird(int64_t n) {
  return Must(Map(RangeOf(n), [](Element e) -> Result<Element> {
    const int64_t x = e[0].scalar<int64_t>();
    if (x % 3 == 1) return Status(Code::kDataLoss, "corrupt " + std::to_string(x)).WithPayload("record", std::to_string(x));
    return e;
  }, testing::Int64Scalar()));
}

TEST(IgnoreErrorsTest, SkipsFailedElementsAndCountsThemOnTheRootIterator) {
  DatasetPtr ds = Must(Batch(Must(IgnoreErrors(FailingEveryThird(7))), 10));
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  auto f = e[0].flat<int64_t>();
  EXPECT_EQ(V(f.begin(), f.end()), (V{0, 2, 3, 5, 6}));
  EXPECT_EQ(it->skipped_errors(), 2);
  EXPECT_EQ(Codes(FailingEveryThird(3)), (std::vector<Code>{Code::kOk, Code::kDataLoss, Code::kOk}));
}

TEST(IgnoreErrorsTest, LogsAWarningNamingTheErrorAndItsContext) {
  std::vector<std::string> warnings;
  SetLogSink([&warnings](LogSeverity severity, std::string_view message) {
    if (severity == LogSeverity::kWarning) warnings.emplace_back(message);
  });
  EXPECT_EQ(Ints(Must(IgnoreErrors(FailingEveryThird(3), /*log_warning=*/true))), (V{0, 2}));
  EXPECT_EQ(Ints(Must(IgnoreErrors(FailingEveryThird(3)))), (V{0, 2}));
  SetLogSink(nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("corrupt 1"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("record: 1"), std::string::npos) << warnings[0];
}

TEST(IgnoreErrorsTest, CancelledPassesThrough) {
  DatasetPtr ds = Must(IgnoreErrors(Must(Map(RangeOf(3), [](Element) -> Result<Element> {
    return errors::Cancelled("shutting down");
  }, testing::Int64Scalar()))));
  EXPECT_EQ(Codes(ds), (std::vector<Code>{Code::kCancelled, Code::kCancelled, Code::kCancelled}));
}

DatasetPtr BatchesOf4(int64_t n, bool drop = false) { return Must(Batch(RangeOf(n), 4, drop)); }

TEST(RebatchTest, CutsAndJoinsBatchesCyclingThroughTheSizes) {
  EXPECT_EQ(Rows(Must(Rebatch(BatchesOf4(10), {3}))), (VV{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));
  EXPECT_EQ(Rows(Must(Rebatch(BatchesOf4(10), {3}, true))), (VV{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}));
  EXPECT_EQ(Rows(Must(Rebatch(BatchesOf4(10), {1, 2}))), (VV{{0}, {1, 2}, {3}, {4, 5}, {6}, {7, 8}, {9}}));
  EXPECT_EQ(Rows(Must(Rebatch(BatchesOf4(10), {2, 3}, true))), (VV{{0, 1}, {2, 3, 4}, {5, 6}, {7, 8, 9}}));
  EXPECT_EQ(Must(Rebatch(BatchesOf4(10), {2}))->cardinality(), kUnknownCardinality);
}

TEST(RebatchTest, ABatchInsideOneInputBatchIsASliceOfIt) {
  Tensor rows = Tensor::FromVector<int64_t>({1, 2, 3, 4});
  std::vector<Element> got = Elements(Must(Rebatch(Must(FromTensors(Element{rows})), {2})));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[1][0].SharesBufferWith(rows));
}

TEST(RebatchTest, StaticBatchDimensionOnlyWhenEveryBatchIsWhole) {
  EXPECT_EQ(FirstShape(Must(Rebatch(BatchesOf4(10, true), {2}))), (V{2}));
  EXPECT_EQ(FirstShape(Must(Rebatch(BatchesOf4(10, true), {3}))), (V{-1}));
  EXPECT_EQ(FirstShape(Must(Rebatch(BatchesOf4(10), {3}, true))), (V{3}));
  EXPECT_EQ(FirstShape(Must(Rebatch(BatchesOf4(10, true), {1, 3}, true))), (V{-1}));
}

TEST(RebatchTest, ScalarsAndBadSizesAreInvalidArgument) {
  EXPECT_EQ(Rebatch(RangeOf(3), {2}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Rebatch(BatchesOf4(3), {}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Rebatch(BatchesOf4(3), {2, 0}).status().code(), Code::kInvalidArgument);
}

KeyFn Mod(int64_t m) {
  return [m](const Element& e) -> Result<int64_t> { return e[0].scalar<int64_t>() % m; };
}

ReduceFn BatchOf(int64_t n) {
  return [n](int64_t, DatasetPtr window) { return Batch(std::move(window), n); };
}

WindowSizeFn Constant(int64_t n) {
  return [n](int64_t) -> Result<int64_t> { return n; };
}

TEST(GroupByWindowTest, ReducesFullWindowsThenTheRestInKeyOrder) {
  DatasetPtr ds = Must(GroupByWindow(RangeOf(10), Mod(3), BatchOf(2), Constant(2), RangeOf(1)->element_spec()));
  EXPECT_EQ(Rows(ds), (VV{{0, 3}, {1, 4}, {2, 5}, {6, 9}, {7}, {8}}));
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
}

TEST(GroupByWindowTest, AsksTheWindowSizeOncePerKey) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  WindowSizeFn size = [calls](int64_t key) -> Result<int64_t> {
    calls->fetch_add(1);
    return key + 1;
  };
  DatasetPtr ds = Must(GroupByWindow(RangeOf(10), Mod(3), BatchOf(10), size, RangeOf(1)->element_spec()));
  EXPECT_EQ(Rows(ds), (VV{{0}, {3}, {1, 4}, {6}, {2, 5, 8}, {9}, {7}}));
  EXPECT_EQ(calls->load(), 3);
}

TEST(GroupByWindowTest, NonPositiveWindowSizeIsInvalidArgument) {
  DatasetPtr ds = Must(GroupByWindow(RangeOf(3), Mod(3), BatchOf(2), Constant(0), RangeOf(1)->element_spec()));
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "Window size must be greater than zero, but got 0.");
}

// Element x -> the int64 vector [x] * x.
DatasetPtr Sequences(std::vector<int64_t> lengths) {
  DatasetPtr ds = Must(FromTensorSlices(Element{Tensor::FromVector<int64_t>(lengths)}));
  ElementSpec spec{{DType::kInt64}, {PartialShape({-1})}, {}};
  return Must(Map(ds, [](Element e) -> Result<Element> {
    const int64_t n = e[0].scalar<int64_t>();
    return Element{Tensor::FromVector<int64_t>(std::vector<int64_t>(static_cast<size_t>(n), n))};
  }, spec));
}

ElementLengthFn Length() {
  return [](const Element& e) -> Result<int64_t> { return e[0].shape().dim(0); };
}

TEST(BucketBySequenceLengthTest, BatchesSimilarLengthsPaddedToTheLongest) {
  DatasetPtr ds = Must(BucketBySequenceLength(Sequences({3, 5, 2, 8, 4, 1, 6, 7}), Length(), {4, 7}, {2, 2, 2}));
  EXPECT_EQ(Rows(ds), (VV{{3, 3, 3, 2, 2, 0}, {5, 5, 5, 5, 5, 4, 4, 4, 4, 0},
                          {8, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7, 0}, {1}, {6, 6, 6, 6, 6, 6}}));
  EXPECT_EQ(FirstShape(ds), (V{-1, -1}));
}

TEST(BucketBySequenceLengthTest, PadsToTheBucketBoundaryAndRefusesTheLastBucket) {
  BucketOptions options;
  options.pad_to_bucket_boundary = true;
  DatasetPtr ds = Must(BucketBySequenceLength(Sequences({1, 2}), Length(), {4}, {2, 2}, options));
  std::vector<Element> got = Elements(ds);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0][0].shape().DebugString(), TensorShape({2, 3}).DebugString());
  DatasetPtr too_long = Must(BucketBySequenceLength(Sequences({5}), Length(), {4}, {2, 2}, options));
  EXPECT_EQ(Codes(too_long), (std::vector<Code>{Code::kInvalidArgument}));
  EXPECT_EQ(BucketBySequenceLength(Sequences({1}), Length(), {4}, {2}).status().code(), Code::kInvalidArgument);
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto w = io::RecordWriter::Open(path);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) ASSERT_TRUE((*w)->Write(r).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

TEST(IgnoreErrorsTest, ACorruptRecordSkipsTheRestOfItsFileAsTensorFlowDoes) {
  const std::string dir = ::testing::TempDir();
  const std::string bad = dir + "/xforms_bad.tfrecord", good = dir + "/xforms_good.tfrecord";
  WriteRecords(bad, {"a", "soon bad", "c"});
  WriteRecords(good, {"d"});
  {
    std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(16 + 1 + 4 + 12 + 2);
    f.put('X');
  }
  DatasetPtr ds = Must(IgnoreErrors(Must(TFRecordDataset({bad, good}))));
  auto it = ds->MakeIterator();
  std::vector<std::string> got;
  Element e;
  bool end = false;
  while (it->GetNext(&e, &end).ok() && !end) got.push_back(e[0].scalar<std::string>());
  EXPECT_EQ(got, (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(it->skipped_errors(), 1);
}

}  // namespace
}  // namespace sluice::data
