#include "sluice/core/element.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

namespace sluice {
namespace {

Tensor Int(int32_t v) { return Tensor::Scalar<int32_t>(v); }

std::vector<int32_t> Ints(const Element& e) {
  std::vector<int32_t> out;
  for (const Tensor& t : e) out.push_back(t.scalar<int32_t>());
  return out;
}

// A tensor over static storage whose release bumps a counter: shows when the
// last reference to a component goes.
struct Tracked {
  std::atomic<int> releases{0};
  int32_t storage = 0;
  Tensor Make() {
    return Tensor::Wrap(DType::kInt32, TensorShape{}, &storage, [this] { releases.fetch_add(1); });
  }
};

TEST(ElementTest, DefaultIsEmpty) {
  Element e;
  EXPECT_EQ(e.size(), 0u);
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.begin(), e.end());
  EXPECT_EQ(e.DebugString(), "()");
  EXPECT_TRUE(e.ToVector().empty());
}

TEST(ElementTest, InlineComponentsShareTheirBuffers) {
  Tensor a = Int(1);
  Tensor b = Tensor::String("x");
  Element e{a, b};
  static_assert(Element::kInlineComponents == 2);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_TRUE(e[0].SharesBufferWith(a));
  EXPECT_TRUE(e[1].SharesBufferWith(b));
  EXPECT_EQ(e.DebugString(), "(Tensor<int32 []: 1>, Tensor<string []: \"x\">)");
}

TEST(ElementTest, ManyComponentsGoToTheHeap) {
  Element e{Int(1), Int(2), Int(3), Int(4), Int(5)};
  EXPECT_EQ(e.size(), 5u);
  EXPECT_EQ(Ints(e), (std::vector<int32_t>{1, 2, 3, 4, 5}));
}

TEST(ElementTest, BuildsFromAVectorByMoving) {
  std::vector<Tensor> parts = {Int(7), Int(8), Int(9)};
  const void* first = parts[0].raw_data();
  Element e(std::move(parts));
  EXPECT_EQ(Ints(e), (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(e[0].raw_data(), first);
}

TEST(ElementTest, PushBackGrowsPastTheInlineCapacityKeepingOrder) {
  Element e;
  std::vector<Tensor> pushed;
  for (int32_t i = 0; i < 20; ++i) {
    pushed.push_back(Int(i));
    e.push_back(pushed.back());
    ASSERT_EQ(e.size(), static_cast<size_t>(i + 1));
  }
  std::vector<int32_t> expected(20);
  for (int32_t i = 0; i < 20; ++i) {
    expected[i] = i;
    EXPECT_TRUE(e[i].SharesBufferWith(pushed[i]));
  }
  EXPECT_EQ(Ints(e), expected);
}

TEST(ElementTest, IteratesAndModifiesInPlace) {
  Element e{Int(1), Int(2), Int(3)};
  for (Tensor& t : e) t = Int(t.scalar<int32_t>() * 10);
  EXPECT_EQ(Ints(e), (std::vector<int32_t>{10, 20, 30}));
  e[1] = Tensor::String("s");
  EXPECT_EQ(e[1].dtype(), DType::kString);
}

TEST(ElementTest, ToVectorSharesBuffers) {
  Element e{Int(4), Int(5), Int(6)};
  std::vector<Tensor> v = e.ToVector();
  ASSERT_EQ(v.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(v[i].SharesBufferWith(e[i]));
}

TEST(ElementTest, CopySharesTensorsButNotTheContainer) {
  for (size_t n : {1u, 2u, 3u, 8u}) {
    SCOPED_TRACE(n);
    Element a;
    for (size_t i = 0; i < n; ++i) a.push_back(Int(static_cast<int32_t>(i)));
    Element b = a;
    ASSERT_EQ(b.size(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_TRUE(b[i].SharesBufferWith(a[i]));
    b[0] = Int(100);
    b.push_back(Int(101));
    EXPECT_EQ(a.size(), n);
    EXPECT_EQ(a[0].scalar<int32_t>(), 0);
  }
}

TEST(ElementTest, CopyAssignmentReplacesAndReleasesTheOldComponents) {
  Tracked tracked;
  Element target{tracked.Make(), Int(1), Int(2)};  // heap
  Element inline_source{Int(9)};
  target = inline_source;
  EXPECT_EQ(tracked.releases.load(), 1);
  EXPECT_EQ(Ints(target), (std::vector<int32_t>{9}));

  Element heap_source{Int(1), Int(2), Int(3), Int(4)};
  target = heap_source;
  EXPECT_EQ(Ints(target), (std::vector<int32_t>{1, 2, 3, 4}));

  Element& alias = target;
  target = alias;
  EXPECT_EQ(Ints(target), (std::vector<int32_t>{1, 2, 3, 4}));
}

TEST(ElementTest, MoveTakesInlineComponentsAndEmptiesTheSource) {
  Tracked tracked;
  Element a{tracked.Make(), Int(2)};
  const void* data = a[1].raw_data();
  Element b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): documented state
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1].raw_data(), data);
  EXPECT_EQ(tracked.releases.load(), 0);
  a.push_back(Int(3));  // a moved-from element is reusable
  EXPECT_EQ(Ints(a), (std::vector<int32_t>{3}));
  b = Element();
  EXPECT_EQ(tracked.releases.load(), 1);
}

TEST(ElementTest, MoveTakesHeapComponentsAndEmptiesTheSource) {
  Element a{Int(1), Int(2), Int(3), Int(4), Int(5)};
  const Tensor last = a.ToVector().back();  // (a[4] trips GCC 12's -Warray-bounds at -O3)
  Element b(std::move(a));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(Ints(b), (std::vector<int32_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(b.ToVector().back().SharesBufferWith(last));
  for (int32_t i = 0; i < 4; ++i) a.push_back(Int(i));
  EXPECT_EQ(Ints(a), (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(ElementTest, MoveAssignmentBetweenInlineAndHeap) {
  Tracked tracked;
  Element heap{tracked.Make(), Int(2), Int(3)};
  Element small{Int(7)};
  heap = std::move(small);  // the heap element's old components are released
  EXPECT_EQ(tracked.releases.load(), 1);
  EXPECT_EQ(Ints(heap), (std::vector<int32_t>{7}));
  EXPECT_TRUE(small.empty());  // NOLINT(bugprone-use-after-move)

  Element big{Int(1), Int(2), Int(3)};
  Element target{Int(0)};
  target = std::move(big);
  EXPECT_EQ(Ints(target), (std::vector<int32_t>{1, 2, 3}));
  target.push_back(Int(4));
  target.push_back(Int(5));
  EXPECT_EQ(Ints(target), (std::vector<int32_t>{1, 2, 3, 4, 5}));

  Element& alias = target;
  target = std::move(alias);
  EXPECT_EQ(target.size(), 5u);
}

TEST(ElementTest, ResizeGrowsWithInvalidTensorsAndShrinksReleasing) {
  Tracked tracked;
  Element e{Int(1)};
  e.resize(4);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].scalar<int32_t>(), 1);
  EXPECT_FALSE(e[1].valid());
  EXPECT_FALSE(e[3].valid());
  e[3] = tracked.Make();
  e.resize(2);
  EXPECT_EQ(tracked.releases.load(), 1);
  e.resize(4);
  EXPECT_FALSE(e[3].valid());  // not the old tensor back
}

TEST(ElementTest, ClearReleasesComponentsAndAllowsReuse) {
  Tracked tracked;
  Element e{Int(1), Int(2), tracked.Make()};
  e.clear();
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(tracked.releases.load(), 1);
  e.push_back(Int(5));
  EXPECT_EQ(Ints(e), (std::vector<int32_t>{5}));
}

TEST(ElementTest, DestructorReleasesEveryComponent) {
  Tracked tracked;
  {
    Element e;
    for (int i = 0; i < 5; ++i) e.push_back(tracked.Make());
  }
  EXPECT_EQ(tracked.releases.load(), 5);
}

}  // namespace
}  // namespace sluice
