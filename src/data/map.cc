// Map (sequential, or parallel with ordered or first-ready hand-out) and
// Filter.
#include <atomic>
#include <deque>
#include <thread>
#include <utility>

#include "data/dataset_util.h"
#include "sluice/core/mutex.h"
#include "sluice/core/thread_pool.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// A map function's OutOfRange would end the sequence early; TF reports it
// as InvalidArgument so a map keeps its input's cardinality.
Result<Element> CallMapFn(const IndexedMapFn& fn, Element e, ElementIndex index) {
  Result<Element> r = fn(std::move(e), index);
  if (!r.ok() && errors::IsOutOfRange(r.status())) {
    return Status(Code::kInvalidArgument, "Function invocation produced OutOfRangeError: " + r.status().message());
  }
  return r;
}

class MapDataset : public DatasetBase {
 public:
  MapDataset(DatasetPtr input, IndexedMapFn fn, ElementSpec spec, MapOptions options)
      : DatasetBase(std::move(spec)), input_(std::move(input)), fn_(std::move(fn)), options_(options) {}

  int64_t cardinality() const override { return input_->cardinality(); }
  std::string DebugName() const override { return options_.num_parallel_calls ? "ParallelMap" : "Map"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override;

 private:
  class Iterator;
  class ParallelIterator;

  const DatasetPtr input_;
  const IndexedMapFn fn_;
  const MapOptions options_;
  mutable std::atomic<uint64_t> epochs_{0};  // iterators made so far
};

class MapDataset::Iterator : public DatasetIterator<MapDataset> {
 public:
  Iterator(const MapDataset* d, const IteratorContext& ctx, uint64_t epoch)
      : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), epoch_(epoch) {}

  Status GetNext(Element* out, bool* end_of_sequence) override {
    Element in;
    SLUICE_RETURN_IF_ERROR(input_->GetNext(&in, end_of_sequence));
    if (*end_of_sequence) return Status();
    Result<Element> r = CallMapFn(dataset_->fn_, std::move(in), ElementIndex{epoch_, next_index_++});
    if (!r.ok()) return r.status();
    *out = std::move(*r);
    return Status();
  }

 private:
  std::unique_ptr<IteratorBase> input_;
  const uint64_t epoch_;
  uint64_t next_index_ = 0;
};

// Workers take input elements in order (one at a time, under input_mu_), each
// into a slot at the back of slots_, and run the function outside every lock.
// The consumer takes the front slot once it is done (deterministic) or any
// done slot (not deterministic). At most capacity_ slots exist at once.
class MapDataset::ParallelIterator : public DatasetIterator<MapDataset> {
 public:
  ParallelIterator(const MapDataset* d, const IteratorContext& ctx, int64_t threads, uint64_t epoch)
      : DatasetIterator(d),
        num_threads_(threads),
        epoch_(epoch),
        capacity_(static_cast<size_t>(2 * threads)),
        input_(d->input_->MakeIteratorInternal(ctx)),
        cancel_(ctx, [this] { Cancel(); }) {}

  ~ParallelIterator() override {
    Cancel();
    for (std::thread& t : threads_) t.join();
  }

  Status GetNext(Element* out, bool* end_of_sequence) override EXCLUDES(mu_) {
    if (threads_.empty()) StartThreads();
    MutexLock lock(&mu_);
    while (true) {
      if (cancelled_) return errors::Cancelled("iterator was cancelled");
      auto ready = FindReadyLocked();
      if (ready != slots_.end()) {
        std::shared_ptr<Slot> slot = *ready;
        if (slot->end) {
          *end_of_sequence = true;
          return Status();  // the end slot stays: later calls end too
        }
        slots_.erase(ready);
        space_cv_.SignalAll();
        *end_of_sequence = false;
        if (!slot->status.ok()) return slot->status;
        *out = std::move(slot->element);
        return Status();
      }
      ready_cv_.Wait(&mu_);
    }
  }

 private:
  struct Slot {
    bool done = false;
    bool end = false;
    Status status;
    Element element;
  };

  void StartThreads() {
    threads_.reserve(static_cast<size_t>(num_threads_));
    for (int64_t i = 0; i < num_threads_; ++i) {
      threads_.emplace_back([this] {
        SetCurrentThreadName("sluice_map");
        WorkerLoop();
      });
    }
  }

  void Cancel() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    cancelled_ = true;
    ready_cv_.SignalAll();
    space_cv_.SignalAll();
  }

  // The slot to hand out next, or end(). The end slot (the last) is ready
  // only once every slot before it is gone.
  std::deque<std::shared_ptr<Slot>>::iterator FindReadyLocked() REQUIRES(mu_) {
    mu_.AssertHeld();
    if (slots_.empty()) return slots_.end();
    if (dataset_->options_.deterministic || slots_.size() == 1) {
      return slots_.front()->done ? slots_.begin() : slots_.end();
    }
    for (auto it = slots_.begin(); it != slots_.end(); ++it) {
      if ((*it)->done && !(*it)->end) return it;
    }
    return slots_.end();
  }

  void WorkerLoop() EXCLUDES(mu_, input_mu_) {
    while (true) {
      std::shared_ptr<Slot> slot;
      uint64_t index = 0;
      Element in;
      bool end = false;
      Status s;
      {
        MutexLock input_lock(&input_mu_);
        {
          MutexLock lock(&mu_);
          while (!cancelled_ && !input_done_ && slots_.size() >= capacity_) space_cv_.Wait(&mu_);
          if (cancelled_ || input_done_) return;
          slot = std::make_shared<Slot>();
          slots_.push_back(slot);
          index = next_index_++;
        }
        s = input_->GetNext(&in, &end);
        if (s.ok() && end) {
          MutexLock lock(&mu_);
          input_done_ = true;
          space_cv_.SignalAll();
        }
      }
      if (s.ok() && !end) {
        Result<Element> r = CallMapFn(dataset_->fn_, std::move(in), ElementIndex{epoch_, index});
        if (r.ok()) {
          in = std::move(*r);
        } else {
          s = r.status();
        }
      }
      MutexLock lock(&mu_);
      slot->done = true;
      slot->end = s.ok() && end;
      slot->status = s;
      if (s.ok() && !end) slot->element = std::move(in);
      ready_cv_.SignalAll();
      if (slot->end) return;
    }
  }

  // Constant after construction.
  const int64_t num_threads_;
  const uint64_t epoch_;
  const size_t capacity_;

  Mutex input_mu_ ACQUIRED_BEFORE(mu_);
  std::unique_ptr<IteratorBase> input_ GUARDED_BY(input_mu_);

  Mutex mu_;
  CondVar ready_cv_;  // a slot is done, or cancelled
  CondVar space_cv_;  // a slot was taken, the input ended, or cancelled
  std::deque<std::shared_ptr<Slot>> slots_ GUARDED_BY(mu_);
  uint64_t next_index_ GUARDED_BY(mu_) = 0;
  bool input_done_ GUARDED_BY(mu_) = false;
  bool cancelled_ GUARDED_BY(mu_) = false;

  std::vector<std::thread> threads_;  // consumer thread and destructor only
  CancelRegistration cancel_;         // last: deregistered first
};

std::unique_ptr<IteratorBase> MapDataset::MakeIteratorInternal(const IteratorContext& ctx) const {
  const uint64_t epoch = epochs_.fetch_add(1, std::memory_order_relaxed);
  if (!options_.num_parallel_calls) return std::make_unique<Iterator>(this, ctx, epoch);
  int64_t n = *options_.num_parallel_calls;
  if (n == kAutotune) n = AutotuneParallelism();
  return std::make_unique<ParallelIterator>(this, ctx, n, epoch);
}

class FilterDataset : public DatasetBase {
 public:
  FilterDataset(DatasetPtr input, PredicateFn predicate)
      : DatasetBase(input->element_spec()), input_(std::move(input)), predicate_(std::move(predicate)) {}

  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "Filter"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<FilterDataset> {
   public:
    Iterator(const FilterDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      while (true) {
        SLUICE_RETURN_IF_ERROR(input_->GetNext(out, end_of_sequence));
        if (*end_of_sequence) return Status();
        Result<bool> keep = dataset_->predicate_(*out);
        if (!keep.ok()) return keep.status();
        if (*keep) return Status();
      }
    }

   private:
    std::unique_ptr<IteratorBase> input_;
  };

  const DatasetPtr input_;
  const PredicateFn predicate_;
};

}  // namespace

Result<DatasetPtr> Map(DatasetPtr input, MapFn fn, ElementSpec out_spec, MapOptions options) {
  if (!fn) return InvalidArgument("map: the function is empty");
  IndexedMapFn indexed = [fn = std::move(fn)](Element e, ElementIndex) { return fn(std::move(e)); };
  return MapWithIndex(std::move(input), std::move(indexed), std::move(out_spec), options);
}

Result<DatasetPtr> MapWithIndex(DatasetPtr input, IndexedMapFn fn, ElementSpec out_spec, MapOptions options) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "map"));
  if (!fn) return InvalidArgument("map: the function is empty");
  if (options.num_parallel_calls && *options.num_parallel_calls != kAutotune && *options.num_parallel_calls < 1) {
    return InvalidArgument("num_parallel_calls must be positive or AUTOTUNE, not " +
                           std::to_string(*options.num_parallel_calls));
  }
  return DatasetPtr(std::make_shared<MapDataset>(std::move(input), std::move(fn), std::move(out_spec), options));
}

Result<DatasetPtr> Filter(DatasetPtr input, PredicateFn predicate) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "filter"));
  if (!predicate) return InvalidArgument("filter: the predicate is empty");
  return DatasetPtr(std::make_shared<FilterDataset>(std::move(input), std::move(predicate)));
}

}  // namespace sluice::data
