// RowRing on its own (row_ring.h), without a queue around it: every kind of
// call at once from several threads, lock-free singles and whole batches
// mixed with the frozen-mode calls a queue's lock holder makes. The queue
// tests rarely reach the lock-free batch calls under contention (a blocked
// call freezes the ring), so this drives them directly.
#include "queue/row_ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "queue_test_util.h"

namespace sluice::queue {
namespace {

using namespace ::sluice::queue::testing;  // NOLINT: test helpers

constexpr int64_t kRows = RowRing::kBatchRows;

// The ring plus the mutex its frozen-mode calls need (the queue's mu_).
struct Harness {
  explicit Harness(int64_t capacity) : capacity(capacity), ring(&mu, capacity, {DType::kInt64}, {TensorShape{}}) {}

  // Runs `f` as the lock holder: frozen, then thawed (the queue would thaw
  // only when idle; for the ring alone any thaw is allowed). `f` starts
  // with mu.AssertHeld(): the analysis does not carry the lock into it.
  template <class F>
  void Locked(F f) SLUICE_EXCLUDES(mu) {
    MutexLock lock(&mu);
    ring.Freeze(mu);
    f();
    ring.Thaw(mu);
  }

  const int64_t capacity;
  Mutex mu;
  RowRing ring;
};

// P producers each store ids [p * per, (p + 1) * per) in order, choosing at
// random between a lock-free single, a lock-free slot-sized batch, and the
// lock holder's Push / PushBatch; C consumers take them with lock-free
// singles and runs of 1..64 rows, and the lock holder's Pop / TakeRows.
// Every id comes out once, each consumer sees each producer's ids
// ascending, and batches a producer handed over are never written to.
void RunMixed(int producers, int consumers, int64_t capacity, unsigned seed) {
  constexpr int64_t kPer = 20000;
  Harness h(capacity);
  const int64_t total = producers * kPer;
  std::atomic<int64_t> taken{0};
  std::atomic<int64_t> locked_in{0}, locked_out{0};  // elements moved by the lock holder's calls
  std::atomic<int64_t> batches_in{0}, rows_out{0};  // lock-free whole batches in, runs of rows out
  std::vector<std::vector<Element>> handed_over(producers);  // some adopted batches, kept to check later
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      std::mt19937 rng(seed * 31 + p);
      int64_t next = p * kPer;
      const int64_t end = next + kPer;
      while (next < end) {
        const unsigned pick = rng() % 16;
        bool stored = false;
        if (pick < 6 && end - next >= kRows) {
          Element batch{Vec<int64_t>(Iota(next, next + kRows))};
          if (rng() % 8 == 0) handed_over[p].push_back(batch);
          const RowRing::Fast r = h.ring.TryPushBatch(batch);
          if (r == RowRing::Fast::kDone) {
            next += kRows;
            stored = true;
            ++batches_in;
          }
        } else if (pick < 14) {
          if (h.ring.TryPush(Element{I64(next)}) == RowRing::Fast::kDone) {
            ++next;
            stored = true;
          }
        } else {
          h.Locked([&] {
            h.mu.AssertHeld();
            if (end - next >= kRows && pick == 15 && h.ring.Size(h.mu) + kRows <= h.capacity) {
              if (h.ring.PushBatch(h.mu, Element{Vec<int64_t>(Iota(next, next + kRows))})) {
                next += kRows;
                locked_in += kRows;
                stored = true;
                return;
              }
            }
            if (h.ring.Size(h.mu) < h.capacity) {
              h.ring.Push(h.mu, Element{I64(next)});
              ++next;
              ++locked_in;
              stored = true;
            }
          });
        }
        if (!stored) std::this_thread::yield();
      }
    });
  }
  std::vector<std::vector<int64_t>> seen(consumers);
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937 rng(seed * 17 + 1000 + c);
      std::vector<int64_t> last(producers, -1);
      while (taken.load() < total) {
        const unsigned pick = rng() % 16;
        std::vector<int64_t> ids;
        if (pick < 6) {
          Element e;
          if (h.ring.TryPop(&e) == RowRing::Fast::kDone) ids.push_back(ScalarOf<int64_t>(e[0]));
        } else if (pick < 14) {
          const int64_t n = pick < 10 ? kRows : 1 + static_cast<int64_t>(rng() % kRows);
          Element rows;
          if (h.ring.TryPopRows(n, &rows) == RowRing::Fast::kDone) {
            EXPECT_EQ(rows[0].shape().dim(0), n);
            ids = Values<int64_t>(rows[0]);
            ++rows_out;
          }
        } else {
          h.Locked([&] {
            h.mu.AssertHeld();
            const int64_t size = h.ring.Size(h.mu);
            if (size == 0) return;
            if (pick == 15) {
              Element batch;
              int64_t first = 0;
              const int64_t k = h.ring.TakeRows(h.mu, std::min<int64_t>(size, 1 + rng() % kRows), &batch, &first);
              ids = Values<int64_t>(batch[0].Slice(first, first + k));
            } else {
              ids.push_back(ScalarOf<int64_t>(h.ring.Pop(h.mu)[0]));
            }
            locked_out += static_cast<int64_t>(ids.size());
          });
        }
        if (ids.empty()) {
          std::this_thread::yield();
          continue;
        }
        for (int64_t id : ids) {
          const auto p = static_cast<size_t>(id / kPer);
          ASSERT_LT(p, last.size()) << id;
          EXPECT_GT(id, last[p]);
          last[p] = id;
          seen[c].push_back(id);
        }
        taken += static_cast<int64_t>(ids.size());
      }
    });
  }
  for (auto& t : threads) t.join();
  // The lock-free batch calls did run (and meet the others).
  EXPECT_GT(batches_in.load(), 0);
  EXPECT_GT(rows_out.load(), 0);
  std::vector<int64_t> all;
  for (const auto& v : seen) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, Iota(0, total));  // nothing lost, nothing duplicated
  for (const auto& batches : handed_over) {
    for (const Element& b : batches) {
      const std::vector<int64_t> values = Values<int64_t>(b[0]);
      EXPECT_EQ(values, Iota(values.front(), values.front() + kRows));  // never written to
    }
  }
  h.Locked([&] {
    h.mu.AssertHeld();
    EXPECT_EQ(h.ring.Size(h.mu), 0);
    // The counters QueueStats reads: what went through the lock-free calls.
    EXPECT_EQ(h.ring.fast_pushed(h.mu), total - locked_in.load());
    EXPECT_EQ(h.ring.fast_popped(h.mu), total - locked_out.load());
  });
}

TEST(RowRingTest, EveryKindOfCallAtOnceOneSlotOfRoom) { RunMixed(2, 2, kRows, 1); }
TEST(RowRingTest, EveryKindOfCallAtOnceRoomThatIsNotWholeSlots) { RunMixed(3, 2, 3 * kRows + 5, 2); }
TEST(RowRingTest, EveryKindOfCallAtOnceManyThreads) { RunMixed(4, 4, 8 * kRows, 3); }

TEST(RowRingTest, BatchOnlyStartsASlotAndNeedsRoomForAllItsRows) {
  Harness h(2 * kRows);
  const Element batch{Vec<int64_t>(Iota(0, kRows))};
  Element copy = batch;
  ASSERT_EQ(h.ring.TryPush(Element{I64(-1)}), RowRing::Fast::kDone);
  EXPECT_EQ(h.ring.TryPushBatch(copy), RowRing::Fast::kBusy);  // tail at row 1
  ASSERT_EQ(copy.size(), 1u);  // not moved from: the caller still has it
  Element e;
  ASSERT_EQ(h.ring.TryPop(&e), RowRing::Fast::kDone);
  for (int64_t i = 1; i < kRows; ++i) ASSERT_EQ(h.ring.TryPush(Element{I64(i)}), RowRing::Fast::kDone);
  ASSERT_EQ(h.ring.TryPushBatch(copy), RowRing::Fast::kDone);  // tail at a slot boundary
  copy = batch;
  EXPECT_EQ(h.ring.TryPushBatch(copy), RowRing::Fast::kFull);  // 2 * kRows - 1 + kRows > capacity
  EXPECT_EQ(h.ring.TryPopRows(kRows, &e), RowRing::Fast::kBusy);    // rows 1..64 span two slots
  ASSERT_EQ(h.ring.TryPopRows(kRows - 1, &e), RowRing::Fast::kDone);
  EXPECT_EQ(Values<int64_t>(e[0]), Iota(1, kRows));
  ASSERT_EQ(h.ring.TryPopRows(kRows, &e), RowRing::Fast::kDone);
  EXPECT_EQ(e[0].raw_data(), batch[0].raw_data());
  EXPECT_EQ(h.ring.TryPopRows(1, &e), RowRing::Fast::kEmpty);
  MutexLock lock(&h.mu);
  h.ring.Freeze(h.mu);
  EXPECT_EQ(h.ring.TryPushBatch(copy), RowRing::Fast::kBusy);
  EXPECT_EQ(h.ring.TryPopRows(1, &e), RowRing::Fast::kBusy);
  h.ring.Thaw(h.mu);
}

TEST(RowRingTest, RingSmallerThanASlotTakesNoBatches) {
  Harness h(10);
  Element batch{Vec<int64_t>(Iota(0, kRows))};
  EXPECT_EQ(h.ring.TryPushBatch(batch), RowRing::Fast::kBusy);
}

// Views outlive the ring, and once the last view goes only the owner's
// reference is left: no leak (LeakSanitizer in CI) and no early free. A
// pool lap's rows adopt references the ring paid when it installed the
// lap's buffers (RowRing::Prepay), and the ring gives back those of rows
// never taken when it goes; an adopted batch's rows add their own.
TEST(RowRingTest, ViewsOfAnAdoptedBatchOutliveTheRingAndLeaveOnlyTheCallersReference) {
  const Element batch{Vec<int64_t>(Iota(0, kRows))};
  Element single, run;
  {
    Harness h(2 * kRows);
    Element copy = batch;
    ASSERT_EQ(h.ring.TryPushBatch(copy), RowRing::Fast::kDone);
    ASSERT_EQ(h.ring.TryPop(&single), RowRing::Fast::kDone);
    ASSERT_EQ(h.ring.TryPopRows(5, &run), RowRing::Fast::kDone);
  }  // 58 rows never taken
  EXPECT_EQ(Values<int64_t>(single[0]), std::vector<int64_t>{0});
  EXPECT_EQ(Values<int64_t>(run[0]), Iota(1, 6));
  EXPECT_EQ(single[0].buffer(), batch[0].buffer());
  EXPECT_FALSE(batch[0].buffer()->RefCountIsOne());
  single.clear();
  EXPECT_FALSE(batch[0].buffer()->RefCountIsOne());
  run.clear();
  EXPECT_TRUE(batch[0].buffer()->RefCountIsOne());
}

TEST(RowRingTest, ViewsOfPoolBuffersOutliveTheRingAndTheLastOneOwnsThem) {
  Element a, b, c;
  {
    Harness h(2 * kRows);
    for (int64_t i = 0; i < 10; ++i) ASSERT_EQ(h.ring.TryPush(Element{I64(i)}), RowRing::Fast::kDone);
    ASSERT_EQ(h.ring.TryPop(&a), RowRing::Fast::kDone);
    ASSERT_EQ(h.ring.TryPop(&b), RowRing::Fast::kDone);
    ASSERT_EQ(h.ring.TryPopRows(3, &c), RowRing::Fast::kDone);
  }  // 5 rows never taken
  EXPECT_EQ(Values<int64_t>(a[0]), std::vector<int64_t>{0});
  EXPECT_EQ(Values<int64_t>(b[0]), std::vector<int64_t>{1});
  EXPECT_EQ(Values<int64_t>(c[0]), Iota(2, 5));
  a.clear();
  b.clear();
  EXPECT_TRUE(c[0].buffer()->RefCountIsOne());
}

TEST(RowRingTest, WholeLapTakesAndLockHolderTakesKeepExactReferences) {
  const Element batch{Vec<int64_t>(Iota(0, kRows))};
  Element whole, taken;
  int64_t first_row = -1;
  {
    Harness h(2 * kRows);
    Element copy = batch;
    ASSERT_EQ(h.ring.TryPushBatch(copy), RowRing::Fast::kDone);
    ASSERT_EQ(h.ring.TryPopRows(kRows, &whole), RowRing::Fast::kDone);
    h.Locked([&] {
      h.mu.AssertHeld();
      for (int64_t i = 0; i < kRows; ++i) h.ring.Push(h.mu, Element{I64(100 + i)});
      ASSERT_EQ(h.ring.TakeRows(h.mu, 10, &taken, &first_row), 10);
    });
  }  // 54 rows of the second lap never taken
  EXPECT_EQ(whole[0].buffer(), batch[0].buffer());
  EXPECT_FALSE(batch[0].buffer()->RefCountIsOne());
  whole.clear();
  EXPECT_TRUE(batch[0].buffer()->RefCountIsOne());
  EXPECT_EQ(first_row, 0);
  EXPECT_EQ(Values<int64_t>(taken[0].Slice(0, 10)), Iota(100, 110));
  EXPECT_TRUE(taken[0].buffer()->RefCountIsOne());
}

TEST(RowRingTest, APoolLapTakenWholeKeepsOnlyItsTakersReferenceOnceTheRingGoes) {
  Element whole;
  {
    Harness h(2 * kRows);
    for (int64_t i = 0; i < kRows; ++i) ASSERT_EQ(h.ring.TryPush(Element{I64(i)}), RowRing::Fast::kDone);
    ASSERT_EQ(h.ring.TryPopRows(kRows, &whole), RowRing::Fast::kDone);
    EXPECT_FALSE(whole[0].buffer()->RefCountIsOne());  // the pool keeps it for the next lap
  }
  EXPECT_EQ(Values<int64_t>(whole[0]), Iota(0, kRows));
  EXPECT_TRUE(whole[0].buffer()->RefCountIsOne());
}

// A drained lap's buffer goes back to the pool and the next lap reuses it;
// at destruction, a slot on its second lap with some rows taken, and a
// slot whose lap was installed with none taken, give back exactly the
// references of their untaken rows.
TEST(RowRingTest, PoolBuffersAreReusedAndLaterLapsGiveBackExactlyTheUntakenRowsReferences) {
  Element kept;
  {
    Harness h(2 * kRows);
    const TensorBuffer* first = nullptr;
    for (int64_t i = 0; i < 4 * kRows; ++i) {  // every slot of the 256-row ring, one lap each
      ASSERT_EQ(h.ring.TryPush(Element{I64(i)}), RowRing::Fast::kDone);
      Element e;
      ASSERT_EQ(h.ring.TryPop(&e), RowRing::Fast::kDone);
      ASSERT_EQ(Values<int64_t>(e[0]), std::vector<int64_t>{i});
      if (first == nullptr) first = e[0].buffer();
      EXPECT_EQ(e[0].buffer(), first) << "row " << i << ": a drained lap's buffer is reused";
    }
    for (int64_t i = 0; i < kRows + 6; ++i) {  // slot 0's second lap, and 6 rows of slot 1's
      ASSERT_EQ(h.ring.TryPush(Element{I64(1000 + i)}), RowRing::Fast::kDone);
    }
    ASSERT_EQ(h.ring.TryPopRows(3, &kept), RowRing::Fast::kDone);
    Element single;
    ASSERT_EQ(h.ring.TryPop(&single), RowRing::Fast::kDone);
    EXPECT_EQ(single[0].buffer(), kept[0].buffer());
  }  // slot 0: 60 rows untaken on its second lap; slot 1: 64 (6 pushed, none taken)
  EXPECT_EQ(Values<int64_t>(kept[0]), Iota(1000, 1003));
  EXPECT_TRUE(kept[0].buffer()->RefCountIsOne());
}

// A queue that fills and drains in bursts keeps every slot's buffers in its
// pool and fills the next burst with them, allocating none.
TEST(RowRingTest, ABurstThatFillsTheQueueIsRefilledWithTheSameBuffers) {
  constexpr int64_t kLaps = 8;
  Harness h(kLaps * kRows);
  for (int64_t i = 0; i < kLaps * kRows; ++i) ASSERT_EQ(h.ring.TryPush(Element{I64(i)}), RowRing::Fast::kDone);
  std::vector<const TensorBuffer*> drained;
  for (int64_t lap = 0; lap < kLaps; ++lap) {
    Element whole;
    ASSERT_EQ(h.ring.TryPopRows(kRows, &whole), RowRing::Fast::kDone);
    EXPECT_FALSE(whole[0].buffer()->RefCountIsOne()) << "lap " << lap << ": the pool keeps its buffer";
    drained.push_back(whole[0].buffer());
  }  // the pool alone refers to them now, so the pointers stay valid
  for (int64_t i = 0; i < kLaps * kRows; ++i) ASSERT_EQ(h.ring.TryPush(Element{I64(i)}), RowRing::Fast::kDone);
  for (int64_t i = 0; i < kLaps * kRows; ++i) {
    Element e;
    ASSERT_EQ(h.ring.TryPop(&e), RowRing::Fast::kDone);
    EXPECT_NE(std::find(drained.begin(), drained.end(), e[0].buffer()), drained.end()) << "row " << i;
  }
}

// A lap pushed whole is published by one word (TryPopRows reads it instead
// of the rows' sequence words); a later lap of the same slot, pushed one
// row at a time, is not taken for whole: only its published rows come out.
TEST(RowRingTest, OnlyALapPushedWholeIsTakenWithoutReadingItsRows) {
  Harness h(kRows);  // two slots (R >= capacity + kBatchRows)
  Element rows;
  for (int64_t first = 0; first < 2 * kRows; first += kRows) {  // lap 0 of both slots, whole
    Element batch{Vec<int64_t>(Iota(first, first + kRows))};
    ASSERT_EQ(h.ring.TryPushBatch(batch), RowRing::Fast::kDone);
    ASSERT_EQ(h.ring.TryPopRows(kRows, &rows), RowRing::Fast::kDone);
    EXPECT_EQ(Values<int64_t>(rows[0]), Iota(first, first + kRows));
  }
  // Lap 1 of the first slot, one row at a time.
  for (int64_t i = 2 * kRows; i < 2 * kRows + 10; ++i) {
    ASSERT_EQ(h.ring.TryPush(Element{I64(i)}), RowRing::Fast::kDone);
  }
  EXPECT_EQ(h.ring.TryPopRows(kRows, &rows), RowRing::Fast::kEmpty);
  EXPECT_EQ(h.ring.TryPopRows(11, &rows), RowRing::Fast::kEmpty);
  ASSERT_EQ(h.ring.TryPopRows(10, &rows), RowRing::Fast::kDone);
  EXPECT_EQ(Values<int64_t>(rows[0]), Iota(2 * kRows, 2 * kRows + 10));
}

// Rows of 1 KiB and more: pushes prefetch the rows ahead of theirs (the
// lines of rows 1 .. 2 when a lap starts, then 2 rows ahead, never past the
// lap's last row). Two producers and two consumers move rows of two
// components (an id and 1 KiB of bytes derived from it) through a small
// ring for many laps of reused pool buffers: every row arrives whole.
TEST(RowRingTest, RowsOfAKibibyteAndMoreArriveWholeThroughReusedBuffers) {
  constexpr int64_t kBytes = 1024;
  constexpr int kProducers = 2, kConsumers = 2;
  constexpr int64_t kPer = 40 * kRows;
  Mutex mu;  // the owner's: these rings are used lock-free only
  RowRing ring(&mu, 2 * kRows, {DType::kInt64, DType::kUInt8}, {TensorShape{}, TensorShape{kBytes}});
  EXPECT_TRUE(ring.prefetches_rows()) << "1,032 bytes per row (x86: on a CPU with PREFETCHW)";
  RowRing small(&mu, 2 * kRows, {DType::kInt64, DType::kUInt8}, {TensorShape{}, TensorShape{kBytes - 16}});
  EXPECT_FALSE(small.prefetches_rows()) << "1,016 bytes of payload + 8 of id: under the threshold";

  auto fill = [](int64_t id, Tensor* bytes) {
    auto* b = static_cast<uint8_t*>(bytes->raw_data());
    for (int64_t i = 0; i < kBytes; ++i) b[i] = static_cast<uint8_t>(id * 131 + i * 7);
  };
  std::atomic<int64_t> taken{0};
  std::atomic<int64_t> bad{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int64_t id = p * kPer; id < (p + 1) * kPer;) {
        Tensor bytes(DType::kUInt8, TensorShape{kBytes});
        fill(id, &bytes);
        if (ring.TryPush(Element{I64(id), std::move(bytes)}) == RowRing::Fast::kDone) {
          ++id;
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  std::vector<std::vector<int64_t>> seen(kConsumers);
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&, c] {
      Tensor expected(DType::kUInt8, TensorShape{kBytes});
      while (taken.load() < kProducers * kPer) {
        Element e;
        if (ring.TryPop(&e) != RowRing::Fast::kDone) {
          std::this_thread::yield();
          continue;
        }
        const int64_t id = ScalarOf<int64_t>(e[0]);
        fill(id, &expected);
        if (std::memcmp(e[1].raw_data(), expected.raw_data(), kBytes) != 0) ++bad;
        seen[c].push_back(id);
        ++taken;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  std::vector<int64_t> all;
  for (const auto& v : seen) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, Iota(0, kProducers * kPer));
}

}  // namespace
}  // namespace sluice::queue
