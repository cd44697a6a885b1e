// cast, reshape, strided_slice, transpose and one_hot: TF's values and
// errors (cross-checked with TensorFlow by python/src/test_data_native_ops_tf_compat.py).
#include "sluice/ops/array_ops.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice::ops {
namespace {

using V = std::vector<int64_t>;

Tensor Iota(TensorShape shape) {
  Tensor t(DType::kInt64, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<int64_t>()[i] = i;
  return t;
}

V Values(const Tensor& t) {
  auto f = t.flat<int64_t>();
  return V(f.begin(), f.end());
}

V Dims(const Tensor& t) { return V(t.shape().dims().begin(), t.shape().dims().end()); }

TEST(CastTest, FloatToIntTruncatesTowardZeroAndSaturates) {
  Tensor x = Tensor::FromVector<float>({-1.7f, 2.9f, 300.0f, -5.0f});
  Result<Tensor> u8 = Cast(x, DType::kUInt8);
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_EQ(u8->data<uint8_t>()[1], 2);
  EXPECT_EQ(u8->data<uint8_t>()[2], 255);
  Result<Tensor> i32 = Cast(x, DType::kInt32);
  ASSERT_TRUE(i32.ok());
  EXPECT_EQ(i32->data<int32_t>()[0], -1);
  Result<Tensor> b = Cast(x, DType::kBool);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->data<bool>()[0]);
}

TEST(CastTest, StringIsInvalidArgument) {
  EXPECT_EQ(Cast(Tensor::String("a"), DType::kInt32).status().code(), Code::kInvalidArgument);
}

TEST(ReshapeTest, InfersMinusOneAndSharesTheBuffer) {
  Tensor x = Iota(TensorShape{12});
  Result<Tensor> r = Reshape(x, V{-1, 3});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (V{4, 3}));
  EXPECT_EQ(r->raw_data(), x.raw_data());
  Status bad = Reshape(x, V{5, 2}).status();
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("12 values"), std::string::npos) << bad;
}

// The view holds a reference on x's own buffer (not a wrapper of its own), so
// whoever holds the view alone may write it, and nobody may while x lives.
TEST(ReshapeTest, ViewCountsAsAnotherHolderOfTheBuffer) {
  Tensor x = Iota(TensorShape{6});
  Result<Tensor> r = Reshape(x, V{2, 3});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->SharesBufferWith(x));
  EXPECT_FALSE(r->buffer()->RefCountIsOne());
  x = Tensor();
  EXPECT_TRUE(r->buffer()->RefCountIsOne());
  EXPECT_EQ(Values(*r), (V{0, 1, 2, 3, 4, 5}));
}

TEST(StridedSliceTest, ForwardBackwardMasksAndShrink) {
  Tensor x = Iota(TensorShape{3, 4});
  // x[1:, ::-2]
  Result<Tensor> r = StridedSlice(x, {.begin = {1, 0}, .end = {0, 0}, .strides = {1, -2}, .begin_mask = 2,
                                      .end_mask = 3});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (V{2, 2}));
  EXPECT_EQ(Values(*r), (V{7, 5, 11, 9}));
  // x[-1, 1:3]
  r = StridedSlice(x, {.begin = {-1, 1}, .end = {0, 3}, .strides = {}, .shrink_axis_mask = 1});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (V{2}));
  EXPECT_EQ(Values(*r), (V{9, 10}));
  // Out-of-range ends are clamped; an empty range is empty.
  r = StridedSlice(x, {.begin = {2, 3}, .end = {100, 1}, .strides = {}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (V{1, 0}));
  EXPECT_EQ(StridedSlice(x, {.begin = {3, 0}, .end = {4, 1}, .strides = {}, .shrink_axis_mask = 1}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(StridedSlice(x, {.begin = {0, 0}, .end = {1, 1}, .strides = {1, 0}}).status().code(),
            Code::kInvalidArgument);
}

TEST(TransposeTest, PermutesDimensions) {
  Tensor x = Iota(TensorShape{2, 3, 4});
  Result<Tensor> r = Transpose(x, V{1, 2, 0});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (V{3, 4, 2}));
  // r[i, j, k] = x[k, i, j]
  EXPECT_EQ(Values(*r)[(1 * 4 + 2) * 2 + 1], 1 * 12 + 1 * 4 + 2);
  EXPECT_EQ(Transpose(x, V{0, 0, 1}).status().code(), Code::kInvalidArgument);
}

TEST(OneHotTest, OutOfRangeIndexIsAllOff) {
  Tensor idx = Tensor::FromVector<int32_t>({2, -1, 5});
  Result<Tensor> r = OneHot(idx, 3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims(*r), (V{3, 3}));
  std::vector<float> v(r->flat<float>().begin(), r->flat<float>().end());
  EXPECT_EQ(v, (std::vector<float>{0, 0, 1, 0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace sluice::ops
