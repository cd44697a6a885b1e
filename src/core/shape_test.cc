#include "sluice/core/shape.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace sluice {
namespace {

std::vector<int64_t> Dims(const TensorShape& s) { return {s.dims().begin(), s.dims().end()}; }

// ---------------------------------------------------------------------------
// TensorShape

TEST(TensorShapeTest, DefaultIsAScalarWithOneElement) {
  TensorShape s;
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_TRUE(s.dims().empty());
  EXPECT_EQ(s.DebugString(), "[]");
}

TEST(TensorShapeTest, KeepsDimensionsInOrder) {
  TensorShape s{3, 4};
  EXPECT_EQ(s.rank(), 2);
  EXPECT_EQ(s.dim(0), 3);
  EXPECT_EQ(s.dim(1), 4);
  EXPECT_EQ(s.num_elements(), 12);
  EXPECT_EQ(s.DebugString(), "[3,4]");
}

TEST(TensorShapeTest, ZeroDimensionMeansNoElements) {
  TensorShape s{0, 5};
  EXPECT_EQ(s.num_elements(), 0);
  EXPECT_EQ(s.DebugString(), "[0,5]");
}

TEST(TensorShapeTest, BuildsFromASpan) {
  const std::vector<int64_t> dims = {2, 3, 5};
  TensorShape s{std::span<const int64_t>(dims)};
  EXPECT_EQ(Dims(s), dims);
  EXPECT_EQ(s.num_elements(), 30);
}

TEST(TensorShapeTest, FiveDimensionsStayInline) {
  TensorShape s{1, 2, 3, 4, 5};
  static_assert(TensorShape::kInlineDims == 5);
  EXPECT_EQ(s.rank(), 5);
  EXPECT_EQ(s.num_elements(), 120);
  EXPECT_EQ(s.DebugString(), "[1,2,3,4,5]");
}

TEST(TensorShapeTest, MoreThanFiveDimensionsUseTheHeap) {
  TensorShape s{1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(s.rank(), 7);
  EXPECT_EQ(s.num_elements(), 5040);
  EXPECT_EQ(s.DebugString(), "[1,2,3,4,5,6,7]");
  EXPECT_EQ(Dims(s), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(TensorShapeTest, CopyOfAHeapShapeIsIndependent) {
  TensorShape a{1, 2, 3, 4, 5, 6};
  TensorShape b = a;
  EXPECT_EQ(a, b);
  b.set_dim(5, 60);
  EXPECT_EQ(a.dim(5), 6);
  EXPECT_EQ(b.dim(5), 60);
  EXPECT_NE(a, b);
}

TEST(TensorShapeTest, CopyOfAnInlineShapeIsIndependent) {
  TensorShape a{7, 8};
  TensorShape b(a);
  b.set_dim(0, 70);
  EXPECT_EQ(a.DebugString(), "[7,8]");
  EXPECT_EQ(b.DebugString(), "[70,8]");
}

TEST(TensorShapeTest, CopyAssignmentCrossesBetweenInlineAndHeap) {
  TensorShape inline_shape{2, 3};
  TensorShape heap_shape{1, 1, 1, 1, 1, 9};

  TensorShape x = inline_shape;
  x = heap_shape;  // inline -> heap
  EXPECT_EQ(x, heap_shape);
  x = inline_shape;  // heap -> inline
  EXPECT_EQ(x, inline_shape);
  x = heap_shape;
  TensorShape y{1, 2, 3, 4, 5, 6, 7, 8};
  x = y;  // heap -> heap of another size
  EXPECT_EQ(x, y);
  EXPECT_EQ(heap_shape.DebugString(), "[1,1,1,1,1,9]");
}

TEST(TensorShapeTest, SelfAssignmentKeepsTheShape) {
  TensorShape h{1, 2, 3, 4, 5, 6};
  TensorShape& alias = h;
  h = alias;
  EXPECT_EQ(h.DebugString(), "[1,2,3,4,5,6]");
  TensorShape i{4};
  TensorShape& ialias = i;
  i = ialias;
  EXPECT_EQ(i.DebugString(), "[4]");
}

TEST(TensorShapeTest, MoveTransfersInlineAndHeapShapes) {
  TensorShape heap{9, 8, 7, 6, 5, 4};
  TensorShape moved(std::move(heap));
  EXPECT_EQ(moved.DebugString(), "[9,8,7,6,5,4]");
  heap = TensorShape{1};  // a moved-from shape can be reused
  EXPECT_EQ(heap.DebugString(), "[1]");

  TensorShape small{3, 2};
  TensorShape target{1, 2, 3, 4, 5, 6, 7};
  target = std::move(small);  // heap target released
  EXPECT_EQ(target.DebugString(), "[3,2]");

  TensorShape big{1, 2, 3, 4, 5, 6, 7};
  TensorShape dst{5};
  dst = std::move(big);
  EXPECT_EQ(dst.DebugString(), "[1,2,3,4,5,6,7]");
}

TEST(TensorShapeTest, AddDimGrowsFromInlineToHeap) {
  TensorShape s;
  for (int64_t d = 1; d <= 7; ++d) s.AddDim(d);
  EXPECT_EQ(s.DebugString(), "[1,2,3,4,5,6,7]");
  EXPECT_EQ(s.num_elements(), 5040);
}

TEST(TensorShapeTest, InsertDimAtFrontMiddleAndEnd) {
  TensorShape s{2, 4};
  s.InsertDim(0, 1);
  EXPECT_EQ(s.DebugString(), "[1,2,4]");
  s.InsertDim(2, 3);
  EXPECT_EQ(s.DebugString(), "[1,2,3,4]");
  s.InsertDim(4, 5);
  EXPECT_EQ(s.DebugString(), "[1,2,3,4,5]");
  s.InsertDim(0, 0);  // crosses to the heap
  EXPECT_EQ(s.DebugString(), "[0,1,2,3,4,5]");
  EXPECT_EQ(s.num_elements(), 0);
}

TEST(TensorShapeTest, WithoutFirstDimDropsDimensionZero) {
  EXPECT_EQ(TensorShape({4, 3}).WithoutFirstDim(), TensorShape({3}));
  EXPECT_EQ(TensorShape({4}).WithoutFirstDim(), TensorShape());
  // Heap -> inline.
  EXPECT_EQ(TensorShape({1, 2, 3, 4, 5, 6}).WithoutFirstDim().DebugString(), "[2,3,4,5,6]");
}

TEST(TensorShapeTest, WithFirstDimPrependsAndLeavesTheOriginal) {
  const TensorShape row{3};
  EXPECT_EQ(row.WithFirstDim(4).DebugString(), "[4,3]");
  EXPECT_EQ(TensorShape().WithFirstDim(8).DebugString(), "[8]");
  EXPECT_EQ(TensorShape({1, 2, 3, 4, 5}).WithFirstDim(9).DebugString(), "[9,1,2,3,4,5]");
  EXPECT_EQ(row.DebugString(), "[3]");
}

TEST(TensorShapeTest, EqualityComparesRankAndEveryDim) {
  EXPECT_EQ(TensorShape({2, 3}), TensorShape({2, 3}));
  EXPECT_NE(TensorShape({2, 3}), TensorShape({3, 2}));
  EXPECT_NE(TensorShape({2, 3}), TensorShape({2, 3, 1}));
  EXPECT_NE(TensorShape({1}), TensorShape());
  EXPECT_EQ(TensorShape(), TensorShape());
  EXPECT_EQ(TensorShape({1, 2, 3, 4, 5, 6}), TensorShape({1, 2, 3, 4, 5, 6}));
  EXPECT_NE(TensorShape({1, 2, 3, 4, 5, 6}), TensorShape({1, 2, 3, 4, 5, 7}));
}

// ---------------------------------------------------------------------------
// PartialShape

TEST(PartialShapeTest, DefaultIsUnknownRankAndMatchesEverything) {
  PartialShape p;
  EXPECT_FALSE(p.rank_known());
  EXPECT_FALSE(p.fully_defined());
  EXPECT_EQ(p.DebugString(), "<unknown>");
  EXPECT_TRUE(p.IsCompatibleWith(TensorShape()));
  EXPECT_TRUE(p.IsCompatibleWith(TensorShape({2, 3})));
  EXPECT_TRUE(p.IsCompatibleWith(TensorShape({1, 2, 3, 4, 5, 6, 7})));
  EXPECT_EQ(PartialShape::UnknownRank(), p);
}

TEST(PartialShapeTest, UnknownDimPrintsAsQuestionMark) {
  PartialShape p{PartialShape::kUnknownDim, 3};
  EXPECT_TRUE(p.rank_known());
  EXPECT_EQ(p.rank(), 2);
  EXPECT_EQ(p.dim(0), -1);
  EXPECT_EQ(p.dim(1), 3);
  EXPECT_FALSE(p.fully_defined());
  EXPECT_EQ(p.DebugString(), "[?,3]");
}

TEST(PartialShapeTest, UnknownDimMatchesAnySizeButRankMustAgree) {
  PartialShape p{-1, 3};
  EXPECT_TRUE(p.IsCompatibleWith(TensorShape({5, 3})));
  EXPECT_TRUE(p.IsCompatibleWith(TensorShape({0, 3})));
  EXPECT_FALSE(p.IsCompatibleWith(TensorShape({5, 4})));
  EXPECT_FALSE(p.IsCompatibleWith(TensorShape({3})));
  EXPECT_FALSE(p.IsCompatibleWith(TensorShape({5, 3, 1})));
  EXPECT_FALSE(p.IsCompatibleWith(TensorShape()));
}

TEST(PartialShapeTest, KnownScalarMatchesOnlyScalars) {
  PartialShape p(std::vector<int64_t>{});  // note: PartialShape{} is unknown rank
  EXPECT_TRUE(p.rank_known());
  EXPECT_EQ(p.rank(), 0);
  EXPECT_TRUE(p.fully_defined());
  EXPECT_EQ(p.DebugString(), "[]");
  EXPECT_TRUE(p.IsCompatibleWith(TensorShape()));
  EXPECT_FALSE(p.IsCompatibleWith(TensorShape({1})));
  EXPECT_NE(p, PartialShape::UnknownRank());
}

TEST(PartialShapeTest, FullyDefinedConvertsToTensorShape) {
  PartialShape p{2, 3};
  EXPECT_TRUE(p.fully_defined());
  EXPECT_EQ(p.ToTensorShape(), TensorShape({2, 3}));
  EXPECT_EQ(p.DebugString(), "[2,3]");
  EXPECT_TRUE(p.IsCompatibleWith(TensorShape({2, 3})));
  EXPECT_FALSE(p.IsCompatibleWith(TensorShape({2, 4})));
}

TEST(PartialShapeTest, BuildsFromATensorShapeAndAVector) {
  PartialShape from_shape = TensorShape({1, 2, 3, 4, 5, 6});
  EXPECT_EQ(from_shape.DebugString(), "[1,2,3,4,5,6]");
  EXPECT_TRUE(from_shape.fully_defined());
  PartialShape from_vector(std::vector<int64_t>{4, -1});
  EXPECT_EQ(from_vector.DebugString(), "[4,?]");
  EXPECT_EQ(from_vector.dims(), (std::vector<int64_t>{4, -1}));
}

TEST(PartialShapeTest, WithFirstDimPrependsAndKeepsUnknownRank) {
  EXPECT_EQ(PartialShape({-1, 3}).WithFirstDim(4).DebugString(), "[4,?,3]");
  EXPECT_EQ(PartialShape(std::vector<int64_t>{}).WithFirstDim(-1).DebugString(), "[?]");
  EXPECT_FALSE(PartialShape().WithFirstDim(4).rank_known());
}

TEST(PartialShapeTest, EqualityComparesKnownnessAndDims) {
  EXPECT_EQ(PartialShape({-1, 3}), PartialShape({-1, 3}));
  EXPECT_NE(PartialShape({-1, 3}), PartialShape({2, 3}));
  EXPECT_EQ(PartialShape(), PartialShape());
  EXPECT_EQ(PartialShape(TensorShape({2})), PartialShape({2}));
}

}  // namespace
}  // namespace sluice
