// The tf.train batchers: batch, batch_join, shuffle_batch,
// shuffle_batch_join and their maybe_ forms (docs/spec/tf-queues.md
// sections 10 and 12).
//
// A batcher builds a queue of examples and a QueueRunner whose threads fill
// it, adds the runner to a QueueRunnerRegistry (the default one unless
// options.registry is set) and returns a BatchQueue handle whose Dequeue()
// returns the next batch: an Element whose component i has shape
// [batch_size] + shapes[i].
//
//   function            queue                               threads
//   Batch, MaybeBatch   FIFOQueue (PaddingFIFOQueue when    num_threads, all
//                       dynamic_pad)                        calling `producer`
//   BatchJoin, Maybe..  as Batch                            one per producer
//   ShuffleBatch, ...   RandomShuffleQueue(capacity,        as above
//                       min_after_dequeue, seed)
//
// Each runner thread loops: call its producer (one example, or with
// enqueue_many a batch of examples along dimension 0), filter it with
// keep_input (maybe_ forms), enqueue it. Producers run only on these threads,
// from StartQueueRunners on, never at construction. A producer's OutOfRange
// ends its thread quietly; the last thread to end closes the queue (not
// cancelling), so every example already produced is still batched; then
//   allow_smaller_final_batch = false: full batches come out (DequeueMany);
//     the leftover (< batch_size) examples are dropped and Dequeue fails
//     with OutOfRange;
//   allow_smaller_final_batch = true: one final short batch, then
//     OutOfRange (DequeueUpTo).
// Any other producer error (or an enqueue error: an example whose dtypes or
// shapes do not match) stops the coordinator with that error; its
// close-on-stop threads cancel every queue, so Dequeue fails with OutOfRange
// once the queue is drained and Coordinator::Join returns the error.
//
// Examples are moved into the queue; a batch is assembled by one copy of
// each example into the batch buffer (none when an enqueue_many batch comes
// out whole).
//
// Ownership: the handle, the queue and the runner share the producers; the
// registry keeps the runner (and so the producers) until it is cleared.
// Thread-safety: the functions and BatchQueue's methods are thread-safe.
#ifndef SLUICE_TRAIN_BATCHERS_H_
#define SLUICE_TRAIN_BATCHERS_H_

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/element.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"
#include "sluice/queue/queue.h"
#include "sluice/train/producer.h"
#include "sluice/train/queue_runner.h"
#include "sluice/train/queue_runner_registry.h"

namespace sluice::train {

struct BatchOptions {
  // Examples per batch. Required, > 0.
  int64_t batch_size = 0;
  // Runner threads for Batch/ShuffleBatch (ignored by the _join forms, which
  // run one thread per producer). > 0.
  int num_threads = 1;
  // The queue's capacity, in examples. > 0 (> min_after_dequeue for the
  // shuffle forms).
  int32_t capacity = 32;
  // The producers return batches of examples (dimension 0), not examples.
  bool enqueue_many = false;
  // One example's component dtypes and shapes (TF infers these from the
  // input tensors; here nothing is evaluated before the threads start, so
  // they are declared). Required, one shape per dtype. Fully defined, except
  // with dynamic_pad, where dims may be unknown (-1) but ranks must be known.
  std::vector<DType> dtypes;
  std::vector<PartialShape> shapes;
  // Optional component names (queue::QueueOptions::names).
  std::vector<std::string> names;
  // Pad each batch's unknown dims to the longest example in it (zeros, empty
  // strings): a PaddingFIFOQueue. Not for the shuffle forms.
  bool dynamic_pad = false;
  // Deliver the final short batch (DequeueUpTo) instead of dropping it.
  bool allow_smaller_final_batch = false;
  // Non-empty: the queue is shared with every queue of this shared_name.
  std::string shared_name;
  // The name scope; empty: the function's ("batch", "shuffle_batch", ...),
  // made unique in the process. The queue is "<scope>/fifo_queue" (or
  // padding_fifo_queue, random_shuffle_queue).
  std::string name;
  // Where the runner goes; null: QueueRunnerRegistry::Current().
  QueueRunnerRegistry* registry = nullptr;
};

struct ShuffleBatchOptions : BatchOptions {
  // While the input lasts, every dequeue leaves at least this many examples
  // in the queue, to mix them. 0 <= min_after_dequeue < capacity.
  int32_t min_after_dequeue = 0;
  // Seed of the queue's shuffle; nullopt: non-deterministic. With one
  // runner thread and a deterministic producer, the same seed gives the same
  // batches, and TF's for TF's seed: as TF's get_seed, the queue gets the
  // default graph seed and this one modulo 2^31 - 1 (so seed and
  // seed + 2^31 - 1 shuffle alike).
  std::optional<int64_t> seed;
};

// maybe_batch's keep_input: a constant, or a predicate of one example
// (with enqueue_many, applied to every example of a batch, like TF's vector
// keep_input). Kept examples keep their order. The predicate runs on the
// runner threads, concurrently when there are several; it must be
// thread-safe.
class KeepInput {
 public:
  KeepInput(bool keep) : constant_(keep) {}  // NOLINT: implicit, as TF's bool
  template <class F>
    requires std::is_invocable_r_v<bool, F&, const Element&> && (!std::same_as<std::decay_t<F>, bool>)
  KeepInput(F predicate)  // NOLINT: implicit, as TF's tensor
      : predicate_(std::move(predicate)) {}

  bool is_constant() const { return !predicate_; }
  // The constant; meaningful when is_constant().
  bool constant() const { return constant_; }
  bool operator()(const Element& example) const { return predicate_ ? predicate_(example) : constant_; }

 private:
  bool constant_ = true;
  std::function<bool(const Element&)> predicate_;
};

// The output of a batcher: TF's dequeue_many / dequeue_up_to tensors.
class BatchQueue {
 public:
  BatchQueue(std::shared_ptr<queue::Queue> queue, std::shared_ptr<QueueRunner> runner, int64_t batch_size,
             bool allow_smaller_final_batch);

  // The next batch. Blocks until batch_size examples are there (or, with
  // allow_smaller_final_batch, the queue is closed with fewer). Errors:
  // OutOfRange at the end of the input ("... is closed and has insufficient
  // elements (requested <batch_size>, current size <n>)"), also after a
  // coordinator stop has cancelled the queue; DeadlineExceeded and Cancelled
  // from `wait`. Thread-safe: concurrent callers get whole batches in
  // arrival order.
  Result<Element> Dequeue(const queue::WaitOptions& wait = {}) const;

  const std::shared_ptr<queue::Queue>& queue() const { return queue_; }
  const std::shared_ptr<QueueRunner>& runner() const { return runner_; }
  int64_t batch_size() const { return batch_size_; }
  bool allow_smaller_final_batch() const { return allow_smaller_final_batch_; }

 private:
  std::shared_ptr<queue::Queue> queue_;
  std::shared_ptr<QueueRunner> runner_;
  int64_t batch_size_;
  bool allow_smaller_final_batch_;
};

// Errors of every batcher (InvalidArgument, TF's ValueErrors): "Expected at
// least one tensor in <fn>()." (no dtypes); "Expected at least one set of
// tensors" (_join: no producer); a null producer; batch_size <= 0;
// num_threads <= 0; capacity <= 0; shapes not one per dtype; shapes not
// fully defined (without dynamic_pad) or of unknown rank; for the shuffle
// forms "capacity C must be bigger than min_after_dequeue M." and
// dynamic_pad set; a shared_name taken by an incompatible queue.

// tf.train.batch.
Result<BatchQueue> Batch(Producer producer, BatchOptions options);
// tf.train.batch_join: one runner thread per producer, so each producer's
// examples keep their order within the batches.
Result<BatchQueue> BatchJoin(std::vector<Producer> producers, BatchOptions options);
// tf.train.maybe_batch / maybe_batch_join: only examples that keep_input
// accepts are enqueued (a rejected one is skipped and the thread moves on).
Result<BatchQueue> MaybeBatch(Producer producer, KeepInput keep_input, BatchOptions options);
Result<BatchQueue> MaybeBatchJoin(std::vector<Producer> producers, KeepInput keep_input,
                                  BatchOptions options);

// tf.train.shuffle_batch and friends: as above, over a RandomShuffleQueue.
Result<BatchQueue> ShuffleBatch(Producer producer, ShuffleBatchOptions options);
Result<BatchQueue> ShuffleBatchJoin(std::vector<Producer> producers, ShuffleBatchOptions options);
Result<BatchQueue> MaybeShuffleBatch(Producer producer, KeepInput keep_input, ShuffleBatchOptions options);
Result<BatchQueue> MaybeShuffleBatchJoin(std::vector<Producer> producers, KeepInput keep_input,
                                         ShuffleBatchOptions options);

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_BATCHERS_H_
