#include "sluice/train/batchers.h"

#include <utility>

#include "train/name_scope.h"

namespace sluice::train {
namespace {

// TF's get_seed(op_seed) without a graph seed: (DEFAULT_GRAPH_SEED, op_seed).
constexpr int64_t kDefaultGraphSeed = 87654321;

// Which tf.train function is being built.
struct Flavor {
  const char* fn;     // for messages: "batch", "shuffle_batch_join", ...
  const char* scope;  // default name scope
  bool shuffle;
};

constexpr Flavor kBatch{"batch", "batch", false};
constexpr Flavor kMaybeBatch{"maybe_batch", "batch", false};
constexpr Flavor kBatchJoin{"batch_join", "batch_join", false};
constexpr Flavor kMaybeBatchJoin{"maybe_batch_join", "batch_join", false};
constexpr Flavor kShuffleBatch{"shuffle_batch", "shuffle_batch", true};
constexpr Flavor kMaybeShuffleBatch{"maybe_shuffle_batch", "shuffle_batch", true};
constexpr Flavor kShuffleBatchJoin{"shuffle_batch_join", "shuffle_batch_join", true};
constexpr Flavor kMaybeShuffleBatchJoin{"maybe_shuffle_batch_join", "shuffle_batch_join", true};

Status ValidateOptions(const Flavor& f, const BatchOptions& o) {
  if (o.dtypes.empty()) return errors::InvalidArgument("Expected at least one tensor in ", f.fn, "().");
  if (o.batch_size <= 0) return errors::InvalidArgument(f.fn, ": batch_size must be > 0 not ", o.batch_size);
  if (o.num_threads <= 0) return errors::InvalidArgument(f.fn, ": num_threads must be > 0 not ", o.num_threads);
  if (o.capacity <= 0) return errors::InvalidArgument(f.fn, ": capacity must be > 0 not ", o.capacity);
  if (o.shapes.size() != o.dtypes.size()) {
    return errors::InvalidArgument(f.fn, ": shapes must be given for all ", o.dtypes.size(),
                                   " components, got ", o.shapes.size());
  }
  for (const PartialShape& s : o.shapes) {
    if (!s.rank_known()) return errors::InvalidArgument("Cannot infer Tensor's rank");
    if (!o.dynamic_pad && !s.fully_defined()) {
      return errors::InvalidArgument(f.fn, ": all shapes must be fully defined without dynamic_pad; got ",
                                     s.DebugString());
    }
  }
  return Status();
}

Result<std::shared_ptr<queue::Queue>> MakeQueue(const Flavor& f, const BatchOptions& o,
                                                const ShuffleBatchOptions* shuffle) {
  const std::string scope = internal::UniqueScope(o.name.empty() ? f.scope : o.name);
  if (shuffle != nullptr) {
    queue::RandomShuffleQueueOptions qo;
    qo.capacity = o.capacity;
    qo.dtypes = o.dtypes;
    qo.shapes = o.shapes;
    qo.names = o.names;
    qo.name = scope + "/random_shuffle_queue";
    qo.shared_name = o.shared_name;
    qo.min_after_dequeue = shuffle->min_after_dequeue;
    if (shuffle->seed.has_value()) {
      // TF's random_seed.get_seed: the op seed modulo 2^31 - 1 (Python's %,
      // so never negative), beside the default graph seed.
      constexpr int64_t kMaxInt32 = 2147483647;
      int64_t seed2 = *shuffle->seed % kMaxInt32;
      if (seed2 < 0) seed2 += kMaxInt32;
      qo.seed = kDefaultGraphSeed;
      qo.seed2 = seed2;
    }
    return queue::NewRandomShuffleQueue(std::move(qo));
  }
  queue::QueueOptions qo;
  qo.capacity = o.capacity;
  qo.dtypes = o.dtypes;
  qo.shapes = o.shapes;
  qo.names = o.names;
  qo.name = scope + (o.dynamic_pad ? "/padding_fifo_queue" : "/fifo_queue");
  qo.shared_name = o.shared_name;
  return o.dynamic_pad ? queue::NewPaddingFIFOQueue(std::move(qo)) : queue::NewFIFOQueue(std::move(qo));
}

// The examples of `batch` (enqueue_many) that `keep` accepts, in order; the
// batch itself when it accepts all. A batch the queue would refuse (no
// leading dimension, or dimensions that differ) is passed on unfiltered, for
// the queue to report.
Element FilterRows(Element batch, const KeepInput& keep) {
  if (batch.empty()) return batch;
  for (const Tensor& t : batch) {
    if (!t.valid() || t.rank() < 1 || t.shape().dim(0) != batch[0].shape().dim(0)) return batch;
  }
  const int64_t n = batch[0].shape().dim(0);
  std::vector<int64_t> kept;
  kept.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    Element row;
    for (const Tensor& t : batch) row.push_back(t.Slice(i));
    if (keep(row)) kept.push_back(i);
  }
  if (static_cast<int64_t>(kept.size()) == n) return batch;
  Element out;
  for (const Tensor& t : batch) out.push_back(t.Gather(kept));
  return out;
}

// One runner thread's step: produce, filter, enqueue.
std::function<Status()> EnqueueOp(std::shared_ptr<queue::Queue> q, std::shared_ptr<const Producer> producer,
                                  std::shared_ptr<const KeepInput> keep, bool many) {
  return [q = std::move(q), producer = std::move(producer), keep = std::move(keep), many]() -> Status {
    Result<Element> produced = (*producer)();
    if (!produced.ok()) {
      if (IsSkippedStep(produced.status())) return Status();  // a rejected example: nothing this step
      return produced.status();
    }
    Element example = std::move(*produced);
    if (keep != nullptr) {
      if (many && !keep->is_constant()) {
        example = FilterRows(std::move(example), *keep);
      } else if (!(*keep)(example)) {
        return Status();  // skipped; the thread moves on
      }
    }
    return many ? q->EnqueueMany(std::move(example)) : q->Enqueue(std::move(example));
  };
}

Result<BatchQueue> Build(const Flavor& f, std::vector<Producer> producers, bool join,
                         std::optional<KeepInput> keep_input, const BatchOptions& o,
                         const ShuffleBatchOptions* shuffle) {
  if (producers.empty()) return errors::InvalidArgument("Expected at least one set of tensors");
  for (const Producer& p : producers) {
    if (!p) return errors::InvalidArgument(f.fn, ": a producer is empty");
  }
  SLUICE_RETURN_IF_ERROR(ValidateOptions(f, o));
  if (shuffle != nullptr) {
    if (o.dynamic_pad) return errors::InvalidArgument(f.fn, " does not support dynamic_pad");
    if (o.capacity <= shuffle->min_after_dequeue) {
      return errors::InvalidArgument("capacity ", o.capacity, " must be bigger than min_after_dequeue ",
                                     shuffle->min_after_dequeue, ".");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<queue::Queue> q, MakeQueue(f, o, shuffle));

  std::shared_ptr<const KeepInput> keep;
  if (keep_input.has_value()) keep = std::make_shared<const KeepInput>(std::move(*keep_input));
  QueueRunnerOptions ro;
  ro.queue = q;
  if (join) {
    for (Producer& p : producers) {
      ro.enqueue_ops.push_back(
          EnqueueOp(q, std::make_shared<const Producer>(std::move(p)), keep, o.enqueue_many));
    }
  } else {
    auto shared = std::make_shared<const Producer>(std::move(producers[0]));
    for (int i = 0; i < o.num_threads; ++i) ro.enqueue_ops.push_back(EnqueueOp(q, shared, keep, o.enqueue_many));
  }
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<QueueRunner> runner, QueueRunner::Create(std::move(ro)));
  AddQueueRunner(runner, o.registry);
  return BatchQueue(std::move(q), std::move(runner), o.batch_size, o.allow_smaller_final_batch);
}

std::vector<Producer> One(Producer p) {
  std::vector<Producer> v;
  v.push_back(std::move(p));
  return v;
}

}  // namespace

BatchQueue::BatchQueue(std::shared_ptr<queue::Queue> queue, std::shared_ptr<QueueRunner> runner,
                       int64_t batch_size, bool allow_smaller_final_batch)
    : queue_(std::move(queue)),
      runner_(std::move(runner)),
      batch_size_(batch_size),
      allow_smaller_final_batch_(allow_smaller_final_batch) {}

Result<Element> BatchQueue::Dequeue(const queue::WaitOptions& wait) const {
  return allow_smaller_final_batch_ ? queue_->DequeueUpTo(batch_size_, wait)
                                    : queue_->DequeueMany(batch_size_, wait);
}

Result<BatchQueue> Batch(Producer producer, BatchOptions options) {
  return Build(kBatch, One(std::move(producer)), false, std::nullopt, options, nullptr);
}
Result<BatchQueue> BatchJoin(std::vector<Producer> producers, BatchOptions options) {
  return Build(kBatchJoin, std::move(producers), true, std::nullopt, options, nullptr);
}
Result<BatchQueue> MaybeBatch(Producer producer, KeepInput keep_input, BatchOptions options) {
  return Build(kMaybeBatch, One(std::move(producer)), false, std::move(keep_input), options, nullptr);
}
Result<BatchQueue> MaybeBatchJoin(std::vector<Producer> producers, KeepInput keep_input,
                                  BatchOptions options) {
  return Build(kMaybeBatchJoin, std::move(producers), true, std::move(keep_input), options, nullptr);
}
Result<BatchQueue> ShuffleBatch(Producer producer, ShuffleBatchOptions options) {
  return Build(kShuffleBatch, One(std::move(producer)), false, std::nullopt, options, &options);
}
Result<BatchQueue> ShuffleBatchJoin(std::vector<Producer> producers, ShuffleBatchOptions options) {
  return Build(kShuffleBatchJoin, std::move(producers), true, std::nullopt, options, &options);
}
Result<BatchQueue> MaybeShuffleBatch(Producer producer, KeepInput keep_input, ShuffleBatchOptions options) {
  return Build(kMaybeShuffleBatch, One(std::move(producer)), false, std::move(keep_input), options,
               &options);
}
Result<BatchQueue> MaybeShuffleBatchJoin(std::vector<Producer> producers, KeepInput keep_input,
                                         ShuffleBatchOptions options) {
  return Build(kMaybeShuffleBatchJoin, std::move(producers), true, std::move(keep_input), options,
               &options);
}

}  // namespace sluice::train
