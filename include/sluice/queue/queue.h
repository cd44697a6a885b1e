// Queues with TensorFlow's semantics: FIFOQueue, RandomShuffleQueue,
// PaddingFIFOQueue and PriorityQueue (tf.queue.*), as written out in
// docs/spec/tf-queues.md.
//
// A queue stores elements, each a tuple of tensors with fixed dtypes and, if
// declared, fixed (or, for PaddingFIFOQueue, partial) shapes. It is bounded by
// its capacity (negative: unbounded). Blocking calls wait in two FIFO lines,
// one for enqueuers and one for dequeuers, served strictly in arrival order
// with partial progress: enqueue_many admits what fits and waits for the rest;
// dequeue_many collects what is there and waits for the rest, holding it.
//
// Every blocking call takes WaitOptions: a deadline (DeadlineExceeded, "Timed
// out waiting for notification") and a CancellationManager (Cancelled,
// "Enqueue operation was cancelled" / "Dequeue operation was cancelled").
// Close() wakes every blocked dequeuer; Close(true) fails every pending
// enqueuer. No call stays blocked once the queue is closed and drained.
// Unlike TensorFlow, a dequeue_many that times out or is cancelled puts the
// elements it held back at the front, in order, instead of dropping them.
//
// Thread-safety: every method of Queue is thread-safe. A queue is shared by
// std::shared_ptr; it must not be destroyed while a call on it is blocked.
// Queues never run user code.
#ifndef SLUICE_QUEUE_QUEUE_H_
#define SLUICE_QUEUE_QUEUE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/cancellation.h"
#include "sluice/core/dtype.h"
#include "sluice/core/element.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"

namespace sluice::queue {

// How long a blocking call may wait, and who may cancel it.
struct WaitOptions {
  using Clock = std::chrono::steady_clock;
  // Fail with DeadlineExceeded if the call is still blocked at this time.
  std::optional<Clock::time_point> deadline;
  // If set, StartCancel() fails the blocked call with Cancelled. Not owned;
  // must outlive the call.
  CancellationManager* cancellation = nullptr;
  // If set, a blocked call runs this every `interrupt_check_interval` on its
  // own thread, holding no queue lock; a non-OK status abandons the call with
  // that status (as a cancellation does). The Python binding uses it to
  // answer Ctrl-C while blocked.
  std::function<Status()> interrupt_check;
  std::chrono::milliseconds interrupt_check_interval{100};

  static WaitOptions Timeout(std::chrono::nanoseconds timeout) {
    WaitOptions o;
    o.deadline = Clock::now() + timeout;
    return o;
  }
};

// A snapshot of one queue, for observability (Queue::stats(),
// AllQueueStats()). The counters are monotonic over the queue's life; size,
// closed and the counters are read together, under the queue's lock, so they
// agree with each other. Sampled over time (train::QueueMonitor) they give
// fill levels and enqueue/dequeue rates, which show which stage of a pipeline
// starves the next.
struct QueueStats {
  // Process-wide identity of the queue (1, 2, ...; never reused), so that
  // samples of queues with the same name can be told apart.
  uint64_t id = 0;
  std::string name;
  std::string type;              // Queue::type_name()
  int32_t capacity = 0;          // Queue::kUnbounded when unbounded
  int32_t min_after_dequeue = 0; // RandomShuffleQueue; 0 for the others
  int32_t size = 0;              // elements stored now
  bool closed = false;
  int64_t enqueued = 0;  // elements admitted
  int64_t dequeued = 0;  // elements handed to dequeuers

  // size / capacity: TensorFlow's "fraction_of_<capacity>_full" summary.
  // 0 for an unbounded queue.
  double fraction_full() const {
    return capacity <= 0 || capacity == std::numeric_limits<int32_t>::max()
               ? 0.0
               : static_cast<double>(size) / capacity;
  }
  // max(0, size - min) / (capacity - min): TensorFlow's shuffle_batch summary
  // "fraction_over_<min>_of_<capacity - min>_full". Equals fraction_full()
  // when min_after_dequeue is 0.
  double fraction_over_min_full() const {
    if (capacity <= 0 || capacity == std::numeric_limits<int32_t>::max()) return 0.0;
    const int32_t room = capacity - min_after_dequeue;
    if (room <= 0) return 0.0;
    return size <= min_after_dequeue ? 0.0 : static_cast<double>(size - min_after_dequeue) / room;
  }
};

// The payload of a failed EnqueueMany (Cancelled, DeadlineExceeded, a closed
// queue) that waited for room: how many leading rows of the batch the queue
// admitted before the error, in decimal. A caller that retries sends only
// the rows after them.
inline constexpr char kRowsEnqueuedPayload[] = "sluice.queue.rows_enqueued";

class Queue {
 public:
  static constexpr int32_t kUnbounded = std::numeric_limits<int32_t>::max();

  virtual ~Queue() = default;

  // Adds one element. Blocks while the queue is full (and while earlier
  // enqueuers wait). The queue either keeps the element's tensors (sharing
  // their buffers) or copies their values: a FIFOQueue whose components all
  // have fixed shapes and numeric dtypes copies elements of up to 4 KiB into
  // one batch buffer, so that a later dequeue_many of them is a view, not a
  // stack. Either way, treat an enqueued tensor's buffer as read-only.
  // Errors: InvalidArgument (wrong number of components, dtype or shape),
  // Cancelled (the queue is closed when this call's turn comes: "... is
  // closed."; or cancelled), DeadlineExceeded.
  virtual Status Enqueue(Element element, const WaitOptions& wait = {}) = 0;

  // Adds the slices along dimension 0 of every component, in order. Every
  // component must have rank >= 1 and the same dim 0. A batch of 0 returns at
  // once, even on a closed queue. On Cancelled/DeadlineExceeded part-way, the
  // slices already admitted stay in the queue, and the error says how many:
  // " (enqueue_many enqueued N of M rows)" ends its message and
  // kRowsEnqueuedPayload holds N (absent for an error found before any wait:
  // a malformed batch, or a cancellation already started). Errors as Enqueue.
  virtual Status EnqueueMany(Element batch, const WaitOptions& wait = {}) = 0;

  // Removes one element. Blocks while the queue is empty (RandomShuffleQueue:
  // while open and size <= min_after_dequeue).
  // Errors: OutOfRange (closed and no element left: "... is closed and has
  // insufficient elements (requested 1, current size 0)"), Cancelled,
  // DeadlineExceeded.
  virtual Result<Element> Dequeue(const WaitOptions& wait = {}) = 0;

  // Removes exactly n elements, stacked: component i has shape [n] + shape_i.
  // n may exceed the capacity (except for PriorityQueue). Blocks until n are
  // collected. Errors: InvalidArgument (n < 0; shapes not declared), OutOfRange
  // (closed with fewer than n left; the held elements go back to the front),
  // Cancelled, DeadlineExceeded.
  virtual Result<Element> DequeueMany(int64_t n, const WaitOptions& wait = {}) = 0;

  // As DequeueMany, but once the queue is closed returns the 1..n-1 elements
  // that remain; OutOfRange only when closed and empty.
  virtual Result<Element> DequeueUpTo(int64_t n, const WaitOptions& wait = {}) = 0;

  // Closes the queue: later enqueues fail with Cancelled, dequeues drain what
  // is left and then fail with OutOfRange.
  // cancel_pending_enqueues=false: waits behind enqueuers already blocked
  // (they complete first), so it may block; a second such close fails with
  // Cancelled ("Queue '<name>' is already closed.").
  // cancel_pending_enqueues=true: closes at once and fails every pending
  // enqueue (and pending close) with Cancelled; never fails.
  virtual Status Close(bool cancel_pending_enqueues = false, const WaitOptions& wait = {}) = 0;

  virtual bool is_closed() const = 0;
  // Elements stored now (not those held by a pending dequeue_many).
  virtual int32_t size() const = 0;
  // A consistent snapshot of this queue (see QueueStats). Never blocks for
  // long (takes the queue's lock briefly). Counting costs the queue's
  // operations one addition each, under the lock they already hold.
  virtual QueueStats stats() const = 0;
  // RandomShuffleQueue's min_after_dequeue; 0 for the other types.
  virtual int32_t min_after_dequeue() const { return 0; }

  // "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue".
  virtual std::string_view type_name() const = 0;
  // Constant after construction:
  const std::string& name() const { return name_; }
  int32_t capacity() const { return capacity_; }
  // Component dtypes and shapes as the queue stores them. PriorityQueue:
  // component 0 is the int64 priority, shape [].
  const std::vector<DType>& dtypes() const { return dtypes_; }
  // Empty when shapes were not declared.
  const std::vector<PartialShape>& shapes() const { return shapes_; }
  // Component names, empty when the queue has none.
  const std::vector<std::string>& names() const { return names_; }

 protected:
  Queue(std::string name, int32_t capacity, std::vector<DType> dtypes,
        std::vector<PartialShape> shapes, std::vector<std::string> names)
      : name_(std::move(name)),
        capacity_(capacity),
        dtypes_(std::move(dtypes)),
        shapes_(std::move(shapes)),
        names_(std::move(names)) {}

 private:
  const std::string name_;
  const int32_t capacity_;
  const std::vector<DType> dtypes_;
  const std::vector<PartialShape> shapes_;
  const std::vector<std::string> names_;
};

struct QueueOptions {
  // Maximum number of elements stored; negative means unbounded.
  int32_t capacity = -1;
  // Component dtypes. Must not be empty.
  std::vector<DType> dtypes;
  // Component shapes, one per dtype, or empty for "any shape" (then
  // DequeueMany/DequeueUpTo are refused). FIFO, RandomShuffle and Priority
  // queues need fully defined shapes; PaddingFIFOQueue needs known ranks and
  // allows unknown dims (-1).
  std::vector<PartialShape> shapes;
  // Optional component names (one per dtype), for dict-style access.
  std::vector<std::string> names;
  // The queue's name in messages; empty: the type's default ("fifo_queue"...).
  std::string name;
  // Non-empty: queues created with the same shared_name in this process are
  // one queue; creating one whose attributes differ is InvalidArgument.
  std::string shared_name;
};

struct RandomShuffleQueueOptions : QueueOptions {
  // While open, a dequeue leaves at least this many elements. 0 <= it <
  // capacity (when bounded).
  int32_t min_after_dequeue = 0;
  // (0, 0): seeded from a non-deterministic source. Otherwise the same seeds
  // and the same sequence of operations give the same order.
  int64_t seed = 0;
  int64_t seed2 = 0;
};

// Each returns InvalidArgument for bad options (empty dtypes, shape count
// mismatch, shapes not fully defined, min_after_dequeue out of range, a
// shared_name taken by an incompatible queue).
Result<std::shared_ptr<Queue>> NewFIFOQueue(QueueOptions options);
Result<std::shared_ptr<Queue>> NewRandomShuffleQueue(RandomShuffleQueueOptions options);
Result<std::shared_ptr<Queue>> NewPaddingFIFOQueue(QueueOptions options);
// `options.dtypes`/`shapes` describe the value components; the queue
// prepends the priority (int64, shape []). As in TensorFlow, `names`, when
// given, name every component including the priority. Smallest priority
// first.
Result<std::shared_ptr<Queue>> NewPriorityQueue(QueueOptions options);

// Snapshots of every queue alive in the process (created by the factories
// above and not yet destroyed), in creation order. A shared queue appears
// once. The registry holds weak references only: it never keeps a queue
// alive (a queue whose last user lets go while it is being sampled is
// destroyed on the sampling thread). Thread-safe; never blocks for long.
std::vector<QueueStats> AllQueueStats();

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_QUEUE_H_
