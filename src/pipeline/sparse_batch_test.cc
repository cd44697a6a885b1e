// Batching SparseTensors: PackSparse, PackSparseRows, UnpackSparseBatch and
// the MapPackSparse stage. Expected batches are TensorFlow 2.21's
// tf.compat.v1.train.batch of the same SparseTensors.
#include "sluice/pipeline/sparse_batch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "input_test_util.h"
#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/example_builder.h"
#include "sluice/ops/feature_spec.h"
#include "sluice/ops/parse_example.h"
#include "sluice/train/batchers.h"

namespace sluice::train {
namespace {

using testing::Harness;
using testing::Int64Values;
using testing::IsOk;
using testing::Scalar;
using testing::StatusIs;

// indices int64 [n, rank] from rows of ints.
Tensor Indices(const std::vector<std::vector<int64_t>>& rows, int64_t rank) {
  Tensor t(DType::kInt64, TensorShape({static_cast<int64_t>(rows.size()), rank}));
  int64_t* p = t.data<int64_t>();
  for (const auto& row : rows) {
    for (int64_t x : row) *p++ = x;
  }
  return t;
}

struct Sparse {
  Tensor indices;
  Tensor values;
  Tensor dense_shape;
};

Sparse Floats(const std::vector<std::vector<int64_t>>& indices, const std::vector<float>& values,
              const std::vector<int64_t>& shape) {
  return {Indices(indices, static_cast<int64_t>(shape.size())), Tensor::FromVector(values), Tensor::FromVector(shape)};
}

Sparse Strings(const std::vector<std::vector<int64_t>>& indices, const std::vector<std::string>& values,
               const std::vector<int64_t>& shape) {
  return {Indices(indices, static_cast<int64_t>(shape.size())), Tensor::FromStrings(values),
          Tensor::FromVector(shape)};
}

std::string Pack(const Sparse& s) {
  Result<std::string> packed = PackSparse(s.indices, s.values, s.dense_shape);
  EXPECT_TRUE(packed.ok()) << packed.status();
  return packed.ok() ? *packed : std::string();
}

Result<ops::SparseTensor> Unpack(const std::vector<std::string>& packed) {
  std::vector<std::string_view> views(packed.begin(), packed.end());
  return UnpackSparseBatch(views);
}

std::vector<float> FloatValues(const Tensor& t) {
  std::vector<float> v;
  for (float x : t.flat<float>()) v.push_back(x);
  return v;
}

std::vector<std::string> StringValues(const Tensor& t) {
  std::vector<std::string> v;
  for (const std::string& x : t.flat<std::string>()) v.push_back(x);
  return v;
}

// ---- Pack, then unpack a batch --------------------------------------------------------

TEST(UnpackSparseBatchTest, PrependsTheBatchIndexAndTakesTheMaxOfEachDimension) {
  // TF: batch of [0]:{[0]:1, [2]:2} shape [3], [1]: empty shape [0], [2]:{[4]:5} shape [5].
  Result<ops::SparseTensor> b = Unpack({Pack(Floats({{0}, {2}}, {1, 2}, {3})), Pack(Floats({}, {}, {0})),
                                        Pack(Floats({{4}}, {5}, {5}))});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->indices.shape(), TensorShape({3, 2}));
  EXPECT_EQ(Int64Values(b->indices), (std::vector<int64_t>{0, 0, 0, 2, 2, 4}));
  EXPECT_EQ(FloatValues(b->values), (std::vector<float>{1, 2, 5}));
  EXPECT_EQ(Int64Values(b->dense_shape), (std::vector<int64_t>{3, 5}));
}

TEST(UnpackSparseBatchTest, BatchOfOnlyEmptySparseTensorsHasNoValues) {
  Result<ops::SparseTensor> b = Unpack({Pack(Floats({}, {}, {0})), Pack(Floats({}, {}, {2}))});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->indices.shape(), TensorShape({0, 2}));
  EXPECT_EQ(b->values.shape(), TensorShape({0}));
  EXPECT_EQ(b->values.dtype(), DType::kFloat32);
  EXPECT_EQ(Int64Values(b->dense_shape), (std::vector<int64_t>{2, 2}));
}

TEST(UnpackSparseBatchTest, StringValuesRoundTripByteForByte) {
  const std::string nul("a\0b", 3);
  Result<ops::SparseTensor> b = Unpack({Pack(Strings({{0}, {1}}, {"a", "bc"}, {2})), Pack(Strings({}, {}, {0})),
                                        Pack(Strings({{3}, {5}}, {"", nul}, {6}))});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->values.dtype(), DType::kString);
  EXPECT_EQ(StringValues(b->values), (std::vector<std::string>{"a", "bc", "", nul}));
  EXPECT_EQ(Int64Values(b->indices), (std::vector<int64_t>{0, 0, 0, 1, 2, 3, 2, 5}));
  EXPECT_EQ(Int64Values(b->dense_shape), (std::vector<int64_t>{3, 6}));
}

TEST(UnpackSparseBatchTest, RankTwoSparseTensorsBatchToRankThree) {
  // TF: [[0,1],[2,0]] shape [3,2]; [[0,4]] shape [1,5]; empty shape [0,0].
  auto ints = [](std::vector<std::vector<int64_t>> ix, std::vector<int64_t> v, std::vector<int64_t> shape) {
    return Pack({Indices(ix, 2), Tensor::FromVector(v), Tensor::FromVector(shape)});
  };
  Result<ops::SparseTensor> b =
      Unpack({ints({{0, 1}, {2, 0}}, {1, 2}, {3, 2}), ints({{0, 4}}, {3}, {1, 5}), ints({}, {}, {0, 0})});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->indices.shape(), TensorShape({3, 3}));
  EXPECT_EQ(Int64Values(b->indices), (std::vector<int64_t>{0, 0, 1, 0, 2, 0, 1, 0, 4}));
  EXPECT_EQ(Int64Values(b->values), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Int64Values(b->dense_shape), (std::vector<int64_t>{3, 3, 5}));
}

TEST(UnpackSparseBatchTest, UnsortedIndicesPassThroughInTheirOrder) {
  Result<ops::SparseTensor> b = Unpack({Pack(Floats({{2}, {0}}, {1, 2}, {3}))});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(Int64Values(b->indices), (std::vector<int64_t>{0, 2, 0, 0}));
}

TEST(UnpackSparseBatchTest, StringTensorOverloadReadsAVectorOfPackedStrings) {
  Tensor batch = Tensor::FromStrings({Pack(Floats({{1}}, {7}, {2})), Pack(Floats({{0}}, {8}, {1}))});
  Result<ops::SparseTensor> b = UnpackSparseBatch(batch);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(Int64Values(b->indices), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_TRUE(StatusIs(UnpackSparseBatch(Tensor::String("x")).status(), Code::kInvalidArgument,
                       "should be a string vector"));
}

// ---- Unpack errors -------------------------------------------------------------------

TEST(UnpackSparseBatchTest, MismatchedRanksAreInvalidArgument) {
  EXPECT_TRUE(StatusIs(Unpack({Pack(Floats({{0}}, {1}, {1})), Pack(Floats({{0, 0}}, {1}, {1, 1}))}).status(),
                       Code::kInvalidArgument,
                       "Inconsistent rank across SparseTensors: rank prior to SparseTensor[1] was: 2 but rank of "
                       "SparseTensor[1] is: 3"));
}

TEST(UnpackSparseBatchTest, DtypeOtherThanRequestedIsInvalidArgument) {
  std::vector<std::string> packed{Pack(Floats({{0}}, {1}, {1})), Pack(Strings({{0}}, {"x"}, {1}))};
  std::vector<std::string_view> views(packed.begin(), packed.end());
  EXPECT_TRUE(StatusIs(UnpackSparseBatch(views).status(), Code::kInvalidArgument,
                       "Requested SparseTensor of type float32 but SparseTensor[1].values.dtype() == string"));
  EXPECT_TRUE(StatusIs(UnpackSparseBatch(views, DType::kInt64).status(), Code::kInvalidArgument,
                       "Requested SparseTensor of type int64 but SparseTensor[0].values.dtype() == float32"));
}

TEST(UnpackSparseBatchTest, EmptyBatchIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(Unpack({}).status(), Code::kInvalidArgument, "Must have at least 1 serialized SparseTensor"));
}

TEST(UnpackSparseBatchTest, EveryTruncationIsInvalidArgument) {
  for (const std::string& whole : {Pack(Floats({{0, 1}, {2, 3}}, {1, 2}, {4, 4})),
                                   Pack(Strings({{0}, {1}}, {"abc", "de"}, {2}))}) {
    for (size_t size = 0; size < whole.size(); ++size) {
      EXPECT_TRUE(StatusIs(Unpack({whole.substr(0, size)}).status(), Code::kInvalidArgument,
                           "Corrupt packed SparseTensor[0]"))
          << "size " << size;
    }
    EXPECT_TRUE(StatusIs(Unpack({whole, whole + "x"}).status(), Code::kInvalidArgument,
                         "Corrupt packed SparseTensor[1]: 1 bytes follow the values"));
  }
}

TEST(UnpackSparseBatchTest, CorruptHeaderFieldsAreInvalidArgument) {
  const std::string good = Pack(Floats({{0}}, {1}, {1}));
  std::string version = good;
  version[0] = 9;
  EXPECT_TRUE(StatusIs(Unpack({version}).status(), Code::kInvalidArgument, "version 9, expected 1"));
  std::string dtype = good;
  dtype[1] = 12;  // no DType 12
  EXPECT_TRUE(StatusIs(Unpack({dtype}).status(), Code::kInvalidArgument, "unknown dtype 12"));
  std::string count = good;
  count[kPackedSparseHeaderBytes + 8 + 7] = '\x80';  // n < 0
  EXPECT_TRUE(StatusIs(Unpack({count}).status(), Code::kInvalidArgument, "negative number of values"));
  std::string huge = good;
  huge[kPackedSparseHeaderBytes + 8 + 6] = 1;  // n = 2^48 + 1
  EXPECT_TRUE(StatusIs(Unpack({huge}).status(), Code::kInvalidArgument, "truncated in indices"));
}

// ---- Pack errors -----------------------------------------------------------------------

TEST(PackSparseTest, MismatchedPartsAreInvalidArgument) {
  Sparse s = Floats({{0}, {1}}, {1, 2}, {2});
  EXPECT_TRUE(StatusIs(PackSparse(s.indices, Tensor::FromVector(std::vector<float>{1}), s.dense_shape).status(),
                       Code::kInvalidArgument,
                       "indices and values rows (indexing dimension) must match. (indices = 2, values = 1)"));
  EXPECT_TRUE(StatusIs(PackSparse(s.indices, s.values, Tensor::FromVector(std::vector<int64_t>{2, 2})).status(),
                       Code::kInvalidArgument, "Shape rank must be SparseTensor rank."));
  EXPECT_TRUE(StatusIs(PackSparse(s.values, s.values, s.dense_shape).status(), Code::kInvalidArgument,
                       "Input indices should be a matrix but received shape [2]"));
  EXPECT_TRUE(StatusIs(PackSparse(s.indices, s.values, Tensor::FromVector(std::vector<int64_t>{-1})).status(),
                       Code::kInvalidArgument, "Dimension -1 must be >= 0"));
  EXPECT_TRUE(StatusIs(PackSparse(s.indices, s.values, Tensor::FromVector(std::vector<int32_t>{2})).status(),
                       Code::kInvalidArgument, "dense_shape must be type int64"));
}

// ---- PackSparseRows (enqueue_many) -----------------------------------------------------

TEST(PackSparseRowsTest, SplitsByTheFirstIndexAndUnpacksToTheSameBatch) {
  Sparse batch = Floats({{0, 1}, {0, 3}, {2, 0}}, {1, 2, 3}, {3, 4});
  Result<Tensor> rows = PackSparseRows(batch.indices, batch.values, batch.dense_shape);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->shape(), TensorShape({3}));
  Result<ops::SparseTensor> row1 = UnpackSparseBatch(rows->Slice(1, 2));
  ASSERT_TRUE(row1.ok()) << row1.status();
  EXPECT_EQ(row1->values.shape(), TensorShape({0}));  // a row without values keeps its shape
  EXPECT_EQ(Int64Values(row1->dense_shape), (std::vector<int64_t>{1, 4}));
  Result<ops::SparseTensor> whole = UnpackSparseBatch(*rows);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(Int64Values(whole->indices), Int64Values(batch.indices));
  EXPECT_EQ(FloatValues(whole->values), FloatValues(batch.values));
  EXPECT_EQ(Int64Values(whole->dense_shape), Int64Values(batch.dense_shape));
}

TEST(PackSparseRowsTest, InvalidIndicesAreInvalidArgument) {
  auto rows = [](const Sparse& s) { return PackSparseRows(s.indices, s.values, s.dense_shape).status(); };
  EXPECT_TRUE(StatusIs(rows(Floats({{1, 0}, {0, 0}}, {1, 2}, {2, 2})), Code::kInvalidArgument,
                       "indices[1] = [0,0] is out of order"));
  EXPECT_TRUE(StatusIs(rows(Floats({{1, 0}, {1, 0}}, {1, 2}, {2, 2})), Code::kInvalidArgument,
                       "indices[1] = [1,0] is repeated"));
  EXPECT_TRUE(StatusIs(rows(Floats({{2, 0}}, {1}, {2, 2})), Code::kInvalidArgument,
                       "indices[0] = [2,0] is out of bounds: need 0 <= index < [2,2]"));
  EXPECT_TRUE(StatusIs(rows(Floats({{0}}, {1}, {2})), Code::kInvalidArgument,
                       "Rank of input SparseTensor should be > 1, but saw rank: 1"));
}

// ---- MapPackSparse ----------------------------------------------------------------------

// {label, k/indices, k/values, k/dense_shape}: example i has label i and the
// values 0..i-1 at 0..i-1 of a [i] vector; then OutOfRange.
TypedProducer LabelledSparse(int64_t n) {
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  Producer p = [next, n]() -> Result<Element> {
    const int64_t i = next->fetch_add(1);
    if (i >= n) return errors::OutOfRange("done");
    std::vector<std::vector<int64_t>> ix;
    std::vector<float> values;
    for (int64_t k = 0; k < i; ++k) {
      ix.push_back({k});
      values.push_back(static_cast<float>(k));
    }
    Sparse s = Floats(ix, values, {i});
    return Element({Tensor::Scalar<int64_t>(i), s.indices, s.values, s.dense_shape});
  };
  return TypedProducer{std::move(p),
                       {DType::kInt64, DType::kInt64, DType::kFloat32, DType::kInt64},
                       {Scalar(), PartialShape({-1, 1}), PartialShape({-1}), PartialShape({1})},
                       {"label", "k/indices", "k/values", "k/dense_shape"}};
}

TEST(MapPackSparseTest, ReplacesEachTripleByOneStringAtItsFirstPart) {
  Result<TypedProducer> p = MapPackSparse(LabelledSparse(3), {{1, 2, 3}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->names, (std::vector<std::string>{"label", "k"}));
  EXPECT_EQ(p->dtypes, (std::vector<DType>{DType::kInt64, DType::kString}));
  EXPECT_EQ(p->shapes[1], Scalar());
  std::vector<std::string> packed;
  for (int i = 0; i < 3; ++i) {
    Result<Element> e = p->producer();
    ASSERT_TRUE(e.ok()) << e.status();
    ASSERT_EQ(e->size(), 2u);
    EXPECT_EQ((*e)[0].scalar<int64_t>(), i);
    packed.push_back((*e)[1].scalar<std::string>());
  }
  EXPECT_TRUE(StatusIs(p->producer().status(), Code::kOutOfRange, "done"));
  Result<ops::SparseTensor> b = Unpack(packed);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(Int64Values(b->indices), (std::vector<int64_t>{1, 0, 2, 0, 2, 1}));
  EXPECT_EQ(FloatValues(b->values), (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(Int64Values(b->dense_shape), (std::vector<int64_t>{3, 2}));
}

TEST(MapPackSparseTest, PacksAtTheLowestOfTheThreePositions) {
  TypedProducer in = LabelledSparse(1);
  Result<TypedProducer> p = MapPackSparse(in, {{3, 2, 1}});  // parts named out of order: still position 1
  ASSERT_TRUE(StatusIs(p.status(), Code::kInvalidArgument, "indices (component 3) must have rank 2, not [1]"));
  in.shapes[3] = PartialShape({-1, 1});
  in.shapes[1] = PartialShape({1});
  p = MapPackSparse(in, {{3, 2, 1}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->dtypes, (std::vector<DType>{DType::kInt64, DType::kString}));
  EXPECT_EQ(p->names, (std::vector<std::string>{"label", "k/dense_shape"}));  // indices' name, no "/indices"
}

TEST(MapPackSparseTest, BuildErrors) {
  EXPECT_TRUE(StatusIs(MapPackSparse(LabelledSparse(1), {{1, 2, 4}}).status(), Code::kInvalidArgument,
                       "component 4 is out of range (the input has 4 components)"));
  EXPECT_TRUE(StatusIs(MapPackSparse(LabelledSparse(1), {{1, 2, 3}, {1, 2, 3}}).status(), Code::kInvalidArgument,
                       "component 1 is named twice"));
  EXPECT_TRUE(StatusIs(MapPackSparse(LabelledSparse(1), {{0, 2, 3}}).status(), Code::kInvalidArgument,
                       "indices (component 0) must have rank 2, not []"));
  EXPECT_TRUE(StatusIs(MapPackSparse(LabelledSparse(1), {{2, 1, 3}}).status(), Code::kInvalidArgument,
                       "indices (component 2) must be int64, not float32"));
  EXPECT_TRUE(StatusIs(MapPackSparse(LabelledSparse(1), {}).status(), Code::kInvalidArgument,
                       "at least one SparseTensor"));
}

TEST(MapPackSparseTest, PerCallPackErrorStopsWithInvalidArgument) {
  TypedProducer in = LabelledSparse(2);
  in.producer = [inner = in.producer]() -> Result<Element> {
    Result<Element> e = inner();
    if (!e.ok()) return e;
    (*e)[3] = Tensor::FromVector(std::vector<int64_t>{1, 1});  // rank 2 for [n, 1] indices
    return e;
  };
  Result<TypedProducer> p = MapPackSparse(in, {{1, 2, 3}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(StatusIs(p->producer().status(), Code::kInvalidArgument, "Shape rank must be SparseTensor rank."));
}

TEST(MapPackSparseTest, EnqueueManyPacksOneStringPerRow) {
  Sparse batch = Floats({{0, 1}, {2, 0}}, {1, 2}, {3, 2});
  Producer p = [batch]() -> Result<Element> {
    return Element({batch.indices, batch.values, batch.dense_shape, Tensor::FromVector(std::vector<int64_t>{7, 8, 9})});
  };
  TypedProducer in{p,
                   {DType::kInt64, DType::kFloat32, DType::kInt64, DType::kInt64},
                   {PartialShape::UnknownRank(), PartialShape::UnknownRank(), PartialShape::UnknownRank(), Scalar()},
                   {}};
  Result<TypedProducer> packed = MapPackSparse(in, {{0, 1, 2}}, /*enqueue_many=*/true);
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_EQ(packed->shapes[0], Scalar());  // a row's shape, as every enqueue_many signature
  EXPECT_TRUE(packed->names.empty());
  Result<Element> e = packed->producer();
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ((*e)[0].shape(), TensorShape({3}));
  EXPECT_EQ(Int64Values((*e)[1]), (std::vector<int64_t>{7, 8, 9}));
}

// parse_single_example of a VarLenFeature -> pack -> batch -> unpack, as TF's
// batch of parsed examples.
TEST(MapPackSparseTest, BatchOfParsedVarLenFeatureIsOneSparseTensor) {
  std::vector<std::string> records;
  records.push_back(ops::ExampleBuilder().AddInt64s("label", {0}).AddFloats("v", {1, 2}).Serialize());
  records.push_back(ops::ExampleBuilder().AddInt64s("label", {1}).Serialize());  // no values
  records.push_back(ops::ExampleBuilder().AddInt64s("label", {2}).AddFloats("v", {5, 6, 7}).Serialize());
  auto next = std::make_shared<std::atomic<size_t>>(0);
  Producer read = [records, next]() -> Result<Element> {
    const size_t i = next->fetch_add(1);
    if (i >= records.size()) return errors::OutOfRange("records done");
    return Element{Tensor::String("key"), Tensor::String(records[i])};
  };
  ops::FeatureSpec spec;
  spec["label"] = ops::FixedLenFeature(TensorShape({}), DType::kInt64);
  spec["v"] = ops::VarLenFeature(DType::kFloat32);
  Result<ops::ExampleParser> parser = ops::ExampleParser::Create(spec);
  ASSERT_TRUE(parser.ok()) << parser.status();
  Result<TypedProducer> parsed =
      MapParseExample(TypedProducer{read, {DType::kString, DType::kString}, {Scalar(), Scalar()}, {"key", "value"}},
                      *parser, 1);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  Result<TypedProducer> packed = MapPackSparse(*parsed, {{1, 2, 3}});
  ASSERT_TRUE(packed.ok()) << packed.status();

  Harness h;
  BatchOptions o;
  o.batch_size = 3;
  o.dtypes = packed->dtypes;
  o.shapes = packed->shapes;
  o.registry = h.registry();
  Result<BatchQueue> b = Batch(packed->producer, o);
  ASSERT_TRUE(b.ok()) << b.status();
  h.Start();
  Result<Element> batch = b->Dequeue(queue::WaitOptions::Timeout(testing::kSafety));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(Int64Values((*batch)[0]), (std::vector<int64_t>{0, 1, 2}));
  Result<ops::SparseTensor> v = UnpackSparseBatch((*batch)[1], DType::kFloat32);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(Int64Values(v->indices), (std::vector<int64_t>{0, 0, 0, 1, 2, 0, 2, 1, 2, 2}));
  EXPECT_EQ(FloatValues(v->values), (std::vector<float>{1, 2, 5, 6, 7}));
  EXPECT_EQ(Int64Values(v->dense_shape), (std::vector<int64_t>{3, 3}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

}  // namespace
}  // namespace sluice::train
