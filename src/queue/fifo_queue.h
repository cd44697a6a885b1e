// FIFOQueue: elements leave in the order they were admitted. Private to the
// queue layer (users call NewFIFOQueue); PaddingFIFOQueue derives from it.
//
// Storage is a ring of chunks, each one element or rows [begin, end) of a
// batch. An enqueue_many batch is stored whole as one chunk, so that a
// dequeue_many of it is a zero-copy slice.
//
// Coalescing: when every component has a fully defined shape and a
// fixed-size dtype and an element is small (at most kCoalesceMaxRowBytes in
// all), a single enqueue copies the element's bytes into the next row of a
// staging batch (kStageRows rows per component, allocated when needed), and
// consecutive singles extend the tail chunk over that batch. A later
// dequeue_many of them is then a slice, as for an enqueue_many batch, and a
// single dequeue a row view (no allocation under mu_; a copy-out measured
// about 20% slower in the threaded benchmark). The price: a kept element
// keeps its 64-row batch (at most 256 KiB) alive, and its buffer is shared,
// which the Python binding answers by copying small shared results out so
// that arrays stay writable. A row of a staging batch is written once,
// under mu_, before any dequeuer can see it; a batch is rewritten only once
// nothing else refers to it (see retired_).
#ifndef SLUICE_QUEUE_FIFO_QUEUE_H_
#define SLUICE_QUEUE_FIFO_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "queue/queue_base.h"
#include "queue/ring_buffer.h"

namespace sluice::queue {

class FIFOQueue : public QueueBase {
 public:
  // Largest element (bytes over all components) that a single enqueue
  // copies into a staging batch. Larger ones are stored as they are: the
  // copy runs under mu_ (measured, one thread, enqueue of a pre-made tensor:
  // 27 ns stored as is, 42 ns copied at 1 KiB, 84 ns at 4 KiB). At 4 KiB
  // coalescing still wins under threads (bench/run.sh queue, 4KiB single:
  // 2.2-2.5 M/s against 2.0-2.1 stored as they are, since the producer
  // frees its own tensor at once instead of the consumer freeing it on
  // another thread; dequeue_many of them 7x cheaper per element than a
  // dequeue, against 0.3x). A staging batch is then at most 256 KiB, which
  // the core's block cache recycles.
  static constexpr size_t kCoalesceMaxRowBytes = 4096;
  // Rows per staging batch: a dequeue_many of up to this many coalesced
  // elements is one slice when they lie in one batch.
  static constexpr int64_t kStageRows = 64;

  FIFOQueue(std::string name, int32_t capacity, std::vector<DType> dtypes, std::vector<PartialShape> shapes,
            std::vector<std::string> names);

  std::string_view type_name() const override { return "FIFOQueue"; }

  // Whether single enqueues are copied into staging batches (see above).
  bool coalesces() const { return !row_bytes_.empty(); }

 protected:
  int64_t StoredLocked() const override REQUIRES(mu_) { return stored_; }
  void PushLocked(Element&& element) override REQUIRES(mu_);
  void PushRowsLocked(const Element& batch, int64_t begin, int64_t count) override REQUIRES(mu_);
  Element PopLocked() override REQUIRES(mu_);
  void TakeLocked(int64_t n, std::vector<Piece>* out) override REQUIRES(mu_);
  void RestoreLocked(std::vector<Piece>* held) override REQUIRES(mu_);

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

  // Copies `element` into the next row of the staging batch.
  void CoalesceLocked(const Element& element) REQUIRES(mu_);
  // Replaces the full staging batch with an empty one: the oldest retired
  // batch if nothing refers to it any more, else a new one.
  void NextStageLocked() REQUIRES(mu_);
  // The tail chunk stops growing (something else is stored behind it).
  void SealTailLocked() REQUIRES(mu_) {
    if (!chunks_.empty()) chunks_.back().staging = false;
  }

  // Constant after construction: bytes of one row of each component when
  // the queue coalesces, else empty; how many full staging batches to keep
  // for reuse (about a full queue's worth).
  std::vector<size_t> row_bytes_;
  size_t max_retired_ = 0;

  // Protected by mu_:
  RingBuffer<Chunk> chunks_ GUARDED_BY(mu_){64};
  int64_t stored_ GUARDED_BY(mu_) = 0;  // elements in chunks_
  // The staging batch ([kStageRows] + shape per component; empty until the
  // first coalesced enqueue) and the rows of it written so far.
  Element stage_ GUARDED_BY(mu_);
  int64_t stage_rows_ GUARDED_BY(mu_) = kStageRows;
  // Full staging batches, oldest first, that chunks or dequeued rows may
  // still share. Reusing one whose buffers nobody else refers to saves an
  // allocation of up to 256 KiB under mu_, whose pages glibc may have given
  // back to the kernel (a page fault each) when the queue drained.
  RingBuffer<Element> retired_ GUARDED_BY(mu_){4};
};

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_FIFO_QUEUE_H_
