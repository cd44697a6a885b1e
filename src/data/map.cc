// Map (sequential, or parallel with ordered or first-ready hand-out) and
// Filter.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <optional>
#include <thread>
#include <utility>

#include "data/checkpoint_status.h"
#include "data/dataset_util.h"
#include "data/error_policy.h"
#include "data/interruptible_wait.h"
#include "data/memory_budget.h"
#include "data/map_and_batch.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/core/mutex.h"
#include "sluice/core/thread_pool.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// `s` naming the file and record of the element that failed (ElementOrigin),
// unless it already names a file (a reader's own error, an inner map's).
Status WithOrigin(Status s, const ElementOrigin* origin) {
  if (origin == nullptr || !origin->file || s.GetPayload("file")) return s;
  Status named(s.code(), s.message() + " (" + origin->DebugString() + ")");
  for (const auto& [key, value] : s.payloads()) named = named.WithPayload(key, value);
  return named.WithPayload("file", *origin->file).WithPayload("record", std::to_string(origin->record));
}

// The origin of a mapped element: the input's, without its re-readable
// source (the element is no longer the record). *copy holds the result.
const ElementOrigin* MappedOrigin(const ElementOrigin* origin, ElementOrigin* copy) {
  if (origin == nullptr || origin->source == nullptr) return origin;
  if (copy->file != origin->file) copy->file = origin->file;  // no reference counting per element
  copy->record = origin->record;
  copy->offset = origin->offset;
  return copy;
}
}  // namespace

// A map function's OutOfRange would end the sequence early; TF reports it
// as InvalidArgument so a map keeps its input's cardinality.
// A failure carries the element's position in the pass as the "element"
// payload (for one file, its record number), unless an inner map set it.
Result<Element> CallMapFn(const IndexedMapFn& fn, Element e, ElementIndex index, const ElementOrigin* origin) {
  Result<Element> r = fn(std::move(e), index);
  if (r.ok()) return r;
  Status s = r.status();
  if (errors::IsOutOfRange(s)) {
    s = Status(Code::kInvalidArgument, "Function invocation produced OutOfRangeError: " + s.message());
  }
  if (!s.GetPayload("element")) s = s.WithPayload("element", std::to_string(index.index));
  return WithOrigin(std::move(s), origin);
}

namespace {

class MapDataset : public DatasetBase {
 public:
  MapDataset(DatasetPtr input, IndexedMapFn fn, ElementSpec spec, MapOptions options)
      : DatasetBase(std::move(spec)), input_(std::move(input)), fn_(std::move(fn)), options_(options) {}

  int64_t cardinality() const override {
    return options_.error_policy.policy == ErrorPolicy::kSkip ? kUnknownCardinality : input_->cardinality();
  }
  std::string DebugName() const override { return options_.num_parallel_calls ? "ParallelMap" : "Map"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override;
  // This map with its own error policy `policy`.
  DatasetPtr WithErrorPolicy(StageErrorPolicy policy) const {
    MapOptions options = options_;
    options.error_policy = std::move(policy);
    return std::make_shared<MapDataset>(input_, fn_, element_spec(), options);
  }
  ParallelMapParts parts() const { return {shared_from_this(), input_, fn_, options_, &epochs_}; }

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
      : DatasetIterator(d),
        input_(d->input_->MakeIteratorInternal(ctx)),
        epoch_(epoch),
        node_(NewNode(ctx, d->DebugName())),
        errors_(ctx, d->DebugName(), d->options_.error_policy, d->element_spec()) {}

  // One element in Node::kSampleEvery is timed (and its bytes counted).
  Status GetNext(Element* out, bool* end_of_sequence) override {
    const bool sample = node_->SampleNext();
    const int64_t t0 = sample ? NowNanos() : 0;
    int64_t t1 = 0;
    while (true) {  // again after an element the error policy skips
      Element in;
      SLUICE_RETURN_IF_ERROR(input_->GetNext(&in, end_of_sequence));
      if (*end_of_sequence) return Status();
      t1 = sample ? NowNanos() : 0;
      Result<Element> r =
          CallMapFn(dataset_->fn_, std::move(in), ElementIndex{epoch_, next_index_++}, input_->origin());
      if (r.ok()) {
        *out = std::move(*r);
        break;
      }
      bool skip = false;
      SLUICE_RETURN_IF_ERROR(errors_.Handle(r.status(), out, &skip));
      if (!skip) break;
    }
    if (sample) {
      Node::Bump(node_->wait_ns, (t1 - t0) * Node::kSampleEvery);
      Node::Bump(node_->busy_ns, (NowNanos() - t1) * Node::kSampleEvery);
      Node::Bump(node_->bytes, ElementBytes(*out) * Node::kSampleEvery);
    }
    Node::Bump(node_->elements, 1);
    return Status();
  }

  const ElementOrigin* origin() const override { return MappedOrigin(input_->origin(), &origin_); }

  Status Save(IteratorStateWriter* w) override {
    w->WriteInt("epoch", static_cast<int64_t>(epoch_));
    w->WriteInt("next_index", static_cast<int64_t>(next_index_));
    return SaveInput(*input_, w);
  }
  Status Restore(IteratorStateReader* r) override {
    int64_t epoch = 0, next_index = 0;
    SLUICE_RETURN_IF_ERROR(r->ReadInt("epoch", &epoch));
    SLUICE_RETURN_IF_ERROR(r->ReadInt("next_index", &next_index));
    epoch_ = static_cast<uint64_t>(epoch);
    next_index_ = static_cast<uint64_t>(next_index);
    RestorePass(dataset_->epochs_, epoch_);
    return RestoreInput(*input_, r);
  }

 private:
  std::unique_ptr<IteratorBase> input_;
  uint64_t epoch_;
  uint64_t next_index_ = 0;
  const std::shared_ptr<Node> node_;
  ErrorHandler errors_;
  mutable ElementOrigin origin_;  // origin()'s result when it drops the source
};

// Workers take input elements in order (a chunk at a time, under input_mu_),
// each into a slot at the back of slots_, and run the function outside every
// lock. The consumer takes the front slot once it is done (deterministic) or
// any done slot (not deterministic). At most 2 x parallelism_ chunks of
// slots (plus one) exist at once, and parallelism_ chunks are being mapped;
// AUTOTUNE's tuner moves parallelism_ (Node::SetParallelism).
// Save pauses the workers, waits for the chunks in flight to be published,
// and saves the finished slots in order with the input's position after
// them. With deterministic=false a restored iterator hands out the same set
// of elements as the saved one would have, not necessarily in its order.
class MapDataset::ParallelIterator : public DatasetIterator<MapDataset> {
 public:
  // threads: num_parallel_calls, or kAutotune.
  ParallelIterator(const MapDataset* d, const IteratorContext& ctx, int64_t threads, uint64_t epoch)
      : DatasetIterator(d),
        autotune_(threads == kAutotune),
        epoch_(epoch),
        model_(ctx.model),
        input_(d->input_->MakeIteratorInternal(ctx)),
        node_(NewNode(ctx, d->DebugName(), autotune_, autotune_ ? 1 : threads)),
        errors_(ctx, d->DebugName(), d->options_.error_policy, d->element_spec()),
        account_(ctx.model ? ctx.model->memory() : nullptr, d->DebugName()),
        parallelism_(autotune_ ? 1 : threads),
        cancel_(ctx, [this] { Cancel(); }) {}

  ~ParallelIterator() override {
    node_->ClearApply();
    Cancel();
    for (std::thread& t : threads_) t.join();
  }

  Status GetNext(Element* out, bool* end_of_sequence) override SLUICE_EXCLUDES(mu_) {
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
        front_index_.store(slots_.empty() ? kNoFront : slots_.front()->index, std::memory_order_relaxed);
        account_.Release(slot->bytes);  // also wakes a chunk waiting to become the front
        // Waiting workers wake once half the slots are free, not for each
        // slot taken: one wake-up per parallelism_ chunks.
        if (workers_waiting_ > 0 && slots_.size() <= ChunkSize() * static_cast<size_t>(parallelism_)) {
          space_cv_.SignalAll();
        }
        if (slot->skipped) continue;  // the error policy dropped it
        Node::Bump(node_->elements, 1);
        Node::Set(node_->buffer_fill, static_cast<int64_t>(slots_.size()));
        *end_of_sequence = false;
        if (!slot->status.ok()) return slot->status;
        *out = std::move(slot->element);
        origin_ = std::move(slot->origin);
        return Status();
      }
      consumer_waiting_ = true;
      Status interrupted = InterruptibleWait(&ready_cv_, &mu_);  // Ctrl-C from Python
      consumer_waiting_ = false;
      if (!interrupted.ok()) return interrupted;
    }
  }

  const ElementOrigin* origin() const override { return origin_ ? &*origin_ : nullptr; }

  // Waits (holding no lock the workers need) until no chunk is in flight,
  // then saves; the workers resume afterwards. Cancelled if the tree is
  // cancelled meanwhile; the wait answers Ctrl-C as GetNext's does.
  Status Save(IteratorStateWriter* w) override SLUICE_EXCLUDES(mu_, input_mu_) {
    Status s;
    {
      MutexLock lock(&mu_);
      paused_ = true;
      space_cv_.SignalAll();  // a worker waiting for space holds input_mu_: it lets go
      while (s.ok() && !cancelled_ && active_ > 0) s = InterruptibleWait(&idle_cv_, &mu_);
    }
    if (s.ok()) s = SavePaused(w);
    MutexLock lock(&mu_);
    paused_ = false;
    park_cv_.SignalAll();
    return s;
  }

  // REQUIRES: a fresh iterator (no GetNext yet).
  Status Restore(IteratorStateReader* r) override SLUICE_EXCLUDES(mu_, input_mu_) {
    if (!threads_.empty()) return Status(Code::kFailedPrecondition, "ParallelMap: Restore after GetNext");
    int64_t epoch = 0, next_index = 0, live = 0;
    bool input_done = false;
    SLUICE_RETURN_IF_ERROR(r->ReadInt("epoch", &epoch));
    SLUICE_RETURN_IF_ERROR(r->ReadInt("next_index", &next_index));
    SLUICE_RETURN_IF_ERROR(r->ReadBool("input_done", &input_done));
    SLUICE_RETURN_IF_ERROR(r->ReadInt("slots.size", &live));
    std::deque<std::shared_ptr<Slot>> slots;
    for (int64_t i = 0; i < live; ++i) {
      auto slot = std::make_shared<Slot>();
      SLUICE_RETURN_IF_ERROR(ReadSlot(*r, "slots." + std::to_string(i), slot.get()));
      slots.push_back(std::move(slot));
    }
    if (input_done) {
      slots.push_back(std::make_shared<Slot>());
      slots.back()->done = slots.back()->end = true;
    }
    epoch_ = static_cast<uint64_t>(epoch);
    RestorePass(dataset_->epochs_, epoch_);
    {
      MutexLock lock(&mu_);
      slots_ = std::move(slots);
      next_index_ = static_cast<uint64_t>(next_index);
      input_done_ = input_done;
    }
    // The input is restored even once done: its passes decide the next
    // epochs' orders.
    MutexLock input_lock(&input_mu_);
    return RestoreInput(*input_, r);
  }

 private:
  struct Slot {
    bool done = false;
    bool end = false;
    bool skipped = false;  // by the error policy
    uint64_t index = 0;    // in the pass
    int64_t bytes = 0;     // of element, charged to account_
    Status status;
    Element element;
    std::optional<ElementOrigin> origin;  // of the input element, where known
  };

  // With the workers paused and no chunk in flight: every slot is done.
  Status SavePaused(IteratorStateWriter* w) SLUICE_EXCLUDES(mu_, input_mu_) {
    MutexLock input_lock(&input_mu_);
    bool input_done = false;
    {
      MutexLock lock(&mu_);
      if (cancelled_) return errors::Cancelled("iterator was cancelled");
      input_done = input_done_;
      w->WriteInt("epoch", static_cast<int64_t>(epoch_));
      w->WriteInt("next_index", static_cast<int64_t>(next_index_));
      w->WriteBool("input_done", input_done_);
      int64_t live = 0;
      for (const std::shared_ptr<Slot>& slot : slots_) {
        if (!slot->end) WriteSlot(w, "slots." + std::to_string(live++), *slot);
      }
      w->WriteInt("slots.size", live);
    }
    (void)input_done;
    return SaveInput(*input_, w);
  }

  static void WriteSlot(IteratorStateWriter* w, const std::string& key, const Slot& slot) {
    WriteStatus(w, key + ".status", slot.status);
    if (slot.status.ok()) w->WriteElement(key, slot.element);
    w->WriteBool(key + ".has_origin", slot.origin && slot.origin->file);
    if (slot.origin && slot.origin->file) {
      w->WriteBytes(key + ".origin_file", *slot.origin->file);
      w->WriteInt(key + ".origin_record", slot.origin->record);
    }
  }
  static Status ReadSlot(const IteratorStateReader& r, const std::string& key, Slot* slot) {
    slot->done = true;
    SLUICE_RETURN_IF_ERROR(ReadStatus(r, key + ".status", &slot->status));
    if (slot->status.ok()) SLUICE_RETURN_IF_ERROR(r.ReadElement(key, &slot->element));
    bool has_origin = false;
    SLUICE_RETURN_IF_ERROR(r.ReadBool(key + ".has_origin", &has_origin));
    if (!has_origin) return Status();
    std::string file;
    ElementOrigin origin;
    SLUICE_RETURN_IF_ERROR(r.ReadBytes(key + ".origin_file", &file));
    SLUICE_RETURN_IF_ERROR(r.ReadInt(key + ".origin_record", &origin.record));
    origin.file = std::make_shared<const std::string>(std::move(file));
    slot->origin = std::move(origin);
    return Status();
  }

  // Options are final by now (the root has started): AUTOTUNE starts
  // Model::max_parallelism() threads, of which parallelism_ work at once.
  void StartThreads() SLUICE_EXCLUDES(mu_) {
    deterministic_ = model_ ? model_->deterministic(dataset_->options_.deterministic)
                            : dataset_->options_.deterministic.value_or(true);
    int64_t n = 0;
    {
      MutexLock lock(&mu_);
      const StartingParallelism start = StartParallelism(model_.get(), autotune_, parallelism_);
      n = max_parallelism_ = start.threads;
      SetParallelismLocked(start.calls);
    }
    if (autotune_) node_->SetApply([this](int64_t p) {
      MutexLock lock(&mu_);
      SetParallelismLocked(p);
    });
    threads_.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      threads_.emplace_back([this, i] {
        SetCurrentThreadName("sluice_map");
        WorkerLoop(i);
      });
    }
  }

  void Cancel() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    cancelled_ = true;
    ready_cv_.SignalAll();
    space_cv_.SignalAll();
    park_cv_.SignalAll();
    account_.Cancel();
    idle_cv_.SignalAll();
  }

  void SetParallelismLocked(int64_t p) SLUICE_REQUIRES(mu_) {
    mu_.AssertHeld();
    parallelism_ = std::clamp<int64_t>(p, 1, max_parallelism_);
    Node::Set(node_->parallelism, parallelism_);
    Node::Set(node_->buffer_size, (2 * parallelism_ + 1) * static_cast<int64_t>(ChunkSize()));
    space_cv_.SignalAll();
    park_cv_.SignalAll();
  }

  // The slot to hand out next, or end(). The end slot (the last) is ready
  // only once every slot before it is gone.
  std::deque<std::shared_ptr<Slot>>::iterator FindReadyLocked() SLUICE_REQUIRES(mu_) {
    mu_.AssertHeld();
    if (slots_.empty()) return slots_.end();
    if (deterministic_ || slots_.size() == 1) {
      return slots_.front()->done ? slots_.begin() : slots_.end();
    }
    for (auto it = slots_.begin(); it != slots_.end(); ++it) {
      if ((*it)->done && !(*it)->end) return it;
    }
    return slots_.end();
  }

  // One chunk per round: up to chunk_size() input elements are read and
  // given slots in order under input_mu_, mapped outside every lock, then
  // published together. Chunks make a cheap function (parsing a small
  // record) cost one hand-off per chunk instead of one per element.
  // Worker `index` works while index < parallelism_ and is parked (holding
  // no lock) otherwise, so the working ones run as a fixed pool would.
  void WorkerLoop(int64_t index) SLUICE_EXCLUDES(mu_, input_mu_) {
    std::vector<std::shared_ptr<Slot>> chunk;
    std::vector<Element> elements;
    while (true) {
      chunk.clear();
      elements.clear();
      uint64_t first_index = 0;
      bool end = false;
      {
        MutexLock lock(&mu_);
        while (!cancelled_ && !input_done_ && (paused_ || index >= parallelism_)) park_cv_.Wait(&mu_);
        if (cancelled_ || input_done_) return;
      }
      {
        MutexLock input_lock(&input_mu_);
        const size_t want = ChunkSize();
        {
          MutexLock lock(&mu_);
          while (!cancelled_ && !input_done_ && !paused_ &&
                 slots_.size() >= want * 2 * static_cast<size_t>(parallelism_)) {
            ++workers_waiting_;
            space_cv_.Wait(&mu_);
            --workers_waiting_;
          }
          if (cancelled_ || input_done_) return;
          if (paused_) continue;  // a Save: park, releasing input_mu_
          ++active_;
          first_index = next_index_;
          for (size_t j = 0; j < want; ++j) {
            chunk.push_back(std::make_shared<Slot>());
            chunk.back()->index = first_index + j;
            if (slots_.empty()) front_index_.store(first_index + j, std::memory_order_relaxed);
            slots_.push_back(chunk.back());
          }
          // At most 2 x parallelism_ chunks, plus the one being reserved.
          Node::Set(node_->buffer_size, (2 * parallelism_ + 1) * static_cast<int64_t>(want));
          Node::Set(node_->buffer_fill, static_cast<int64_t>(slots_.size()));
        }
        elements.resize(chunk.size());
        size_t got = 0;
        const int64_t input_start = NowNanos();
        for (; got < chunk.size(); ++got) {
          Status s = input_->GetNext(&elements[got], &end);
          if (!s.ok()) chunk[got]->status = s;
          if (end) break;
          if (const ElementOrigin* o = input_->origin(); s.ok() && o != nullptr) {
            chunk[got]->origin = ElementOrigin{o->file, o->record, o->offset, nullptr};  // mapped: not the record
          }
        }
        Node::Add(node_->wait_ns, NowNanos() - input_start);
        MutexLock lock(&mu_);
        next_index_ += got;
        if (end) {
          // Slot `got` becomes the end; the reserved ones after it go (they
          // are the last in slots_: only this thread appends, under input_mu_).
          for (size_t j = got + 1; j < chunk.size(); ++j) slots_.pop_back();
          chunk.resize(got + 1);
          chunk[got]->end = true;
          input_done_ = true;
          space_cv_.SignalAll();
          park_cv_.SignalAll();
        }
      }
      const size_t n = end ? chunk.size() - 1 : chunk.size();
      const auto start = std::chrono::steady_clock::now();
      const int64_t cpu_start = ThreadCpuNanos();
      int64_t bytes = 0;
      for (size_t j = 0; j < n; ++j) {
        if (!chunk[j]->status.ok()) continue;
        const ElementOrigin* origin = chunk[j]->origin ? &*chunk[j]->origin : nullptr;
        Result<Element> r =
            CallMapFn(dataset_->fn_, std::move(elements[j]), ElementIndex{epoch_, first_index + j}, origin);
        if (r.ok()) {
          elements[j] = std::move(*r);
        } else {
          chunk[j]->status = errors_.Handle(r.status(), &elements[j], &chunk[j]->skipped);
          if (!chunk[j]->status.ok() || chunk[j]->skipped) continue;
        }
        chunk[j]->bytes = ElementBytes(elements[j]);
        bytes += chunk[j]->bytes;
      }
      if (n > 0) {
        const auto wall = std::chrono::steady_clock::now() - start;
        RecordCallTime(wall / n);
        Node::Add(node_->busy_ns, std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count());
        Node::Add(node_->cpu_ns, std::max<int64_t>(1, ThreadCpuNanos() - cpu_start));
        Node::Add(node_->bytes, bytes);
      }
      if (n > 0) element_bytes_.store(bytes / static_cast<int64_t>(n), std::memory_order_relaxed);
      if (n > 0) {
        // Waits for room in the budget unless this chunk holds the next
        // element to hand out (then the consumer needs it now).
        Status charged = account_.Charge(
            bytes, [this, first_index] { return front_index_.load(std::memory_order_relaxed) >= first_index; });
        if (errors::IsCancelled(charged)) return;
        for (size_t j = 0; !charged.ok() && j < n; ++j) {
          if (chunk[j]->bytes > 0) chunk[j]->status = charged;
          chunk[j]->bytes = 0;
        }
      }
      MutexLock lock(&mu_);
      for (size_t j = 0; j < chunk.size(); ++j) {
        chunk[j]->done = true;
        if (j < n && chunk[j]->status.ok()) chunk[j]->element = std::move(elements[j]);
      }
      if (--active_ == 0 && paused_) idle_cv_.SignalAll();
      // In order, only the chunk holding the front can end the consumer's
      // wait: a later chunk finishing first would wake it for nothing.
      if (consumer_waiting_ && (!deterministic_ || end || slots_.empty() || slots_.front() == chunk.front())) {
        ready_cv_.Signal();
      }
      if (end) return;
    }
  }

  // Elements per chunk: enough calls for about kChunkTarget of work, at most
  // kMaxChunk; 1 until a call has been timed.
  // Under a memory budget, a chunk (charged whole) also stays within
  // 1/kBudgetShare of the budget.
  size_t ChunkSize() const {
    const int64_t ns = call_ns_.load(std::memory_order_relaxed);
    if (ns <= 0) return 1;
    int64_t most = kMaxChunk;
    const int64_t limit = account_.limit(), bytes = element_bytes_.load(std::memory_order_relaxed);
    if (limit > 0 && bytes > 0) most = std::clamp<int64_t>(limit / kBudgetShare / bytes, 1, kMaxChunk);
    return static_cast<size_t>(std::clamp<int64_t>(kChunkTargetNs / ns, 1, most));
  }
  void RecordCallTime(std::chrono::nanoseconds per_call) {
    const int64_t old_ns = call_ns_.load(std::memory_order_relaxed);
    const int64_t ns = std::max<int64_t>(1, per_call.count());
    call_ns_.store(old_ns <= 0 ? ns : (3 * old_ns + ns) / 4, std::memory_order_relaxed);
  }

  static constexpr int64_t kChunkTargetNs = 50'000;
  static constexpr int64_t kMaxChunk = 32;
  static constexpr int64_t kBudgetShare = 64;

  // Constant after construction.
  const bool autotune_;
  uint64_t epoch_;                      // Restore sets it before the workers start
  const std::shared_ptr<Model> model_;  // may be null

  Mutex input_mu_ SLUICE_ACQUIRED_BEFORE(mu_);
  std::unique_ptr<IteratorBase> input_ SLUICE_GUARDED_BY(input_mu_);

  const std::shared_ptr<Node> node_;
  ErrorHandler errors_;
  BudgetAccount account_;
  // The index of slots_.front() (kNoFront: none), for the budget's wait.
  static constexpr uint64_t kNoFront = ~uint64_t{0};
  std::atomic<uint64_t> front_index_{kNoFront};
  bool deterministic_ = true;  // set by StartThreads; the consumer's

  Mutex mu_;
  CondVar ready_cv_;  // a slot is done, or cancelled
  CondVar space_cv_;  // a slot was taken, parallelism rose, the input ended, or cancelled
  // Workers working (the others are parked), at most max_parallelism_ (the
  // threads started); up to 2 x parallelism_ chunks of slots exist at once.
  int64_t parallelism_ SLUICE_GUARDED_BY(mu_);
  int64_t max_parallelism_ SLUICE_GUARDED_BY(mu_) = 1;
  CondVar park_cv_;  // parallelism_ rose, the input ended, or cancelled
  std::deque<std::shared_ptr<Slot>> slots_ SLUICE_GUARDED_BY(mu_);
  uint64_t next_index_ SLUICE_GUARDED_BY(mu_) = 0;
  bool input_done_ SLUICE_GUARDED_BY(mu_) = false;
  bool cancelled_ SLUICE_GUARDED_BY(mu_) = false;
  bool consumer_waiting_ SLUICE_GUARDED_BY(mu_) = false;
  int workers_waiting_ SLUICE_GUARDED_BY(mu_) = 0;
  bool paused_ SLUICE_GUARDED_BY(mu_) = false;  // a Save is waiting or saving: no new chunks
  int64_t active_ SLUICE_GUARDED_BY(mu_) = 0;   // chunks reserved and not yet published
  CondVar idle_cv_;                             // active_ fell to 0 during a Save, or cancelled
  std::atomic<int64_t> call_ns_{0};  // average time of one call (EWMA)
  std::atomic<int64_t> element_bytes_{0};  // bytes of the last chunk's elements, on average

  std::optional<ElementOrigin> origin_;  // of the element returned last; consumer only
  std::vector<std::thread> threads_;     // consumer thread and destructor only
  CancelRegistration cancel_;            // last: deregistered first
};

std::unique_ptr<IteratorBase> MapDataset::MakeIteratorInternal(const IteratorContext& ctx) const {
  const uint64_t epoch = NextPass(epochs_, ctx);
  // A probe calls the function on one element, on the caller's thread.
  if (!options_.num_parallel_calls || ctx.probe) return std::make_unique<Iterator>(this, ctx, epoch);
  return std::make_unique<ParallelIterator>(this, ctx, *options_.num_parallel_calls, epoch);
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
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "Filter")) {}
    // A sampled call times the predicate of every element it drops as its own work.
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      while (true) {
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
        if (*end_of_sequence) return Status();
        Result<bool> keep = dataset_->predicate_(*out);
        if (!keep.ok()) return WithOrigin(keep.status(), input_->origin());
        if (*keep) return timer.Finish(Status(), *out, false);
      }
    }

    Status Save(IteratorStateWriter* w) override { return SaveInput(*input_, w); }
    Status Restore(IteratorStateReader* r) override { return RestoreInput(*input_, r); }

    const ElementOrigin* origin() const override { return input_->origin(); }

   private:
    std::unique_ptr<IteratorBase> input_;
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
  const PredicateFn predicate_;
};

}  // namespace

std::optional<ParallelMapParts> AsParallelMap(const DatasetPtr& ds) {
  const auto* map = dynamic_cast<const MapDataset*>(ds.get());
  if (map == nullptr || !map->parts().options.num_parallel_calls) return std::nullopt;
  return map->parts();
}

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
  SLUICE_RETURN_IF_ERROR(CheckReplacement(options.error_policy, out_spec));
  return DatasetPtr(std::make_shared<MapDataset>(std::move(input), std::move(fn), std::move(out_spec), options));
}

DatasetPtr MapWithErrorPolicy(const DatasetPtr& map, StageErrorPolicy policy) {
  const auto* m = dynamic_cast<const MapDataset*>(map.get());
  return m == nullptr ? nullptr : m->WithErrorPolicy(std::move(policy));
}

Result<DatasetPtr> Filter(DatasetPtr input, PredicateFn predicate) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "filter"));
  if (!predicate) return InvalidArgument("filter: the predicate is empty");
  return DatasetPtr(std::make_shared<FilterDataset>(std::move(input), std::move(predicate)));
}

}  // namespace sluice::data
