// Prefetch: one background thread keeps up to buffer_size elements (or their
// errors) ready, in order.
#include <deque>
#include <thread>
#include <utility>

#include "data/dataset_util.h"
#include "data/interruptible_wait.h"
#include "data/prefetch.h"
#include "sluice/core/mutex.h"
#include "sluice/core/thread_pool.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class PrefetchIterator : public IteratorBase {
 public:
  PrefetchIterator(std::unique_ptr<IteratorBase> input, size_t buffer_size, const IteratorContext& ctx,
                   DatasetPtr keep_alive)
      : keep_alive_(std::move(keep_alive)),
        capacity_(buffer_size),
        input_(std::move(input)),
        cancel_(ctx, [this] { Cancel(); }) {}

  ~PrefetchIterator() override {
    Cancel();
    if (thread_.joinable()) thread_.join();
  }

  Status GetNext(Element* out, bool* end_of_sequence) override SLUICE_EXCLUDES(mu_) {
    if (!thread_.joinable()) {
      thread_ = std::thread([this] {
        SetCurrentThreadName("sluice_prefetch");
        Run();
      });
    }
    MutexLock lock(&mu_);
    while (!cancelled_ && buffer_.empty() && !done_) {
      SLUICE_RETURN_IF_ERROR(InterruptibleWait(&ready_cv_, &mu_));  // Ctrl-C from Python
    }
    if (cancelled_) return errors::Cancelled("iterator was cancelled");
    if (buffer_.empty()) {
      *end_of_sequence = true;
      return Status();
    }
    Item item = std::move(buffer_.front());
    buffer_.pop_front();
    space_cv_.Signal();
    *end_of_sequence = false;
    if (!item.status.ok()) return item.status;
    *out = std::move(item.element);
    return Status();
  }

 private:
  struct Item {
    Status status;
    Element element;
  };

  void Cancel() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    cancelled_ = true;
    ready_cv_.SignalAll();
    space_cv_.SignalAll();
  }

  void Run() SLUICE_EXCLUDES(mu_) {
    while (true) {
      {
        MutexLock lock(&mu_);
        while (!cancelled_ && buffer_.size() >= capacity_) space_cv_.Wait(&mu_);
        if (cancelled_) return;
      }
      Item item;
      bool end = false;
      item.status = input_->GetNext(&item.element, &end);
      MutexLock lock(&mu_);
      if (item.status.ok() && end) {
        done_ = true;
        ready_cv_.SignalAll();
        return;
      }
      buffer_.push_back(std::move(item));
      ready_cv_.SignalAll();
    }
  }

  const DatasetPtr keep_alive_;
  const size_t capacity_;
  std::unique_ptr<IteratorBase> input_;  // the prefetch thread only

  Mutex mu_;
  CondVar ready_cv_;  // an item arrived, the input ended, or cancelled
  CondVar space_cv_;  // an item was taken, or cancelled
  std::deque<Item> buffer_ SLUICE_GUARDED_BY(mu_);
  bool done_ SLUICE_GUARDED_BY(mu_) = false;
  bool cancelled_ SLUICE_GUARDED_BY(mu_) = false;

  std::thread thread_;  // consumer thread and destructor only
  CancelRegistration cancel_;
};

class PrefetchDataset : public DatasetBase {
 public:
  PrefetchDataset(DatasetPtr input, int64_t buffer_size)
      : DatasetBase(input->element_spec()), input_(std::move(input)), buffer_size_(buffer_size) {}

  int64_t cardinality() const override { return input_->cardinality(); }
  std::string DebugName() const override { return "Prefetch"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    std::unique_ptr<IteratorBase> input = input_->MakeIteratorInternal(ctx);
    if (buffer_size_ == 0) return input;
    return MakePrefetchIterator(std::move(input), static_cast<size_t>(buffer_size_), ctx, shared_from_this());
  }

 private:
  const DatasetPtr input_;
  const int64_t buffer_size_;
};

}  // namespace

std::unique_ptr<IteratorBase> MakePrefetchIterator(std::unique_ptr<IteratorBase> input, size_t buffer_size,
                                                   const IteratorContext& ctx, DatasetPtr keep_alive) {
  return std::make_unique<PrefetchIterator>(std::move(input), buffer_size, ctx, std::move(keep_alive));
}

Result<DatasetPtr> Prefetch(DatasetPtr input, int64_t buffer_size) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "prefetch"));
  if (buffer_size == kAutotune) buffer_size = std::max<int64_t>(2, AutotuneParallelism());
  if (buffer_size < 0) return InvalidArgument("buffer_size must be >= 0 or AUTOTUNE");
  return DatasetPtr(std::make_shared<PrefetchDataset>(std::move(input), buffer_size));
}

}  // namespace sluice::data
