// FIFOQueue tests, ported from TensorFlow's fifo_queue_test.py (the cases,
// not the code), plus QueueSemanticsTest: the QueueBase behaviour every queue
// type shares (close, cancellation, timeouts, interrupts), run against all
// four types. Expected behaviour: docs/spec/tf-queues.md sections 1-2, 13.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "queue_test_util.h"
#include "sluice/queue/queue.h"

namespace sluice::queue {
namespace {

using namespace testing;  // NOLINT: test helpers
using ::testing::TestWithParam;
using ::testing::ValuesIn;

Result<std::shared_ptr<Queue>> NewFloatQueue(int32_t capacity, bool scalar_shape = false) {
  return NewFIFOQueue(Opts(capacity, {DType::kFloat32},
                           scalar_shape ? std::vector<PartialShape>{ScalarShape()}
                                        : std::vector<PartialShape>{}));
}

float DequeueFloat(Queue& q) {
  auto r = q.Dequeue(Safe());
  EXPECT_TRUE(IsOk(r));
  if (!r.ok()) return -1;
  EXPECT_EQ(r->size(), 1u);
  return ScalarOf<float>((*r)[0]);
}

// ===========================================================================
// Construction.

TEST(FIFOQueueTest, CreateWithEmptyDtypesIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewFIFOQueue(Opts(10, {})), Code::kInvalidArgument,
                       "Empty component types for queue"));
}

TEST(FIFOQueueTest, CreateWithInvalidDtypeIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewFIFOQueue(Opts(10, {DType::kInt32, DType::kInvalid})),
                       Code::kInvalidArgument));
}

TEST(FIFOQueueTest, CreateWithShapeCountMismatchIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(
      NewFIFOQueue(Opts(10, {DType::kInt32, DType::kFloat32}, {ScalarShape()})),
      Code::kInvalidArgument));
}

TEST(FIFOQueueTest, CreateWithShapesNotFullyDefinedIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewFIFOQueue(Opts(10, {DType::kInt32}, {PartialShape{-1, 3}})),
                       Code::kInvalidArgument, "fully defined"));
  EXPECT_TRUE(StatusIs(NewFIFOQueue(Opts(10, {DType::kInt32}, {PartialShape::UnknownRank()})),
                       Code::kInvalidArgument, "fully defined"));
}

TEST(FIFOQueueTest, CreateWithNameCountMismatchIsInvalidArgument) {
  QueueOptions o = Opts(10, {DType::kInt32, DType::kFloat32});
  o.names = {"only_one"};
  EXPECT_TRUE(StatusIs(NewFIFOQueue(o), Code::kInvalidArgument));
}

TEST(FIFOQueueTest, AccessorsReportConstructionAttributes) {
  QueueOptions o = Opts(5, {DType::kInt32, DType::kFloat32},
                        {PartialShape{1, 1, 2, 3}, PartialShape{5, 8}});
  o.names = {"i", "f"};
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(o));
  EXPECT_EQ(q->type_name(), "FIFOQueue");
  EXPECT_EQ(q->name(), "q");
  EXPECT_EQ(q->capacity(), 5);
  EXPECT_EQ(q->dtypes(), (std::vector<DType>{DType::kInt32, DType::kFloat32}));
  EXPECT_EQ(q->shapes(), (std::vector<PartialShape>{PartialShape{1, 1, 2, 3}, PartialShape{5, 8}}));
  EXPECT_EQ(q->names(), (std::vector<std::string>{"i", "f"}));
  EXPECT_FALSE(q->is_closed());
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, EmptyNameDefaultsToFifoQueue) {
  QueueOptions o = Opts(5, {DType::kInt32});
  o.name = "";
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(o));
  EXPECT_EQ(q->name(), "fifo_queue");
}

TEST(FIFOQueueTest, NegativeCapacityIsUnbounded) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(-1));
  EXPECT_EQ(q->capacity(), Queue::kUnbounded);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_OK(q->Enqueue(Element{F32(i)}, WaitOptions::Timeout(kSafety)));
  }
  EXPECT_EQ(q->size(), 1000);
}

TEST(FIFOQueueTest, QueuesWithoutSharedNameDoNotShare) {
  ASSERT_OK_AND_ASSIGN(auto q1, NewFloatQueue(10));
  ASSERT_OK_AND_ASSIGN(auto q2, NewFloatQueue(10));
  ASSERT_OK(q1->Enqueue(Element{F32(1)}));
  ASSERT_OK(q2->Enqueue(Element{F32(2)}));
  EXPECT_EQ(DequeueFloat(*q2), 2);
  EXPECT_EQ(DequeueFloat(*q1), 1);
}

TEST(FIFOQueueTest, SharedNameReturnsTheSameQueue) {
  QueueOptions o = Opts(1, {DType::kFloat32});
  o.shared_name = "FIFOQueueTest.SharedNameReturnsTheSameQueue";
  ASSERT_OK_AND_ASSIGN(auto q1, NewFIFOQueue(o));
  ASSERT_OK(q1->Enqueue(Element{F32(10)}));
  ASSERT_OK_AND_ASSIGN(auto q2, NewFIFOQueue(o));
  EXPECT_EQ(q1.get(), q2.get());
  EXPECT_EQ(q2->size(), 1);
  EXPECT_EQ(DequeueFloat(*q2), 10);
  EXPECT_EQ(q1->size(), 0);
  ASSERT_OK(q2->Enqueue(Element{F32(20)}));
  EXPECT_EQ(q1->size(), 1);
  EXPECT_EQ(DequeueFloat(*q1), 20);
}

TEST(FIFOQueueTest, ConcurrentCreationWithSharedNameYieldsOneQueue) {
  QueueOptions o = Opts(10, {DType::kFloat32});
  o.shared_name = "FIFOQueueTest.ConcurrentCreationWithSharedName";
  std::vector<std::future<Result<std::shared_ptr<Queue>>>> makers;
  for (int i = 0; i < 8; ++i) makers.push_back(Async([o] { return NewFIFOQueue(o); }));
  std::vector<std::shared_ptr<Queue>> queues;
  for (auto& m : makers) {
    ASSERT_TRUE(Finishes(m));
    ASSERT_OK_AND_ASSIGN(auto q, m.get());
    queues.push_back(q);
  }
  for (const auto& q : queues) EXPECT_EQ(q.get(), queues[0].get());
}

TEST(FIFOQueueTest, IncompatibleSharedQueueIsInvalidArgument) {
  const std::string prefix = "FIFOQueueTest.IncompatibleSharedQueue.";
  auto make = [&](const std::string& name, int32_t capacity, std::vector<DType> dtypes,
                  std::vector<PartialShape> shapes) {
    QueueOptions o = Opts(capacity, std::move(dtypes), std::move(shapes));
    o.shared_name = prefix + name;
    return NewFIFOQueue(o);
  };
  const PartialShape s1236{1, 1, 2, 3}, s1234{1, 1, 2, 4};
  ASSERT_OK_AND_ASSIGN(auto a, make("a", 10, {DType::kFloat32}, {}));
  EXPECT_TRUE(StatusIs(make("a", 15, {DType::kFloat32}, {}), Code::kInvalidArgument, "capacity"));
  ASSERT_OK_AND_ASSIGN(auto b, make("b", 10, {DType::kFloat32}, {}));
  EXPECT_TRUE(StatusIs(make("b", 10, {DType::kInt32}, {}), Code::kInvalidArgument,
                       "component types"));
  ASSERT_OK_AND_ASSIGN(auto c, make("c", 10, {DType::kFloat32}, {}));
  EXPECT_TRUE(StatusIs(make("c", 10, {DType::kFloat32}, {s1236}), Code::kInvalidArgument,
                       "component shapes"));
  ASSERT_OK_AND_ASSIGN(auto d, make("d", 10, {DType::kFloat32}, {s1236}));
  EXPECT_TRUE(StatusIs(make("d", 10, {DType::kFloat32}, {}), Code::kInvalidArgument,
                       "component shapes"));
  ASSERT_OK_AND_ASSIGN(auto e, make("e", 10, {DType::kFloat32}, {s1236}));
  EXPECT_TRUE(StatusIs(make("e", 10, {DType::kFloat32}, {s1234}), Code::kInvalidArgument,
                       "component shapes"));
  ASSERT_OK_AND_ASSIGN(auto f, make("f", 10, {DType::kFloat32}, {}));
  EXPECT_TRUE(StatusIs(make("f", 10, {DType::kFloat32, DType::kInt32}, {}),
                       Code::kInvalidArgument, "component types"));
}

// ===========================================================================
// Enqueue validation.

TEST(FIFOQueueTest, EnqueueWrongNumberOfComponentsIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32, DType::kFloat32})));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{I32(1)}), Code::kInvalidArgument,
                       "Wrong number of components in tuple. Expected 2, got 1"));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Vec<int32_t>({1, 2})}), Code::kInvalidArgument,
                       "Wrong number of components in tuple. Expected 2, got 1"));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{I32(1), F32(1), F32(2)}), Code::kInvalidArgument,
                       "Wrong number of components in tuple. Expected 2, got 3"));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, EnqueueWrongTypeIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32, DType::kFloat32},
                                                 {ScalarShape(), ScalarShape()})));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{I32(1), I32(2)}), Code::kInvalidArgument,
                       "Type mismatch in tuple component 1. Expected float32, got int32"));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Vec<int32_t>({1}), Vec<int32_t>({2})}),
                       Code::kInvalidArgument,
                       "Type mismatch in tuple component 1. Expected float32, got int32"));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, EnqueueWrongShapeReportsExpectedAndActualShape) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32, DType::kInt32},
                                                 {PartialShape{2, 2}, PartialShape{3, 3}})));
  Status s = q->Enqueue(Element{Filled<int32_t>({2, 2}, 1), Filled<int32_t>({3, 4}, 1)});
  EXPECT_TRUE(StatusIs(s, Code::kInvalidArgument,
                       "Shape mismatch in tuple component 1. Expected [3,3], got [3,4]"));
  EXPECT_EQ(q->size(), 0);
  ASSERT_OK(q->Enqueue(Element{Filled<int32_t>({2, 2}, 1), Filled<int32_t>({3, 3}, 1)}));
  EXPECT_EQ(q->size(), 1);
}

TEST(FIFOQueueTest, EnqueueManyWrongShapeReportsBatchShape) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32, DType::kInt32},
                                                 {PartialShape{2, 2}, PartialShape{3, 3}})));
  Status s = q->EnqueueMany(Element{Filled<int32_t>({2, 2, 2}, 1), Filled<int32_t>({2, 3, 4}, 1)});
  EXPECT_TRUE(StatusIs(s, Code::kInvalidArgument,
                       "Shape mismatch in tuple component 1. Expected [2,3,3], got [2,3,4]"));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, EnqueueManyBatchSizeMismatchIsInvalidArgument) {
  // With declared shapes the check is the full [batch] + shape, batch taken
  // from component 0.
  ASSERT_OK_AND_ASSIGN(auto shaped, NewFIFOQueue(Opts(10, {DType::kInt32, DType::kInt32},
                                                      {ScalarShape(), ScalarShape()})));
  EXPECT_TRUE(StatusIs(shaped->EnqueueMany(Element{Vec<int32_t>({1, 2, 3}), Vec<int32_t>({1, 2})}),
                       Code::kInvalidArgument,
                       "Shape mismatch in tuple component 1. Expected [3], got [2]"));
  EXPECT_EQ(shaped->size(), 0);
  // Without shapes only dim 0 must agree.
  ASSERT_OK_AND_ASSIGN(auto unshaped, NewFIFOQueue(Opts(10, {DType::kInt32, DType::kInt32})));
  EXPECT_TRUE(StatusIs(
      unshaped->EnqueueMany(Element{Vec<int32_t>({1, 2, 3}), Vec<int32_t>({1, 2})}),
      Code::kInvalidArgument,
      "All input tensors must have the same size in the 0th dimension. Component 1 has 2, and "
      "should have 3"));
  EXPECT_EQ(unshaped->size(), 0);
}

TEST(FIFOQueueTest, EnqueueManyOfScalarIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{F32(1)}), Code::kInvalidArgument));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, UnshapedQueueAcceptsElementsOfDifferentShapes) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  ASSERT_OK(q->Enqueue(Element{F32(1)}));
  ASSERT_OK(q->Enqueue(Element{Filled<float>({2, 3}, 2.0f)}));
  ASSERT_OK_AND_ASSIGN(Element a, q->Dequeue(Safe()));
  ASSERT_OK_AND_ASSIGN(Element b, q->Dequeue(Safe()));
  EXPECT_EQ(Dims(a[0]), std::vector<int64_t>{});
  EXPECT_EQ(Dims(b[0]), (std::vector<int64_t>{2, 3}));
}

// ===========================================================================
// Order, enqueue_many and dequeue_many.

TEST(FIFOQueueTest, DequeueReturnsElementsInEnqueueOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32, DType::kFloat32})));
  const std::vector<std::pair<int32_t, float>> elems = {{5, 10}, {10, 20}, {15, 30}};
  for (auto [i, f] : elems) ASSERT_OK(q->Enqueue(Element{I32(i), F32(f)}));
  EXPECT_EQ(q->size(), 3);
  for (auto [i, f] : elems) {
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(ScalarOf<int32_t>(e[0]), i);
    EXPECT_EQ(ScalarOf<float>(e[1]), f);
  }
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, EnqueueManySlicesAlongFirstDimensionInOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kFloat32, DType::kInt32})));
  const std::vector<float> floats = {10, 20, 30, 40};
  const Tensor ints = Make<int32_t>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>(floats), ints}));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>(floats), ints}));
  EXPECT_EQ(q->size(), 8);
  for (int i = 0; i < 8; ++i) {
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    EXPECT_EQ(ScalarOf<float>(e[0]), floats[i % 4]);
    EXPECT_EQ(Values<int32_t>(e[1]), (std::vector<int32_t>{2 * (i % 4) + 1, 2 * (i % 4) + 2}));
  }
}

TEST(FIFOQueueTest, DequeueManyStacksElementsInOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kFloat32, DType::kInt32},
                                                 {ScalarShape(), PartialShape{2}})));
  std::vector<float> floats;
  std::vector<int32_t> ints;
  for (int i = 0; i < 10; ++i) {
    floats.push_back(10.0f * (i + 1));
    ints.push_back(2 * i + 1);
    ints.push_back(2 * i + 2);
  }
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>(floats), Make<int32_t>({10, 2}, ints)}));
  for (int batch = 0; batch < 2; ++batch) {
    ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(4, Safe()));
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(Dims(e[0]), std::vector<int64_t>{4});
    EXPECT_EQ(Dims(e[1]), (std::vector<int64_t>{4, 2}));
    EXPECT_EQ(Values<float>(e[0]),
              std::vector<float>(floats.begin() + 4 * batch, floats.begin() + 4 * batch + 4));
    EXPECT_EQ(Values<int32_t>(e[1]),
              std::vector<int32_t>(ints.begin() + 8 * batch, ints.begin() + 8 * batch + 8));
  }
  ASSERT_OK_AND_ASSIGN(Element single, q->Dequeue(Safe()));
  EXPECT_EQ(Dims(single[0]), std::vector<int64_t>{});
  EXPECT_EQ(Dims(single[1]), std::vector<int64_t>{2});
  EXPECT_EQ(ScalarOf<float>(single[0]), 90.0f);
  EXPECT_EQ(Values<int32_t>(single[1]), (std::vector<int32_t>{17, 18}));
}

TEST(FIFOQueueTest, DequeueUpToOnOpenQueueReturnsExactlyN) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  std::vector<float> elems;
  for (int i = 1; i <= 10; ++i) elems.push_back(10.0f * i);
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>(elems)}));
  ASSERT_OK_AND_ASSIGN(Element a, q->DequeueUpTo(4, Safe()));
  ASSERT_OK_AND_ASSIGN(Element b, q->DequeueUpTo(4, Safe()));
  EXPECT_EQ(Values<float>(a[0]), std::vector<float>(elems.begin(), elems.begin() + 4));
  EXPECT_EQ(Values<float>(b[0]), std::vector<float>(elems.begin() + 4, elems.begin() + 8));
  EXPECT_EQ(q->size(), 2);
}

TEST(FIFOQueueTest, HighDimensionElementsRoundTrip) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32}, {PartialShape{4, 4, 4, 4}})));
  std::vector<int32_t> values;
  for (int x = 0; x < 10; ++x) values.insert(values.end(), 256, x);
  const Tensor batch = Make<int32_t>({10, 4, 4, 4, 4}, values);
  ASSERT_OK(q->EnqueueMany(Element{batch}));
  ASSERT_OK_AND_ASSIGN(Element out, q->DequeueMany(10, Safe()));
  EXPECT_TRUE(ValuesEqual(out[0], batch));
}

TEST(FIFOQueueTest, EmptyEnqueueManyDoesNothing) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  ASSERT_OK(q->EnqueueMany(Element{Tensor(DType::kFloat32, {0, 2, 3})}));
  EXPECT_EQ(q->size(), 0);
  EXPECT_EQ(q->stats().enqueued, 0);
}

TEST(FIFOQueueTest, DequeueManyZeroReturnsEmptyBatchWithoutBlocking) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kFloat32, DType::kInt32},
                                                 {ScalarShape(), PartialShape{2, 3}})));
  ASSERT_OK_AND_ASSIGN(Element empty, q->DequeueMany(0, Safe()));
  ASSERT_EQ(empty.size(), 2u);
  EXPECT_EQ(empty[0].dtype(), DType::kFloat32);
  EXPECT_EQ(Dims(empty[0]), std::vector<int64_t>{0});
  EXPECT_EQ(empty[1].dtype(), DType::kInt32);
  EXPECT_EQ(Dims(empty[1]), (std::vector<int64_t>{0, 2, 3}));
  ASSERT_OK(q->Enqueue(Element{F32(10), Filled<int32_t>({2, 3}, 1)}));
  ASSERT_OK_AND_ASSIGN(Element again, q->DequeueUpTo(0, Safe()));
  EXPECT_EQ(Dims(again[0]), std::vector<int64_t>{0});
  EXPECT_EQ(q->size(), 1);
}

TEST(FIFOQueueTest, DequeueManyWithoutShapesIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  const char* kMessage =
      "FIFOQueue's DequeueMany and DequeueUpTo require the components to have specified shapes.";
  EXPECT_TRUE(StatusIs(q->DequeueMany(0, Safe()), Code::kInvalidArgument, kMessage));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(0, Safe()), Code::kInvalidArgument, kMessage));
  ASSERT_OK(q->Enqueue(Element{F32(1)}));
  EXPECT_TRUE(StatusIs(q->DequeueMany(1, Safe()), Code::kInvalidArgument, kMessage));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(1, Safe()), Code::kInvalidArgument, kMessage));
  EXPECT_EQ(q->size(), 1);
}

TEST(FIFOQueueTest, NegativeDequeueCountIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  EXPECT_TRUE(StatusIs(q->DequeueMany(-1, Safe()), Code::kInvalidArgument,
                       "requested -1 < 0 elements"));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(-1, Safe()), Code::kInvalidArgument,
                       "requested -1 < 0 elements"));
}

TEST(FIFOQueueTest, MixedDequeueAndDequeueManyKeepOrder) {
  // A producer pushes 0..249 through a capacity-10 queue with one
  // enqueue_many; the consumer takes random-sized bites.
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32}, {ScalarShape()})));
  std::vector<int32_t> all(250);
  for (int i = 0; i < 250; ++i) all[i] = i;
  auto producer = Async([&] { return q->EnqueueMany(Element{Vec<int32_t>(all)}, Safe()); });
  std::mt19937 rng(1234);
  int next = 0;
  while (next < 250) {
    if (rng() % 2) {
      ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
      ASSERT_EQ(ScalarOf<int32_t>(e[0]), next);
      ++next;
    } else {
      const int count = static_cast<int>(rng() % (std::min(20, 250 - next) + 1));
      ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(count, Safe()));
      std::vector<int32_t> expected(all.begin() + next, all.begin() + next + count);
      ASSERT_EQ(Values<int32_t>(e[0]), expected);
      next += count;
    }
  }
  ASSERT_TRUE(Finishes(producer));
  EXPECT_OK(producer.get());
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, MixedEnqueueAndEnqueueManyKeepOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32}, {ScalarShape()})));
  auto consumer = Async([&] {
    for (int i = 0; i < 250; ++i) {
      auto r = q->Dequeue(Safe());
      if (!r.ok()) return r.status();
      if (ScalarOf<int32_t>((*r)[0]) != i) return errors::Internal("out of order at ", i);
    }
    return Status();
  });
  std::mt19937 rng(4321);
  int enqueued = 0;
  while (enqueued < 250) {
    if (rng() % 2) {
      ASSERT_OK(q->Enqueue(Element{I32(enqueued)}, Safe()));
      ++enqueued;
    } else {
      const int count = static_cast<int>(rng() % (std::min(20, 250 - enqueued) + 1));
      std::vector<int32_t> ids(count);
      for (int i = 0; i < count; ++i) ids[i] = enqueued + i;
      ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>(ids)}, Safe()));
      enqueued += count;
    }
  }
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(consumer));
  EXPECT_OK(consumer.get());
  EXPECT_EQ(q->size(), 0);
}

// ===========================================================================
// Blocking.

TEST(FIFOQueueTest, DequeueBlocksUntilAnEnqueue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(3));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->Dequeue(probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_FALSE(IsDone(dequeue));
  for (float x : {10.0f, 20.0f, 30.0f}) ASSERT_OK(q->Enqueue(Element{F32(x)}, Safe()));
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(ScalarOf<float>((*r)[0]), 10.0f);
  EXPECT_EQ(DequeueFloat(*q), 20.0f);
  EXPECT_EQ(DequeueFloat(*q), 30.0f);
}

TEST(FIFOQueueTest, EnqueueBlocksWhileFullUntilADequeue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(4));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({10, 20, 30, 40})}));
  BlockedProbe probe;
  auto enqueue = Async([&] { return q->Enqueue(Element{F32(50)}, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_FALSE(IsDone(enqueue));
  EXPECT_EQ(q->size(), 4);
  EXPECT_EQ(DequeueFloat(*q), 10.0f);
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
  for (float x : {20.0f, 30.0f, 40.0f, 50.0f}) EXPECT_EQ(DequeueFloat(*q), x);
}

TEST(FIFOQueueTest, EnqueueManyAdmitsWhatFitsAndWaitsForTheRest) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(5, {DType::kInt32}, {ScalarShape()})));
  auto enqueue = Async(
      [&] { return q->EnqueueMany(Element{Vec<int32_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})}, Safe()); });
  ASSERT_TRUE(Eventually([&] { return q->size() == 5; }));
  EXPECT_FALSE(IsDone(enqueue));  // five slices still wait for room
  std::vector<int32_t> results;
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    results.push_back(ScalarOf<int32_t>(e[0]));
  }
  // Each dequeue made room for one more slice; the 10th is still waiting.
  ASSERT_TRUE(Eventually([&] { return q->size() == 5; }));
  EXPECT_FALSE(IsDone(enqueue));
  ASSERT_OK_AND_ASSIGN(Element fifth, q->Dequeue(Safe()));
  results.push_back(ScalarOf<int32_t>(fifth[0]));
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(q->size(), 5 - i);
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    results.push_back(ScalarOf<int32_t>(e[0]));
  }
  EXPECT_EQ(results, (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST(FIFOQueueTest, DequeueManyLargerThanCapacityCompletesByPartialProgress) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(2, {DType::kInt32}, {ScalarShape()})));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(4, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(IsDone(dequeue));
    ASSERT_OK(q->Enqueue(Element{I32(i)}, Safe()));
  }
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Values<int32_t>((*r)[0]), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, PendingDequeueManyHoldsElementsOutsideSize) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32}, {ScalarShape()})));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(4, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({1, 2, 3})}, Safe()));
  EXPECT_TRUE(Eventually([&] { return q->size() == 0; }));
  EXPECT_FALSE(IsDone(dequeue));
  ASSERT_OK(q->Enqueue(Element{I32(4)}, Safe()));
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Values<int32_t>((*r)[0]), (std::vector<int32_t>{1, 2, 3, 4}));
}

TEST(FIFOQueueTest, EnqueuersAreServedInArrivalOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(3, {DType::kInt32}, {ScalarShape()})));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({1, 2})}));
  BlockedProbe first, second;
  // Admits 10, then waits with 11.
  auto many = Async([&] { return q->EnqueueMany(Element{Vec<int32_t>({10, 11})}, first.Options()); });
  ASSERT_TRUE(first.WaitBlocked());
  auto single = Async([&] { return q->Enqueue(Element{I32(20)}, second.Options()); });
  ASSERT_TRUE(second.WaitBlocked());
  std::vector<int32_t> out;
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    out.push_back(ScalarOf<int32_t>(e[0]));
  }
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 10, 11, 20}));
  ASSERT_TRUE(Finishes(many));
  ASSERT_TRUE(Finishes(single));
  EXPECT_OK(many.get());
  EXPECT_OK(single.get());
}

TEST(FIFOQueueTest, DequeuersAreServedInArrivalOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kInt32}, {ScalarShape()})));
  BlockedProbe first, second;
  auto many = Async([&] { return q->DequeueMany(2, first.Options()); });
  ASSERT_TRUE(first.WaitBlocked());
  auto single = Async([&] { return q->Dequeue(second.Options()); });
  ASSERT_TRUE(second.WaitBlocked());
  ASSERT_OK(q->Enqueue(Element{I32(1)}, Safe()));
  ASSERT_TRUE(Eventually([&] { return q->size() == 0; }));  // held by the first
  EXPECT_FALSE(IsDone(single));
  ASSERT_OK(q->Enqueue(Element{I32(2)}, Safe()));
  ASSERT_OK(q->Enqueue(Element{I32(3)}, Safe()));
  ASSERT_TRUE(Finishes(many));
  ASSERT_TRUE(Finishes(single));
  auto a = many.get();
  auto b = single.get();
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(Values<int32_t>((*a)[0]), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(ScalarOf<int32_t>((*b)[0]), 3);
}

// ===========================================================================
// Close.

TEST(FIFOQueueTest, DequeueDrainsClosedQueueThenIsOutOfRange) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({10, 20, 30, 40})}));
  ASSERT_OK(q->Close());
  EXPECT_TRUE(q->is_closed());
  for (float x : {10.0f, 20.0f, 30.0f, 40.0f}) EXPECT_EQ(DequeueFloat(*q), x);
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange,
                       "FIFOQueue 'q' is closed and has insufficient elements (requested 1, "
                       "current size 0)"));
}

TEST(FIFOQueueTest, EnqueueOnClosedQueueIsCancelled) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  ASSERT_OK(q->Enqueue(Element{F32(10)}));
  ASSERT_OK(q->Close());
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{F32(10)}, Safe()), Code::kCancelled,
                       "FIFOQueue 'q' is closed."));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Vec<float>({1, 2})}, Safe()), Code::kCancelled,
                       "FIFOQueue 'q' is closed."));
  EXPECT_EQ(q->size(), 1);
}

TEST(FIFOQueueTest, EmptyEnqueueManyOnClosedQueueSucceeds) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  ASSERT_OK(q->Close());
  EXPECT_OK(q->EnqueueMany(Element{Tensor(DType::kFloat32, {0})}, Safe()));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, DequeueManyZeroOnClosedEmptyQueueSucceeds) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  ASSERT_OK(q->Close());
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(0, Safe()));
  EXPECT_EQ(Dims(e[0]), std::vector<int64_t>{0});
  ASSERT_OK_AND_ASSIGN(Element f, q->DequeueUpTo(0, Safe()));
  EXPECT_EQ(Dims(f[0]), std::vector<int64_t>{0});
}

TEST(FIFOQueueTest, SecondCloseIsCancelled) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  ASSERT_OK(q->Close());
  EXPECT_TRUE(StatusIs(q->Close(false, Safe()), Code::kCancelled, "Queue 'q' is already closed."));
  // A cancelling close never fails.
  EXPECT_OK(q->Close(true, Safe()));
  EXPECT_TRUE(q->is_closed());
}

TEST(FIFOQueueTest, BlockedDequeueIsOutOfRangeWhenClosed) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->Dequeue(probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 1, current size 0)"));
}

TEST(FIFOQueueTest, BlockedDequeueManyOnCloseRestoresHeldElementsInOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(4, {DType::kFloat32, DType::kFloat32},
                                                 {ScalarShape(), ScalarShape()})));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({1, 2, 3}), Vec<float>({10, 20, 30})}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(4, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_TRUE(Eventually([&] { return q->size() == 0; }));  // all three held
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 1,"));
  EXPECT_EQ(q->size(), 3);
  for (float a : {1.0f, 2.0f, 3.0f}) {
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    EXPECT_EQ(ScalarOf<float>(e[0]), a);
    EXPECT_EQ(ScalarOf<float>(e[1]), 10 * a);
  }
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, DequeueManyOnClosedQueueTakesWhatSufficesThenIsOutOfRange) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({10, 20, 30, 40})}));
  ASSERT_OK(q->Close());
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(3, Safe()));
  EXPECT_EQ(Values<float>(e[0]), (std::vector<float>{10, 20, 30}));
  EXPECT_TRUE(StatusIs(q->DequeueMany(3, Safe()), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 3, current size 1)"));
  EXPECT_EQ(DequeueFloat(*q), 40.0f);
}

TEST(FIFOQueueTest, BlockedDequeueManyCompletesWhenEnoughElementsBeforeClose) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(4, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({10, 20, 30, 40})}, Safe()));
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Values<float>((*r)[0]), (std::vector<float>{10, 20, 30, 40}));
  ASSERT_OK(q->Close());
  EXPECT_TRUE(StatusIs(q->DequeueMany(4, Safe()), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 4, current size 0)"));
}

TEST(FIFOQueueTest, BlockedDequeueUpToReturnsRemainderWhenClosed) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({10, 20, 30, 40})}));
  ASSERT_OK_AND_ASSIGN(Element first, q->DequeueUpTo(3, Safe()));
  EXPECT_EQ(Values<float>(first[0]), (std::vector<float>{10, 20, 30}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueUpTo(3, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Values<float>((*r)[0]), std::vector<float>{40});
  EXPECT_EQ(Dims((*r)[0]), std::vector<int64_t>{1});
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(3, Safe()), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 3, current size 0)"));
}

TEST(FIFOQueueTest, BlockedDequeueManyAndUpToOnClosedEmptyQueueAreOutOfRange) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  BlockedProbe p1, p2;
  auto many = Async([&] { return q->DequeueMany(4, p1.Options()); });
  ASSERT_TRUE(p1.WaitBlocked());
  auto up_to = Async([&] { return q->DequeueUpTo(4, p2.Options()); });
  ASSERT_TRUE(p2.WaitBlocked());
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(many));
  ASSERT_TRUE(Finishes(up_to));
  EXPECT_TRUE(StatusIs(many.get(), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 4, current size 0)"));
  EXPECT_TRUE(StatusIs(up_to.get(), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 4, current size 0)"));
}

TEST(FIFOQueueTest, CloseWaitsBehindBlockedEnqueue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(4));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({10, 20, 30, 40})}));
  BlockedProbe enqueue_probe, close_probe, late_probe;
  auto enqueue = Async([&] { return q->Enqueue(Element{F32(50)}, enqueue_probe.Options()); });
  ASSERT_TRUE(enqueue_probe.WaitBlocked());
  auto close = Async([&] { return q->Close(false, close_probe.Options()); });
  ASSERT_TRUE(close_probe.WaitBlocked());
  EXPECT_FALSE(q->is_closed());
  EXPECT_FALSE(IsDone(close));
  // Arrives after the close: queues behind it and fails once it takes effect.
  auto late = Async([&] { return q->Enqueue(Element{F32(60)}, late_probe.Options()); });
  ASSERT_TRUE(late_probe.WaitBlocked());
  EXPECT_EQ(DequeueFloat(*q), 10.0f);  // unblocks the enqueue, then the close
  ASSERT_TRUE(Finishes(enqueue));
  ASSERT_TRUE(Finishes(close));
  ASSERT_TRUE(Finishes(late));
  EXPECT_OK(enqueue.get());
  EXPECT_OK(close.get());
  EXPECT_TRUE(StatusIs(late.get(), Code::kCancelled, "FIFOQueue 'q' is closed."));
  EXPECT_TRUE(q->is_closed());
  for (float x : {20.0f, 30.0f, 40.0f, 50.0f}) EXPECT_EQ(DequeueFloat(*q), x);
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange));
}

TEST(FIFOQueueTest, CloseWaitsBehindBlockedEnqueueMany) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(4));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({10, 20, 30})}));
  BlockedProbe enqueue_probe, close_probe;
  auto enqueue =
      Async([&] { return q->EnqueueMany(Element{Vec<float>({50, 60})}, enqueue_probe.Options()); });
  ASSERT_TRUE(enqueue_probe.WaitBlocked());
  EXPECT_EQ(q->size(), 4);  // 50 admitted, 60 waiting
  auto close = Async([&] { return q->Close(false, close_probe.Options()); });
  ASSERT_TRUE(close_probe.WaitBlocked());
  EXPECT_EQ(DequeueFloat(*q), 10.0f);
  ASSERT_TRUE(Finishes(enqueue));
  ASSERT_TRUE(Finishes(close));
  EXPECT_OK(enqueue.get());
  EXPECT_OK(close.get());
  for (float x : {20.0f, 30.0f, 50.0f, 60.0f}) EXPECT_EQ(DequeueFloat(*q), x);
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Vec<float>({50, 60})}, Safe()), Code::kCancelled,
                       "is closed."));
}

TEST(FIFOQueueTest, CancellingCloseFailsPendingEnqueueAndPendingClose) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(1));
  ASSERT_OK(q->Enqueue(Element{F32(1)}));
  BlockedProbe enqueue_probe, close_probe;
  auto enqueue = Async([&] { return q->Enqueue(Element{F32(2)}, enqueue_probe.Options()); });
  ASSERT_TRUE(enqueue_probe.WaitBlocked());
  auto close = Async([&] { return q->Close(false, close_probe.Options()); });
  ASSERT_TRUE(close_probe.WaitBlocked());
  ASSERT_OK(q->Close(true, Safe()));
  EXPECT_TRUE(q->is_closed());
  ASSERT_TRUE(Finishes(enqueue));
  ASSERT_TRUE(Finishes(close));
  EXPECT_TRUE(StatusIs(enqueue.get(), Code::kCancelled, "Enqueue operation was cancelled"));
  EXPECT_TRUE(StatusIs(close.get(), Code::kCancelled, "Enqueue operation was cancelled"));
  EXPECT_EQ(q->size(), 1);
  EXPECT_EQ(DequeueFloat(*q), 1.0f);
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange));
}

TEST(FIFOQueueTest, CancellingCloseKeepsAdmittedPrefixOfEnqueueMany) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(2));
  BlockedProbe probe;
  auto enqueue =
      Async([&] { return q->EnqueueMany(Element{Vec<float>({1, 2, 3, 4})}, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_EQ(q->size(), 2);
  ASSERT_OK(q->Close(true, Safe()));
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_TRUE(StatusIs(enqueue.get(), Code::kCancelled, "Enqueue operation was cancelled"));
  EXPECT_EQ(DequeueFloat(*q), 1.0f);
  EXPECT_EQ(DequeueFloat(*q), 2.0f);
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange));
}

TEST(FIFOQueueTest, CancellingCloseWakesPendingDequeueManyWithOutOfRange) {
  // Pending dequeues are not cancelled, only re-evaluated.
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(1, /*scalar_shape=*/true));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(1, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Close(true, Safe()));
  ASSERT_TRUE(Finishes(dequeue));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kOutOfRange));
}

// ===========================================================================
// Timeouts, cancellation, interrupts.

TEST(FIFOQueueTest, DequeueTimesOutAndQueueStaysUsable) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  EXPECT_TRUE(StatusIs(q->Dequeue(WaitOptions::Timeout(10ms)), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
  EXPECT_TRUE(StatusIs(q->Dequeue(WaitOptions::Timeout(10ms)), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
  ASSERT_OK(q->Enqueue(Element{F32(37)}, Safe()));
  EXPECT_EQ(DequeueFloat(*q), 37.0f);
}

TEST(FIFOQueueTest, DeadlineAlreadyPassedFailsABlockingCallAtOnce) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  WaitOptions past;
  past.deadline = WaitOptions::Clock::now() - 1s;
  EXPECT_TRUE(StatusIs(q->Dequeue(past), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
}

TEST(FIFOQueueTest, EnqueueOnFullQueueTimesOutWithoutAdmitting) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(1));
  ASSERT_OK(q->Enqueue(Element{F32(1)}));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{F32(2)}, WaitOptions::Timeout(10ms)),
                       Code::kDeadlineExceeded, "Timed out waiting for notification"));
  EXPECT_EQ(q->size(), 1);
  EXPECT_EQ(DequeueFloat(*q), 1.0f);
  ASSERT_OK(q->Enqueue(Element{F32(3)}, Safe()));
  EXPECT_EQ(DequeueFloat(*q), 3.0f);
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, TimedOutDequeueManyRestoresHeldElementsInOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({1, 2, 3})}));
  EXPECT_TRUE(StatusIs(q->DequeueMany(4, WaitOptions::Timeout(20ms)), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
  EXPECT_EQ(q->size(), 3);
  ASSERT_OK(q->Enqueue(Element{F32(4)}, Safe()));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(4, Safe()));
  EXPECT_EQ(Values<float>(e[0]), (std::vector<float>{1, 2, 3, 4}));
}

TEST(FIFOQueueTest, TimedOutEnqueueManyKeepsAdmittedPrefix) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(2));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Vec<float>({1, 2, 3, 4})}, WaitOptions::Timeout(20ms)),
                       Code::kDeadlineExceeded, "Timed out waiting for notification"));
  EXPECT_EQ(q->size(), 2);
  EXPECT_EQ(DequeueFloat(*q), 1.0f);
  EXPECT_EQ(DequeueFloat(*q), 2.0f);
  EXPECT_TRUE(StatusIs(q->Dequeue(WaitOptions::Timeout(1ms)), Code::kDeadlineExceeded));
}

TEST(FIFOQueueTest, TimedOutEnqueueManySaysHowManyRowsItAdmitted) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(4));
  Status s = q->EnqueueMany(Element{Vec<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})}, WaitOptions::Timeout(20ms));
  EXPECT_TRUE(StatusIs(s, Code::kDeadlineExceeded, "Timed out waiting for notification (enqueue_many enqueued 4 of 10 rows)"));
  EXPECT_EQ(s.GetPayload(kRowsEnqueuedPayload), "4");
  EXPECT_EQ(q->size(), 4);
}

TEST(FIFOQueueTest, CancelledEnqueueManySaysHowManyRowsItAdmitted) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(2));
  BlockedProbe probe;
  auto enqueue = Async([&] { return q->EnqueueMany(Element{Vec<float>({1, 2, 3})}, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Close(true, Safe()));
  ASSERT_TRUE(Finishes(enqueue));
  Status s = enqueue.get();
  EXPECT_TRUE(StatusIs(s, Code::kCancelled, "(enqueue_many enqueued 2 of 3 rows)"));
  EXPECT_EQ(s.GetPayload(kRowsEnqueuedPayload), "2");
}

TEST(FIFOQueueTest, EnqueueManyOnAClosedQueueAdmitsNoRow) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(2));
  ASSERT_OK(q->Close());
  Status s = q->EnqueueMany(Element{Vec<float>({1, 2})}, Safe());
  EXPECT_TRUE(StatusIs(s, Code::kCancelled, "FIFOQueue 'q' is closed."));
  EXPECT_EQ(s.GetPayload(kRowsEnqueuedPayload), "0");
}

TEST(FIFOQueueTest, CancellationManagerCancelsBlockedOperations) {
  ASSERT_OK_AND_ASSIGN(auto empty, NewFloatQueue(5, /*scalar_shape=*/true));
  ASSERT_OK_AND_ASSIGN(auto full, NewFloatQueue(5));
  ASSERT_OK(full->EnqueueMany(Element{Vec<float>({1, 2, 3, 4, 5})}));
  CancellationManager cm;
  BlockedProbe p1, p2, p3, p4, p5;
  auto dequeue = Async([&] { return empty->Dequeue(p1.Options(&cm)); });
  auto dequeue_many = Async([&] { return empty->DequeueMany(1, p2.Options(&cm)); });
  auto dequeue_up_to = Async([&] { return empty->DequeueUpTo(1, p3.Options(&cm)); });
  auto enqueue = Async([&] { return full->Enqueue(Element{F32(6)}, p4.Options(&cm)); });
  auto enqueue_many = Async([&] { return full->EnqueueMany(Element{Vec<float>({6})}, p5.Options(&cm)); });
  for (BlockedProbe* p : {&p1, &p2, &p3, &p4, &p5}) ASSERT_TRUE(p->WaitBlocked());
  cm.StartCancel();
  for (auto* f : {&dequeue, &dequeue_many, &dequeue_up_to}) {
    ASSERT_TRUE(Finishes(*f));
    EXPECT_TRUE(StatusIs(f->get(), Code::kCancelled, "Dequeue operation was cancelled"));
  }
  for (auto* f : {&enqueue, &enqueue_many}) {
    ASSERT_TRUE(Finishes(*f));
    EXPECT_TRUE(StatusIs(f->get(), Code::kCancelled, "Enqueue operation was cancelled"));
  }
  // Both queues are consistent and usable.
  EXPECT_EQ(full->size(), 5);
  for (float x : {1.0f, 2.0f, 3.0f, 4.0f, 5.0f}) EXPECT_EQ(DequeueFloat(*full), x);
  ASSERT_OK(empty->Enqueue(Element{F32(7)}, Safe()));
  EXPECT_EQ(DequeueFloat(*empty), 7.0f);
}

TEST(FIFOQueueTest, CancelledDequeueManyRestoresHeldElementsInOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  CancellationManager cm;
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(5, probe.Options(&cm)); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({1, 2, 3})}, Safe()));
  ASSERT_TRUE(Eventually([&] { return q->size() == 0; }));
  cm.StartCancel();
  ASSERT_TRUE(Finishes(dequeue));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kCancelled, "Dequeue operation was cancelled"));
  EXPECT_EQ(q->size(), 3);
  for (float x : {1.0f, 2.0f, 3.0f}) EXPECT_EQ(DequeueFloat(*q), x);
}

TEST(FIFOQueueTest, CancelledEnqueueManyKeepsAdmittedPrefix) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(2));
  CancellationManager cm;
  BlockedProbe probe;
  auto enqueue =
      Async([&] { return q->EnqueueMany(Element{Vec<float>({1, 2, 3})}, probe.Options(&cm)); });
  ASSERT_TRUE(probe.WaitBlocked());
  cm.StartCancel();
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_TRUE(StatusIs(enqueue.get(), Code::kCancelled, "Enqueue operation was cancelled"));
  EXPECT_EQ(q->size(), 2);
  EXPECT_EQ(DequeueFloat(*q), 1.0f);
  EXPECT_EQ(DequeueFloat(*q), 2.0f);
}

TEST(FIFOQueueTest, CancellingOneDequeueLeavesTheNextInLineWaiting) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  CancellationManager cm_first, cm_second;
  BlockedProbe p1, p2;
  auto first = Async([&] { return q->Dequeue(p1.Options(&cm_first)); });
  ASSERT_TRUE(p1.WaitBlocked());
  auto second = Async([&] { return q->Dequeue(p2.Options(&cm_second)); });
  ASSERT_TRUE(p2.WaitBlocked());
  cm_first.StartCancel();
  ASSERT_TRUE(Finishes(first));
  EXPECT_TRUE(StatusIs(first.get(), Code::kCancelled, "Dequeue operation was cancelled"));
  EXPECT_FALSE(IsDone(second));
  ASSERT_OK(q->Enqueue(Element{F32(5)}, Safe()));
  ASSERT_TRUE(Finishes(second));
  auto r = second.get();
  ASSERT_OK(r);
  EXPECT_EQ(ScalarOf<float>((*r)[0]), 5.0f);
}

TEST(FIFOQueueTest, AlreadyCancelledManagerFailsAtOnce) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  CancellationManager cm;
  cm.StartCancel();
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe(&cm)), Code::kCancelled, "Dequeue operation was cancelled"));
  EXPECT_TRUE(StatusIs(q->DequeueMany(2, Safe(&cm)), Code::kCancelled,
                       "Dequeue operation was cancelled"));
}

TEST(FIFOQueueTest, AlreadyCancelledManagerFailsEnqueueEvenWithRoom) {
  // TF registers every attempt before trying it, so an attempt made with an
  // already-cancelled manager fails even when it could complete at once.
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  CancellationManager cm;
  cm.StartCancel();
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{F32(1)}, Safe(&cm)), Code::kCancelled,
                       "Enqueue operation was cancelled"));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, InterruptCheckErrorAbandonsBlockedCallWithThatStatus) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({1, 2})}));
  const Status interrupt = errors::Unknown("KeyboardInterrupt");
  WaitOptions o = Safe();
  o.interrupt_check = [&] { return interrupt; };
  o.interrupt_check_interval = 1ms;
  EXPECT_EQ(q->DequeueMany(3, o).status(), interrupt);
  EXPECT_EQ(q->size(), 2);  // held elements restored
  ASSERT_OK_AND_ASSIGN(auto full, NewFloatQueue(1));
  ASSERT_OK(full->Enqueue(Element{F32(1)}));
  EXPECT_EQ(full->Enqueue(Element{F32(2)}, o), interrupt);
  EXPECT_EQ(full->size(), 1);
  // Still usable.
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(2, Safe()));
  EXPECT_EQ(Values<float>(e[0]), (std::vector<float>{1, 2}));
}

TEST(FIFOQueueTest, InterruptCheckThatFailsLaterAbandonsTheCall) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  std::atomic<int> calls{0};
  WaitOptions o = Safe();
  o.interrupt_check = [&] {
    return ++calls >= 3 ? errors::Aborted("stop") : Status();
  };
  o.interrupt_check_interval = 1ms;
  EXPECT_TRUE(StatusIs(q->Dequeue(o), Code::kAborted, "stop"));
  EXPECT_GE(calls.load(), 3);
}

TEST(FIFOQueueTest, NonBlockingCallSucceedsDespitePastDeadline) {
  // The deadline bounds waiting only: a call that need not wait completes.
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  WaitOptions past;
  past.deadline = WaitOptions::Clock::now() - 1s;
  EXPECT_OK(q->Enqueue(Element{F32(1)}, past));
  ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(past));
  EXPECT_EQ(ScalarOf<float>(e[0]), 1.0f);
}

TEST(FIFOQueueTest, BlockedCloseTimesOutAndLeavesQueueOpen) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(1));
  ASSERT_OK(q->Enqueue(Element{F32(1)}));
  BlockedProbe probe;
  auto enqueue = Async([&] { return q->Enqueue(Element{F32(2)}, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_TRUE(StatusIs(q->Close(false, WaitOptions::Timeout(10ms)), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
  EXPECT_FALSE(q->is_closed());
  EXPECT_EQ(DequeueFloat(*q), 1.0f);
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
  EXPECT_EQ(DequeueFloat(*q), 2.0f);
  ASSERT_OK(q->Enqueue(Element{F32(3)}, Safe()));
  EXPECT_FALSE(q->is_closed());
  ASSERT_OK(q->Close(false, Safe()));
  EXPECT_TRUE(q->is_closed());
}

TEST(FIFOQueueTest, CancelledCloseLeavesQueueOpen) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(1));
  ASSERT_OK(q->Enqueue(Element{F32(1)}));
  BlockedProbe enqueue_probe, close_probe;
  auto enqueue = Async([&] { return q->Enqueue(Element{F32(2)}, enqueue_probe.Options()); });
  ASSERT_TRUE(enqueue_probe.WaitBlocked());
  CancellationManager cm;
  auto close = Async([&] { return q->Close(false, close_probe.Options(&cm)); });
  ASSERT_TRUE(close_probe.WaitBlocked());
  cm.StartCancel();
  ASSERT_TRUE(Finishes(close));
  EXPECT_TRUE(StatusIs(close.get(), Code::kCancelled));
  EXPECT_FALSE(q->is_closed());
  EXPECT_EQ(DequeueFloat(*q), 1.0f);
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
  EXPECT_EQ(DequeueFloat(*q), 2.0f);
  EXPECT_FALSE(q->is_closed());
}

TEST(FIFOQueueTest, CancellingAnEnqueueBehindAnotherAdmitsNothingOfIt) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(2));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({1, 2})}));
  BlockedProbe p1, p2;
  CancellationManager cm;
  auto front = Async([&] { return q->EnqueueMany(Element{Vec<float>({3, 4})}, p1.Options()); });
  ASSERT_TRUE(p1.WaitBlocked());
  auto behind = Async([&] { return q->EnqueueMany(Element{Vec<float>({5, 6})}, p2.Options(&cm)); });
  ASSERT_TRUE(p2.WaitBlocked());
  cm.StartCancel();
  ASSERT_TRUE(Finishes(behind));
  EXPECT_TRUE(StatusIs(behind.get(), Code::kCancelled, "Enqueue operation was cancelled"));
  std::vector<float> out;
  for (int i = 0; i < 4; ++i) out.push_back(DequeueFloat(*q));
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4}));
  ASSERT_TRUE(Finishes(front));
  EXPECT_OK(front.get());
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, CancellingTheFrontEnqueueLetsTheNextProceed) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(1));
  ASSERT_OK(q->Enqueue(Element{F32(1)}));
  BlockedProbe p1, p2;
  CancellationManager cm;
  auto front = Async([&] { return q->Enqueue(Element{F32(2)}, p1.Options(&cm)); });
  ASSERT_TRUE(p1.WaitBlocked());
  auto behind = Async([&] { return q->Enqueue(Element{F32(3)}, p2.Options()); });
  ASSERT_TRUE(p2.WaitBlocked());
  cm.StartCancel();
  ASSERT_TRUE(Finishes(front));
  EXPECT_TRUE(StatusIs(front.get(), Code::kCancelled, "Enqueue operation was cancelled"));
  EXPECT_EQ(DequeueFloat(*q), 1.0f);
  ASSERT_TRUE(Finishes(behind));
  EXPECT_OK(behind.get());
  EXPECT_EQ(DequeueFloat(*q), 3.0f);
}

TEST(FIFOQueueTest, EnqueueOfInvalidTensorIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{Tensor()}), Code::kInvalidArgument));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{}), Code::kInvalidArgument,
                       "Wrong number of components in tuple. Expected 1, got 0"));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, SharedNameTakenByAnotherQueueTypeIsInvalidArgument) {
  QueueOptions o = Opts(10, {DType::kInt64}, {ScalarShape()});
  o.shared_name = "FIFOQueueTest.SharedNameTakenByAnotherQueueType";
  ASSERT_OK_AND_ASSIGN(auto fifo, NewFIFOQueue(o));
  RandomShuffleQueueOptions r;
  static_cast<QueueOptions&>(r) = o;
  EXPECT_TRUE(StatusIs(NewRandomShuffleQueue(r), Code::kInvalidArgument));
  EXPECT_TRUE(StatusIs(NewPaddingFIFOQueue(o), Code::kInvalidArgument));
}

// ===========================================================================
// Stats, dtypes.

TEST(FIFOQueueTest, StatsCountAdmittedAndDeliveredElements) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10, /*scalar_shape=*/true));
  ASSERT_OK(q->Enqueue(Element{F32(1)}));
  ASSERT_OK(q->EnqueueMany(Element{Vec<float>({2, 3, 4})}));
  ASSERT_OK(q->Dequeue(Safe()));
  ASSERT_OK(q->DequeueMany(2, Safe()));
  // A dequeue_many that times out holding an element delivers nothing.
  EXPECT_TRUE(StatusIs(q->DequeueMany(2, WaitOptions::Timeout(5ms)), Code::kDeadlineExceeded));
  const QueueStats s = q->stats();
  EXPECT_EQ(s.enqueued, 4);
  EXPECT_EQ(s.dequeued, 3);
}

// Fills `t` with a pattern that depends on `salt`: arbitrary bytes for plain
// types (float16/bfloat16 keep raw bit patterns, NaNs included), 0/1 for
// bool, strings of varying length.
void FillPattern(const Tensor& t, int salt) {
  const int64_t n = t.num_elements();
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      t.flat<std::string>()[i] = "s" + std::to_string(salt * 100 + i) + std::string(i % 7, 'x');
    }
  } else if (t.dtype() == DType::kBool) {
    for (int64_t i = 0; i < n; ++i) t.flat<bool>()[i] = (i + salt) % 2 == 1;
  } else {
    auto* p = static_cast<unsigned char*>(t.raw_data());
    for (size_t b = 0; b < t.TotalBytes(); ++b) p[b] = static_cast<unsigned char>(b * 37 + salt);
  }
}

TEST(FIFOQueueTest, EveryDtypeRoundTrips) {
  const std::vector<DType> dtypes = {
      DType::kFloat32, DType::kFloat64,   DType::kInt32,     DType::kUInt8,
      DType::kInt16,   DType::kInt8,      DType::kString,    DType::kComplex64,
      DType::kInt64,   DType::kBool,      DType::kBFloat16,  DType::kUInt16,
      DType::kComplex128, DType::kFloat16, DType::kUInt32,   DType::kUInt64};
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(32, dtypes,
                                                 std::vector<PartialShape>(dtypes.size(),
                                                                           PartialShape{4, 3}))));
  Element batch;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    Tensor t(dtypes[i], {5, 4, 3});
    FillPattern(t, static_cast<int>(i));
    batch.push_back(t);
  }
  ASSERT_OK(q->EnqueueMany(batch));
  ASSERT_OK_AND_ASSIGN(Element first, q->Dequeue(Safe()));
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueMany(4, Safe()));
  ASSERT_EQ(first.size(), dtypes.size());
  ASSERT_EQ(rest.size(), dtypes.size());
  for (size_t i = 0; i < dtypes.size(); ++i) {
    SCOPED_TRACE(std::string(DTypeName(dtypes[i])));
    EXPECT_TRUE(ValuesEqual(first[i], batch[i].Slice(0)));
    EXPECT_TRUE(ValuesEqual(rest[i], batch[i].Slice(1, 5)));
  }
}

TEST(FIFOQueueTest, StringsOutliveTheEnqueuedTensor) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kString}, {ScalarShape()})));
  {
    std::string big(1000, 'z');
    ASSERT_OK(q->Enqueue(Element{Str("")}));
    ASSERT_OK(q->Enqueue(Element{Str(big)}));
    ASSERT_OK(q->EnqueueMany(Element{Tensor::FromStrings({"a", "bb", std::string("c\0d", 3)})}));
  }
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(5, Safe()));
  EXPECT_EQ(Values<std::string>(e[0]),
            (std::vector<std::string>{"", std::string(1000, 'z'), "a", "bb", std::string("c\0d", 3)}));
}

TEST(FIFOQueueTest, Float16KeepsItsBitPattern) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(10, {DType::kFloat16}, {ScalarShape()})));
  const std::vector<uint16_t> bits = {0x3C00, 0x8000, 0x7E00, 0x7C00, 0x0001};
  for (uint16_t b : bits) ASSERT_OK(q->Enqueue(Element{Tensor::Scalar<float16_t>({b})}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(static_cast<int64_t>(bits.size()), Safe()));
  ASSERT_EQ(e[0].dtype(), DType::kFloat16);
  std::vector<uint16_t> out;
  for (const float16_t& h : e[0].flat<float16_t>()) out.push_back(h.bits);
  EXPECT_EQ(out, bits);
}

// ===========================================================================
// Parallel.

TEST(FIFOQueueTest, ParallelEnqueuesAreAllDelivered) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFloatQueue(10));
  std::vector<std::future<Status>> producers;
  for (int i = 0; i < 10; ++i) {
    producers.push_back(Async([&q, i] { return q->Enqueue(Element{F32(10.0f * i)}, Safe()); }));
  }
  for (auto& p : producers) {
    ASSERT_TRUE(Finishes(p));
    EXPECT_OK(p.get());
  }
  std::vector<float> out;
  for (int i = 0; i < 10; ++i) out.push_back(DequeueFloat(*q));
  std::sort(out.begin(), out.end());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[i], 10.0f * i);
}

TEST(FIFOQueueTest, ParallelDequeueManyAndUpToDeliverEachElementOnce) {
  for (bool up_to_after_close : {false, true}) {
    SCOPED_TRACE(up_to_after_close ? "dequeue_up_to(101) after close" : "dequeue_many(100)");
    ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(1000, {DType::kInt32}, {ScalarShape()})));
    std::vector<int32_t> all(1000);
    for (int i = 0; i < 1000; ++i) all[i] = i;
    ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>(all)}));
    if (up_to_after_close) {
      ASSERT_OK(q->Close());
    }
    std::vector<std::future<Result<Element>>> consumers;
    for (int i = 0; i < 10; ++i) {
      consumers.push_back(Async([&q, up_to_after_close] {
        return up_to_after_close ? q->DequeueUpTo(101, Safe()) : q->DequeueMany(100, Safe());
      }));
    }
    std::vector<int32_t> got;
    for (auto& c : consumers) {
      ASSERT_TRUE(Finishes(c));
      auto r = c.get();
      ASSERT_OK(r);
      auto v = Values<int32_t>((*r)[0]);
      EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
      got.insert(got.end(), v.begin(), v.end());
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, all);
  }
}

// ===========================================================================
// QueueSemanticsTest: QueueBase behaviour shared by all four queue types.
// Elements are one int64 id (PriorityQueue: priority = id), so ascending ids
// come out in order from every type except RandomShuffleQueue.

class QueueSemanticsTest : public TestWithParam<Kind> {
 protected:
  Kind kind() const { return GetParam(); }
  std::string type() const { return KindName(kind()); }
  Result<std::shared_ptr<Queue>> NewQueue(int32_t capacity, bool with_shapes = true) {
    return NewIdQueue(kind(), capacity, with_shapes);
  }
  Status Put(Queue& q, int64_t id, const WaitOptions& w = Safe()) {
    return q.Enqueue(IdElement(kind(), id), w);
  }
  Status PutMany(Queue& q, const std::vector<int64_t>& ids, const WaitOptions& w = Safe()) {
    return q.EnqueueMany(IdBatch(kind(), ids), w);
  }
  int64_t Take(Queue& q) {
    auto r = q.Dequeue(Safe());
    EXPECT_TRUE(IsOk(r));
    return r.ok() ? IdOf(kind(), *r) : -1;
  }
  // Ids in delivery order, or sorted when the type does not keep order.
  std::vector<int64_t> Canonical(std::vector<int64_t> ids) const {
    if (!KeepsOrder(kind())) std::sort(ids.begin(), ids.end());
    return ids;
  }
};

TEST_P(QueueSemanticsTest, ReportsItsTypeName) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  EXPECT_EQ(q->type_name(), type());
}

TEST_P(QueueSemanticsTest, NegativeCapacityIsUnbounded) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(-1));
  EXPECT_EQ(q->capacity(), Queue::kUnbounded);
  ASSERT_OK(PutMany(*q, Iota(0, 100), WaitOptions::Timeout(kSafety)));
  for (int64_t id = 100; id < 200; ++id) {
    ASSERT_OK(Put(*q, id, WaitOptions::Timeout(kSafety)));
  }
  EXPECT_EQ(q->size(), 200);
}

TEST_P(QueueSemanticsTest, EveryIdComesOutOnce) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(100));
  ASSERT_OK(PutMany(*q, Iota(0, 50)));
  for (int64_t id = 50; id < 60; ++id) ASSERT_OK(Put(*q, id));
  std::vector<int64_t> out;
  for (int i = 0; i < 10; ++i) out.push_back(Take(*q));
  ASSERT_OK_AND_ASSIGN(Element batch, q->DequeueMany(50, Safe()));
  auto rest = IdsOf(kind(), batch);
  out.insert(out.end(), rest.begin(), rest.end());
  EXPECT_EQ(Canonical(out), Iota(0, 60));
}

TEST_P(QueueSemanticsTest, DequeueOnClosedEmptyQueueIsOutOfRange) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  ASSERT_OK(q->Close());
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange,
                       type() + " 'q' is closed and has insufficient elements (requested 1, "
                                "current size 0)"));
  EXPECT_TRUE(StatusIs(q->DequeueMany(2, Safe()), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 2, current size 0)"));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(2, Safe()), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 2, current size 0)"));
}

TEST_P(QueueSemanticsTest, EnqueueOnClosedQueueIsCancelled) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  ASSERT_OK(q->Close());
  EXPECT_TRUE(StatusIs(Put(*q, 1), Code::kCancelled, type() + " 'q' is closed."));
  EXPECT_TRUE(StatusIs(PutMany(*q, {1, 2}), Code::kCancelled, type() + " 'q' is closed."));
  EXPECT_EQ(q->size(), 0);
}

TEST_P(QueueSemanticsTest, SecondCloseIsCancelled) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  ASSERT_OK(q->Close());
  EXPECT_TRUE(StatusIs(q->Close(false, Safe()), Code::kCancelled, "Queue 'q' is already closed."));
  EXPECT_OK(q->Close(true, Safe()));
}

TEST_P(QueueSemanticsTest, EmptyEnqueueManyAndDequeueManyZeroWorkOnClosedQueue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  ASSERT_OK(q->Close());
  EXPECT_OK(PutMany(*q, {}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(0, Safe()));
  EXPECT_EQ(IdsOf(kind(), e), std::vector<int64_t>{});
  EXPECT_EQ(Dims(e[FirstValue(kind())]), std::vector<int64_t>{0});
}

TEST_P(QueueSemanticsTest, NegativeCountIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  EXPECT_TRUE(StatusIs(q->DequeueMany(-1, Safe()), Code::kInvalidArgument,
                       "requested -1 < 0 elements"));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(-1, Safe()), Code::kInvalidArgument,
                       "requested -1 < 0 elements"));
}

TEST_P(QueueSemanticsTest, DequeueManyWithoutShapesIsInvalidArgument) {
  if (kind() == Kind::kPaddingFIFO) GTEST_SKIP() << "PaddingFIFOQueue always has shapes";
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10, /*with_shapes=*/false));
  ASSERT_OK(Put(*q, 1));
  const std::string fragment = type() + "'s DequeueMany";
  for (int64_t n : {0, 1}) {
    EXPECT_TRUE(StatusIs(q->DequeueMany(n, Safe()), Code::kInvalidArgument, fragment));
    EXPECT_TRUE(StatusIs(q->DequeueMany(n, Safe()), Code::kInvalidArgument,
                         "the components to have specified shapes."));
    EXPECT_TRUE(StatusIs(q->DequeueUpTo(n, Safe()), Code::kInvalidArgument,
                         "the components to have specified shapes."));
  }
  EXPECT_EQ(q->size(), 1);
}

TEST_P(QueueSemanticsTest, DequeueUpToAfterCloseReturnsTheRemainder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  ASSERT_OK(PutMany(*q, {3, 1, 2}));
  ASSERT_OK(q->Close());
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueUpTo(5, Safe()));
  std::vector<int64_t> ids = IdsOf(kind(), e);
  if (kind() == Kind::kPriority) {
    EXPECT_EQ(ids, (std::vector<int64_t>{1, 2, 3}));  // sorted, unlike TF's lossy bug
  } else if (KeepsOrder(kind())) {
    EXPECT_EQ(ids, (std::vector<int64_t>{3, 1, 2}));
  } else {
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<int64_t>{1, 2, 3}));
  }
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(5, Safe()), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 5, current size 0)"));
}

TEST_P(QueueSemanticsTest, DequeueManyOnClosedQueueWithTooFewIsOutOfRangeAndKeepsThem) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  ASSERT_OK(PutMany(*q, {1, 2, 3}));
  ASSERT_OK(q->Close());
  EXPECT_TRUE(StatusIs(q->DequeueMany(5, Safe()), Code::kOutOfRange,
                       type() + " 'q' is closed and has insufficient elements (requested 5, "
                                "current size 3)"));
  EXPECT_EQ(q->size(), 3);
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(3, Safe()));
  EXPECT_EQ(Canonical(IdsOf(kind(), e)), (std::vector<int64_t>{1, 2, 3}));
}

TEST_P(QueueSemanticsTest, BlockedDequeueIsOutOfRangeWhenClosed) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  BlockedProbe p1, p2;
  auto dequeue = Async([&] { return q->Dequeue(p1.Options()); });
  auto dequeue_many = Async([&] { return q->DequeueMany(2, p2.Options()); });
  ASSERT_TRUE(p1.WaitBlocked());
  ASSERT_TRUE(p2.WaitBlocked());
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  ASSERT_TRUE(Finishes(dequeue_many));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kOutOfRange, "is closed and has insufficient elements"));
  EXPECT_TRUE(StatusIs(dequeue_many.get(), Code::kOutOfRange,
                       "is closed and has insufficient elements"));
}

TEST_P(QueueSemanticsTest, CloseWaitsForBlockedEnqueueToComplete) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(1));
  ASSERT_OK(Put(*q, 1));
  BlockedProbe enqueue_probe, close_probe;
  auto enqueue = Async([&] { return Put(*q, 2, enqueue_probe.Options()); });
  ASSERT_TRUE(enqueue_probe.WaitBlocked());
  auto close = Async([&] { return q->Close(false, close_probe.Options()); });
  ASSERT_TRUE(close_probe.WaitBlocked());
  EXPECT_FALSE(q->is_closed());
  EXPECT_EQ(Take(*q), 1);
  ASSERT_TRUE(Finishes(enqueue));
  ASSERT_TRUE(Finishes(close));
  EXPECT_OK(enqueue.get());
  EXPECT_OK(close.get());
  EXPECT_TRUE(q->is_closed());
  EXPECT_EQ(Take(*q), 2);
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange));
}

TEST_P(QueueSemanticsTest, CancellingCloseFailsPendingEnqueues) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(2));
  ASSERT_OK(Put(*q, 1));
  BlockedProbe many_probe, single_probe, close_probe;
  // Admits 2, waits with 3.
  auto many = Async([&] { return PutMany(*q, {2, 3}, many_probe.Options()); });
  ASSERT_TRUE(many_probe.WaitBlocked());
  auto single = Async([&] { return Put(*q, 4, single_probe.Options()); });
  ASSERT_TRUE(single_probe.WaitBlocked());
  auto close = Async([&] { return q->Close(false, close_probe.Options()); });
  ASSERT_TRUE(close_probe.WaitBlocked());
  ASSERT_OK(q->Close(true, Safe()));
  for (auto* f : {&many, &single, &close}) {
    ASSERT_TRUE(Finishes(*f));
    EXPECT_TRUE(StatusIs(f->get(), Code::kCancelled, "Enqueue operation was cancelled"));
  }
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueUpTo(10, Safe()));
  EXPECT_EQ(Canonical(IdsOf(kind(), e)), (std::vector<int64_t>{1, 2}));
}

TEST_P(QueueSemanticsTest, DequeueTimesOutAndQueueStaysUsable) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(1));
  EXPECT_TRUE(StatusIs(q->Dequeue(WaitOptions::Timeout(10ms)), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
  ASSERT_OK(Put(*q, 7));
  EXPECT_TRUE(StatusIs(Put(*q, 8, WaitOptions::Timeout(10ms)), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
  EXPECT_EQ(q->size(), 1);
  EXPECT_EQ(Take(*q), 7);
  ASSERT_OK(Put(*q, 9));
  EXPECT_EQ(Take(*q), 9);
}

TEST_P(QueueSemanticsTest, TimedOutDequeueManyLosesNoElement) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  ASSERT_OK(PutMany(*q, {1, 2, 3}));
  EXPECT_TRUE(StatusIs(q->DequeueMany(4, WaitOptions::Timeout(20ms)), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
  EXPECT_EQ(q->size(), 3);
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(3, Safe()));
  EXPECT_EQ(Canonical(IdsOf(kind(), e)), (std::vector<int64_t>{1, 2, 3}));
}

TEST_P(QueueSemanticsTest, CancellationManagerCancelsBlockedCalls) {
  ASSERT_OK_AND_ASSIGN(auto empty, NewQueue(1));
  ASSERT_OK_AND_ASSIGN(auto full, NewQueue(1));
  ASSERT_OK(Put(*full, 1));
  CancellationManager cm;
  BlockedProbe p1, p2, p3;
  auto dequeue = Async([&] { return empty->Dequeue(p1.Options(&cm)); });
  auto dequeue_up_to = Async([&] { return empty->DequeueUpTo(1, p2.Options(&cm)); });
  auto enqueue = Async([&] { return Put(*full, 2, p3.Options(&cm)); });
  for (BlockedProbe* p : {&p1, &p2, &p3}) ASSERT_TRUE(p->WaitBlocked());
  cm.StartCancel();
  ASSERT_TRUE(Finishes(dequeue));
  ASSERT_TRUE(Finishes(dequeue_up_to));
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kCancelled, "Dequeue operation was cancelled"));
  EXPECT_TRUE(StatusIs(dequeue_up_to.get(), Code::kCancelled, "Dequeue operation was cancelled"));
  EXPECT_TRUE(StatusIs(enqueue.get(), Code::kCancelled, "Enqueue operation was cancelled"));
  EXPECT_EQ(full->size(), 1);
  EXPECT_EQ(Take(*full), 1);
  ASSERT_OK(Put(*empty, 5));
  EXPECT_EQ(Take(*empty), 5);
}

TEST_P(QueueSemanticsTest, AlreadyCancelledManagerFailsAtOnce) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  CancellationManager cm;
  cm.StartCancel();
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe(&cm)), Code::kCancelled, "Dequeue operation was cancelled"));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(3, Safe(&cm)), Code::kCancelled,
                       "Dequeue operation was cancelled"));
}

TEST_P(QueueSemanticsTest, InterruptCheckErrorAbandonsTheCall) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(10));
  WaitOptions o = Safe();
  o.interrupt_check = [] { return errors::Unknown("interrupted"); };
  o.interrupt_check_interval = 1ms;
  EXPECT_EQ(q->Dequeue(o).status(), errors::Unknown("interrupted"));
  ASSERT_OK(Put(*q, 4));
  EXPECT_EQ(Take(*q), 4);
}

TEST_P(QueueSemanticsTest, SharedNameReturnsTheSameQueue) {
  const std::string name = "QueueSemanticsTest.SharedName." + type();
  ASSERT_OK_AND_ASSIGN(auto q1, NewIdQueue(kind(), 10, true, name));
  ASSERT_OK_AND_ASSIGN(auto q2, NewIdQueue(kind(), 10, true, name));
  EXPECT_EQ(q1.get(), q2.get());
  ASSERT_OK(Put(*q1, 1));
  EXPECT_EQ(q2->size(), 1);
  EXPECT_TRUE(StatusIs(NewIdQueue(kind(), 11, true, name), Code::kInvalidArgument, "capacity"));
}

TEST_P(QueueSemanticsTest, ParallelProducersAndConsumersDeliverEveryIdOnce) {
  ASSERT_OK_AND_ASSIGN(auto q, NewQueue(5));
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::future<Status>> producers;
  std::vector<std::future<std::vector<int64_t>>> consumers;
  for (int t = 0; t < kThreads; ++t) {
    producers.push_back(Async([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Status s = Put(*q, t * kPerThread + i);
        if (!s.ok()) return s;
      }
      return Status();
    }));
    consumers.push_back(Async([&] {
      std::vector<int64_t> got;
      for (int i = 0; i < kPerThread; ++i) {
        auto r = q->Dequeue(Safe());
        if (!r.ok()) break;
        got.push_back(IdOf(kind(), *r));
      }
      return got;
    }));
  }
  std::vector<int64_t> all;
  for (auto& p : producers) {
    ASSERT_TRUE(Finishes(p));
    EXPECT_OK(p.get());
  }
  for (auto& c : consumers) {
    ASSERT_TRUE(Finishes(c));
    auto got = c.get();
    all.insert(all.end(), got.begin(), got.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, Iota(0, kThreads * kPerThread));
  EXPECT_EQ(q->size(), 0);
}

INSTANTIATE_TEST_SUITE_P(AllQueues, QueueSemanticsTest,
                         ValuesIn({Kind::kFIFO, Kind::kRandomShuffle, Kind::kPaddingFIFO,
                                   Kind::kPriority}),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return KindName(info.param);
                         });

}  // namespace
}  // namespace sluice::queue

// ===========================================================================
// Batches stored whole (an enqueue_many batch is one chunk of the queue).

namespace sluice::queue {
namespace batches {

Tensor Iota(int64_t rows, int64_t cols, int32_t start) {
  Tensor t(DType::kInt32, TensorShape{rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i) t.data<int32_t>()[i] = start + static_cast<int32_t>(i);
  return t;
}

std::shared_ptr<Queue> MakeQueue() {
  QueueOptions o;
  o.capacity = 100;
  o.dtypes = {DType::kInt32};
  o.shapes = {PartialShape{2}};
  return *NewFIFOQueue(o);
}

TEST(FIFOQueueBatchTest, DequeueManyOfAWholeEnqueuedBatchSharesItsBuffer) {
  auto q = MakeQueue();
  Tensor batch = Iota(4, 2, 0);
  ASSERT_TRUE(q->EnqueueMany(Element{batch}).ok());
  Result<Element> out = q->DequeueMany(4);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE((*out)[0].SharesBufferWith(batch));
  EXPECT_TRUE(ValuesEqual((*out)[0], batch));
}

TEST(FIFOQueueBatchTest, DequeueManyAcrossSinglesAndBatchesKeepsOrder) {
  auto q = MakeQueue();
  ASSERT_TRUE(q->Enqueue(Element{Iota(1, 2, 100).Slice(0)}).ok());
  ASSERT_TRUE(q->EnqueueMany(Element{Iota(3, 2, 0)}).ok());
  ASSERT_TRUE(q->Enqueue(Element{Iota(1, 2, 200).Slice(0)}).ok());
  Result<Element> first = q->Dequeue();  // a single
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)[0].flat<int32_t>()[0], 100);
  Result<Element> row = q->Dequeue();  // row 0 of the batch
  ASSERT_TRUE(row.ok());
  EXPECT_EQ((*row)[0].shape(), (TensorShape{2}));
  EXPECT_EQ((*row)[0].flat<int32_t>()[1], 1);
  Result<Element> rest = q->DequeueMany(3);  // rows 1-2, then the single
  ASSERT_TRUE(rest.ok());
  const std::vector<int32_t> want = {2, 3, 4, 5, 200, 201};
  auto got = (*rest)[0].flat<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(got.begin(), got.end()), want);
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueBatchTest, PartOfABatchHeldByAClosedDequeueManyGoesBackInOrder) {
  auto q = MakeQueue();
  ASSERT_TRUE(q->EnqueueMany(Element{Iota(3, 2, 0)}).ok());
  ASSERT_TRUE(q->Close().ok());
  EXPECT_EQ(q->DequeueMany(5).status().code(), Code::kOutOfRange);
  EXPECT_EQ(q->size(), 3);
  Result<Element> all = q->DequeueUpTo(5);
  ASSERT_TRUE(all.ok());
  auto got = (*all)[0].flat<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(got.begin(), got.end()), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(FIFOQueueBatchTest, EnqueueManyLargerThanCapacityIsAdmittedInParts) {
  QueueOptions o;
  o.capacity = 2;
  o.dtypes = {DType::kInt32};
  o.shapes = {PartialShape{2}};
  auto q = *NewFIFOQueue(o);
  std::thread producer([&] { EXPECT_TRUE(q->EnqueueMany(Element{Iota(5, 2, 0)}).ok()); });
  std::vector<int32_t> got;
  for (int i = 0; i < 5; ++i) {
    Result<Element> e = q->Dequeue(WaitOptions::Timeout(std::chrono::seconds(10)));
    ASSERT_TRUE(e.ok());
    EXPECT_LE(q->size(), 2);
    got.push_back((*e)[0].flat<int32_t>()[0]);
  }
  producer.join();
  EXPECT_EQ(got, (std::vector<int32_t>{0, 2, 4, 6, 8}));
}

}  // namespace batches
}  // namespace sluice::queue
