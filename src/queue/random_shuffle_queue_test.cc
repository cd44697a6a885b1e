// RandomShuffleQueue tests, ported from TensorFlow's
// random_shuffle_queue_test.py (the cases, not the code). Expected behaviour:
// docs/spec/tf-queues.md sections 1 and 3. Close, cancellation and timeout
// behaviour shared with the other queues is in QueueSemanticsTest
// (fifo_queue_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "queue_test_util.h"
#include "sluice/queue/queue.h"

namespace sluice::queue {
namespace {

using namespace testing;  // NOLINT: test helpers

// A queue of int32 scalars.
Result<std::shared_ptr<Queue>> NewIntRsq(int32_t capacity, int32_t min_after_dequeue,
                                         int64_t seed = 0, int64_t seed2 = 0) {
  return NewRandomShuffleQueue(
      RsqOpts(capacity, min_after_dequeue, {DType::kInt32}, {ScalarShape()}, seed, seed2));
}

std::vector<int32_t> Iota32(int32_t n) {
  std::vector<int32_t> v(n);
  for (int32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::vector<int32_t> Sorted(std::vector<int32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

int32_t DequeueInt(Queue& q) {
  auto r = q.Dequeue(Safe());
  EXPECT_TRUE(IsOk(r));
  return r.ok() ? ScalarOf<int32_t>((*r)[0]) : -1;
}

// ===========================================================================
// Construction.

TEST(RandomShuffleQueueTest, NegativeMinAfterDequeueIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewIntRsq(10, -1), Code::kInvalidArgument,
                       "min_after_dequeue -1 must be >= 0"));
}

TEST(RandomShuffleQueueTest, MinAfterDequeueNotBelowCapacityIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewIntRsq(10, 10), Code::kInvalidArgument,
                       "min_after_dequeue 10 must be < capacity 10"));
  EXPECT_TRUE(StatusIs(NewIntRsq(10, 11), Code::kInvalidArgument,
                       "min_after_dequeue 11 must be < capacity 10"));
  EXPECT_OK(NewIntRsq(10, 9));
}

TEST(RandomShuffleQueueTest, UnboundedCapacityAcceptsAnyMinAfterDequeue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(-1, 1000000));
  EXPECT_EQ(q->capacity(), Queue::kUnbounded);
}

TEST(RandomShuffleQueueTest, ShapesNotFullyDefinedIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(
      NewRandomShuffleQueue(RsqOpts(10, 0, {DType::kInt32}, {PartialShape{-1}})),
      Code::kInvalidArgument));
}

TEST(RandomShuffleQueueTest, EmptyDtypesIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewRandomShuffleQueue(RsqOpts(10, 0, {})), Code::kInvalidArgument,
                       "Empty component types for queue"));
}

TEST(RandomShuffleQueueTest, EmptyNameDefaultsToRandomShuffleQueue) {
  RandomShuffleQueueOptions o = RsqOpts(10, 0, {DType::kInt32});
  o.name = "";
  ASSERT_OK_AND_ASSIGN(auto q, NewRandomShuffleQueue(o));
  EXPECT_EQ(q->name(), "random_shuffle_queue");
  EXPECT_EQ(q->type_name(), "RandomShuffleQueue");
}

TEST(RandomShuffleQueueTest, IncompatibleSharedQueueIsInvalidArgument) {
  const std::string prefix = "RandomShuffleQueueTest.IncompatibleShared.";
  auto make = [&](const std::string& name, int32_t capacity, int32_t min_after,
                  std::vector<DType> dtypes, std::vector<PartialShape> shapes, int64_t seed = 0) {
    RandomShuffleQueueOptions o = RsqOpts(capacity, min_after, std::move(dtypes),
                                          std::move(shapes), seed, seed == 0 ? 0 : 1);
    o.shared_name = prefix + name;
    return NewRandomShuffleQueue(o);
  };
  const PartialShape s1236{1, 1, 2, 3}, s1234{1, 1, 2, 4};
  const std::vector<DType> f32 = {DType::kFloat32};
  ASSERT_OK_AND_ASSIGN(auto a, make("a", 10, 5, f32, {}));
  EXPECT_TRUE(StatusIs(make("a", 15, 5, f32, {}), Code::kInvalidArgument, "capacity"));
  ASSERT_OK_AND_ASSIGN(auto b, make("b", 10, 0, f32, {}));
  EXPECT_TRUE(StatusIs(make("b", 10, 5, f32, {}), Code::kInvalidArgument, "min_after_dequeue"));
  ASSERT_OK_AND_ASSIGN(auto c, make("c", 10, 5, f32, {}));
  EXPECT_TRUE(StatusIs(make("c", 10, 5, {DType::kInt32}, {}), Code::kInvalidArgument,
                       "component types"));
  ASSERT_OK_AND_ASSIGN(auto d, make("d", 10, 5, f32, {}));
  EXPECT_TRUE(StatusIs(make("d", 10, 5, f32, {s1236}), Code::kInvalidArgument,
                       "component shapes"));
  ASSERT_OK_AND_ASSIGN(auto e, make("e", 10, 5, f32, {s1236}));
  EXPECT_TRUE(StatusIs(make("e", 10, 5, f32, {}), Code::kInvalidArgument, "component shapes"));
  ASSERT_OK_AND_ASSIGN(auto f, make("f", 10, 5, f32, {s1236}));
  EXPECT_TRUE(StatusIs(make("f", 10, 5, f32, {s1234}), Code::kInvalidArgument,
                       "component shapes"));
  ASSERT_OK_AND_ASSIGN(auto g, make("g", 10, 5, f32, {}));
  EXPECT_TRUE(StatusIs(make("g", 10, 5, {DType::kFloat32, DType::kInt32}, {}),
                       Code::kInvalidArgument, "component types"));
  ASSERT_OK_AND_ASSIGN(auto h, make("h", 10, 5, f32, {}, /*seed=*/12));
  EXPECT_TRUE(StatusIs(make("h", 10, 5, f32, {}, /*seed=*/21), Code::kInvalidArgument,
                       "random seeds"));
}

TEST(RandomShuffleQueueTest, SharedQueueRequestWithoutSeedsMatchesAnySeeds) {
  RandomShuffleQueueOptions o = RsqOpts(1, 0, {DType::kFloat32}, {ScalarShape()}, 98765432, 1);
  o.shared_name = "RandomShuffleQueueTest.SharedWithoutSeeds";
  ASSERT_OK_AND_ASSIGN(auto q1, NewRandomShuffleQueue(o));
  ASSERT_OK(q1->Enqueue(Element{F32(10)}));
  o.seed = 0;
  o.seed2 = 0;
  ASSERT_OK_AND_ASSIGN(auto q2, NewRandomShuffleQueue(o));
  EXPECT_EQ(q1.get(), q2.get());
  EXPECT_EQ(q2->size(), 1);
}

// ===========================================================================
// Delivery.

TEST(RandomShuffleQueueTest, EnqueueThenDequeueDeliversEveryElementOnce) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 0));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({10, 20, 30, 40})}));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({10, 20, 30, 40})}));
  EXPECT_EQ(q->size(), 8);
  std::vector<int32_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(DequeueInt(*q));
  EXPECT_EQ(Sorted(out), (std::vector<int32_t>{10, 10, 20, 20, 30, 30, 40, 40}));
  EXPECT_EQ(q->size(), 0);
}

TEST(RandomShuffleQueueTest, ComponentsOfAnElementStayTogether) {
  ASSERT_OK_AND_ASSIGN(auto q, NewRandomShuffleQueue(RsqOpts(
                                   10, 0, {DType::kInt32, DType::kInt32},
                                   {ScalarShape(), PartialShape{1}})));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({1, 2, 3, 4}), Make<int32_t>({4, 1}, {5, 6, 7, 8})}));
  ASSERT_OK(q->Enqueue(Element{I32(9), Vec<int32_t>({10})}));
  std::vector<std::pair<int32_t, int32_t>> got;
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    got.emplace_back(ScalarOf<int32_t>(e[0]), Values<int32_t>(e[1])[0]);
  }
  ASSERT_OK_AND_ASSIGN(Element batch, q->DequeueMany(3, Safe()));
  EXPECT_EQ(Dims(batch[1]), (std::vector<int64_t>{3, 1}));
  auto a = Values<int32_t>(batch[0]);
  auto b = Values<int32_t>(batch[1]);
  for (int i = 0; i < 3; ++i) got.emplace_back(a[i], b[i]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::pair<int32_t, int32_t>>{{1, 5}, {2, 6}, {3, 7}, {4, 8}, {9, 10}}));
}

TEST(RandomShuffleQueueTest, DequeueManyAndUpToDeliverEveryElementOnce) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 0));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>(Iota32(10))}));
  ASSERT_OK_AND_ASSIGN(Element a, q->DequeueMany(5, Safe()));
  ASSERT_OK_AND_ASSIGN(Element b, q->DequeueUpTo(5, Safe()));
  EXPECT_EQ(Dims(a[0]), std::vector<int64_t>{5});
  EXPECT_EQ(Dims(b[0]), std::vector<int64_t>{5});
  auto out = Values<int32_t>(a[0]);
  auto more = Values<int32_t>(b[0]);
  out.insert(out.end(), more.begin(), more.end());
  EXPECT_EQ(Sorted(out), Iota32(10));
}

TEST(RandomShuffleQueueTest, HighDimensionElementsRoundTrip) {
  ASSERT_OK_AND_ASSIGN(auto q, NewRandomShuffleQueue(
                                   RsqOpts(10, 0, {DType::kInt32}, {PartialShape{4, 4, 4, 4}})));
  std::vector<int32_t> values;
  for (int x = 0; x < 10; ++x) values.insert(values.end(), 256, x);
  ASSERT_OK(q->EnqueueMany(Element{Make<int32_t>({10, 4, 4, 4, 4}, values)}));
  ASSERT_OK_AND_ASSIGN(Element out, q->DequeueMany(10, Safe()));
  ASSERT_EQ(Dims(out[0]), (std::vector<int64_t>{10, 4, 4, 4, 4}));
  auto v = Values<int32_t>(out[0]);
  std::vector<int32_t> seen;
  for (int i = 0; i < 10; ++i) {
    // Every row is 256 copies of one value.
    EXPECT_TRUE(std::all_of(v.begin() + 256 * i, v.begin() + 256 * (i + 1),
                            [&](int32_t x) { return x == v[256 * i]; }));
    seen.push_back(v[256 * i]);
  }
  EXPECT_EQ(Sorted(seen), Iota32(10));
}

TEST(RandomShuffleQueueTest, ParallelDequeueUpToRandomPartitionDeliversEveryElementOnce) {
  std::mt19937 rng(99);
  std::vector<int64_t> sizes;
  int32_t total = 0;
  for (int i = 0; i < 10; ++i) {
    sizes.push_back(50 + rng() % 101);
    total += static_cast<int32_t>(sizes.back());
  }
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(total, 0));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>(Iota32(total))}));
  std::vector<std::future<Result<Element>>> consumers;
  for (int64_t n : sizes) consumers.push_back(Async([&q, n] { return q->DequeueUpTo(n, Safe()); }));
  std::vector<int32_t> out;
  for (auto& c : consumers) {
    ASSERT_TRUE(Finishes(c));
    auto r = c.get();
    ASSERT_OK(r);
    auto v = Values<int32_t>((*r)[0]);
    out.insert(out.end(), v.begin(), v.end());
  }
  EXPECT_EQ(Sorted(out), Iota32(total));
}

// ===========================================================================
// min_after_dequeue.

TEST(RandomShuffleQueueTest, DequeueBlocksAtMinAfterDequeueUntilClose) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 2));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({10, 20, 30, 40})}));
  std::vector<int32_t> out = {DequeueInt(*q), DequeueInt(*q)};
  EXPECT_EQ(q->size(), 2);
  BlockedProbe probe;
  auto third = Async([&] { return q->Dequeue(probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_FALSE(IsDone(third));
  EXPECT_EQ(q->size(), 2);
  ASSERT_OK(q->Close());  // lifts the minimum
  ASSERT_TRUE(Finishes(third));
  auto r = third.get();
  ASSERT_OK(r);
  out.push_back(ScalarOf<int32_t>((*r)[0]));
  out.push_back(DequeueInt(*q));
  EXPECT_EQ(Sorted(out), (std::vector<int32_t>{10, 20, 30, 40}));
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange,
                       "RandomShuffleQueue 'q' is closed and has insufficient elements (requested "
                       "1, current size 0)"));
}

TEST(RandomShuffleQueueTest, DequeueBlocksAtMinAfterDequeueUntilAnEnqueue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 3));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({1, 2, 3})}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->Dequeue(probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Enqueue(Element{I32(4)}, Safe()));
  ASSERT_TRUE(Finishes(dequeue));
  EXPECT_OK(dequeue.get());
  EXPECT_EQ(q->size(), 3);
}

TEST(RandomShuffleQueueTest, DequeueManyCollectsOnlyAboveMinAfterDequeue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 2));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({1, 2, 3, 4})}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(3, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_TRUE(Eventually([&] { return q->size() == 2; }));  // holds two
  EXPECT_FALSE(IsDone(dequeue));
  ASSERT_OK(q->Enqueue(Element{I32(5)}, Safe()));
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Dims((*r)[0]), std::vector<int64_t>{3});
  EXPECT_EQ(q->size(), 2);
  auto out = Values<int32_t>((*r)[0]);
  ASSERT_OK(q->Close());
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueUpTo(10, Safe()));
  auto more = Values<int32_t>(rest[0]);
  out.insert(out.end(), more.begin(), more.end());
  EXPECT_EQ(Sorted(out), (std::vector<int32_t>{1, 2, 3, 4, 5}));
}

TEST(RandomShuffleQueueTest, MinAfterDequeueIsIgnoredAfterClose) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 5));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({1, 2, 3, 4})}));
  ASSERT_OK(q->Close());
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueUpTo(10, Safe()));
  EXPECT_EQ(Sorted(Values<int32_t>(e[0])), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(10, Safe()), Code::kOutOfRange));
}

TEST(RandomShuffleQueueTest, DequeueDrainsClosedQueueDespiteMinAfterDequeue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 2));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({10, 20, 30, 40})}));
  ASSERT_OK(q->Close());
  std::vector<int32_t> out;
  for (int i = 0; i < 4; ++i) out.push_back(DequeueInt(*q));
  EXPECT_EQ(Sorted(out), (std::vector<int32_t>{10, 20, 30, 40}));
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange,
                       "is closed and has insufficient elements"));
}

TEST(RandomShuffleQueueTest, BlockedDequeueUpToBelowMinAfterDequeueCompletesOnClose) {
  // min 2, four stored: dequeue_up_to(3) takes two and waits; the close lifts
  // the minimum, so it completes with three, and the next gets the last one.
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 2));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({10, 20, 30, 40})}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueUpTo(3, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  auto out = Values<int32_t>((*r)[0]);
  EXPECT_EQ(out.size(), 3u);
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueUpTo(3, Safe()));
  auto more = Values<int32_t>(rest[0]);
  EXPECT_EQ(more.size(), 1u);
  out.insert(out.end(), more.begin(), more.end());
  EXPECT_EQ(Sorted(out), (std::vector<int32_t>{10, 20, 30, 40}));
}

TEST(RandomShuffleQueueTest, BlockedDequeueManyOnCloseReturnsHeldElements) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 0));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({10, 20, 30, 40})}));
  ASSERT_OK_AND_ASSIGN(Element first, q->DequeueMany(3, Safe()));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(3, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kOutOfRange, "is closed and has insufficient elements"));
  // The element the failed attempt held is back.
  EXPECT_EQ(q->size(), 1);
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueUpTo(3, Safe()));
  auto out = Values<int32_t>(first[0]);
  auto more = Values<int32_t>(rest[0]);
  out.insert(out.end(), more.begin(), more.end());
  EXPECT_EQ(Sorted(out), (std::vector<int32_t>{10, 20, 30, 40}));
}

TEST(RandomShuffleQueueTest, BlockedEnqueueIsAdmittedOnlyAfterADequeue) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(4, 0, 1, 2));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({10, 20, 30, 40})}));
  BlockedProbe probe;
  auto enqueue = Async([&] { return q->Enqueue(Element{I32(50)}, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  const int32_t first = DequeueInt(*q);
  EXPECT_NE(first, 50);  // there was no room for 50 when the first was chosen
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
  std::vector<int32_t> out = {first};
  for (int i = 0; i < 4; ++i) out.push_back(DequeueInt(*q));
  EXPECT_EQ(Sorted(out), (std::vector<int32_t>{10, 20, 30, 40, 50}));
}

// ===========================================================================
// Seeds.

// Runs a fixed sequence of operations (interleaved enqueues and dequeues,
// then a close and a drain) and returns the dequeued order.
std::vector<int32_t> ShuffledOrder(int64_t seed, int64_t seed2, int32_t min_after_dequeue = 5) {
  auto made = NewIntRsq(100, min_after_dequeue, seed, seed2);
  EXPECT_TRUE(IsOk(made));
  if (!made.ok()) return {};
  Queue& q = **made;
  std::vector<int32_t> out;
  for (int32_t i = 0; i < 60; ++i) {
    EXPECT_TRUE(IsOk(q.Enqueue(Element{I32(i)}, Safe())));
    // Dequeue only while more than min_after_dequeue are stored.
    if (i >= 10 && i % 3 == 2) out.push_back(DequeueInt(q));
  }
  EXPECT_TRUE(IsOk(q.Close()));
  auto rest = q.DequeueUpTo(100, Safe());
  EXPECT_TRUE(IsOk(rest));
  if (rest.ok()) {
    auto v = Values<int32_t>((*rest)[0]);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

TEST(RandomShuffleQueueTest, SameSeedsGiveTheSameOrder) {
  const auto a = ShuffledOrder(1729, 7);
  const auto b = ShuffledOrder(1729, 7);
  EXPECT_EQ(Sorted(a), Iota32(60));
  EXPECT_EQ(a, b);
}

TEST(RandomShuffleQueueTest, DifferentSeedsGiveDifferentOrders) {
  const auto a = ShuffledOrder(1729, 0);
  const auto b = ShuffledOrder(87539319, 0);
  const auto c = ShuffledOrder(1729, 1);
  EXPECT_EQ(Sorted(a), Iota32(60));
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
}

TEST(RandomShuffleQueueTest, ShufflesAtAll) {
  auto order = ShuffledOrder(1729, 7, /*min_after_dequeue=*/0);
  EXPECT_NE(order, Iota32(60));
  ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(100, 0, 42, 43));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>(Iota32(100))}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(100, Safe()));
  EXPECT_NE(Values<int32_t>(e[0]), Iota32(100));
}

TEST(RandomShuffleQueueTest, UnseededQueuesShuffleDifferently) {
  // Seeds (0, 0) draw from a non-deterministic source; two queues agreeing
  // on an order of 100 elements would be a 1-in-100! coincidence.
  std::vector<std::vector<int32_t>> orders;
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(100, 0));
    ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>(Iota32(100))}));
    ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(100, Safe()));
    orders.push_back(Values<int32_t>(e[0]));
  }
  EXPECT_NE(orders[0], orders[1]);
}

TEST(RandomShuffleQueueTest, DequeueManyAndUpToInDifferentOrdersPerSeed) {
  // TF's testDequeueManyInDifferentOrders: before and after close, two seeds.
  for (bool up_to : {false, true}) {
    SCOPED_TRACE(up_to ? "dequeue_up_to" : "dequeue_many");
    std::vector<std::vector<int32_t>> results;
    std::vector<std::shared_ptr<Queue>> queues;
    for (int64_t seed : {1729, 87539319}) {
      ASSERT_OK_AND_ASSIGN(auto q, NewIntRsq(10, 5, seed, 0));
      ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({1, 2, 3, 4, 5})}));
      ASSERT_OK(q->EnqueueMany(Element{Vec<int32_t>({1, 2, 3, 4, 5})}));
      queues.push_back(q);
    }
    for (auto& q : queues) {
      auto r = up_to ? q->DequeueUpTo(5, Safe()) : q->DequeueMany(5, Safe());
      ASSERT_OK(r);
      results.push_back(Values<int32_t>((*r)[0]));
    }
    for (auto& q : queues) {
      ASSERT_OK(q->Close());
      auto r = up_to ? q->DequeueUpTo(5, Safe()) : q->DequeueMany(5, Safe());
      ASSERT_OK(r);
      results.push_back(Values<int32_t>((*r)[0]));
    }
    for (size_t i = 1; i < results.size(); ++i) {
      for (size_t j = 0; j < i; ++j) EXPECT_NE(results[i], results[j]) << i << " vs " << j;
    }
  }
}

}  // namespace
}  // namespace sluice::queue
