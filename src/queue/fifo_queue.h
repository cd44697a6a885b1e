// FIFOQueue: elements leave in the order they were admitted. Private to the
// queue layer (users call NewFIFOQueue); PaddingFIFOQueue derives from it.
//
// Storage is a ring of chunks, each one element or rows [begin, end) of a
// batch. An enqueue_many batch is stored whole as one chunk, so that a
// dequeue_many of it is a zero-copy slice.
//
// Small fixed-size elements (every component a fixed shape and a numeric
// dtype, at most kCoalesceMaxRowBytes in all) are copied into rows of
// 64-row batches, so that a later dequeue_many of them is a slice (no copy)
// and a single dequeue a row view:
// - In a bounded queue whose ring fits RowRing::kMaxRingBytes, the rows
//   live in a RowRing, and single enqueues and dequeues go through it
//   without the lock while nobody waits, the queue is open and nothing is
//   stored outside the ring (row_ring.h). The lock holder freezes the ring
//   (BeginLocked) and thaws it when the queue is idle again (EndLocked).
//   An enqueue_many of exactly RowRing::kBatchRows elements that starts a
//   slot of the ring goes into it by reference (fast path, or under the
//   lock while nothing is stored behind the ring), and a dequeue_many whose
//   rows lie in one slot comes out of it without the lock.
// - Otherwise (unbounded or very large queues), a single enqueue copies the
//   element under mu_ into the next row of a staging batch, and
//   consecutive singles extend the tail chunk over that batch.
// The price of both: a kept element keeps its 64-row batch (at most
// 256 KiB) alive, and its buffer is shared, which the Python binding answers
// by copying small shared results out so that arrays stay writable. A row is
// written once before any dequeuer can see it; a batch's buffers are
// rewritten only once nothing else refers to them.
//
// Storage order: front_ (what an abandoned dequeue_many gave back), then the
// ring, then chunks_ (enqueue_many batches, and anything stored behind one).
// Single enqueues go to the ring while chunks_ is empty.
#ifndef SLUICE_QUEUE_FIFO_QUEUE_H_
#define SLUICE_QUEUE_FIFO_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "queue/queue_base.h"
#include "queue/ring_buffer.h"
#include "queue/row_ring.h"

namespace sluice::queue {

class FIFOQueue : public QueueBase {
 public:
  // Largest element (bytes over all components) that a single enqueue
  // copies into a staging batch. Larger ones are stored as they are, since
  // the copy runs under mu_; up to this size coalescing wins under threads
  // (docs/perf/fifo-coalescing.md). A staging batch is then at most 256 KiB,
  // which the core's block cache recycles.
  static constexpr size_t kCoalesceMaxRowBytes = 4096;
  // Rows per staging batch: a dequeue_many of up to this many coalesced
  // elements is one slice when they lie in one batch.
  static constexpr int64_t kStageRows = 64;

  FIFOQueue(std::string name, int32_t capacity, std::vector<DType> dtypes, std::vector<PartialShape> shapes,
            std::vector<std::string> names);

  std::string_view type_name() const override { return "FIFOQueue"; }

  // Whether single enqueues are copied into rows of batches (see above).
  bool coalesces() const { return !row_bytes_.empty(); }
  // Whether they go through a lock-free RowRing.
  bool has_ring() const { return ring_ != nullptr; }
  // Whether the ring's lock-free path is stopped right now (tests).
  bool ring_frozen() const SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return ring_ != nullptr && ring_->frozen(mu_);
  }

 protected:
  int64_t StoredLocked() const override SLUICE_REQUIRES(mu_) { return stored_ + (ring_ ? ring_->Size(mu_) : 0); }
  FastResult TryEnqueueFast(const Element& element) override;
  FastResult TryDequeueFast(Element* out) override;
  FastResult TryEnqueueManyFast(Element& batch, int64_t rows) override;
  FastResult TryDequeueManyFast(int64_t n, Element* out) override;
  void BeginLocked() override SLUICE_REQUIRES(mu_) {
    if (ring_) ring_->Freeze(mu_);
  }
  void EndLocked(bool idle) override SLUICE_REQUIRES(mu_) {
    if (ring_ && idle && front_.empty() && chunks_.empty()) ring_->Thaw(mu_);
  }
  void FastCountsLocked(int64_t* enqueued, int64_t* dequeued) const override SLUICE_REQUIRES(mu_);
  void PushLocked(Element&& element) override SLUICE_REQUIRES(mu_);
  void PushRowsLocked(const Element& batch, int64_t begin, int64_t count) override SLUICE_REQUIRES(mu_);
  Element PopLocked() override SLUICE_REQUIRES(mu_);
  void TakeLocked(int64_t n, std::vector<Piece>* out) override SLUICE_REQUIRES(mu_);
  void RestoreLocked(std::vector<Piece>* held) override SLUICE_REQUIRES(mu_);

 private:
  // One element, or rows [begin, end) of a batch (data holds the whole
  // batch). `staging`: the tail chunk, over the current staging batch, whose
  // `end` is the next row a coalesced enqueue writes; at most one chunk is.
  struct Chunk {
    Element data;
    int64_t begin = 0;
    int64_t end = 0;
    bool batched = false;
    bool staging = false;
  };

  // Takes n elements from the front of `line` (front_ or chunks_, which
  // holds at least n) into `out`.
  void TakeFromLocked(RingBuffer<Chunk>& line, int64_t n, std::vector<Piece>* out) SLUICE_REQUIRES(mu_);
  Element PopFromLocked(RingBuffer<Chunk>& line) SLUICE_REQUIRES(mu_);
  static FastResult FromRing(RowRing::Fast r);
  // Appends rows [begin, begin + k) of `batch` to `out`, extending the last
  // piece when they follow it in the same buffers.
  static void AppendRows(const Element& batch, int64_t begin, int64_t k, std::vector<Piece>* out);
  // Copies `element` into the next row of the staging batch.
  void CoalesceLocked(const Element& element) SLUICE_REQUIRES(mu_);
  // Replaces the full staging batch with an empty one: the oldest retired
  // batch if nothing refers to it any more, else a new one.
  void NextStageLocked() SLUICE_REQUIRES(mu_);
  // The tail chunk stops growing (something else is stored behind it).
  void SealTailLocked() SLUICE_REQUIRES(mu_) {
    if (!chunks_.empty()) chunks_.back().staging = false;
  }

  // Constant after construction: bytes of one row of each component when
  // the queue coalesces, else empty; how many full staging batches to keep
  // for reuse (about a full queue's worth).
  std::vector<size_t> row_bytes_;
  size_t max_retired_ = 0;

  // The lock-free rows, when the queue has them (see above). Its lock
  // holder's methods take mu_, and clang checks that it is held.
  std::unique_ptr<RowRing> ring_;

  // Protected by mu_:
  RingBuffer<Chunk> front_ SLUICE_GUARDED_BY(mu_){4};
  RingBuffer<Chunk> chunks_ SLUICE_GUARDED_BY(mu_){64};
  int64_t stored_ SLUICE_GUARDED_BY(mu_) = 0;        // elements in front_ and chunks_
  int64_t front_stored_ SLUICE_GUARDED_BY(mu_) = 0;  // elements in front_
  // The staging batch ([kStageRows] + shape per component; empty until the
  // first coalesced enqueue) and the rows of it written so far.
  Element stage_ SLUICE_GUARDED_BY(mu_);
  int64_t stage_rows_ SLUICE_GUARDED_BY(mu_) = kStageRows;
  // Full staging batches, oldest first, that chunks or dequeued rows may
  // still share. Reusing one whose buffers nobody else refers to saves an
  // allocation of up to 256 KiB under mu_, whose pages glibc may have given
  // back to the kernel (a page fault each) when the queue drained.
  RingBuffer<Element> retired_ SLUICE_GUARDED_BY(mu_){4};
};

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_FIFO_QUEUE_H_
