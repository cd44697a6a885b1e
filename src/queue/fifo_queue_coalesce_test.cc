// FIFOQueue coalescing: small fixed-size single enqueues are copied into
// rows of batches (a bounded queue's RowRing, or an unbounded queue's
// staging batches) so that dequeue_many of them is a slice. These tests pin
// down when it happens (a dequeued element that does not share the enqueued
// tensor's buffer was copied) and that it keeps FIFO order, capacity, close,
// timeouts, cancellation and restore exactly as without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "queue_test_util.h"

namespace sluice::queue {
namespace {

using namespace ::sluice::queue::testing;  // NOLINT: test helpers

// FIFOQueue::kStageRows and kCoalesceMaxRowBytes (src/queue/fifo_queue.h,
// not on the test's include path).
constexpr int64_t kRows = 64;
constexpr int64_t kMaxRowBytes = 4096;

// A queue of int64 scalars (8 bytes: coalesced).
std::shared_ptr<Queue> IdQueue(int32_t capacity) {
  auto q = NewFIFOQueue(Opts(capacity, {DType::kInt64}, {ScalarShape()}));
  EXPECT_TRUE(q.ok()) << q.status();
  return q.ok() ? *q : nullptr;
}

void EnqueueIds(Queue& q, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) ASSERT_OK(q.Enqueue(Element{I64(i)}, Safe()));
}

// Whether a single element of `element`'s kind is copied by `q`: enqueues it
// alone into the empty queue and dequeues it.
bool CopiesSingle(Queue& q, const Element& element) {
  EXPECT_EQ(q.size(), 0);
  EXPECT_OK(q.Enqueue(element, Safe()));
  Result<Element> out = q.Dequeue(Safe());
  EXPECT_OK(out);
  if (!out.ok()) return false;
  for (size_t c = 0; c < element.size(); ++c) {
    EXPECT_TRUE(ValuesEqual((*out)[c], element[c])) << c;
  }
  return !(*out)[0].SharesBufferWith(element[0]);
}

// --- When coalescing applies ---------------------------------------------

TEST(FIFOQueueCoalesceTest, ElementOfExactlyTheThresholdIsCopied) {
  constexpr int64_t kFloats = kMaxRowBytes / sizeof(float);
  auto q = NewFIFOQueue(Opts(8, {DType::kFloat32}, {PartialShape{kFloats}}));
  ASSERT_OK(q);
  std::vector<float> v(kFloats);
  for (int64_t i = 0; i < kFloats; ++i) v[i] = static_cast<float>(i);
  EXPECT_TRUE(CopiesSingle(**q, Element{Vec<float>(v)}));
}

TEST(FIFOQueueCoalesceTest, ElementOneValueOverTheThresholdIsStoredAsIs) {
  constexpr int64_t kFloats = kMaxRowBytes / sizeof(float) + 1;
  auto q = NewFIFOQueue(Opts(8, {DType::kFloat32}, {PartialShape{kFloats}}));
  ASSERT_OK(q);
  EXPECT_FALSE(CopiesSingle(**q, Element{Filled<float>(TensorShape{kFloats}, 2.5f)}));
}

TEST(FIFOQueueCoalesceTest, ThresholdCountsTheBytesOfAllComponents) {
  // Each component alone is under the threshold; together they are over.
  constexpr int64_t kHalf = kMaxRowBytes / sizeof(float) / 2;
  auto q = NewFIFOQueue(Opts(8, {DType::kFloat32, DType::kFloat32}, {PartialShape{kHalf}, PartialShape{kHalf + 1}}));
  ASSERT_OK(q);
  EXPECT_FALSE(CopiesSingle(
      **q, Element{Filled<float>(TensorShape{kHalf}, 1.f), Filled<float>(TensorShape{kHalf + 1}, 2.f)}));
}

TEST(FIFOQueueCoalesceTest, StringComponentIsNeverCopied) {
  auto q = NewFIFOQueue(Opts(8, {DType::kInt64, DType::kString}, {ScalarShape(), ScalarShape()}));
  ASSERT_OK(q);
  EXPECT_FALSE(CopiesSingle(**q, Element{I64(7), Str("seven")}));
}

TEST(FIFOQueueCoalesceTest, QueueWithoutShapesIsNotCoalesced) {
  auto q = NewFIFOQueue(Opts(8, {DType::kInt64}));
  ASSERT_OK(q);
  EXPECT_FALSE(CopiesSingle(**q, Element{I64(7)}));
}

TEST(FIFOQueueCoalesceTest, PaddingQueueWithPartialShapesIsNotCoalesced) {
  auto q = NewPaddingFIFOQueue(Opts(8, {DType::kInt32}, {PartialShape{-1}}));
  ASSERT_OK(q);
  EXPECT_FALSE(CopiesSingle(**q, Element{Vec<int32_t>({1, 2, 3})}));
}

TEST(FIFOQueueCoalesceTest, PaddingQueueWithFullShapesCoalescesAndStillBatches) {
  auto q = NewPaddingFIFOQueue(Opts(8, {DType::kInt32}, {PartialShape{2}}));
  ASSERT_OK(q);
  EXPECT_TRUE(CopiesSingle(**q, Element{Vec<int32_t>({1, 2})}));
  ASSERT_OK((*q)->Enqueue(Element{Vec<int32_t>({3, 4})}, Safe()));
  ASSERT_OK((*q)->EnqueueMany(Element{Make<int32_t>(TensorShape{1, 2}, {5, 6})}, Safe()));
  ASSERT_OK((*q)->Enqueue(Element{Vec<int32_t>({7, 8})}, Safe()));
  Result<Element> out = (*q)->DequeueMany(3, Safe());
  ASSERT_OK(out);
  EXPECT_EQ(Dims((*out)[0]), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{3, 4, 5, 6, 7, 8}));
}

// --- Zero-copy batches of singles ----------------------------------------

TEST(FIFOQueueCoalesceTest, DequeueManyOfSinglesIsOneSliceOfAStagingBatch) {
  auto q = IdQueue(2 * kRows);
  EnqueueIds(*q, 0, kRows);
  Result<Element> first = q->DequeueMany(kRows / 2, Safe());
  Result<Element> second = q->DequeueMany(kRows / 2, Safe());
  ASSERT_OK(first);
  ASSERT_OK(second);
  EXPECT_EQ(Values<int64_t>((*first)[0]), Iota(0, kRows / 2));
  EXPECT_EQ(Values<int64_t>((*second)[0]), Iota(kRows / 2, kRows));
  // Both halves are views of one buffer, adjacent: neither was stacked.
  EXPECT_TRUE((*first)[0].SharesBufferWith((*second)[0]));
  EXPECT_EQ(static_cast<const char*>((*first)[0].raw_data()) + (*first)[0].TotalBytes(),
            static_cast<const char*>((*second)[0].raw_data()));
}

TEST(FIFOQueueCoalesceTest, SinglesDrainedOneByOneStillFormOneSlice) {
  // The consumer keeps up: each single is dequeued before the next comes, so
  // the staging batch's rows are stored in separate chunks; a dequeue_many
  // over several of them is still one slice.
  auto q = IdQueue(2 * kRows);
  EnqueueIds(*q, 0, 1);
  Result<Element> row = q->DequeueMany(1, Safe());
  ASSERT_OK(row);
  for (int64_t i = 1; i < 5; ++i) {
    ASSERT_OK(q->Enqueue(Element{I64(i)}, Safe()));
    if (i == 2) {
      ASSERT_OK(q->Enqueue(Element{I64(100)}, Safe()));  // rows 2 and 100 in one chunk
    }
  }
  Result<Element> batch = q->DequeueMany(5, Safe());
  ASSERT_OK(batch);
  EXPECT_EQ(Values<int64_t>((*batch)[0]), (std::vector<int64_t>{1, 2, 100, 3, 4}));
  EXPECT_TRUE((*batch)[0].SharesBufferWith((*row)[0]));
}

TEST(FIFOQueueCoalesceTest, DequeueManySpanningStagingAndEnqueueManyChunksKeepsOrder) {
  auto q = IdQueue(4 * kRows);
  EnqueueIds(*q, 0, 3);
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>({3, 4, 5, 6})}, Safe()));
  EnqueueIds(*q, 7, 9);
  ASSERT_OK(q->EnqueueMany(Element{Vec<int64_t>({9})}, Safe()));
  Result<Element> a = q->DequeueMany(2, Safe());  // inside the first staging chunk
  Result<Element> b = q->DequeueMany(6, Safe());  // staging, batch, staging
  Result<Element> c = q->Dequeue(Safe());         // the enqueue_many behind
  ASSERT_OK(a);
  ASSERT_OK(b);
  ASSERT_OK(c);
  EXPECT_EQ(Values<int64_t>((*a)[0]), Iota(0, 2));
  EXPECT_EQ(Values<int64_t>((*b)[0]), Iota(2, 8));
  EXPECT_EQ(ScalarOf<int64_t>((*c)[0]), 8);
  ASSERT_OK_AND_ASSIGN(Element d, q->Dequeue(Safe()));
  EXPECT_EQ(ScalarOf<int64_t>(d[0]), 9);
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueCoalesceTest, SinglesPastOneStagingBatchComeOutInOrder) {
  const int64_t n = 2 * kRows + 5;
  auto q = IdQueue(static_cast<int32_t>(n));
  EnqueueIds(*q, 0, n);
  Result<Element> head = q->DequeueMany(kRows + 3, Safe());  // two staging batches: stacked
  Result<Element> rest = q->DequeueMany(n - kRows - 3, Safe());
  ASSERT_OK(head);
  ASSERT_OK(rest);
  EXPECT_EQ(Values<int64_t>((*head)[0]), Iota(0, kRows + 3));
  EXPECT_EQ(Values<int64_t>((*rest)[0]), Iota(kRows + 3, n));
}

TEST(FIFOQueueCoalesceTest, DequeuedRowsStayValidWhileLaterRowsOfTheirBatchAreWritten) {
  auto q = IdQueue(2 * kRows);
  EnqueueIds(*q, 0, 2);
  ASSERT_OK_AND_ASSIGN(Element view0, q->DequeueMany(1, Safe()));  // a view of the staging batch
  ASSERT_OK_AND_ASSIGN(Element view1, q->Dequeue(Safe()));         // a view of its next row
  // Fill the rest of the staging batch and start the next one.
  EnqueueIds(*q, 1000, 1000 + kRows + 1);
  ASSERT_OK_AND_ASSIGN(Element later, q->DequeueMany(1, Safe()));
  EXPECT_TRUE(later[0].SharesBufferWith(view0[0]));  // the same staging batch, extended
  EXPECT_TRUE(view1[0].SharesBufferWith(view0[0]));
  EXPECT_EQ(Values<int64_t>(view0[0]), (std::vector<int64_t>{0}));
  EXPECT_EQ(ScalarOf<int64_t>(view1[0]), 1);
  EXPECT_EQ(Values<int64_t>(later[0]), (std::vector<int64_t>{1000}));
  // Dropping the queue's references leaves the dequeued rows intact.
  q.reset();
  EXPECT_EQ(Values<int64_t>(view0[0]), (std::vector<int64_t>{0}));
  EXPECT_EQ(ScalarOf<int64_t>(view1[0]), 1);
}

TEST(FIFOQueueCoalesceTest, SingleDequeueIsARowViewOfTheStagingBatch) {
  // A view, not a copy (no allocation under the queue's lock): the element
  // keeps its 64-row staging batch alive, and its buffer is shared, so
  // Python copies it out (small) to hand back a writable array.
  auto q = IdQueue(2 * kRows);
  EnqueueIds(*q, 0, 3);
  ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
  EXPECT_FALSE(e[0].buffer()->RefCountIsOne());
  EXPECT_EQ(e[0].shape(), TensorShape({}));
  EXPECT_EQ(ScalarOf<int64_t>(e[0]), 0);
  // Also when the row is handed to a dequeue that was waiting.
  ASSERT_OK_AND_ASSIGN(Element two, q->DequeueMany(2, Safe()));
  BlockedProbe probe;
  auto pending = Async([&] { return q->Dequeue(probe.Options()); });
  ASSERT_TRUE(probe.WaitBlocked());
  EnqueueIds(*q, 3, 4);
  ASSERT_TRUE(Finishes(pending));
  Result<Element> handed = pending.get();
  ASSERT_OK(handed);
  EXPECT_TRUE((*handed)[0].SharesBufferWith(two[0]));
  EXPECT_EQ((*handed)[0].shape(), TensorShape({}));
  EXPECT_EQ(ScalarOf<int64_t>((*handed)[0]), 3);
}

TEST(FIFOQueueCoalesceTest, StagingBatchStillReferencedIsNotReused) {
  auto q = IdQueue(2 * kRows);
  EnqueueIds(*q, 0, kRows);  // fills staging batch A
  ASSERT_OK_AND_ASSIGN(Element held, q->DequeueMany(1, Safe()));
  ASSERT_OK(q->DequeueMany(kRows - 1, Safe()));
  // Two more batches: A is retired while `held` still refers to it.
  for (int round = 0; round < 3; ++round) {
    EnqueueIds(*q, 1000 + round * kRows, 1000 + (round + 1) * kRows);
    ASSERT_OK_AND_ASSIGN(Element batch, q->DequeueMany(kRows, Safe()));
    EXPECT_FALSE(batch[0].SharesBufferWith(held[0]));
    EXPECT_EQ(Values<int64_t>(batch[0]), Iota(1000 + round * kRows, 1000 + (round + 1) * kRows));
  }
  EXPECT_EQ(Values<int64_t>(held[0]), (std::vector<int64_t>{0}));
}

TEST(FIFOQueueCoalesceTest, StagingBatchIsReusedOnceNothingRefersToIt) {
  // Unbounded: staging batches under the lock (a bounded queue's RowRing
  // reuses a batch a lap later: fifo_queue_ring_test.cc).
  auto q = IdQueue(Queue::kUnbounded);
  EnqueueIds(*q, 0, kRows);  // fills staging batch A
  const void* a_rows = nullptr;
  {
    ASSERT_OK_AND_ASSIGN(Element batch, q->DequeueMany(kRows, Safe()));
    a_rows = batch[0].raw_data();
  }
  // The next element needs a new batch: A, which nothing refers to now.
  EnqueueIds(*q, kRows, kRows + 1);
  ASSERT_OK_AND_ASSIGN(Element e, q->DequeueMany(1, Safe()));
  EXPECT_EQ(e[0].raw_data(), a_rows);
  EXPECT_EQ(Values<int64_t>(e[0]), (std::vector<int64_t>{kRows}));
}

// --- Capacity, close, stats ----------------------------------------------

TEST(FIFOQueueCoalesceTest, CapacityCountsCoalescedElements) {
  auto q = IdQueue(3);
  EnqueueIds(*q, 0, 3);
  EXPECT_EQ(q->size(), 3);
  EXPECT_TRUE(StatusIs(q->Enqueue(Element{I64(3)}, WaitOptions::Timeout(std::chrono::milliseconds(5))),
                       Code::kDeadlineExceeded));
  ASSERT_OK_AND_ASSIGN(Element e, q->Dequeue(Safe()));
  EXPECT_EQ(ScalarOf<int64_t>(e[0]), 0);
  EnqueueIds(*q, 3, 4);
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueMany(3, Safe()));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(1, 4));
}

TEST(FIFOQueueCoalesceTest, ClosedQueueDrainsCoalescedElementsThenIsOutOfRange) {
  auto q = IdQueue(16);
  EnqueueIds(*q, 0, 5);
  ASSERT_OK(q->Close(false, Safe()));
  EXPECT_TRUE(StatusIs(q->DequeueMany(6, Safe()), Code::kOutOfRange, "insufficient elements"));
  ASSERT_OK_AND_ASSIGN(Element first, q->Dequeue(Safe()));  // nothing lost by the failed call
  EXPECT_EQ(ScalarOf<int64_t>(first[0]), 0);
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueUpTo(10, Safe()));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(1, 5));
  EXPECT_TRUE(StatusIs(q->Dequeue(Safe()), Code::kOutOfRange));
}

TEST(FIFOQueueCoalesceTest, StatsCountCoalescedElements) {
  auto q = IdQueue(16);
  EnqueueIds(*q, 0, 5);
  ASSERT_OK(q->DequeueMany(3, Safe()));
  QueueStats s = q->stats();
  EXPECT_EQ(s.enqueued, 5);
  EXPECT_EQ(s.dequeued, 3);
  EXPECT_EQ(s.size, 2);
}

// --- Restore of held coalesced rows --------------------------------------

TEST(FIFOQueueCoalesceTest, TimedOutDequeueManyPutsCoalescedRowsBackInOrder) {
  auto q = IdQueue(16);
  EnqueueIds(*q, 0, 3);
  EXPECT_TRUE(StatusIs(q->DequeueMany(5, WaitOptions::Timeout(std::chrono::milliseconds(5))),
                       Code::kDeadlineExceeded));
  EXPECT_EQ(q->size(), 3);
  EnqueueIds(*q, 3, 5);
  ASSERT_OK_AND_ASSIGN(Element out, q->DequeueMany(5, Safe()));
  EXPECT_EQ(Values<int64_t>(out[0]), Iota(0, 5));
}

TEST(FIFOQueueCoalesceTest, CancelledDequeueManyPutsBackRowsTakenBeforeAndWhileItWaited) {
  auto q = IdQueue(16);
  EnqueueIds(*q, 0, 2);
  CancellationManager cm;
  BlockedProbe probe;
  auto pending = Async([&] { return q->DequeueMany(6, probe.Options(&cm)); });
  ASSERT_TRUE(probe.WaitBlocked());
  // Handed straight to the waiting dequeue_many: it now holds rows 0..2,
  // which lie in two chunks over the same staging batch.
  EnqueueIds(*q, 2, 3);
  EXPECT_EQ(q->size(), 0);
  cm.StartCancel();
  ASSERT_TRUE(Finishes(pending));
  EXPECT_TRUE(StatusIs(pending.get(), Code::kCancelled));
  EXPECT_EQ(q->size(), 3);
  EnqueueIds(*q, 3, 5);
  ASSERT_OK_AND_ASSIGN(Element head, q->DequeueMany(1, Safe()));
  ASSERT_OK_AND_ASSIGN(Element rest, q->DequeueMany(4, Safe()));
  EXPECT_EQ(Values<int64_t>(head[0]), (std::vector<int64_t>{0}));
  EXPECT_EQ(Values<int64_t>(rest[0]), Iota(1, 5));
  EXPECT_TRUE(rest[0].SharesBufferWith(head[0]));  // restored and new rows: still one slice
}

// --- Threads ---------------------------------------------------------------

TEST(FIFOQueueCoalesceTest, ConcurrentSinglesAndMixedDequeuesKeepEachProducersOrder) {
  constexpr int kProducers = 3;
  constexpr int64_t kPerProducer = 3000;
  auto q = IdQueue(50);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int64_t i = 0; i < kPerProducer; ++i) {
        if (!q->Enqueue(Element{I64(p * kPerProducer + i)}, Safe()).ok()) return;
      }
    });
  }
  // One consumer alternates dequeue, dequeue_many and dequeue_up_to; ids of
  // one producer must come out ascending, every id once.
  std::vector<int64_t> last(kProducers, -1);
  int64_t seen = 0;
  int round = 0;
  bool ordered = true;
  auto record = [&](int64_t id) {
    const int p = static_cast<int>(id / kPerProducer);
    ordered = ordered && id > last[p];
    last[p] = id;
    ++seen;
  };
  while (seen < kProducers * kPerProducer) {
    const int64_t left = kProducers * kPerProducer - seen;
    const int kind = round++ % 3;
    if (kind == 0) {
      Result<Element> e = q->Dequeue(Safe());
      ASSERT_OK(e);
      record(ScalarOf<int64_t>((*e)[0]));
    } else {
      Result<Element> b = kind == 1 ? q->DequeueMany(std::min<int64_t>(left, 7), Safe())
                                    : q->DequeueUpTo(std::min<int64_t>(left, 70), Safe());
      ASSERT_OK(b);
      for (int64_t id : Values<int64_t>((*b)[0])) record(id);
    }
  }
  for (auto& t : producers) t.join();
  EXPECT_TRUE(ordered);
  EXPECT_EQ(seen, kProducers * kPerProducer);
  for (int p = 0; p < kProducers; ++p) EXPECT_EQ(last[p], (p + 1) * kPerProducer - 1);
  EXPECT_EQ(q->size(), 0);
}

}  // namespace
}  // namespace sluice::queue
