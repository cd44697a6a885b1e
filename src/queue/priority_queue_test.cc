// PriorityQueue tests, ported from TensorFlow's priority_queue_test.py (the
// cases, not the code), plus the blocking rules of spec section 5. Expected
// behaviour: docs/spec/tf-queues.md sections 1 and 5. Close, cancellation
// and timeout behaviour shared with the other queues is in
// QueueSemanticsTest (fifo_queue_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "queue_test_util.h"
#include "sluice/queue/queue.h"

namespace sluice::queue {
namespace {

using namespace testing;  // NOLINT: test helpers

// Elements are (priority, value: int64 scalar).
Result<std::shared_ptr<Queue>> NewIntPriority(int32_t capacity, bool with_shapes = true) {
  return NewPriorityQueue(Opts(capacity, {DType::kInt64},
                               with_shapes ? std::vector<PartialShape>{ScalarShape()}
                                           : std::vector<PartialShape>{}));
}

std::vector<int64_t> RandomPriorities(int n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi - 1);
  std::vector<int64_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// ===========================================================================
// Construction.

TEST(PriorityQueueTest, PrependsTheInt64ScalarPriorityComponent) {
  QueueOptions o = Opts(10, {DType::kString, DType::kFloat32}, {ScalarShape(), PartialShape{2}});
  // As in TensorFlow, names cover every component, the priority included.
  o.names = {"priority", "s", "f"};
  ASSERT_OK_AND_ASSIGN(auto q, NewPriorityQueue(o));
  EXPECT_EQ(q->type_name(), "PriorityQueue");
  EXPECT_EQ(q->dtypes(), (std::vector<DType>{DType::kInt64, DType::kString, DType::kFloat32}));
  EXPECT_EQ(q->shapes(), (std::vector<PartialShape>{ScalarShape(), ScalarShape(), PartialShape{2}}));
  EXPECT_EQ(q->names(), (std::vector<std::string>{"priority", "s", "f"}));
}

TEST(PriorityQueueTest, NamesThatLeaveOutThePriorityAreInvalidArgument) {
  QueueOptions o = Opts(10, {DType::kString}, {ScalarShape()});
  o.names = {"s"};
  EXPECT_TRUE(StatusIs(NewPriorityQueue(o), Code::kInvalidArgument, "1 names, 2 dtypes"));
}

TEST(PriorityQueueTest, WithoutShapesDeclaresNone) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10, /*with_shapes=*/false));
  EXPECT_EQ(q->dtypes(), (std::vector<DType>{DType::kInt64, DType::kInt64}));
  EXPECT_TRUE(q->shapes().empty());
  EXPECT_TRUE(q->names().empty());
}

TEST(PriorityQueueTest, ShapesNotFullyDefinedIsInvalidArgument) {
  EXPECT_TRUE(StatusIs(NewPriorityQueue(Opts(10, {DType::kInt64}, {PartialShape{-1}})),
                       Code::kInvalidArgument));
}

TEST(PriorityQueueTest, EmptyNameDefaultsToPriorityQueue) {
  QueueOptions o = Opts(10, {DType::kInt64});
  o.name = "";
  ASSERT_OK_AND_ASSIGN(auto q, NewPriorityQueue(o));
  EXPECT_EQ(q->name(), "priority_queue");
}

// ===========================================================================
// Validation.

TEST(PriorityQueueTest, PriorityMustBeInt64) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPriorityQueue(Opts(10, {DType::kString}, {ScalarShape()})));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{I32(1), Str("a")}), Code::kInvalidArgument,
                       "Type mismatch in tuple component 0. Expected int64, got int32"));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Tensor::FromStrings({"a", "b"}),
                                              Tensor::FromStrings({"a", "b"})}),
                       Code::kInvalidArgument,
                       "Type mismatch in tuple component 0. Expected int64, got string"));
  EXPECT_EQ(q->size(), 0);
}

TEST(PriorityQueueTest, PriorityMustBeScalarWithShapes) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPriorityQueue(Opts(10, {DType::kString}, {ScalarShape()})));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{Vec<int64_t>({0, 2}), Str("a")}), Code::kInvalidArgument,
                       "Shape mismatch in tuple component 0. Expected [], got [2]"));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Make<int64_t>({2, 2}, {0, 2, 3, 4}),
                                              Tensor::FromStrings({"a", "b"})}),
                       Code::kInvalidArgument,
                       "Shape mismatch in tuple component 0. Expected [2], got [2,2]"));
  EXPECT_EQ(q->size(), 0);
}

TEST(PriorityQueueTest, PriorityMustBeScalarWithoutShapes) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10, /*with_shapes=*/false));
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{Vec<int64_t>({0, 2}), I64(1)}), Code::kInvalidArgument,
                       "Expected the priority element to be a scalar"));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Make<int64_t>({2, 2}, {0, 2, 3, 4}),
                                              Vec<int64_t>({1, 2})}),
                       Code::kInvalidArgument, "Expected the priority element to be a"));
  EXPECT_EQ(q->size(), 0);
}

TEST(PriorityQueueTest, DequeueManyWithoutShapesIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10, /*with_shapes=*/false));
  ASSERT_OK(q->Enqueue(Element{I64(1), I64(1)}));
  EXPECT_TRUE(StatusIs(
      q->DequeueMany(1, Safe()), Code::kInvalidArgument,
      "PriorityQueue's DequeueMany requires the components to have specified shapes."));
  EXPECT_TRUE(StatusIs(q->DequeueUpTo(1, Safe()), Code::kInvalidArgument,
                       "the components to have specified shapes."));
  // A single dequeue works without shapes.
  ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
  EXPECT_EQ(ScalarOf<int64_t>(e[0]), 1);
}

// ===========================================================================
// Ordering.

TEST(PriorityQueueTest, DequeueReturnsSmallestPriorityFirst) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(2000));
  const auto priorities = RandomPriorities(1000, -100, 100, 1);
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>(priorities), Vec<int64_t>(priorities)}));
  std::vector<int64_t> out;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    ASSERT_EQ(ScalarOf<int64_t>(e[0]), ScalarOf<int64_t>(e[1]));
    out.push_back(ScalarOf<int64_t>(e[0]));
  }
  EXPECT_EQ(out, Sorted(priorities));
}

TEST(PriorityQueueTest, DequeueManyIsSortedAscending) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(2000));
  const auto priorities = RandomPriorities(1000, -100, 100, 2);
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>(priorities), Vec<int64_t>(priorities)}));
  std::vector<int64_t> out;
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(100, Safe()));
    EXPECT_EQ(Dims(e[0]), std::vector<int64_t>{100});
    EXPECT_EQ(Values<int64_t>(e[0]), Values<int64_t>(e[1]));
    auto v = Values<int64_t>(e[0]);
    out.insert(out.end(), v.begin(), v.end());
  }
  EXPECT_EQ(out, Sorted(priorities));
}

// (priority, v0, v1) triples; priorities have many ties, values are unique.
struct Triples {
  std::vector<int64_t> priorities;
  std::vector<std::string> v0, v1;
};
Triples MakeTriples(int n, uint32_t seed) {
  Triples t;
  t.priorities = RandomPriorities(n, -5, 5, seed);
  for (int i = 0; i < n; ++i) {
    t.v0.push_back("a" + std::to_string(i));
    t.v1.push_back("b" + std::to_string(i));
  }
  return t;
}
// Checks that `e`, a dequeue_many of all of `t`, is sorted by priority and
// that every (priority, v0, v1) travelled together.
void ExpectSortedTriples(const Triples& t, const Element& e) {
  ASSERT_EQ(e.size(), 3u);
  const auto p = Values<int64_t>(e[0]);
  const auto v0 = Values<std::string>(e[1]);
  const auto v1 = Values<std::string>(e[2]);
  EXPECT_EQ(p, Sorted(t.priorities));
  std::set<std::tuple<int64_t, std::string, std::string>> expected, got;
  for (size_t i = 0; i < t.priorities.size(); ++i) expected.emplace(t.priorities[i], t.v0[i], t.v1[i]);
  for (size_t i = 0; i < p.size(); ++i) got.emplace(p[i], v0[i], v1[i]);
  EXPECT_EQ(got, expected);
}

TEST(PriorityQueueTest, TiesKeepComponentsTogether) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPriorityQueue(Opts(2000, {DType::kString, DType::kString},
                                                     {ScalarShape(), ScalarShape()})));
  const Triples t = MakeTriples(100, 3);
  for (size_t i = 0; i < t.priorities.size(); ++i) {
    ASSERT_OK(q->Enqueue(Element{I64(t.priorities[i]), Str(t.v0[i]), Str(t.v1[i])}));
  }
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(100, Safe()));
  ExpectSortedTriples(t, e);
}

TEST(PriorityQueueTest, ConcurrentEnqueueManyThenOneDequeueManyIsSorted) {
  ASSERT_OK_AND_ASSIGN(auto q, NewPriorityQueue(Opts(2000, {DType::kString, DType::kString},
                                                     {ScalarShape(), ScalarShape()})));
  const Triples t = MakeTriples(100, 4);
  std::vector<std::future<Status>> producers;
  for (int b = 0; b < 20; ++b) {
    producers.push_back(Async([&, b] {
      std::vector<int64_t> p(t.priorities.begin() + 5 * b, t.priorities.begin() + 5 * b + 5);
      std::vector<std::string> v0(t.v0.begin() + 5 * b, t.v0.begin() + 5 * b + 5);
      std::vector<std::string> v1(t.v1.begin() + 5 * b, t.v1.begin() + 5 * b + 5);
      return q->EnqueueMany(
          Element{Vec<int64_t>(p), Tensor::FromStrings(v0), Tensor::FromStrings(v1)}, Safe());
    }));
  }
  // Waits until all 100 are stored, then takes them at once.
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(100, Safe()));
  for (auto& p : producers) {
    ASSERT_TRUE(Finishes(p));
    EXPECT_OK(p.get());
  }
  ExpectSortedTriples(t, e);
}

TEST(PriorityQueueTest, NegativePrioritiesComeFirst) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10));
  for (int64_t p : {5, -3, 0, -10, 7}) ASSERT_OK(q->Enqueue(Element{I64(p), I64(p * 10)}));
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(5, Safe()));
  EXPECT_EQ(Values<int64_t>(e[0]), (std::vector<int64_t>{-10, -3, 0, 5, 7}));
  EXPECT_EQ(Values<int64_t>(e[1]), (std::vector<int64_t>{-100, -30, 0, 50, 70}));
}

// ===========================================================================
// Blocking and close.

TEST(PriorityQueueTest, DequeueManyWaitsUntilNAreStoredWithoutHolding) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(3, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Enqueue(Element{I64(3), I64(30)}, Safe()));
  ASSERT_OK(q->Enqueue(Element{I64(1), I64(10)}, Safe()));
  EXPECT_EQ(q->size(), 2);  // stored, not held by the pending dequeue_many
  EXPECT_FALSE(IsDone(dequeue));
  ASSERT_OK(q->Enqueue(Element{I64(2), I64(20)}, Safe()));
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Values<int64_t>((*r)[1]), (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(q->size(), 0);
}

TEST(PriorityQueueTest, DequeueUpToOnOpenQueueWaitsForN) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>({7, 3}), Vec<int64_t>({70, 30})}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueUpTo(3, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_FALSE(IsDone(dequeue));
  EXPECT_EQ(q->size(), 2);
  ASSERT_OK(q->Enqueue(Element{I64(5), I64(50)}, Safe()));
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Values<int64_t>((*r)[0]), (std::vector<int64_t>{3, 5, 7}));
}

TEST(PriorityQueueTest, DequeueManyAboveCapacityNeverCompletesWhileOpen) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(2));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>({2, 1}), Vec<int64_t>({20, 10})}));
  EXPECT_TRUE(StatusIs(q->DequeueMany(3, WaitOptions::Timeout(20ms)), Code::kDeadlineExceeded,
                       "Timed out waiting for notification"));
  EXPECT_EQ(q->size(), 2);
  ASSERT_OK(q->Close());
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueUpTo(3, Safe()));
  EXPECT_EQ(Values<int64_t>(e[0]), (std::vector<int64_t>{1, 2}));
}

TEST(PriorityQueueTest, BlockedDequeueManyOnCloseIsOutOfRangeAndElementsStay) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>({5, 4}), Vec<int64_t>({50, 40})}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueMany(3, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  EXPECT_TRUE(StatusIs(dequeue.get(), Code::kOutOfRange,
                       "PriorityQueue 'q' is closed and has insufficient elements"));
  EXPECT_EQ(q->size(), 2);
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueUpTo(3, Safe()));
  EXPECT_EQ(Values<int64_t>(e[0]), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(Values<int64_t>(e[1]), (std::vector<int64_t>{40, 50}));
}

TEST(PriorityQueueTest, BlockedDequeueUpToReturnsRemainingSortedOnClose) {
  // TF loses these elements (its dequeue_up_to bug); sluice returns them.
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>({9, -1}), Vec<int64_t>({90, -10})}));
  BlockedProbe probe;
  auto dequeue = Async([&] { return q->DequeueUpTo(5, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_EQ(q->size(), 2);
  ASSERT_OK(q->Close());
  ASSERT_TRUE(Finishes(dequeue));
  auto r = dequeue.get();
  ASSERT_OK(r);
  EXPECT_EQ(Values<int64_t>((*r)[0]), (std::vector<int64_t>{-1, 9}));
  EXPECT_EQ(Values<int64_t>((*r)[1]), (std::vector<int64_t>{-10, 90}));
  EXPECT_EQ(q->size(), 0);
}

TEST(PriorityQueueTest, EnqueueBlocksWhenFull) {
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(2));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>({5, 6}), Vec<int64_t>({5, 6})}));
  BlockedProbe probe;
  auto enqueue = Async([&] { return q->Enqueue(Element{I64(1), I64(1)}, probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EXPECT_FALSE(IsDone(enqueue));
  ASSERT_OK_AND_ASSIGN(Element first, q->Dequeue(Safe()));
  EXPECT_EQ(ScalarOf<int64_t>(first[0]), 5);  // 1 was not stored yet
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueMany(2, Safe()));
  EXPECT_EQ(Values<int64_t>(rest[0]), (std::vector<int64_t>{1, 6}));
}

TEST(PriorityQueueTest, ConcurrentEnqueueManyAndDequeueManyDeliverEverything) {
  // TF's testRoundTripFillsCapacityMultiThreadedEnqueueAndDequeue.
  ASSERT_OK_AND_ASSIGN(auto q, NewIntPriority(10));
  std::mt19937 rng(5);
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> counts, all;
  for (int i = 0; i < 40; ++i) {
    const int n = static_cast<int>(rng() % 10);
    batches.push_back(RandomPriorities(n, 0, 5, 100 + i));
    counts.push_back(n);
    all.insert(all.end(), batches.back().begin(), batches.back().end());
  }
  std::shuffle(counts.begin(), counts.end(), rng);
  std::vector<std::future<Result<Element>>> consumers;
  for (int64_t n : counts) consumers.push_back(Async([&q, n] { return q->DequeueMany(n, Safe()); }));
  std::vector<std::future<Status>> producers;
  for (const auto& b : batches) {
    producers.push_back(Async([&q, &b] {
      return q->EnqueueMany(Element{Vec<int64_t>(b), Vec<int64_t>(b)}, Safe());
    }));
  }
  for (auto& p : producers) {
    ASSERT_TRUE(Finishes(p));
    EXPECT_OK(p.get());
  }
  std::vector<int64_t> out;
  for (auto& c : consumers) {
    ASSERT_TRUE(Finishes(c));
    auto r = c.get();
    ASSERT_OK(r);
    auto p = Values<int64_t>((*r)[0]);
    EXPECT_EQ(p, Values<int64_t>((*r)[1]));
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
    out.insert(out.end(), p.begin(), p.end());
  }
  EXPECT_EQ(Sorted(out), Sorted(all));
}

}  // namespace
}  // namespace sluice::queue
