// QueueBase: TensorFlow's queue machinery (queue_base.cc), shared by the four
// queue types.
//
// Every blocking call becomes an Attempt that lives on the calling thread's
// stack and waits in one of two FIFO lines: enqueuers (enqueue, enqueue_many,
// non-cancelling close) and dequeuers. After any change the queue "flushes":
// it runs the front enqueue attempt, then the front dequeue attempt, until
// neither makes progress. Only front attempts run, so each line is served in
// arrival order, with partial progress (an enqueue_many admits what fits; a
// dequeue_many holds what it has collected).
//
// Hand-off: the thread whose change lets an attempt complete does the work of
// that attempt under the lock (moves the elements into or out of it), then,
// after unlocking, wakes exactly that attempt's owner through a futex on the
// attempt. A woken owner never takes the lock again; batch assembly (stacking
// or padding) runs on the owner's thread, outside the lock.
//
// A subclass may add a lock-free path for enqueues and dequeues (FIFOQueue's
// RowRing): TryEnqueueFast / TryDequeueFast and their ...ManyFast forms run
// before the lock is taken; every section that holds mu_ to touch storage or the lines calls
// BeginLocked first (the subclass stops its fast path there) and
// EndLocked(idle) last (idle: no attempt waits and the queue is open, so the
// subclass may restart it). A lock-free call thus never overtakes a waiting
// one, and never runs against a closed queue.
//
// Thread-safety: all public methods are thread-safe. Subclass hooks named
// ...Locked run with mu_ held and must not block or call out.
#ifndef SLUICE_QUEUE_QUEUE_BASE_H_
#define SLUICE_QUEUE_QUEUE_BASE_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "sluice/core/mutex.h"
#include "sluice/queue/queue.h"

namespace sluice::queue {

class QueueBase : public Queue {
 public:
  ~QueueBase() override;

  Status Enqueue(Element element, const WaitOptions& wait) override;
  Status EnqueueMany(Element batch, const WaitOptions& wait) override;
  Result<Element> Dequeue(const WaitOptions& wait) override;
  Result<Element> DequeueMany(int64_t n, const WaitOptions& wait) override;
  Result<Element> DequeueUpTo(int64_t n, const WaitOptions& wait) override;
  Status Close(bool cancel_pending_enqueues, const WaitOptions& wait) override;
  bool is_closed() const override SLUICE_EXCLUDES(mu_);
  int32_t size() const override SLUICE_EXCLUDES(mu_);
  QueueStats stats() const override SLUICE_EXCLUDES(mu_);

  // Validates the queue's declared attributes (called by the factories).
  Status Initialize();

 protected:
  QueueBase(std::string name, int32_t capacity, std::vector<DType> dtypes,
            std::vector<PartialShape> shapes, std::vector<std::string> names);

  // Elements a dequeue has taken: one element, or `rows` consecutive
  // elements as slices of an enqueue_many batch (each component with a
  // leading dimension), so that a batch that goes in whole comes out whole,
  // without a copy.
  struct Piece {
    Element data;
    int64_t rows = 1;
    bool batched = false;
  };

  // --- Lock-free single operations (default: none). ---
  enum class FastResult {
    kDone,   // enqueued / dequeued
    kBusy,   // take the lock
    kFull,   // no room now: may retry before taking the lock
    kEmpty,  // nothing to take now: may retry before taking the lock
  };
  // Stores a validated element without the lock.
  virtual FastResult TryEnqueueFast(const Element& element) { return FastResult::kBusy; }
  // On kDone, *out is the dequeued element.
  virtual FastResult TryDequeueFast(Element* out) { return FastResult::kBusy; }
  // The same for a validated enqueue_many batch of `rows` > 0 elements (on
  // kDone the batch may have been moved from), and for a dequeue_many /
  // dequeue_up_to of n > 0 that n elements can serve (*out: the batch, as
  // AssembleBatch would give it).
  virtual FastResult TryEnqueueManyFast(Element& batch, int64_t rows) { return FastResult::kBusy; }
  virtual FastResult TryDequeueManyFast(int64_t n, Element* out) { return FastResult::kBusy; }
  // Run first and last in every section that holds mu_ for storage or the
  // lines (see the file comment).
  virtual void BeginLocked() SLUICE_REQUIRES(mu_) {}
  virtual void EndLocked(bool idle) SLUICE_REQUIRES(mu_) {}
  // Elements moved by the lock-free path so far, for QueueStats.
  virtual void FastCountsLocked(int64_t* enqueued, int64_t* dequeued) const SLUICE_REQUIRES(mu_) {}

  // --- Storage hooks, run with mu_ held. ---
  virtual int64_t StoredLocked() const SLUICE_REQUIRES(mu_) = 0;
  // Elements a dequeuer may take right now (RandomShuffleQueue: those above
  // min_after_dequeue while open).
  virtual int64_t TakeableLocked() const SLUICE_REQUIRES(mu_) { return StoredLocked(); }
  // Stores one element. It may copy `element` rather than move from it (a
  // coalescing FIFOQueue): the caller releases it after unlocking.
  virtual void PushLocked(Element&& element) SLUICE_REQUIRES(mu_) = 0;
  // Stores rows [begin, begin + count) of `batch` (components with a leading
  // dimension). Default: one PushLocked per row.
  virtual void PushRowsLocked(const Element& batch, int64_t begin, int64_t count) SLUICE_REQUIRES(mu_);
  // REQUIRES: TakeableLocked() > 0.
  virtual Element PopLocked() SLUICE_REQUIRES(mu_) = 0;
  // Appends the next `n` elements to `out`. REQUIRES: n <= TakeableLocked().
  // Default: one PopLocked per element.
  virtual void TakeLocked(int64_t n, std::vector<Piece>* out) SLUICE_REQUIRES(mu_);
  // Puts back what a dequeue_many held, so that the next dequeues see it
  // first, in `held` order. Clears `held`.
  virtual void RestoreLocked(std::vector<Piece>* held) SLUICE_REQUIRES(mu_) = 0;
  // PriorityQueue: a dequeue_many takes its n elements at once, never
  // holding part of them.
  virtual bool dequeue_holds_partial() const { return true; }

  // --- Element checks and batch assembly, run without the lock. ---
  // Shape check for one element's component (exact; PaddingFIFOQueue:
  // compatible).
  virtual bool ShapeMatches(size_t component, const TensorShape& shape) const;
  virtual Status ValidateExtra(const Element& element, bool many) const { return Status(); }
  // Joins `pieces` (n elements in all) into one batch element; zero-copy
  // when they are one batched piece. PaddingFIFOQueue pads. May move from
  // the pieces; the caller clears the vector (and keeps its capacity).
  virtual Result<Element> AssembleBatch(std::vector<Piece>&& pieces, int64_t n) const;
  // The element dequeue_many(0) returns.
  virtual Element EmptyBatch() const;
  // Message for DequeueMany/DequeueUpTo on a queue without shapes.
  virtual std::string NoShapesMessage() const;

  // Row i of a piece, as an element.
  static Element PieceRow(const Piece& piece, int64_t i);

  bool closed_locked() const SLUICE_REQUIRES(mu_) { return closed_; }

  mutable Mutex mu_;

 private:
  struct Attempt;
  class WakeList;
  struct WakeOnExit;
  class StorageLock;
  // An intrusive FIFO list of attempts.
  struct Line {
    Attempt* head = nullptr;
    Attempt* tail = nullptr;
    bool empty() const { return head == nullptr; }
  };
  static void Append(Line* line, Attempt* a);
  static void Remove(Line* line, Attempt* a);

  Status ValidateElement(const Element& element) const;
  Status ValidateBatch(const Element& batch) const;
  std::string ExpectedShape(size_t component, int64_t batch) const;

  // Appends `attempt` to its line, flushes, and waits for it to complete.
  void Run(Attempt* attempt, const WaitOptions& wait) SLUICE_EXCLUDES(mu_);
  void Wait(Attempt* attempt, const WaitOptions& wait) SLUICE_EXCLUDES(mu_);
  // Fails `attempt` with `status` if it is still pending.
  void Abandon(Attempt* attempt, Status status) SLUICE_EXCLUDES(mu_);
  void FlushLocked(WakeList* completed) SLUICE_REQUIRES(mu_);
  bool RunEnqueueLocked(Attempt* a, bool* complete) SLUICE_REQUIRES(mu_);
  bool RunDequeueLocked(Attempt* a, bool* complete) SLUICE_REQUIRES(mu_);
  void CompleteLocked(Attempt* a, Status status, WakeList* completed) SLUICE_REQUIRES(mu_);
  static void Wake(const WakeList& completed, const Attempt* self);
  Result<Element> DequeueImpl(int64_t n, bool up_to, const WaitOptions& wait);
  Status EnqueueImpl(Element&& element, bool many, const WaitOptions& wait);

  // Constant after construction: the declared shapes when all are fully
  // defined (the common case), for a check without PartialShape.
  std::vector<TensorShape> exact_shapes_;
  const uint64_t id_;  // QueueStats::id, from a process-wide counter

  // Protected by mu_:
  bool closed_ SLUICE_GUARDED_BY(mu_) = false;
  // Observability counters (QueueStats); one addition per operation.
  int64_t enqueued_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t dequeued_ SLUICE_GUARDED_BY(mu_) = 0;
  Line enqueuers_ SLUICE_GUARDED_BY(mu_);
  Line dequeuers_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_QUEUE_BASE_H_
