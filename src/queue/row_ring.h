// RowRing: the lock-free part of a FIFOQueue whose elements are small and of
// one fixed size (see FIFOQueue). Written by hand: it is the heart of the
// queue's single-element speed, and no library ring gives TensorFlow's
// semantics (a lock-protected slow path that can stop the ring, take
// elements out of it as zero-copy batches, and put elements back into it).
//
// Storage: a ring of R rows (R >= capacity + kBatchRows, a power of two)
// grouped into R / kBatchRows batch slots. Position p (a 63-bit counter of
// elements ever stored) lives in row (p % R) % kBatchRows of slot
// (p % R) / kBatchRows, in that slot's buffers: an Element of tensors
// [kBatchRows] + shape, one per component. A pushed element is copied into
// its row; a popped one is a view of its row (a reference on the buffer),
// so rows of one batch taken together are one slice, with no copy. For
// pool buffers the references are paid in bulk: installing a lap's buffers
// adds one per row (one atomic add), which the row's view adopts
// (TensorAttorney::SliceAdoptingRef, core/tensor_internal.h), so a pop does
// not increment the count that all of the lap's consumers share. An adopted
// batch (below) is not prepaid: it usually leaves whole, by move, and
// prepaying it would add two atomic operations on the caller's buffer to
// every batch; its rows taken singly add a reference
// (docs/perf/row-ring-prepaid-views.md).
//
// Fast path (any thread, no queue lock): TryPush claims the next tail
// position with a compare-and-swap when fewer than `capacity` elements are
// stored, copies the element into its row and publishes the row (its
// sequence word). TryPop claims the head position once its row is
// published, takes the view and counts the row released in its slot.
//
// Whole batches (TryPushBatch, TryPopRows): an enqueue_many of exactly
// kBatchRows elements whose first position is row 0 of a slot claims all of
// the slot's rows with one compare-and-swap and installs the batch's own
// tensors as the slot's buffers for that lap (no copy: "adopted"); a
// dequeue_many of n rows that lie in one slot claims them with one
// compare-and-swap and takes them as one slice (the slot's buffers
// themselves when n == kBatchRows). A batch pushed whole therefore leaves
// whole, and singles pushed one by one leave as a slice, without the lock
// (the mutex hand-off was the cost: docs/perf/row-ring-batches.md). Adopted
// buffers belong to the caller and never go to the pool: nothing writes
// into them.
//
// Buffers: the pop that releases the last row of a slot's lap gives the
// slot's buffers back to a pool (LIFO); the push that claims row 0 of
// the slot's next lap waits for that (all of the previous lap's rows were
// claimed by then: R >= capacity + kBatchRows), then takes the buffers most
// recently given back whose views are all gone, or new ones. So a queue
// that is drained as fast as it is filled writes into the same few buffers,
// still in cache, instead of walking R rows of memory. The pool keeps up to
// one set of buffers per slot, so an idle queue holds at most what it held
// at its fullest (capacity + kBatchRows rows, at most kMaxRingBytes): a
// queue that fills and drains in bursts, as one does when its producers and
// consumers take turns on the CPUs, reuses its buffers instead of freeing
// and allocating them every cycle (docs/perf/row-ring.md). The other rows
// of a lap wait for its row 0's push to install the buffers.
//
// Frozen mode: the queue's slow path (under its mutex) freezes the ring: a
// flag bit in both positions makes every later fast call fail with kBusy, so
// that the lock holder alone moves the positions. Calls that claimed a
// position before the freeze finish on their own; the lock holder waits for
// a row to be published when it needs it. The queue thaws the ring when no
// blocked call waits, the queue is open and nothing is stored outside the
// ring.
//
// Atomics: the ring's atomic words and its spin-waits come from a policy
// (BasicRowRing<Policy>; RowRing is BasicRowRing<RingAtomics>, explicitly
// instantiated in row_ring.cc), so that row_ring_interleaving_test.cc can
// run it under a scheduler of its own, one atomic operation at a time,
// over every interleaving of a few calls. The definitions are in
// row_ring_impl.h; only row_ring.cc and that test include it.
//
// Thread-safety: TryPush, TryPop, TryPushBatch and TryPopRows are
// thread-safe; they take no lock but the pool's (in the push that starts a
// slot's lap with pool buffers, and in the pop that ends one), and may spin
// briefly on a row or slot another call has claimed and not yet finished
// (spinning, then yielding: under real-time scheduling policies, where a
// yield does not let a preempted lower-priority claimer run, that wait is
// unbounded). The lock holder's methods take the owning queue's mutex,
// which the caller holds (SLUICE_REQUIRES: clang checks it at every call);
// all but Freeze, frozen and the counters REQUIRE frozen().
#ifndef SLUICE_QUEUE_ROW_RING_H_
#define SLUICE_QUEUE_ROW_RING_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "queue/spin.h"
#include "sluice/core/element.h"
#include "sluice/core/mutex.h"
#include "sluice/core/shape.h"
#include "sluice/core/tensor.h"

namespace sluice::queue {

// The production policy: std::atomic, and SpinUntil's spin-then-yield.
// A policy provides Atomic<T> (std::atomic's load, store,
// compare_exchange_weak, fetch_add and fetch_or), SpinUntil(ready) (returns
// once ready() is true; ready() reads Atomic words) and kBatchRows (rows
// per slot, a power of two).
struct RingAtomics {
  template <class T>
  using Atomic = std::atomic<T>;
  template <class Ready>
  static void SpinUntil(Ready ready) {
    queue::SpinUntil(ready);
  }
  static constexpr int64_t kBatchRows = 64;
};

// Reads a ring's private state for tests (row_ring_interleaving_test.cc).
template <class Ring>
class RowRingInspector;

template <class Policy>
class BasicRowRing {
  template <class T>
  using Atomic = typename Policy::template Atomic<T>;

 public:
  static constexpr int64_t kBatchRows = Policy::kBatchRows;
  // A ring larger than this (rows x bytes per row) is not worth its memory:
  // a FIFOQueue then stores its elements under the lock only.
  static constexpr size_t kMaxRingBytes = size_t{16} << 20;
  // A push of a row of at least kPrefetchMinRowBytes (all components) asks
  // for the lines of the row kPrefetchAhead positions later in a writable
  // state, so that the push that writes it finds them ready. Why: a lap's
  // buffers are reused, and a consumer that read a row holds its lines
  // (shared) until the next lap's push writes them, each such line then a
  // read-for-ownership from the other core that the push waits for (its
  // next atomic operation drains the stores). Below the threshold, rows a
  // few positions ahead share lines with rows that consumers are reading.
  // See docs/perf/row-ring.md.
  static constexpr size_t kPrefetchMinRowBytes = 1024;
  static constexpr uint64_t kPrefetchAhead = 2;

  enum class Fast {
    kDone,   // pushed / popped
    kBusy,   // frozen: take the queue's lock
    kFull,   // capacity elements stored (or claimed)
    kEmpty,  // the next element is not published yet
  };

  // Whether a queue of `capacity` elements of `row_bytes` bytes gets a ring.
  static bool Fits(int64_t capacity, size_t row_bytes);

  // `owner`: the owning queue's mutex, which the lock holder's calls
  // require; `row_shapes`: each component's element shape (fully defined);
  // `dtypes`: fixed-size dtypes (not strings).
  BasicRowRing(const Mutex* owner, int64_t capacity, std::vector<DType> dtypes,
               std::vector<TensorShape> row_shapes);
  ~BasicRowRing();
  BasicRowRing(const BasicRowRing&) = delete;
  BasicRowRing& operator=(const BasicRowRing&) = delete;

  // --- Lock-free. ---
  // Copies `element` (validated by the caller) into the ring.
  Fast TryPush(const Element& element);
  // On kDone, *out is the oldest element (a view of its row).
  Fast TryPop(Element* out);
  // Stores `batch` (kBatchRows rows per component, validated by the
  // caller) by reference, moving from it on kDone (no reference-count
  // traffic on its buffers). kBusy also when the tail is not at row 0 of a
  // slot or capacity < kBatchRows: the caller takes the queue's lock.
  Fast TryPushBatch(Element& batch);
  // On kDone, *out holds the n (1..kBatchRows) oldest elements, one slice
  // per component. kBusy also when they would span two slots.
  Fast TryPopRows(int64_t n, Element* out);

  // Whether pushes prefetch the rows ahead (kPrefetchMinRowBytes).
  // Constant after construction.
  bool prefetches_rows() const { return prefetch_rows_; }

  // --- The lock holder's. ---
  // One thread at a time: each takes `mu`, the owning queue's mutex (the
  // one given to the constructor), which the caller holds; clang's
  // -Wthread-safety checks that at every call.
  // Stops the fast path; idempotent.
  void Freeze(const Mutex& mu) SLUICE_REQUIRES(mu);
  // Restarts it. REQUIRES: frozen().
  void Thaw(const Mutex& mu) SLUICE_REQUIRES(mu);
  bool frozen(const Mutex& mu) const SLUICE_REQUIRES(mu) {
    CheckOwner(mu);
    return frozen_;
  }
  // Elements stored: exact when frozen (claimed positions count), else a
  // consistent snapshot (one head and tail that held at the same moment, so
  // never above capacity).
  int64_t Size(const Mutex& mu) const SLUICE_REQUIRES(mu);
  // REQUIRES: frozen() and Size() < capacity.
  void Push(const Mutex& mu, const Element& element) SLUICE_REQUIRES(mu);
  // Stores `batch` (kBatchRows rows) by reference when the tail is at row 0
  // of a slot; else returns false and stores nothing. REQUIRES: frozen()
  // and Size() + kBatchRows <= capacity.
  bool PushBatch(const Mutex& mu, const Element& batch) SLUICE_REQUIRES(mu);
  // REQUIRES: frozen() and Size() > 0.
  Element Pop(const Mutex& mu) SLUICE_REQUIRES(mu);
  // Takes up to `max_rows` (> 0) of the oldest elements that lie in one
  // batch: sets *batch to that batch's buffers (sharing them) and
  // *first_row to the row of the first; returns how many. The caller
  // slices them out. REQUIRES: frozen() and Size() >= max_rows.
  int64_t TakeRows(const Mutex& mu, int64_t max_rows, Element* batch, int64_t* first_row) SLUICE_REQUIRES(mu);
  // Elements that went through the fast path, in and out (for QueueStats:
  // positions minus the lock holder's own calls). Exact when frozen.
  int64_t fast_pushed(const Mutex& mu) const SLUICE_REQUIRES(mu);
  int64_t fast_popped(const Mutex& mu) const SLUICE_REQUIRES(mu);

 private:
  friend class RowRingInspector<BasicRowRing>;

  static constexpr uint64_t kFrozen = uint64_t{1} << 63;

  struct alignas(64) Batch {
    // Producers' line. The lap of the positions the buffers currently
    // serve (set by the claimer of row 0 once they are installed); kNoLap
    // before the first.
    Atomic<uint64_t> lap{kNoLap};
    // The last lap pushed whole (TryPushBatch, PushBatch), stored once all
    // its rows are published: TryPopRows checks this word instead of the
    // rows' sequence words. kNoLap before the first. On a line of its own:
    // a dequeue_many that polls it while the next batch is being installed
    // then leaves `data` and `lap` to the pushing core
    // (docs/perf/row-ring-batches.md).
    alignas(64) Atomic<uint64_t> whole{kNoLap};
    Element data;  // [kBatchRows] + shape per component; empty between laps
    // Whether `data` is a pushed batch (never pooled), not pool buffers.
    // Written before the lap's rows are published, read by the last
    // releaser of the lap.
    bool adopted = false;
    // Consumers' line. Rows released over all laps (laps complete in order:
    // a lap's rows exist only once the previous lap is drained).
    alignas(64) Atomic<uint64_t> released{0};
    // Laps whose buffers went back to the pool: lap L's row 0 waits for L.
    Atomic<uint64_t> drained{0};
  };
  static constexpr uint64_t kNoLap = ~uint64_t{0};

  // Once a call has claimed a position, nothing may stop it before the
  // position is published (or released): every later call would wait for
  // it forever. So the steps after a claim are noexcept, and a failure in
  // them (an allocation of new buffers) ends the process loudly rather than
  // hanging the queue.
  // Writes `element` at claimed position p and publishes it.
  void WriteRow(uint64_t p, const Element& element) noexcept;
  // Installs `batch` as the buffers of claimed positions [p, p +
  // kBatchRows) (p at row 0 of its slot) and publishes them.
  void WriteBatch(uint64_t p, Element&& batch) noexcept;
  // The view of claimed, published position p; releases the row.
  Element ReadRow(uint64_t p) noexcept;
  // The n claimed, published rows from p (in one slot) as one slice per
  // component, into *out; releases them.
  void ReadRows(uint64_t p, int64_t n, Element* out) noexcept;
  // Counts n rows of b released; the last of a lap gives b's buffers back.
  // `taken`: a take of the whole lap, which gets the buffers by move.
  void Release(Batch& b, uint64_t n, Element* taken = nullptr) noexcept;
  // Installs buffers in b for `lap` (called by the claimer of its row 0).
  void PrepareBatch(Batch& b, uint64_t lap) noexcept;
  // Adds kBatchRows references to each of a lap's pool buffers as they are
  // installed: one per row, which the row's view then adopts
  // (TensorAttorney::SliceAdoptingRef) instead of incrementing the count
  // that every consumer of the lap shares. Not for adopted batches (b.adopted).
  static void Prepay(const Element& buffers) noexcept;
  // The pool's most recent buffers that nothing else refers to, or new ones.
  Element TakeBuffers() noexcept;
  // A head and tail (without the frozen bit) that held at the same moment.
  void Positions(uint64_t* head, uint64_t* tail) const;
  // Waits until position p is published.
  void AwaitPublished(uint64_t p) const;
  // A lock holder's call passed the owner's mutex (checked in debug builds).
  void CheckOwner(const Mutex& mu) const {
    assert(&mu == owner_);
    static_cast<void>(owner_);
  }

  const Mutex* const owner_;

  const int64_t capacity_;
  const uint64_t rows_;  // R, a power of two
  const uint64_t mask_;  // R - 1
  const unsigned lap_shift_;  // log2(R)
  const std::vector<DType> dtypes_;
  const std::vector<TensorShape> row_shapes_;
  std::vector<size_t> row_bytes_;
  bool prefetch_rows_ = false;  // see kPrefetchMinRowBytes

  // Position counters, each on its own cache line; bit 63: frozen.
  alignas(64) Atomic<uint64_t> tail_{0};
  // The producers' copy of head (without the frozen bit), refreshed only
  // when the ring looks full, so that a push does not read the line every
  // pop writes. Never ahead of head_.
  Atomic<uint64_t> head_seen_{0};
  alignas(64) Atomic<uint64_t> head_{0};
  // Per row: p + 1 once position p is published there (Vyukov's sequence
  // words; a later lap's position finds a smaller value).
  alignas(64) std::unique_ptr<Atomic<uint64_t>[]> seq_;
  std::unique_ptr<Batch[]> batches_;
  // The lock holder's own (*owner_ held; not annotated: the analysis knows
  // the mutex by the parameter of each call, not as owner_):
  bool frozen_ = false;
  int64_t locked_pushed_ = 0;
  int64_t locked_popped_ = 0;

  // Buffers kept for reuse, most recent last; at most pool_limit_ (the
  // number of slots).
  const size_t pool_limit_;
  Mutex pool_mu_;
  std::vector<Element> pool_ SLUICE_GUARDED_BY(pool_mu_);
};

using RowRing = BasicRowRing<RingAtomics>;
extern template class BasicRowRing<RingAtomics>;

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_ROW_RING_H_
