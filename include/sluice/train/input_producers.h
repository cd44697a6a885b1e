// The tf.train input producers: input_producer, string_input_producer,
// range_input_producer and slice_input_producer (docs/spec/tf-queues.md
// section 9).
//
// Each builds a FIFOQueue of `capacity` rows and one QueueRunner with one
// enqueue thread, adds the runner to a QueueRunnerRegistry (the default one
// unless options.registry is set, as TF adds it to the QUEUE_RUNNERS
// collection) and returns the queue; StartQueueRunners(coord) starts it.
// Nothing runs before that.
//
// One run of the enqueue op is one epoch:
//   1. the epoch counter steps (LimitEpochs); after num_epochs epochs it
//      fails with OutOfRange "Reached limit of N", the runner thread ends and
//      closes the queue (not cancelling: queued rows stay and are drained);
//   2. if shuffle, the rows are permuted, a fresh permutation every epoch,
//      as TF's RandomShuffle op: one Philox stream per producer, seeded once
//      with the pair (seed, seed2), so a given pair gives TF's order for
//      that pair, epoch after epoch (see ProducerOptions::seed);
//   3. all rows are enqueued with enqueue_many, which blocks while the queue
//      is full; epochs never interleave.
// So every epoch delivers each row exactly once.
//
// Ownership: the returned queue and the registered runner share the rows
// (tensors are reference counted; an unshuffled epoch enqueues them without
// a copy). Thread-safety: the functions are thread-safe.
#ifndef SLUICE_TRAIN_INPUT_PRODUCERS_H_
#define SLUICE_TRAIN_INPUT_PRODUCERS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/shape.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"
#include "sluice/train/producer.h"
#include "sluice/train/queue_runner.h"
#include "sluice/train/queue_runner_registry.h"

namespace sluice::train {

struct ProducerOptions {
  // Epochs before OutOfRange; nullopt: unlimited. Must be > 0.
  std::optional<int64_t> num_epochs;
  // Permute the rows within each epoch.
  bool shuffle = true;
  // The shuffle's seed pair: TF's RandomShuffle attributes seed and seed2.
  // (0, 0): drawn from a non-deterministic source, a new order every run.
  // Any other pair gives the same orders as TF's op with that pair.
  //
  // TF's Python turns its `seed` argument (the op seed) and the graph seed
  // into the pair by random_seed.get_seed, with M = 2^31 - 1 and Python's
  // (non-negative) modulo:
  //   op seed s, no graph seed:    (87654321, s mod M)
  //   graph seed g, op seed s:     (g mod M, s mod M)
  //   graph seed g, no op seed:    (g mod M, k mod M), k counting such ops
  //                                in the graph from 0
  //   neither:                     (0, 0)
  // and a result of (0, 0) becomes (0, M). TfSeedPair() computes it;
  // sluice's Python does too (sluice/_input.py _tf_seed_pair).
  int64_t seed = 0;
  int64_t seed2 = 0;
  // The queue's capacity, in rows. Must be > 0.
  int32_t capacity = 32;
  // Non-empty: the queue is shared with every queue of this shared_name in
  // the process (see queue::QueueOptions::shared_name).
  std::string shared_name;
  // The name scope; empty: the function's ("input_producer"). Made unique
  // in the process ("input_producer_1", ...) like a TF name scope; the
  // queue is named after it (it shows in messages and AllQueueStats()).
  std::string name;
  // The runner's cancel op; empty: queue->Close(true).
  std::function<Status()> cancel_op;
  // Where the runner goes; null: QueueRunnerRegistry::Current().
  QueueRunnerRegistry* registry = nullptr;
};

struct InputProducerOptions : ProducerOptions {
  // Merged with input_tensor's row shape (shape[1:]); the result must be
  // fully defined and compatible.
  std::optional<PartialShape> element_shape;
};

// TF's seed pair for op seed `op_seed` under graph seed `graph_seed`
// (nullopt: none), as described at ProducerOptions::seed.
struct SeedPair {
  int64_t seed = 0;
  int64_t seed2 = 0;
};
SeedPair TfSeedPair(int64_t op_seed, std::optional<int64_t> graph_seed = std::nullopt);

// What a producer built: its queue (TF returns this) and its runner (already
// registered).
struct ProducerQueue {
  std::shared_ptr<queue::Queue> queue;
  std::shared_ptr<QueueRunner> runner;
};

// tf.train.input_producer: the rows of `input_tensor` (dimension 0), per
// epoch. Errors (InvalidArgument): input_tensor invalid or of rank 0;
// element_shape incompatible with the rows ("... must have a fully defined
// shape or `element_shape` must be specified" when not fully defined);
// num_epochs <= 0 ("num_epochs must be > 0 not N."); capacity <= 0; a
// shared_name taken by an incompatible queue.
Result<ProducerQueue> InputProducer(Tensor input_tensor, InputProducerOptions options = {});

// tf.train.string_input_producer: string scalars, one per entry of
// `strings`, per epoch (usually file names, for a reader). Errors as
// InputProducer, and InvalidArgument "string_input_producer requires a
// non-null input tensor" for an empty list.
Result<ProducerQueue> StringInputProducer(const std::vector<std::string>& strings,
                                          ProducerOptions options = {});

// tf.train.range_input_producer: int32 scalars 0 .. limit-1 per epoch.
// Errors as InputProducer; InvalidArgument for limit < 0.
Result<ProducerQueue> RangeInputProducer(int32_t limit, ProducerOptions options = {});

// tf.train.slice_input_producer: a producer of slices {t[i] for t in
// tensor_list}, all at the same index i, which it dequeues (one per call)
// from a RangeInputProducer(dim0 of tensor_list[0], options). Every row
// comes once per epoch; the slices share the tensors' buffers (no copy).
// The producer returns OutOfRange when the index queue is closed and drained.
// As in TF the other tensors' first dimensions are not checked here; a
// shorter one fails the call that reaches past it (InvalidArgument).
// Errors: InvalidArgument "Expected at least one tensor in
// slice_input_producer()." for an empty list; a tensor that is invalid or of
// rank 0; as RangeInputProducer.
Result<Producer> SliceInputProducer(std::vector<Tensor> tensor_list, ProducerOptions options = {});

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_INPUT_PRODUCERS_H_
