// Prefetch: one background thread keeps up to buffer_size elements (or their
// errors) ready, in order. AUTOTUNE: the buffer starts at one element and
// doubles when the consumer finds it empty after it had filled (TF's
// PrefetchAutotuner), as long as the Model's RAM budget has room for the
// new elements (at the average element size so far). Save pauses the thread,
// waits for the element it is fetching, and saves the buffer (elements and
// errors, in order) with the input's position after it.
#include <deque>
#include <thread>
#include <utility>

#include "data/checkpoint_status.h"
#include "data/dataset_util.h"
#include "data/interruptible_wait.h"
#include "data/memory_budget.h"
#include "data/model.h"
#include "data/prefetch.h"
#include "sluice/core/mutex.h"
#include "sluice/core/thread_pool.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class PrefetchIterator : public IteratorBase {
 public:
  // buffer_size: >= 1, or kAutotune.
  PrefetchIterator(std::unique_ptr<IteratorBase> input, int64_t buffer_size, const IteratorContext& ctx,
                   DatasetPtr keep_alive)
      : keep_alive_(std::move(keep_alive)),
        autotune_(buffer_size == kAutotune),
        model_(ctx.model),
        input_(std::move(input)),
        node_(NewNode(ctx, "Prefetch", autotune_)),
        account_(ctx.model ? ctx.model->memory() : nullptr, "Prefetch"),
        capacity_(autotune_ ? 1 : static_cast<size_t>(buffer_size)),
        cancel_(ctx, [this] { Cancel(); }) {
    Node::Set(node_->buffer_size, static_cast<int64_t>(capacity_));
  }

  ~PrefetchIterator() override {
    Cancel();
    if (thread_.joinable()) thread_.join();
    if (model_) {
      MutexLock lock(&mu_);
      model_->ReleaseBytes(reserved_bytes_);
    }
  }

  Status GetNext(Element* out, bool* end_of_sequence) override SLUICE_EXCLUDES(mu_) {
    if (!thread_.joinable()) {
      thread_ = std::thread([this] {
        SetCurrentThreadName("sluice_prefetch");
        Run();
      });
    }
    MutexLock lock(&mu_);
    if (autotune_ && buffer_.empty() && !done_ && !cancelled_) GrowLocked();
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
    buffered_.store(buffer_.size(), std::memory_order_relaxed);
    account_.Release(item.bytes);
    space_cv_.Signal();
    Node::Bump(node_->elements, 1);
    Node::Set(node_->buffer_fill, static_cast<int64_t>(buffer_.size()));
    *end_of_sequence = false;
    if (!item.status.ok()) return item.status;
    *out = std::move(item.element);
    return Status();
  }

  Status Save(IteratorStateWriter* w) override SLUICE_EXCLUDES(mu_) {
    bool done = false;
    {
      MutexLock lock(&mu_);
      paused_ = true;
      Status s;
      while (s.ok() && !cancelled_ && fetching_) s = InterruptibleWait(&idle_cv_, &mu_);  // Ctrl-C from Python
      if (cancelled_) return errors::Cancelled("iterator was cancelled");
      if (!s.ok()) {
        paused_ = false;
        space_cv_.SignalAll();
        return s;
      }
      done = done_;
      w->WriteBool("input_done", done_);
      w->WriteInt("buffer.size", static_cast<int64_t>(buffer_.size()));
      int64_t i = 0;
      for (const Item& item : buffer_) {
        const std::string key = "buffer." + std::to_string(i++);
        WriteStatus(w, key + ".status", item.status);
        if (item.status.ok()) w->WriteElement(key, item.element);
      }
    }
    // The thread is parked (fetching_ is false): input_ is this thread's.
    // The input is saved even once done: its passes decide the next epochs.
    (void)done;
    IteratorStateWriter input = w->Child("input");
    Status s = input_->Save(&input);
    MutexLock lock(&mu_);
    paused_ = false;
    space_cv_.SignalAll();
    return s;
  }

  // REQUIRES: a fresh iterator (no GetNext yet).
  Status Restore(IteratorStateReader* r) override SLUICE_EXCLUDES(mu_) {
    if (thread_.joinable()) return Status(Code::kFailedPrecondition, "Prefetch: Restore after GetNext");
    bool done = false;
    int64_t n = 0;
    SLUICE_RETURN_IF_ERROR(r->ReadBool("input_done", &done));
    SLUICE_RETURN_IF_ERROR(r->ReadInt("buffer.size", &n));
    std::deque<Item> buffer;
    for (int64_t i = 0; i < n; ++i) {
      const std::string key = "buffer." + std::to_string(i);
      Item item;
      SLUICE_RETURN_IF_ERROR(ReadStatus(*r, key + ".status", &item.status));
      if (item.status.ok()) SLUICE_RETURN_IF_ERROR(r->ReadElement(key, &item.element));
      item.bytes = item.status.ok() ? ElementBytes(item.element) : 0;
      SLUICE_RETURN_IF_ERROR(account_.ChargeNoWait(item.bytes));  // released as handed out
      buffer.push_back(std::move(item));
    }
    {
      MutexLock lock(&mu_);
      buffer_ = std::move(buffer);
      buffered_.store(buffer_.size(), std::memory_order_relaxed);
      done_ = done;
    }
    return RestoreInput(*input_, r);
  }

 private:
  struct Item {
    Status status;
    Element element;
    int64_t bytes = 0;  // charged to account_
  };

  // An underflow: double the buffer if it had filled since it last grew and
  // the RAM budget has room.
  void GrowLocked() SLUICE_REQUIRES(mu_) {
    mu_.AssertHeld();
    if (!filled_ || !model_ || !model_->autotune_enabled() || produced_ == 0) return;
    const int64_t per_element = std::max<int64_t>(1, produced_bytes_ / produced_);
    const int64_t more = static_cast<int64_t>(capacity_) * per_element;
    if (!account_.HasRoomFor(more) || !model_->TryReserveBytes(more)) return;
    reserved_bytes_ += more;
    capacity_ *= 2;
    filled_ = false;
    Node::Set(node_->buffer_size, static_cast<int64_t>(capacity_));
    space_cv_.SignalAll();
  }

  void Cancel() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    cancelled_ = true;
    ready_cv_.SignalAll();
    space_cv_.SignalAll();
    account_.Cancel();
    idle_cv_.SignalAll();
  }

  void Run() SLUICE_EXCLUDES(mu_) {
    while (true) {
      {
        MutexLock lock(&mu_);
        while (!cancelled_ && !done_ && (paused_ || buffer_.size() >= capacity_)) space_cv_.Wait(&mu_);
        if (cancelled_ || done_) return;  // done_: restored at the input's end
        fetching_ = true;
      }
      Item item;
      bool end = false;
      const int64_t start = NowNanos();
      item.status = input_->GetNext(&item.element, &end);
      Node::Bump(node_->wait_ns, NowNanos() - start);  // the thread's own work is nil
      const int64_t bytes = item.status.ok() && !end ? ElementBytes(item.element) : 0;
      if (item.status.ok() && !end) {
        // Waits for room in the budget unless the consumer has nothing to take.
        Status charged = account_.Charge(bytes, [this] { return buffered_.load(std::memory_order_relaxed) == 0; });
        if (errors::IsCancelled(charged)) return;
        if (charged.ok()) {
          item.bytes = bytes;
        } else {
          item = Item{charged, Element(), 0};
        }
      }
      MutexLock lock(&mu_);
      fetching_ = false;
      if (paused_) idle_cv_.SignalAll();
      if (item.status.ok() && end) {
        done_ = true;
        ready_cv_.SignalAll();
        return;
      }
      buffer_.push_back(std::move(item));
      buffered_.store(buffer_.size(), std::memory_order_relaxed);
      ++produced_;
      produced_bytes_ += bytes;
      Node::Bump(node_->bytes, bytes);
      if (buffer_.size() >= capacity_) filled_ = true;
      Node::Set(node_->buffer_fill, static_cast<int64_t>(buffer_.size()));
      ready_cv_.SignalAll();
    }
  }

  const DatasetPtr keep_alive_;
  const bool autotune_;
  const std::shared_ptr<Model> model_;   // may be null
  std::unique_ptr<IteratorBase> input_;  // the prefetch thread only
  const std::shared_ptr<Node> node_;
  BudgetAccount account_;
  std::atomic<size_t> buffered_{0};  // buffer_.size(), for the budget's wait

  Mutex mu_;
  CondVar ready_cv_;  // an item arrived, the input ended, or cancelled
  CondVar space_cv_;  // an item was taken, a Save ended, or cancelled
  CondVar idle_cv_;   // the thread stopped fetching during a Save, or cancelled
  std::deque<Item> buffer_ SLUICE_GUARDED_BY(mu_);
  size_t capacity_ SLUICE_GUARDED_BY(mu_);
  bool filled_ SLUICE_GUARDED_BY(mu_) = false;  // the buffer reached capacity_ since it last grew
  int64_t produced_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t produced_bytes_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t reserved_bytes_ SLUICE_GUARDED_BY(mu_) = 0;  // from the model's RAM budget
  bool done_ SLUICE_GUARDED_BY(mu_) = false;
  bool cancelled_ SLUICE_GUARDED_BY(mu_) = false;
  bool paused_ SLUICE_GUARDED_BY(mu_) = false;    // a Save is waiting or saving: fetch nothing
  bool fetching_ SLUICE_GUARDED_BY(mu_) = false;  // the thread is in input_->GetNext

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
    if (buffer_size_ == 0 || ctx.probe) return input;  // a probe reads no further than its element
    return std::make_unique<PrefetchIterator>(std::move(input), buffer_size_, ctx, shared_from_this());
  }

 private:
  const DatasetPtr input_;
  const int64_t buffer_size_;
};

}  // namespace

std::unique_ptr<IteratorBase> MakePrefetchIterator(std::unique_ptr<IteratorBase> input, size_t buffer_size,
                                                   const IteratorContext& ctx, DatasetPtr keep_alive) {
  if (ctx.probe) return input;  // no read-ahead thread for a probe
  return std::make_unique<PrefetchIterator>(std::move(input), static_cast<int64_t>(buffer_size), ctx,
                                            std::move(keep_alive));
}

Result<DatasetPtr> Prefetch(DatasetPtr input, int64_t buffer_size) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "prefetch"));
  if (buffer_size < 0 && buffer_size != kAutotune) return InvalidArgument("buffer_size must be >= 0 or AUTOTUNE");
  return DatasetPtr(std::make_shared<PrefetchDataset>(std::move(input), buffer_size));
}

}  // namespace sluice::data
