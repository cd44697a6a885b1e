// PaddingFIFOQueue tests, ported from TensorFlow's padding_fifo_queue_test.py
// (the cases, not the code). Expected behaviour: docs/spec/tf-queues.md
// sections 1 and 4. Close, cancellation and timeout behaviour shared with the
// other queues is in QueueSemanticsTest (fifo_queue_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "queue_test_util.h"
#include "sluice/queue/queue.h"

namespace sluice::queue {
namespace {

using namespace testing;  // NOLINT: test helpers

Result<std::shared_ptr<Queue>> NewPadding(int32_t capacity, std::vector<DType> dtypes,
                                          std::vector<PartialShape> shapes) {
  return NewPaddingFIFOQueue(Opts(capacity, std::move(dtypes), std::move(shapes)));
}

// ===========================================================================
// Construction.

TEST(PaddingFIFOQueueTest, ShapesAreRequired) {
  EXPECT_TRUE(StatusIs(NewPadding(10, {DType::kInt32}, {}), Code::kInvalidArgument));
}

TEST(PaddingFIFOQueueTest, UnknownRankIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewPadding(10, {DType::kInt32, DType::kInt32},
                                  {PartialShape{-1}, PartialShape::UnknownRank()}),
                       Code::kInvalidArgument));
}

TEST(PaddingFIFOQueueTest, ShapeCountMismatchIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewPadding(10, {DType::kInt32, DType::kInt32}, {PartialShape{-1}}),
                       Code::kInvalidArgument));
}

TEST(PaddingFIFOQueueTest, EmptyDtypesIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewPadding(10, {}, {}), Code::kInvalidArgument,
                       "Empty component types for queue"));
}

TEST(PaddingFIFOQueueTest, UnknownDimensionsAreAllowed) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32, DType::kFloat32},
                                          {PartialShape{-1, 3}, PartialShape{-1, -1}}));
  EXPECT_EQ(q->type_name(), "PaddingFIFOQueue");
  EXPECT_EQ(q->shapes(), (std::vector<PartialShape>{PartialShape{-1, 3}, PartialShape{-1, -1}}));
}

TEST(PaddingFIFOQueueTest, EmptyNameDefaultsToPaddingFifoQueue) {
  QueueOptions o = Opts(10, {DType::kInt32}, {PartialShape{-1}});
  o.name = "";
  ASSERT_OK_AND_ASSIGN(auto q, NewPaddingFIFOQueue(o));
  EXPECT_EQ(q->name(), "padding_fifo_queue");
}

TEST(PaddingFIFOQueueTest, IncompatibleSharedQueueIsInvalidArgument) {
  QueueOptions o = Opts(10, {DType::kInt32}, {PartialShape{-1}});
  o.shared_name = "PaddingFIFOQueueTest.IncompatibleShared";
  ASSERT_OK_AND_ASSIGN(auto a, NewPaddingFIFOQueue(o));
  QueueOptions other = o;
  other.shapes = {PartialShape{-1, 2}};
  EXPECT_TRUE(StatusIs(NewPaddingFIFOQueue(other), Code::kInvalidArgument, "component shapes"));
  other = o;
  other.shapes = {PartialShape{4}};
  EXPECT_TRUE(StatusIs(NewPaddingFIFOQueue(other), Code::kInvalidArgument, "component shapes"));
  other = o;
  other.capacity = 11;
  EXPECT_TRUE(StatusIs(NewPaddingFIFOQueue(other), Code::kInvalidArgument, "capacity"));
  ASSERT_OK_AND_ASSIGN(auto same, NewPaddingFIFOQueue(o));
  EXPECT_EQ(a.get(), same.get());
}

// ===========================================================================
// Validation.

TEST(PaddingFIFOQueueTest, EnqueueIncompatibleShapeReportsPartialShape) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32, DType::kInt32},
                                          {PartialShape{2, 2}, PartialShape{-1, 3}}));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{Filled<int32_t>({2, 2}, 1), Filled<int32_t>({3, 4}, 1)}),
                       Code::kInvalidArgument,
                       "Shape mismatch in tuple component 1. Expected [?,3], got [3,4]"));
  // Wrong rank is incompatible too.
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{Filled<int32_t>({2, 2}, 1), Filled<int32_t>({3}, 1)}),
                       Code::kInvalidArgument, "Shape mismatch in tuple component 1."));
  EXPECT_EQ(q->size(), 0);
  ASSERT_OK(q->Enqueue(Element{Filled<int32_t>({2, 2}, 1), Filled<int32_t>({7, 3}, 1)}));
  EXPECT_EQ(q->size(), 1);
}

TEST(PaddingFIFOQueueTest, EnqueueManyIncompatibleShapeReportsBatchPartialShape) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32, DType::kInt32},
                                          {PartialShape{2, 2}, PartialShape{-1, 3}}));
  EXPECT_TRUE(StatusIs(
      q->EnqueueMany(Element{Filled<int32_t>({2, 2, 2}, 1), Filled<int32_t>({2, 3, 4}, 1)}),
      Code::kInvalidArgument, "Shape mismatch in tuple component 1. Expected [2,?,3], got [2,3,4]"));
  EXPECT_EQ(q->size(), 0);
}

TEST(PaddingFIFOQueueTest, EnqueueWrongTypeIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32}, {PartialShape{-1}}));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{Vec<float>({1, 2})}), Code::kInvalidArgument,
                       "Type mismatch in tuple component 0. Expected int32, got float32"));
}

// ===========================================================================
// Padding.

TEST(PaddingFIFOQueueTest, DequeueReturnsTheUnpaddedElement) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32}, {PartialShape{-1}}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({1})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({1, 2, 3})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({})}));
  ASSERT_OK_AND_ASSIGN(Element a, q->Dequeue(Safe()));
  ASSERT_OK_AND_ASSIGN(Element b, q->Dequeue(Safe()));
  ASSERT_OK_AND_ASSIGN(Element c, q->Dequeue(Safe()));
  EXPECT_EQ(Values<int32_t>(a[0]), std::vector<int32_t>{1});
  EXPECT_EQ(Values<int32_t>(b[0]), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(Dims(c[0]), std::vector<int64_t>{0});
}

TEST(PaddingFIFOQueueTest, DequeueManyPadsNumbersWithZeroToTheBatchMaximum) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32, DType::kFloat32},
                                          {PartialShape{-1}, PartialShape{-1, 2}}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({1}), Make<float>({1, 2}, {1, 2})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({1, 2, 3}), Make<float>({0, 2}, {})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({1, 2}), Make<float>({2, 2}, {3, 4, 5, 6})}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(3, Safe()));
  EXPECT_EQ(Dims(e[0]), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(Values<int32_t>(e[0]), (std::vector<int32_t>{1, 0, 0, 1, 2, 3, 1, 2, 0}));
  EXPECT_EQ(Dims(e[1]), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(Values<float>(e[1]), (std::vector<float>{1, 2, 0, 0, 0, 0, 0, 0, 3, 4, 5, 6}));
}

TEST(PaddingFIFOQueueTest, EachBatchIsPaddedToItsOwnMaximum) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32}, {PartialShape{-1}}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({1, 2, 3, 4})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({5})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({6, 7})}));
  ASSERT_OK_AND_ASSIGN(Element a, q->DequeueMany(1, Safe()));
  ASSERT_OK_AND_ASSIGN(Element b, q->DequeueMany(2, Safe()));
  EXPECT_EQ(Dims(a[0]), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(Dims(b[0]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<int32_t>(b[0]), (std::vector<int32_t>{5, 0, 6, 7}));
}

TEST(PaddingFIFOQueueTest, DequeueManyPadsStringsWithEmptyAndBoolsWithFalse) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kString, DType::kBool},
                                          {PartialShape{-1}, PartialShape{-1}}));
  ASSERT_OK(q->Enqueue(Element{Tensor::FromStrings({"a", "bb"}), Vec<bool>({true})}));
  ASSERT_OK(q->Enqueue(Element{Tensor::FromStrings({"ccc"}), Vec<bool>({true, true, true})}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(2, Safe()));
  EXPECT_EQ(Dims(e[0]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<std::string>(e[0]), (std::vector<std::string>{"a", "bb", "ccc", ""}));
  EXPECT_EQ(Dims(e[1]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<bool>(e[1]), (std::vector<bool>{true, false, false, true, true, true}));
}

TEST(PaddingFIFOQueueTest, FullyDefinedComponentsAreStackedUnpadded) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kFloat32, DType::kInt32},
                                          {ScalarShape(), PartialShape{2}}));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({10, 20, 30}), Make<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6})}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(3, Safe()));
  EXPECT_EQ(Dims(e[0]), std::vector<int64_t>{3});
  EXPECT_EQ(Values<float>(e[0]), (std::vector<float>{10, 20, 30}));
  EXPECT_EQ(Dims(e[1]), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<int32_t>(e[1]), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(PaddingFIFOQueueTest, PadsInnerUnknownDimensionOfRankThree) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt64}, {PartialShape{2, -1, -1}}));
  ASSERT_OK(q->Enqueue(Element{Make<int64_t>({2, 1, 2}, {1, 2, 3, 4})}));
  ASSERT_OK(q->Enqueue(Element{Make<int64_t>({2, 2, 1}, {5, 6, 7, 8})}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(2, Safe()));
  EXPECT_EQ(Dims(e[0]), (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(Values<int64_t>(e[0]), (std::vector<int64_t>{1, 2, 0, 0, 3, 4, 0, 0,  //
                                                         5, 0, 6, 0, 7, 0, 8, 0}));
}

TEST(PaddingFIFOQueueTest, EnqueueManyOfPaddedBatchComesOutSliced) {
  // enqueue_many splits a [2,3] batch into two [3] elements: their own shape.
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32}, {PartialShape{-1}}));
  ASSERT_OK(q->EnqueueMany(Element{Make<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})}));
  ASSERT_OK_AND_ASSIGN(Element a, q->Dequeue(Safe()));
  EXPECT_EQ(Values<int32_t>(a[0]), (std::vector<int32_t>{1, 2, 3}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({7})}));
  ASSERT_OK_AND_ASSIGN(Element b, q->DequeueMany(2, Safe()));
  EXPECT_EQ(Dims(b[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<int32_t>(b[0]), (std::vector<int32_t>{4, 5, 6, 7, 0, 0}));
}

TEST(PaddingFIFOQueueTest, DequeueManyZeroGivesZeroSizeUnknownDimensions) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32, DType::kString},
                                          {PartialShape{-1, 3}, PartialShape{-1}}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(0, Safe()));
  EXPECT_EQ(Dims(e[0]), (std::vector<int64_t>{0, 0, 3}));
  EXPECT_EQ(Dims(e[1]), (std::vector<int64_t>{0, 0}));
  ASSERT_OK(q->Enqueue(Element{Filled<int32_t>({2, 3}, 1), Tensor::FromStrings({"x"})}));
  ASSERT_OK_AND_ASSIGN(Element f, q->DequeueUpTo(0, Safe()));
  EXPECT_EQ(Dims(f[0]), (std::vector<int64_t>{0, 0, 3}));
  EXPECT_EQ(q->size(), 1);
}

TEST(PaddingFIFOQueueTest, DequeueUpToAfterClosePadsTheRemainder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32}, {PartialShape{-1}}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({1, 2, 3})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({4})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({5, 6})}));
  ASSERT_OK_AND_ASSIGN(Element first, q->DequeueUpTo(1, Safe()));
  EXPECT_EQ(Dims(first[0]), (std::vector<int64_t>{1, 3}));
  ASSERT_OK(q->Close());
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueUpTo(5, Safe()));
  EXPECT_EQ(Dims(rest[0]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<int32_t>(rest[0]), (std::vector<int32_t>{4, 0, 5, 6}));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(5, Safe()), Code::kOutOfRange,
                       "PaddingFIFOQueue 'q' is closed and has insufficient elements (requested 5, "
                       "current size 0)"));
}

TEST(PaddingFIFOQueueTest, BlockedDequeueManyOnCloseRestoresHeldElementsInOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(10, {DType::kInt32}, {PartialShape{-1}}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({1})}));
  ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({2, 2})}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(3, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_TRUE(Eventually([&] { return q->size() == 0; }));
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kOutOfRange, "is closed and has insufficient elements"));
  ASSERT_OK_AND_ASSIGN(Element a, q->Dequeue(Safe()));
  ASSERT_OK_AND_ASSIGN(Element b, q->Dequeue(Safe()));
  EXPECT_EQ(Values<int32_t>(a[0]), std::vector<int32_t>{1});  // unpadded, in order
  EXPECT_EQ(Values<int32_t>(b[0]), (std::vector<int32_t>{2, 2}));
}

TEST(PaddingFIFOQueueTest, DequeueManyLargerThanCapacityPadsAcrossPartialProgress) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPadding(2, {DType::kInt32}, {PartialShape{-1}}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(4, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  for (int i = 1; i <= 4; ++i) {
    ASSERT_OK(q->Enqueue(Element{Filled<int32_t>({i}, i)}, Safe()));
  }
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Dims((*r)[0]), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(Values<int32_t>((*r)[0]),
            (std::vector<int32_t>{1, 0, 0, 0, 2, 2, 0, 0, 3, 3, 3, 0, 4, 4, 4, 4}));
}

}  // namespace
}  // namespace sluice::queue
