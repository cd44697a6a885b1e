#include "sluice/image/geometry.h"

#include <gtest/gtest.h>

#include "transforms_test_util.h"

namespace sluice::image {
namespace {

using testing::MakeTensor;
using testing::Pattern;
using testing::Values;

// A 2x3 image with 1 channel: 1 2 3 / 4 5 6.
Tensor Small() { return MakeTensor<int32_t>({2, 3, 1}, {1, 2, 3, 4, 5, 6}); }

std::vector<int32_t> Ints(const Result<Tensor>& r) {
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Values<int32_t>(*r) : std::vector<int32_t>{};
}

TEST(GeometryTest, Flips) {
  EXPECT_EQ(Ints(FlipLeftRight(Small())), (std::vector<int32_t>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(Ints(FlipUpDown(Small())), (std::vector<int32_t>{4, 5, 6, 1, 2, 3}));
}

TEST(GeometryTest, Rot90MatchesNumpy) {
  // np.rot90(x, k) on [[1,2,3],[4,5,6]].
  Result<Tensor> r1 = Rot90(Small(), 1);
  EXPECT_EQ(Ints(r1), (std::vector<int32_t>{3, 6, 2, 5, 1, 4}));
  EXPECT_EQ(r1->shape(), (TensorShape{3, 2, 1}));
  EXPECT_EQ(Ints(Rot90(Small(), 2)), (std::vector<int32_t>{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(Ints(Rot90(Small(), 3)), (std::vector<int32_t>{4, 1, 5, 2, 6, 3}));
  EXPECT_EQ(Ints(Rot90(Small(), -1)), Ints(Rot90(Small(), 3)));
  EXPECT_EQ(Ints(Rot90(Small(), 4)), Values<int32_t>(Small()));
}

TEST(GeometryTest, Transpose) {
  Result<Tensor> t = Transpose(Small());
  EXPECT_EQ(Ints(t), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(t->shape(), (TensorShape{3, 2, 1}));
}

TEST(GeometryTest, CropAndPad) {
  EXPECT_EQ(Ints(CropToBoundingBox(Small(), 1, 1, 1, 2)), (std::vector<int32_t>{5, 6}));
  Result<Tensor> padded = PadToBoundingBox(Small(), 1, 0, 3, 4);
  EXPECT_EQ(Ints(padded), (std::vector<int32_t>{0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0}));
  Status s = CropToBoundingBox(Small(), 1, 0, 2, 1).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("crop_to_bounding_box: height must be >= target + offset."), std::string::npos) << s;
  EXPECT_EQ(CropToBoundingBox(Small(), -1, 0, 1, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(PadToBoundingBox(Small(), 0, 2, 2, 4).status().code(), Code::kInvalidArgument);
}

TEST(GeometryTest, CentralCropUsesTfOffsets) {
  std::vector<float> v(48);
  for (int i = 0; i < 48; ++i) v[i] = static_cast<float>(i + 1);
  // The tf.image.central_crop docstring example: 4x4x3, fraction 0.5.
  Result<Tensor> c = CentralCrop(MakeTensor<float>({4, 4, 3}, v), 0.5);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Values<float>(*c), (std::vector<float>{16, 17, 18, 19, 20, 21, 28, 29, 30, 31, 32, 33}));
  Tensor in = Small();
  Result<Tensor> same = CentralCrop(in, 1.0);
  EXPECT_TRUE(same->SharesBufferWith(in));
  EXPECT_EQ(CentralCrop(in, 0.0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(CentralCrop(in, 1.5).status().code(), Code::kInvalidArgument);
}

TEST(GeometryTest, BatchFlipsEveryImage) {
  Tensor batch = Pattern({2, 3, 4, 3});
  Result<Tensor> f = FlipLeftRight(batch);
  ASSERT_TRUE(f.ok());
  for (int64_t b = 0; b < 2; ++b) {
    Result<Tensor> one = FlipLeftRight(batch.Slice(b));
    EXPECT_TRUE(ValuesEqual(*one, f->Slice(b)));
  }
}

TEST(GeometryTest, RandomCropIsReproducibleAndInside) {
  Tensor in = Pattern({20, 30, 3});
  const int64_t size[] = {8, 9, 3};
  Result<Tensor> a = RandomCrop(in, size, 7);
  Result<Tensor> b = RandomCrop(in, size, 7);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(ValuesEqual(*a, *b));
  bool differs = false;
  for (uint64_t seed = 8; seed < 20 && !differs; ++seed) differs = !ValuesEqual(*a, *RandomCrop(in, size, seed));
  EXPECT_TRUE(differs);
  // The crop is some window of the input.
  bool found = false;
  for (int64_t y = 0; y <= 12 && !found; ++y) {
    for (int64_t x = 0; x <= 21 && !found; ++x) found = ValuesEqual(*CropToBoundingBox(in, y, x, 8, 9), *a);
  }
  EXPECT_TRUE(found);
  const int64_t too_big[] = {21, 9, 3};
  EXPECT_EQ(RandomCrop(in, too_big, 1).status().code(), Code::kInvalidArgument);
  const int64_t wrong_rank[] = {2, 2};
  EXPECT_EQ(RandomCrop(in, wrong_rank, 1).status().code(), Code::kInvalidArgument);
}

TEST(GeometryTest, RandomFlipsAreReproducibleAndPerImage) {
  Tensor batch = Pattern({16, 2, 3, 1});
  Result<Tensor> a = RandomFlipLeftRight(batch, 3);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(ValuesEqual(*a, *RandomFlipLeftRight(batch, 3)));
  Result<Tensor> flipped = FlipLeftRight(batch);
  int n_flipped = 0;
  for (int64_t b = 0; b < 16; ++b) {
    if (ValuesEqual(a->Slice(b), flipped->Slice(b))) {
      ++n_flipped;
    } else {
      EXPECT_TRUE(ValuesEqual(a->Slice(b), batch.Slice(b)));
    }
  }
  EXPECT_GT(n_flipped, 0);
  EXPECT_LT(n_flipped, 16);
  Result<Tensor> ud = RandomFlipUpDown(batch, 3);
  ASSERT_TRUE(ud.ok());
  EXPECT_TRUE(ValuesEqual(*ud, *RandomFlipUpDown(batch, 3)));
}

TEST(GeometryTest, BadRankIsInvalidArgument) {
  Status s = FlipLeftRight(Pattern({3, 3})).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("flip_left_right"), std::string::npos);
  EXPECT_EQ(Rot90(Pattern({1, 1, 1, 1, 1}), 1).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::image
