// FIFOQueue's lock-free RowRing (row_ring.h): which queues get one, and that
// single enqueues and dequeues through it keep TensorFlow's semantics when
// they meet the locked path: waiting calls are served in arrival order and
// never overtaken, close stops the ring for good, rows are reused only when
// nothing refers to them, and under threads nothing is lost or duplicated.
// Whole batches of kBatchRows elements go in by reference and leave whole;
// a batch the caller handed over is never written to.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "fifo_queue.h"
#include "queue_test_util.h"

namespace sluice::queue {
namespace {

using namespace ::sluice::queue::testing;  // NOLINT: test helpers

constexpr int64_t kRows = RowRing::kBatchRows;

std::shared_ptr<FIFOQueue> NewQueue(int32_t capacity, std::vector<DType> dtypes, std::vector<PartialShape> shapes) {
  auto q = std::make_shared<FIFOQueue>("q", capacity, std::move(dtypes), std::move(shapes),
                                       std::vector<std::string>{});
  EXPECT_OK(q->Initialize());
  return q;
}

// int64 scalars: 8 bytes per element.
std::shared_ptr<FIFOQueue> IdQueue(int32_t capacity) { return NewQueue(capacity, {DType::kInt64}, {ScalarShape()}); }

// One enqueue_many of ids [begin, end).
void EnqueueBatch(Queue& q, int64_t begin, int64_t end) { ASSERT_OK(q.EnqueueMany(Element{Vec<int64_t>(Iota(begin, end))}, Safe())); }

void EnqueueIds(Queue& q, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) ASSERT_OK(q.Enqueue(Element{I64(i)}, Safe()));
}

int64_t DequeueId(Queue& q) {
  Result<Element> e = q.Dequeue(Safe());
  EXPECT_OK(e);
  return e.ok() ? ScalarOf<int64_t>((*e)[0]) : -1;
}

// --- Which queues have a ring ----------------------------------------------

TEST(FIFOQueueRingTest, BoundedQueueOfSmallFixedSizeElementsHasARing) {
  EXPECT_TRUE(IdQueue(1)->has_ring());
  EXPECT_TRUE(IdQueue(1000)->has_ring());
  EXPECT_TRUE(NewQueue(1000, {DType::kUInt8}, {PartialShape{4096}})->has_ring());  // 2048 rows: 8 MiB
}

TEST(FIFOQueueRingTest, UnboundedQueueHasNoRing) { EXPECT_FALSE(IdQueue(Queue::kUnbounded)->has_ring()); }

TEST(FIFOQueueRingTest, QueueWhoseRingWouldPassItsMemoryBoundHasNoRing) {
  // (8192 + 64) rows of 4 KiB: over RowRing::kMaxRingBytes (16 MiB).
  EXPECT_FALSE(NewQueue(8192, {DType::kUInt8}, {PartialShape{4096}})->has_ring());
}

TEST(FIFOQueueRingTest, StringOrLargeElementsHaveNoRing) {
  EXPECT_FALSE(NewQueue(8, {DType::kString}, {ScalarShape()})->has_ring());
  EXPECT_FALSE(NewQueue(8, {DType::kUInt8}, {PartialShape{4097}})->has_ring());
}

// --- Rows and their batches ------------------------------------------------

TEST(FIFOQueueRingTest, DrainedBatchBuffersServeTheNextBatchOnceNothingRefersToThem) {
  auto q = IdQueue(4 * kRows);
  EnqueueIds(*q, 0, kRows);
  const void* first_batch = nullptr;
  {
    ASSERT_OK_AND_ASSIGN(Element batch, q->DequeueMany(kRows, Safe()));
    first_batch = batch[0].raw_data();
    EXPECT_EQ(Values<int64_t>(batch[0]), Iota(0, kRows));
  }
  // The next batch (the ring's next slot) takes the drained buffers, still
  // in cache, rather than new ones.
  EnqueueIds(*q, kRows, kRows + 1);
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(1, Safe()));
  EXPECT_EQ(e[0].raw_data(), first_batch);
  EXPECT_EQ(Values<int64_t>(e[0]), (std::vector<int64_t>{kRows}));
}

TEST(FIFOQueueRingTest, BatchBuffersStillViewedAreNotReused) {
  auto q = IdQueue(4 * kRows);
  EnqueueIds(*q, 0, kRows);
  ASSERT_OK_AND_ASSIGN(Element held, q->DequeueMany(kRows, Safe()));
  EnqueueIds(*q, kRows, kRows + 1);
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(1, Safe()));
  EXPECT_FALSE(e[0].SharesBufferWith(held[0]));
  EXPECT_EQ(Values<int64_t>(held[0]), Iota(0, kRows));
}

TEST(FIFOQueueRingTest, BatchStillReferencedIsReplacedNotOverwritten) {
  auto q = IdQueue(2 * kRows);  // a ring of four batches
  EnqueueIds(*q, 0, kRows);
  ASSERT_OK_AND_ASSIGN(Element held, q->Dequeue(Safe()));  // a view of row 0
  ASSERT_OK(q->DequeueMany(kRows - 1, Safe()));
  for (int lap = 1; lap <= 3; ++lap) {
    EnqueueIds(*q, lap * 1000, lap * 1000 + 2 * kRows - 1);
    ASSERT_OK_AND_ASSIGN(Element out, q->DequeueMany(2 * kRows - 1, Safe()));
    EXPECT_EQ(Values<int64_t>(out[0]), Iota(lap * 1000, lap * 1000 + 2 * kRows - 1));
    EXPECT_FALSE(out[0].SharesBufferWith(held[0]));
  }
  EXPECT_EQ(ScalarOf<int64_t>(held[0]), 0);
}

TEST(FIFOQueueRingTest, SinglesOfOneBatchDequeuedManyAreOneSlice) {
  auto q = IdQueue(100);
  EnqueueIds(*q, 0, kRows);
  ASSERT_OK_AND_ASSIGN(Element first, q->Dequeue(Safe()));
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueMany(kRows - 1, Safe()));
  EXPECT_TRUE(rest[0].SharesBufferWith(first[0]));
  EXPECT_EQ(static_cast<const char*>(rest[0].raw_data()),
            static_cast<const char*>(first[0].raw_data()) + sizeof(int64_t));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(1, kRows));
}

TEST(FIFOQueueRingTest, ComponentsOfAnElementStayTogether) {
  auto q = NewQueue(10, {DType::kInt32, DType::kFloat32}, {PartialShape{3}, PartialShape{2}});
  ASSERT_TRUE(q->has_ring());
  for (int i = 0; i < 25; ++i) {
    ASSERT_OK(q->Enqueue(Element{Vec<int32_t>({i, i + 1, i + 2}), Vec<float>({i * 0.5f, -i * 1.0f})}, Safe()));
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    EXPECT_EQ(Values<int32_t>(e[0]), (std::vector<int32_t>{i, i + 1, i + 2}));
    EXPECT_EQ(Values<float>(e[1]), (std::vector<float>{i * 0.5f, -i * 1.0f}));
  }
}

// --- Whole batches --------------------------------------------------------

TEST(FIFOQueueRingTest, SlotSizedBatchGoesInByReferenceAndLeavesWholeWithoutTheLock) {
  auto q = IdQueue(4 * kRows);
  Element batch{Vec<int64_t>(Iota(0, kRows))};
  ASSERT_OK(q->EnqueueMany(batch, Safe()));
  EXPECT_FALSE(q->ring_frozen());
  EXPECT_EQ(q->size(), kRows);
  ASSERT_OK_AND_ASSIGN(Element out, q->DequeueMany(kRows, Safe()));
  EXPECT_EQ(out[0].raw_data(), batch[0].raw_data());  // the caller's tensor itself: no copy
  EXPECT_EQ(Values<int64_t>(out[0]), Iota(0, kRows));
  EXPECT_FALSE(q->ring_frozen());
  const QueueStats s = q->stats();
  EXPECT_EQ(s.enqueued, kRows);
  EXPECT_EQ(s.dequeued, kRows);
}

TEST(FIFOQueueRingTest, RowsOfAWholeBatchLeaveOneByOneOrAsSlices) {
  auto q = IdQueue(4 * kRows);
  Element batch{Vec<int64_t>(Iota(0, kRows))};
  ASSERT_OK(q->EnqueueMany(batch, Safe()));
  EXPECT_EQ(DequeueId(*q), 0);
  ASSERT_OK_AND_ASSIGN(Element some, q->DequeueMany(10, Safe()));
  EXPECT_EQ(Values<int64_t>(some[0]), Iota(1, 11));
  EXPECT_TRUE(some[0].SharesBufferWith(batch[0]));
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueUpTo(kRows - 11, Safe()));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(11, kRows));
  EXPECT_FALSE(q->ring_frozen());
}

TEST(FIFOQueueRingTest, SinglesAfterABatchAreCopiedIntoNewBuffersNeverIntoTheCallers) {
  // The adopted batch belongs to its caller: once it is drained, the ring's
  // later laps write into buffers of their own.
  auto q = IdQueue(kRows);  // two slots
  Element batch{Vec<int64_t>(Iota(0, kRows))};
  ASSERT_OK(q->EnqueueMany(batch, Safe()));
  ASSERT_OK(q->DequeueMany(kRows, Safe()));
  for (int lap = 1; lap <= 4; ++lap) {
    EnqueueIds(*q, lap * 1000, lap * 1000 + kRows);
    ASSERT_OK_AND_ASSIGN(Element out, q->DequeueMany(kRows, Safe()));
    EXPECT_EQ(Values<int64_t>(out[0]), Iota(lap * 1000, lap * 1000 + kRows));
    EXPECT_FALSE(out[0].SharesBufferWith(batch[0]));
  }
  EXPECT_EQ(Values<int64_t>(batch[0]), Iota(0, kRows));
}

TEST(FIFOQueueRingTest, BatchThatDoesNotStartASlotQueuesBehindTheSinglesInOrder) {
  auto q = IdQueue(4 * kRows);
  EnqueueIds(*q, 0, 1);
  EnqueueBatch(*q, 1, 1 + kRows);  // tail at row 1: stored behind the ring
  EnqueueIds(*q, 1 + kRows, 3 + kRows);
  ASSERT_OK_AND_ASSIGN(Element out, q->DequeueMany(3 + kRows, Safe()));
  EXPECT_EQ(Values<int64_t>(out[0]), Iota(0, 3 + kRows));
  EXPECT_FALSE(q->ring_frozen());
  // Idle again: the next slot-sized batch, at a slot boundary once the ring
  // has moved on to one (it holds only the first single so far), goes in
  // whole.
  EnqueueIds(*q, 0, kRows - 1);
  ASSERT_OK(q->DequeueMany(kRows - 1, Safe()));
  EnqueueBatch(*q, 500, 500 + kRows);
  EXPECT_FALSE(q->ring_frozen());
  ASSERT_OK_AND_ASSIGN(Element whole, q->DequeueMany(kRows, Safe()));
  EXPECT_EQ(Values<int64_t>(whole[0]), Iota(500, 500 + kRows));
}

TEST(FIFOQueueRingTest, DequeueManyAcrossTwoSlotsTakesTheLockAndKeepsOrder) {
  auto q = IdQueue(4 * kRows);
  EnqueueIds(*q, 0, 2 * kRows);
  ASSERT_OK(q->DequeueMany(kRows / 2, Safe()));
  ASSERT_OK_AND_ASSIGN(Element across, q->DequeueMany(kRows, Safe()));
  EXPECT_EQ(Values<int64_t>(across[0]), Iota(kRows / 2, kRows / 2 + kRows));
  EXPECT_FALSE(q->ring_frozen());
}

TEST(FIFOQueueRingTest, BlockedSlotSizedBatchIsAdmittedIntoTheRingAndTheRingThaws) {
  auto q = IdQueue(2 * kRows);
  EnqueueBatch(*q, 0, kRows);
  EnqueueBatch(*q, kRows, 2 * kRows);
  BlockedProbe blocked;
  Element third{Vec<int64_t>(Iota(2 * kRows, 3 * kRows))};
  auto enqueue = Async([&] { return q->EnqueueMany(third, blocked.Options()); });
  ASSERT_TRUE(blocked.WaitBlocked());
  EXPECT_TRUE(q->ring_frozen());
  ASSERT_OK_AND_ASSIGN(Element first, q->DequeueMany(kRows, Safe()));
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
  EXPECT_EQ(Values<int64_t>(first[0]), Iota(0, kRows));
  // Admitted into the ring, not behind it: nothing keeps the ring frozen.
  EXPECT_FALSE(q->ring_frozen());
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueMany(2 * kRows, Safe()));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(kRows, 3 * kRows));
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>(Iota(0, kRows))}, Safe()));
  ASSERT_OK_AND_ASSIGN(Element again, q->DequeueMany(kRows, Safe()));
  EXPECT_EQ(Values<int64_t>(again[0]), Iota(0, kRows));
}

TEST(FIFOQueueRingTest, LargerBatchAdmittedInPartsKeepsItsOrder) {
  // Capacity kRows: the first kRows rows of the batch are admitted (into
  // the ring, as a slice of it), the rest once a dequeue makes room.
  auto q = IdQueue(kRows);
  auto enqueue = Async([&] { return q->EnqueueMany(Element{Vec<int64_t>(Iota(0, kRows + 10))}, Safe()); });
  ASSERT_OK_AND_ASSIGN(Element first, q->DequeueMany(kRows, Safe()));
  EXPECT_EQ(Values<int64_t>(first[0]), Iota(0, kRows));
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueMany(10, Safe()));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(kRows, kRows + 10));
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
}

TEST(FIFOQueueRingTest, LargerBatchAdmittedInSlotSizedPartsLeavesAsOneSliceOfIt) {
  auto q = IdQueue(2 * kRows);
  EnqueueBatch(*q, 0, kRows);
  Element big{Vec<int64_t>(Iota(kRows, 3 * kRows))};
  BlockedProbe blocked;
  auto enqueue = Async([&] { return q->EnqueueMany(big, blocked.Options()); });
  ASSERT_TRUE(blocked.WaitBlocked());  // its first kRows rows are admitted
  ASSERT_OK(q->DequeueMany(kRows, Safe()));
  ASSERT_TRUE(Finishes(enqueue));
  EXPECT_OK(enqueue.get());
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueMany(2 * kRows, Safe()));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(kRows, 3 * kRows));
  EXPECT_TRUE(rest[0].SharesBufferWith(big[0]));  // the two parts joined: no copy
}

TEST(FIFOQueueRingTest, SlotSizedBatchWaitsForRoomAndClosedQueueRefusesIt) {
  auto q = IdQueue(kRows + 3);
  EnqueueIds(*q, 0, 4);
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Vec<int64_t>(Iota(0, kRows))},
                                      WaitOptions::Timeout(std::chrono::milliseconds(5))),
                       Code::kDeadlineExceeded));
  ASSERT_OK(q->Close(false, Safe()));
  EXPECT_TRUE(StatusIs(q->EnqueueMany(Element{Vec<int64_t>(Iota(0, kRows))}, Safe()), Code::kCancelled));
}

// --- Meeting the locked path -------------------------------------------------

TEST(FIFOQueueRingTest, WaitingDequeueManyIsNotOvertakenByALaterDequeue) {
  auto q = IdQueue(16);
  BlockedProbe many_blocked, single_blocked;
  auto many = Async([&] { return q->DequeueMany(3, many_blocked.Options()); });
  ASSERT_TRUE(many_blocked.WaitBlocked());
  auto single = Async([&] { return q->Dequeue(single_blocked.Options()); });
  ASSERT_TRUE(single_blocked.WaitBlocked());
  EXPECT_TRUE(q->ring_frozen());
  EnqueueIds(*q, 0, 4);
  ASSERT_TRUE(Finishes(many));
  ASSERT_TRUE(Finishes(single));
  Result<Element> m = many.get();
  Result<Element> s = single.get();
  ASSERT_OK(m);
  ASSERT_OK(s);
  EXPECT_EQ(Values<int64_t>((*m)[0]), Iota(0, 3));
  EXPECT_EQ(ScalarOf<int64_t>((*s)[0]), 3);
  EXPECT_FALSE(q->ring_frozen());  // idle again: the lock-free path is back
}

TEST(FIFOQueueRingTest, BlockedEnqueuesOfAFullRingAreAdmittedInArrivalOrder) {
  auto q = IdQueue(2);
  EnqueueIds(*q, 0, 2);
  BlockedProbe first_blocked, second_blocked;
  auto first = Async([&] { return q->Enqueue(Element{I64(2)}, first_blocked.Options()); });
  ASSERT_TRUE(first_blocked.WaitBlocked());
  auto second = Async([&] { return q->Enqueue(Element{I64(3)}, second_blocked.Options()); });
  ASSERT_TRUE(second_blocked.WaitBlocked());
  std::vector<int64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(DequeueId(*q));
  EXPECT_EQ(ids, Iota(0, 4));
  ASSERT_TRUE(Finishes(first));
  ASSERT_TRUE(Finishes(second));
  EXPECT_OK(first.get());
  EXPECT_OK(second.get());
  EXPECT_FALSE(q->ring_frozen());
}

TEST(FIFOQueueRingTest, RowsPutBackByATimedOutDequeueManyComeBeforeTheRing) {
  auto q = IdQueue(16);
  EnqueueIds(*q, 0, 3);
  EXPECT_TRUE(StatusIs(q->DequeueMany(5, WaitOptions::Timeout(std::chrono::milliseconds(5))),
                       Code::kDeadlineExceeded));
  EnqueueIds(*q, 3, 6);
  EXPECT_TRUE(q->ring_frozen());  // rows outside the ring: the locked path serves them first
  std::vector<int64_t> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(DequeueId(*q));
  EXPECT_EQ(ids, Iota(0, 6));
  EXPECT_FALSE(q->ring_frozen());
}

TEST(FIFOQueueRingTest, EnqueueManyBatchQueuesBehindTheRingAndSinglesBehindIt) {
  auto q = IdQueue(32);
  EnqueueIds(*q, 0, 2);
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>({2, 3, 4})}, Safe()));
  EnqueueIds(*q, 5, 7);
  std::vector<int64_t> ids;
  for (int i = 0; i < 7; ++i) ids.push_back(DequeueId(*q));
  EXPECT_EQ(ids, Iota(0, 7));
  EXPECT_FALSE(q->ring_frozen());
  EnqueueIds(*q, 7, 9);
  EXPECT_EQ(DequeueId(*q), 7);
}

TEST(FIFOQueueRingTest, CloseStopsTheRingForGoodAndDrainsIt) {
  auto q = IdQueue(8);
  EnqueueIds(*q, 0, 3);
  ASSERT_OK(q->Close(false, Safe()));
  EXPECT_TRUE(q->ring_frozen());
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{I64(9)}, Safe()), Code::kCancelled));
  EXPECT_EQ(DequeueId(*q), 0);
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueUpTo(5, Safe()));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(1, 3));
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()).status(), Code::kOutOfRange));
  EXPECT_TRUE(q->ring_frozen());
}

TEST(FIFOQueueRingTest, StatsCountLockFreeOperations) {
  auto q = IdQueue(16);
  EnqueueIds(*q, 0, 10);
  for (int i = 0; i < 4; ++i) DequeueId(*q);
  ASSERT_OK(q->DequeueMany(2, Safe()));
  const QueueStats s = q->stats();
  EXPECT_EQ(s.enqueued, 10);
  EXPECT_EQ(s.dequeued, 6);
  EXPECT_EQ(s.size, 4);
  EXPECT_EQ(q->size(), 4);
}

TEST(FIFOQueueRingTest, SizeAndStatsStayConsistentUnderLockFreeTraffic) {
  // size() reads the ring's positions without stopping it; stats() stops it
  // for a moment. Neither may show a state that never existed.
  constexpr int32_t kCapacity = 4;
  constexpr int64_t kPer = 20000;
  auto q = IdQueue(kCapacity);
  std::atomic<bool> done{false};
  std::thread producer([&] { EnqueueIds(*q, 0, kPer); });
  std::thread consumer([&] {
    for (int64_t i = 0; i < kPer; ++i) EXPECT_EQ(DequeueId(*q), i);
    done = true;
  });
  int64_t samples = 0, bad_size = 0, bad_stats = 0;
  while (!done.load()) {
    const int32_t size = q->size();
    const QueueStats s = q->stats();
    bad_size += size < 0 || size > kCapacity;
    bad_stats += s.size < 0 || s.size > kCapacity || s.enqueued - s.dequeued != s.size || s.dequeued > s.enqueued;
    ++samples;
  }
  producer.join();
  consumer.join();
  EXPECT_GT(samples, 0);
  EXPECT_EQ(bad_size, 0);
  EXPECT_EQ(bad_stats, 0);
  const QueueStats s = q->stats();
  EXPECT_EQ(s.enqueued, kPer);
  EXPECT_EQ(s.dequeued, kPer);
}

// --- Threads -----------------------------------------------------------------

// One consumer call: a dequeue, a dequeue_many(n) or a dequeue_up_to(n).
struct Take {
  enum Kind { kOne, kMany, kUpTo } kind = kOne;
  int64_t n = 1;
};

// Appends the ids one call of `take` returns; false once the queue is
// closed and drained. A dequeue_many that finds fewer than n left when the
// queue is closed returns true with no ids: they stay for the others.
bool TakeIds(Queue& q, Take take, std::vector<int64_t>* ids) {
  if (take.kind == Take::kOne) {
    Result<Element> e = q.Dequeue(Safe());
    if (!e.ok()) {
      EXPECT_EQ(e.status().code(), Code::kOutOfRange) << e.status();
      return false;
    }
    ids->push_back(ScalarOf<int64_t>((*e)[0]));
    return true;
  }
  Result<Element> b = take.kind == Take::kMany ? q.DequeueMany(take.n, Safe()) : q.DequeueUpTo(take.n, Safe());
  if (!b.ok()) {
    EXPECT_EQ(b.status().code(), Code::kOutOfRange) << b.status();
    return take.kind == Take::kMany;
  }
  *ids = Values<int64_t>((*b)[0]);
  return true;
}

// Checks that each producer's ids (producer id / per) arrive ascending, and
// keeps them in *seen.
void RecordIds(const std::vector<int64_t>& ids, int64_t per, std::vector<int64_t>* last, std::vector<int64_t>* seen) {
  for (int64_t id : ids) {
    const auto p = static_cast<size_t>(id / per);
    EXPECT_GT(id, (*last)[p]);
    (*last)[p] = id;
    seen->push_back(id);
  }
}

// P producers push ids (p * kPer + i, ascending per producer) through a tiny
// ring, so that it is full, empty, frozen and thawed all the time; C
// consumers take them with dequeue, dequeue_many and dequeue_up_to until the
// queue is closed and drained (closed once the producers are done, or
// midway). Every admitted id comes out once, and each consumer sees each
// producer's ids ascending.
void RunTraffic(int producers, int consumers, int32_t capacity, bool close_midway) {
  constexpr int64_t kPer = 4000;
  auto q = IdQueue(capacity);
  std::vector<int64_t> admitted(producers, 0);
  std::vector<std::thread> producer_threads, consumer_threads;
  for (int p = 0; p < producers; ++p) {
    producer_threads.emplace_back([&, p] {
      for (int64_t i = 0; i < kPer; ++i) {
        const Status s = q->Enqueue(Element{I64(p * kPer + i)}, Safe());
        if (!s.ok()) {
          EXPECT_TRUE(close_midway && s.code() == Code::kCancelled) << s;
          return;
        }
        admitted[p] = i + 1;
      }
    });
  }
  std::vector<std::vector<int64_t>> seen(consumers);
  std::atomic<int64_t> taken{0};
  for (int c = 0; c < consumers; ++c) {
    consumer_threads.emplace_back([&, c] {
      std::vector<int64_t> last(producers, -1);
      for (int round = 0;; ++round) {
        std::vector<int64_t> ids;
        const Take take = round % 4 == 2 ? Take{Take::kMany, 2} : round % 4 == 3 ? Take{Take::kUpTo, 5} : Take{};
        if (!TakeIds(*q, take, &ids)) break;
        RecordIds(ids, kPer, &last, &seen[c]);
        taken += static_cast<int64_t>(ids.size());
      }
    });
  }
  const int64_t total = producers * kPer;
  // EXPECT, not ASSERT: the threads must be joined whatever happens.
  if (close_midway) {
    EXPECT_TRUE(Eventually([&] { return taken.load() > total / 3; }));
    EXPECT_OK(q->Close(false, Safe()));
  }
  for (auto& t : producer_threads) t.join();
  if (!close_midway) {
    EXPECT_OK(q->Close(false, Safe()));
  }
  for (auto& t : consumer_threads) t.join();
  std::multiset<int64_t> all;
  for (const auto& v : seen) all.insert(v.begin(), v.end());
  std::multiset<int64_t> expected;
  for (int p = 0; p < producers; ++p) {
    for (int64_t i = 0; i < admitted[p]; ++i) expected.insert(p * kPer + i);
  }
  EXPECT_EQ(all, expected);  // nothing lost, nothing duplicated
  if (!close_midway) {
    EXPECT_EQ(static_cast<int64_t>(all.size()), total);
  }
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueRingTest, OneProducerOneConsumerThroughATinyRing) { RunTraffic(1, 1, 3, false); }
TEST(FIFOQueueRingTest, ManyProducersManyConsumersThroughATinyRing) { RunTraffic(4, 3, 5, false); }
TEST(FIFOQueueRingTest, ManyProducersManyConsumersThroughALargerRing) { RunTraffic(3, 3, 200, false); }
TEST(FIFOQueueRingTest, CloseDuringTrafficLosesNothing) { RunTraffic(4, 3, 7, true); }

// P producers push ids through a ring of a few slots, each alternating
// slot-sized enqueue_many batches with runs of singles (so that batches
// start a slot, or not, by chance); C consumers take dequeue_many of a slot,
// of part of one, and single dequeues. Every id comes out once, and each
// consumer sees each producer's ids ascending.
void RunBatchTraffic(int producers, int consumers, int32_t capacity) {
  constexpr int64_t kPer = 64 * kRows;
  auto q = IdQueue(capacity);
  std::vector<std::thread> producer_threads, consumer_threads;
  for (int p = 0; p < producers; ++p) {
    producer_threads.emplace_back([&, p] {
      int64_t i = 0;
      for (int round = 0; i < kPer; ++round) {
        if (round % 3 != 2 && kPer - i >= kRows) {
          EnqueueBatch(*q, p * kPer + i, p * kPer + i + kRows);
          i += kRows;
        } else {
          const int64_t run = std::min<int64_t>(round % 7 + 1, kPer - i);
          EnqueueIds(*q, p * kPer + i, p * kPer + i + run);
          i += run;
        }
      }
    });
  }
  std::vector<std::vector<int64_t>> seen(consumers);
  for (int c = 0; c < consumers; ++c) {
    consumer_threads.emplace_back([&, c] {
      std::vector<int64_t> last(producers, -1);
      for (int round = 0;; ++round) {
        std::vector<int64_t> ids;
        const Take take = round % 3 == 0 ? Take{Take::kUpTo, kRows} : round % 3 == 1 ? Take{Take::kUpTo, 5} : Take{};
        if (!TakeIds(*q, take, &ids)) break;
        RecordIds(ids, kPer, &last, &seen[c]);
      }
    });
  }
  for (auto& t : producer_threads) t.join();
  EXPECT_OK(q->Close(false, Safe()));
  for (auto& t : consumer_threads) t.join();
  std::vector<int64_t> all;
  for (const auto& v : seen) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, Iota(0, producers * kPer));  // nothing lost, nothing duplicated
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueRingTest, WholeBatchesAndSinglesOneProducerOneConsumer) { RunBatchTraffic(1, 1, kRows); }
TEST(FIFOQueueRingTest, WholeBatchesAndSinglesManyProducersManyConsumers) { RunBatchTraffic(3, 3, 3 * kRows); }

TEST(FIFOQueueRingTest, KeptViewsSurviveManyLapsUnderThreads) {
  // Consumers keep every 10th element they dequeue; those rows' batches must
  // then be replaced, never overwritten, while producers lap the ring.
  auto q = IdQueue(kRows);
  constexpr int64_t kTotal = 20 * 3 * kRows;
  std::thread producer([&] { EnqueueIds(*q, 0, kTotal); });
  std::vector<Element> kept;
  for (int64_t i = 0; i < kTotal; ++i) {
    ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
    ASSERT_EQ(ScalarOf<int64_t>(e[0]), i);
    if (i % 10 == 0) kept.push_back(std::move(e));
  }
  producer.join();
  for (size_t k = 0; k < kept.size(); ++k) EXPECT_EQ(ScalarOf<int64_t>(kept[k][0]), static_cast<int64_t>(k) * 10);
}

}  // namespace
}  // namespace sluice::queue
