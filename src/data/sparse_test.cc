// SparseTensor components in FromTensorSlices, Batch and Unbatch.
#include <gtest/gtest.h>

#include "data/data_test_util.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Must;
using V = std::vector<int64_t>;

V Flat(const Tensor& t) { return V(t.flat<int64_t>().begin(), t.flat<int64_t>().end()); }

Tensor Matrix(int64_t rows, int64_t cols, V values) {
  Tensor t(DType::kInt64, TensorShape{rows, cols});
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

// Dense int64 [3] beside a SparseTensor of dense shape [3, 4]:
// (0, 1) = 10, (2, 0) = 20, (2, 3) = 30.
Element Sample() {
  return Element{Tensor::FromVector<int64_t>({7, 8, 9}), Matrix(3, 2, {0, 1, 2, 0, 2, 3}),
                 Tensor::FromVector<int64_t>({10, 20, 30}), Tensor::FromVector<int64_t>({3, 4})};
}

TEST(SparseTest, FromTensorSlicesSplitsTheSparseTensorByRow) {
  DatasetPtr ds = Must(FromTensorSlicesWithSparse(Sample(), {1}));
  EXPECT_EQ(ds->cardinality(), 3);
  EXPECT_EQ(ds->element_spec().shapes[1], PartialShape({-1, 1}));
  std::vector<Element> got = Elements(ds);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0][0].scalar<int64_t>(), 7);
  EXPECT_EQ(Flat(got[0][1]), (V{1}));
  EXPECT_EQ(Flat(got[0][2]), (V{10}));
  EXPECT_EQ(Flat(got[0][3]), (V{4}));
  EXPECT_EQ(got[1][1].shape(), (TensorShape{0, 1}));
  EXPECT_EQ(Flat(got[2][1]), (V{0, 3}));
  EXPECT_EQ(Flat(got[2][2]), (V{20, 30}));
}

TEST(SparseTest, BatchPrefixesThePositionAndTakesTheLargestShape) {
  Element a{Matrix(1, 1, {1}), Tensor::FromVector<int64_t>({5}), Tensor::FromVector<int64_t>({2})};
  Element b{Matrix(2, 1, {0, 4}), Tensor::FromVector<int64_t>({6, 7}), Tensor::FromVector<int64_t>({5})};
  DatasetPtr two = Must(Concatenate(Must(FromTensors(a)), Must(FromTensors(b))));
  DatasetPtr ds = Must(BatchWithSparse(two, 2, false, {0}));
  std::vector<Element> got = Elements(ds);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0][0].shape(), (TensorShape{3, 2}));
  EXPECT_EQ(Flat(got[0][0]), (V{0, 1, 1, 0, 1, 4}));
  EXPECT_EQ(Flat(got[0][1]), (V{5, 6, 7}));
  EXPECT_EQ(Flat(got[0][2]), (V{2, 5}));
}

TEST(SparseTest, UnbatchUndoesBatch) {
  DatasetPtr rows = Must(FromTensorSlicesWithSparse(Sample(), {1}));
  DatasetPtr again = Must(UnbatchWithSparse(Must(BatchWithSparse(rows, 2, false, {1})), {1}));
  std::vector<Element> want = Elements(rows), got = Elements(again);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    for (size_t c = 0; c < 4; ++c) EXPECT_TRUE(ValuesEqual(got[i][c], want[i][c])) << i << " " << c;
  }
}

TEST(SparseTest, RowCountsThatDisagreeAreInvalidArgument) {
  Element e = Sample();
  e[0] = Tensor::FromVector<int64_t>({1, 2});
  EXPECT_EQ(FromTensorSlicesWithSparse(e, {1}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(FromTensorSlicesWithSparse(e, {2}).status().code(), Code::kInvalidArgument);  // not 3 components
}

}  // namespace
}  // namespace sluice::data
