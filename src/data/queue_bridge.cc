// The bridge with the TF1 queue world: FromQueue (a dataset that dequeues)
// and DatasetQueueRunner (a QueueRunner that enqueues a dataset's elements).
#include <span>
#include <utility>
#include <vector>

#include "data/dataset_util.h"
#include "sluice/core/mutex.h"
#include "sluice/data/datasets.h"
#include "sluice/train/producer.h"

namespace sluice::data {
namespace {

// Zeros (empty strings) of `spec`; unknown dims are 0, an unknown rank a scalar.
Element ZeroElement(const ElementSpec& spec) {
  Element e;
  for (size_t i = 0; i < spec.size(); ++i) {
    std::vector<int64_t> dims;
    if (spec.shapes[i].rank_known()) {
      for (int64_t d : spec.shapes[i].dims()) dims.push_back(d < 0 ? 0 : d);
    }
    e.push_back(Tensor::Zeros(spec.dtypes[i], TensorShape(std::span<const int64_t>(dims))));
  }
  return e;
}

class QueueDataset : public DatasetBase {
 public:
  explicit QueueDataset(std::shared_ptr<queue::Queue> q)
      : DatasetBase(ElementSpec{q->dtypes(), q->shapes(), {}}), queue_(std::move(q)) {}

  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "FromQueue"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<QueueDataset> {
   public:
    Iterator(const QueueDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), cancellation_(ctx.cancellation), probe_(ctx.probe) {}

    Status GetNext(Element* out, bool* end_of_sequence) override {
      if (probe_) {
        *out = ZeroElement(dataset_->element_spec());
        *end_of_sequence = false;
        return Status();
      }
      queue::WaitOptions wait = train::CurrentProducerWait();  // Ctrl-C from Python (interruptible_wait.h)
      wait.cancellation = cancellation_.get();
      Result<Element> e = dataset_->queue_->Dequeue(wait);
      if (errors::IsOutOfRange(e.status())) {  // closed and empty: the end
        *end_of_sequence = true;
        return Status();
      }
      if (!e.ok()) return e.status();
      *out = std::move(*e);
      *end_of_sequence = false;
      return Status();
    }

    // Elements taken from a queue belong to its producers.
    Status Save(IteratorStateWriter*) override { return CannotSave(); }
    Status Restore(IteratorStateReader*) override { return CannotSave(); }

   private:
    static Status CannotSave() {
      return Status(Code::kUnimplemented,
                    "FromQueue cannot be checkpointed: its elements are what other threads enqueued, and the queue "
                    "is not part of the iterator. Checkpoint the pipeline that feeds the queue (its producers' "
                    "input) instead.");
    }

    const std::shared_ptr<CancellationManager> cancellation_;
    const bool probe_;
  };

  const std::shared_ptr<queue::Queue> queue_;
};

// One pass over the dataset shared by the runner's threads: GetNext under
// mu_ (an iterator serves one caller at a time), the enqueue outside it.
// Its own CancellationManager lets the cancel op wake a GetNext blocked
// anywhere in the tree.
class SharedPass {
 public:
  explicit SharedPass(DatasetPtr dataset) : dataset_(std::move(dataset)) {}
  SharedPass(const SharedPass&) = delete;
  SharedPass& operator=(const SharedPass&) = delete;
  ~SharedPass() {
    cancellation_->StartCancel();
    MutexLock lock(&mu_);
    iterator_.reset();
  }

  // The next element; OutOfRange at the end (every later call too).
  Result<Element> Next() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (done_) return errors::OutOfRange("the dataset is exhausted");
    if (!iterator_) {
      iterator_ = dataset_->MakeIteratorInternal(IteratorContext{cancellation_, nullptr});
    }
    Element e;
    bool end = false;
    Status s = iterator_->GetNext(&e, &end);
    if (errors::IsOutOfRange(s)) {
      s = Status(Code::kInternal, "an iterator returned OutOfRange instead of end_of_sequence: " + s.message());
    }
    if (!s.ok()) return s;
    if (end) {
      done_ = true;
      return errors::OutOfRange("the dataset is exhausted");
    }
    return e;
  }

  // Wakes a Next() blocked in the tree (it returns Cancelled). Thread-safe.
  void Cancel() { cancellation_->StartCancel(); }

 private:
  // Constant after construction:
  const DatasetPtr dataset_;
  const std::shared_ptr<CancellationManager> cancellation_ = std::make_shared<CancellationManager>();

  Mutex mu_;
  std::unique_ptr<IteratorBase> iterator_ SLUICE_GUARDED_BY(mu_);
  bool done_ SLUICE_GUARDED_BY(mu_) = false;
};

}  // namespace

Result<DatasetPtr> FromQueue(std::shared_ptr<queue::Queue> queue) {
  if (!queue) return InvalidArgument("from_queue: the queue is null");
  return DatasetPtr(std::make_shared<QueueDataset>(std::move(queue)));
}

Result<std::shared_ptr<train::QueueRunner>> DatasetQueueRunner(DatasetPtr dataset, std::shared_ptr<queue::Queue> queue,
                                                               int num_threads) {
  SLUICE_RETURN_IF_ERROR(CheckInput(dataset, "dataset_queue_runner"));
  if (!queue) return InvalidArgument("dataset_queue_runner: the queue is null");
  if (num_threads < 1) return InvalidArgument("dataset_queue_runner: num_threads must be >= 1");
  if (dataset->element_spec().size() != queue->dtypes().size()) {
    return InvalidArgument("dataset_queue_runner: the dataset's elements have " +
                           std::to_string(dataset->element_spec().size()) + " components but queue '" + queue->name() +
                           "' takes " + std::to_string(queue->dtypes().size()));
  }
  for (size_t i = 0; i < queue->dtypes().size(); ++i) {
    const DType got = dataset->element_spec().dtypes[i];
    if (got != DType::kInvalid && got != queue->dtypes()[i]) {
      return InvalidArgument("dataset_queue_runner: component " + std::to_string(i) + " of the dataset is " +
                             std::string(DTypeName(got)) + " but queue '" + queue->name() + "' takes " +
                             std::string(DTypeName(queue->dtypes()[i])));
    }
  }
  auto pass = std::make_shared<SharedPass>(std::move(dataset));
  train::QueueRunnerOptions options;
  options.queue = queue;
  std::function<Status()> enqueue = [pass, q = queue.get()]() -> Status {
    Result<Element> e = pass->Next();
    if (!e.ok()) return e.status();
    return q->Enqueue(std::move(*e));
  };
  options.enqueue_ops.assign(static_cast<size_t>(num_threads), enqueue);
  options.cancel_op = [pass, q = queue.get()] {
    pass->Cancel();
    return q->Close(/*cancel_pending_enqueues=*/true);
  };
  options.queue_closed_codes = {Code::kOutOfRange, Code::kCancelled};
  return train::QueueRunner::Create(std::move(options));
}

}  // namespace sluice::data
