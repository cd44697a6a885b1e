// MapAndBatch: a parallel map and batch in one stage (tf.data's
// MapAndBatchDataset, which its map_and_batch_fusion puts in place of
// map(num_parallel_calls) -> batch). Workers write each mapped element
// straight into its row of the batch being built, so there is no hand-off
// per element, the consumer is woken once per batch, and the batch copy runs
// on the workers; the fused random resized crop decodes into the row itself.
#include "data/map_and_batch.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "core/bulk_copy.h"
#include "data/dataset_util.h"
#include "data/interruptible_wait.h"
#include "data/model.h"
#include "sluice/core/mutex.h"
#include "sluice/core/thread_pool.h"

namespace sluice::data {
namespace {

// TF's message for an element that does not fit the batch it is copied into.
Status BatchShapeError(const TensorShape& tensor, const TensorShape& batch) {
  return InvalidArgument("Cannot add tensor to the batch: number of elements does not match. Shapes are: [tensor]: " +
                         tensor.DebugString() + ", [batch]: " + batch.DebugString());
}

// True if every output component has a known numeric dtype (strings and
// unknown dtypes are batched by Batch itself).
bool CanFuse(const ElementSpec& spec) {
  for (DType d : spec.dtypes) {
    if (d == DType::kInvalid || d == DType::kString) return false;
  }
  return true;
}

// True if every component's shape is known, so batches can be allocated
// before any element is mapped.
bool FullyDefined(const ElementSpec& spec) {
  for (const PartialShape& s : spec.shapes) {
    if (!s.fully_defined()) return false;
  }
  return true;
}

// The dtype and shape of each component of one mapped element.
struct RowSignature {
  std::vector<DType> dtypes;
  std::vector<TensorShape> shapes;
};

// One batch being built. Rows [0, reserved) have been given input elements
// in order; `done` of them are finished. Complete once every reserved row is
// done and no more will come (full, or the input ended in it).
struct PendingBatch {
  std::vector<Tensor> tensors;  // batch_size rows each; empty until allocated
  // Rows' signatures where shapes are not known in advance (by row; empty
  // for a failed row): the batch fails if one differs from row 0's.
  std::vector<RowSignature> rows;
  int64_t reserved = 0;
  int64_t done = 0;
  bool end = false;  // the input ended while this batch was being reserved
  Status status;     // the error of the lowest failed row
  int64_t status_row = std::numeric_limits<int64_t>::max();

  bool Complete(int64_t batch_size) const { return done == reserved && (end || reserved == batch_size); }
  void Fail(Status s, int64_t row) {
    if (row < status_row) {
      status = std::move(s);
      status_row = row;
    }
  }
};

void Allocate(PendingBatch* b, const std::vector<DType>& dtypes, const std::vector<TensorShape>& shapes,
              int64_t batch_size) {
  b->tensors.clear();
  for (size_t c = 0; c < dtypes.size(); ++c) b->tensors.emplace_back(dtypes[c], shapes[c].WithFirstDim(batch_size));
}

std::vector<Tensor> RowOf(const PendingBatch& b, int64_t row) {
  std::vector<Tensor> out;
  out.reserve(b.tensors.size());
  for (const Tensor& t : b.tensors) out.push_back(t.Slice(row));
  return out;
}

// Copies `e` into `row` (views of one row of a batch). InvalidArgument where
// a component's dtype or shape differs from the row's.
Status CopyInto(const Element& e, const std::vector<Tensor>& row) {
  if (e.size() != row.size()) return InvalidArgument("elements of a batch have different numbers of components");
  for (size_t c = 0; c < e.size(); ++c) {
    if (e[c].dtype() != row[c].dtype() || e[c].shape() != row[c].shape()) {
      return BatchShapeError(e[c].shape(), row[c].shape());
    }
  }
  for (size_t c = 0; c < e.size(); ++c) internal::BulkCopy(row[c].raw_data(), e[c].raw_data(), e[c].TotalBytes());
  return Status();
}

// Map's error rules for the crop's Into (CallMapFn's, for a Status).
Status NameFailure(Status s, ElementIndex index, const ElementOrigin* origin) {
  if (s.ok()) return s;
  IndexedMapFn failing = [&s](Element, ElementIndex) -> Result<Element> { return s; };
  return CallMapFn(failing, Element{}, index, origin).status();
}

// TF's error if a row's signature differs from row 0's (rows that failed
// have none; the batch fails with their error first).
Status CheckRows(const PendingBatch& b) {
  for (size_t i = 1; i < b.rows.size(); ++i) {
    const RowSignature& first = b.rows[0];
    const RowSignature& row = b.rows[i];
    for (size_t c = 0; c < row.shapes.size() && c < first.shapes.size(); ++c) {
      if (row.dtypes[c] != first.dtypes[c] || row.shapes[c] != first.shapes[c]) {
        return BatchShapeError(row.shapes[c], first.shapes[c]);
      }
    }
  }
  return Status();
}

// A pending batch (every reserved row done): its rows, its end flag, and
// its error (its first failed row's, or CheckRows').
void SaveBatch(const PendingBatch& b, IteratorStateWriter* w) {
  Status s = b.status.ok() ? CheckRows(b) : b.status;
  w->WriteInt("reserved", b.reserved);
  w->WriteBool("end", b.end);
  w->WriteInt("code", static_cast<int64_t>(s.code()));
  w->WriteBytes("message", s.message());
  Element rows;
  for (const Tensor& t : b.tensors) rows.push_back(t.Slice(0, b.reserved));
  w->WriteElement("rows", rows);
}

// The batch SaveBatch wrote, its tensors allocated for batch_size rows (the
// workers fill the rest); `fixed_shapes`: the rows' signatures are not kept.
Status RestoreBatch(const IteratorStateReader& r, int64_t batch_size, bool fixed_shapes, PendingBatch* b) {
  int64_t code = 0;
  std::string message;
  Element rows;
  SLUICE_RETURN_IF_ERROR(r.ReadInt("reserved", &b->reserved));
  SLUICE_RETURN_IF_ERROR(r.ReadBool("end", &b->end));
  SLUICE_RETURN_IF_ERROR(r.ReadInt("code", &code));
  SLUICE_RETURN_IF_ERROR(r.ReadBytes("message", &message));
  SLUICE_RETURN_IF_ERROR(r.ReadElement("rows", &rows));
  if (code != 0) b->Fail(Status(static_cast<Code>(code), message), 0);
  b->done = b->reserved;
  if (!fixed_shapes) b->rows.resize(static_cast<size_t>(batch_size));
  if (rows.empty()) return Status();
  RowSignature sig;
  for (const Tensor& t : rows) {
    sig.dtypes.push_back(t.dtype());
    sig.shapes.push_back(t.shape().WithoutFirstDim());
  }
  Allocate(b, sig.dtypes, sig.shapes, batch_size);
  for (size_t c = 0; c < rows.size(); ++c) {
    std::memcpy(b->tensors[c].raw_data(), rows[c].raw_data(), rows[c].TotalBytes());
  }
  if (!fixed_shapes) {
    for (int64_t row = 0; row < b->reserved; ++row) b->rows[static_cast<size_t>(row)] = sig;
  }
  return Status();
}

class MapAndBatchDataset : public DatasetBase {
 public:
  MapAndBatchDataset(ParallelMapParts map, DatasetPtr unfused, int64_t batch_size, bool drop_remainder)
      : DatasetBase(unfused->element_spec()),
        map_(std::move(map)),
        unfused_(std::move(unfused)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        fixed_shapes_(FullyDefined(map_.map->element_spec())),
        crop_(map_.fn.target<RandomResizedCropFn>()) {}

  int64_t cardinality() const override { return unfused_->cardinality(); }
  std::string DebugName() const override { return "MapAndBatch"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override;

 private:
  class Iterator;

  const ParallelMapParts map_;
  const DatasetPtr unfused_;  // Batch(Map(...)): where Options turn the fusion off
  const int64_t batch_size_;
  const bool drop_remainder_;
  const bool fixed_shapes_;
  const RandomResizedCropFn* const crop_;  // into map_.fn, or null
};

// Workers take input elements in order (a chunk at a time, under
// input_mu_), each into the next row of the batch at the back of batches_,
// and map them outside every lock into that row. The consumer takes the
// front batch once it is complete. At most max_batches_ batches exist at
// once. Ordered whatever `deterministic` says (allowed: a nondeterministic
// order is any order).
class MapAndBatchDataset::Iterator : public DatasetIterator<MapAndBatchDataset> {
 public:
  Iterator(const MapAndBatchDataset* d, const IteratorContext& ctx, uint64_t epoch)
      : DatasetIterator(d),
        autotune_(*d->map_.options.num_parallel_calls == kAutotune),
        epoch_(epoch),
        model_(ctx.model),
        input_(d->map_.input->MakeIteratorInternal(ctx)),
        node_(NewNode(ctx, d->DebugName(), autotune_, autotune_ ? 1 : *d->map_.options.num_parallel_calls)),
        parallelism_(autotune_ ? 1 : *d->map_.options.num_parallel_calls),
        cancel_(ctx, [this] { Cancel(); }) {}

  ~Iterator() override {
    node_->ClearApply();
    Cancel();
    for (std::thread& t : threads_) t.join();
  }

  Status GetNext(Element* out, bool* end_of_sequence) override SLUICE_EXCLUDES(mu_);
  Status Save(IteratorStateWriter* w) override SLUICE_EXCLUDES(mu_, input_mu_);
  Status Restore(IteratorStateReader* r) override SLUICE_EXCLUDES(mu_, input_mu_);

 private:
  // The rows a worker reserved: `count` rows of `batch` from `first_row`,
  // input elements first_index, ... of the pass.
  struct Chunk {
    std::shared_ptr<PendingBatch> batch;
    int64_t first_row = 0;
    int64_t count = 0;
    uint64_t first_index = 0;
    bool end = false;
    // The input elements of the rows, their errors, and their origins.
    std::vector<Element> elements;
    std::vector<Status> statuses;
    std::vector<std::optional<ElementOrigin>> origins;
  };

  void StartThreads() SLUICE_EXCLUDES(mu_);
  void Cancel() SLUICE_EXCLUDES(mu_);
  void SetParallelismLocked(int64_t p) SLUICE_REQUIRES(mu_);
  void WorkerLoop(int64_t index) SLUICE_EXCLUDES(mu_, input_mu_);
  // Reserves rows and reads their input elements; false when the worker
  // should stop (cancelled, or the input has ended).
  bool ReserveChunk(int64_t index, Chunk* chunk) SLUICE_EXCLUDES(mu_, input_mu_);
  bool ReserveRows(Chunk* chunk) SLUICE_REQUIRES(input_mu_) SLUICE_EXCLUDES(mu_);
  void ReadInput(Chunk* chunk) SLUICE_REQUIRES(input_mu_) SLUICE_EXCLUDES(mu_);
  // Maps one element into row `row` of `b`: the row's error, or OK.
  Status MapRow(PendingBatch* b, int64_t row, Element e, ElementIndex at, const ElementOrigin* origin)
      SLUICE_EXCLUDES(mu_);
  // The batch's result (TF's error for rows whose shapes differ).
  Status Finish(PendingBatch* b, Element* out);
  std::shared_ptr<PendingBatch> NewBatchLocked() SLUICE_REQUIRES(mu_);
  // True if the next row needs a new batch.
  bool BackFullLocked() const SLUICE_REQUIRES(mu_) {
    return batches_.empty() || batches_.back()->reserved == dataset_->batch_size_ || batches_.back()->end;
  }
  size_t ChunkSize() const;
  void RecordCallTime(std::chrono::nanoseconds per_call);

  static constexpr int64_t kChunkTargetNs = 50'000;

  // Constant after construction.
  const bool autotune_;
  uint64_t epoch_;  // set again by Restore, before any thread starts
  const std::shared_ptr<Model> model_;  // may be null

  Mutex input_mu_ SLUICE_ACQUIRED_BEFORE(mu_);
  std::unique_ptr<IteratorBase> input_ SLUICE_GUARDED_BY(input_mu_);

  const std::shared_ptr<Node> node_;

  Mutex mu_;
  CondVar ready_cv_;  // the front batch is complete, or cancelled
  CondVar space_cv_;  // a batch was taken, the input ended, or cancelled
  CondVar park_cv_;   // parallelism_ rose, a save finished, the input ended, or cancelled
  CondVar idle_cv_;   // no chunk is in flight (a save waits for it)
  int64_t parallelism_ SLUICE_GUARDED_BY(mu_);
  int64_t max_parallelism_ SLUICE_GUARDED_BY(mu_) = 1;
  int64_t max_batches_ SLUICE_GUARDED_BY(mu_) = 2;
  std::deque<std::shared_ptr<PendingBatch>> batches_ SLUICE_GUARDED_BY(mu_);
  uint64_t next_index_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t in_flight_ SLUICE_GUARDED_BY(mu_) = 0;  // chunks reserved and not yet done
  bool input_done_ SLUICE_GUARDED_BY(mu_) = false;
  bool cancelled_ SLUICE_GUARDED_BY(mu_) = false;
  bool paused_ SLUICE_GUARDED_BY(mu_) = false;  // a save is waiting for the work in flight
  bool consumer_waiting_ SLUICE_GUARDED_BY(mu_) = false;
  int workers_waiting_ SLUICE_GUARDED_BY(mu_) = 0;
  std::atomic<int64_t> call_ns_{0};  // average time of one call (EWMA)

  std::vector<std::thread> threads_;  // consumer thread and destructor only
  CancelRegistration cancel_;         // last: deregistered first
};

Status MapAndBatchDataset::Iterator::GetNext(Element* out, bool* end_of_sequence) {
  if (threads_.empty()) StartThreads();
  std::shared_ptr<PendingBatch> b;
  {
    MutexLock lock(&mu_);
    while (true) {
      if (cancelled_) return errors::Cancelled("iterator was cancelled");
      if (batches_.empty() && input_done_) {
        *end_of_sequence = true;
        return Status();
      }
      if (!batches_.empty() && batches_.front()->Complete(dataset_->batch_size_)) break;
      consumer_waiting_ = true;
      Status interrupted = InterruptibleWait(&ready_cv_, &mu_);  // Ctrl-C from Python
      consumer_waiting_ = false;
      if (!interrupted.ok()) return interrupted;
    }
    b = std::move(batches_.front());
    batches_.pop_front();
    // Every waiting worker: the first to wake opens a batch the others fill too.
    if (workers_waiting_ > 0) space_cv_.SignalAll();
    Node::Set(node_->buffer_fill, static_cast<int64_t>(batches_.size()) * dataset_->batch_size_);
  }
  const bool partial = b->reserved < dataset_->batch_size_;
  *end_of_sequence = b->reserved == 0 || (partial && dataset_->drop_remainder_ && b->status.ok());
  if (*end_of_sequence) return Status();
  out->clear();
  Status s = Finish(b.get(), out);
  if (s.ok()) {
    Node::Bump(node_->elements, 1);
    Node::Bump(node_->bytes, ElementBytes(*out));
  }
  return s;
}

Status MapAndBatchDataset::Iterator::Finish(PendingBatch* b, Element* out) {
  if (!b->status.ok()) return b->status;
  SLUICE_RETURN_IF_ERROR(CheckRows(*b));
  const bool partial = b->reserved < dataset_->batch_size_;
  for (Tensor& t : b->tensors) out->push_back(partial ? t.Slice(0, b->reserved) : std::move(t));
  return Status();
}

// Options are final by now (the root has started): AUTOTUNE starts
// Model::max_parallelism() threads, of which parallelism_ work at once.
void MapAndBatchDataset::Iterator::StartThreads() {
  int64_t n = 0;
  {
    MutexLock lock(&mu_);
    const StartingParallelism start = StartParallelism(model_.get(), autotune_, parallelism_);
    n = max_parallelism_ = start.threads;
    // One batch being handed out and enough being filled to keep every worker busy.
    max_batches_ = std::max<int64_t>(2, 1 + (n + dataset_->batch_size_ - 1) / dataset_->batch_size_);
    SetParallelismLocked(start.calls);
  }
  if (autotune_) node_->SetApply([this](int64_t p) {
    MutexLock lock(&mu_);
    SetParallelismLocked(p);
  });
  threads_.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    threads_.emplace_back([this, i] {
      SetCurrentThreadName("sluice_mapbatch");
      WorkerLoop(i);
    });
  }
}

void MapAndBatchDataset::Iterator::Cancel() {
  MutexLock lock(&mu_);
  cancelled_ = true;
  ready_cv_.SignalAll();
  space_cv_.SignalAll();
  park_cv_.SignalAll();
  idle_cv_.SignalAll();
}

void MapAndBatchDataset::Iterator::SetParallelismLocked(int64_t p) {
  mu_.AssertHeld();
  parallelism_ = std::clamp<int64_t>(p, 1, max_parallelism_);
  Node::Set(node_->parallelism, parallelism_);
  Node::Set(node_->buffer_size, max_batches_ * dataset_->batch_size_);
  space_cv_.SignalAll();
  park_cv_.SignalAll();
}

std::shared_ptr<PendingBatch> MapAndBatchDataset::Iterator::NewBatchLocked() {
  mu_.AssertHeld();
  auto b = std::make_shared<PendingBatch>();
  if (dataset_->fixed_shapes_) {
    const ElementSpec& spec = dataset_->map_.map->element_spec();
    std::vector<TensorShape> shapes;
    for (const PartialShape& s : spec.shapes) shapes.push_back(s.ToTensorShape());
    Allocate(b.get(), spec.dtypes, shapes, dataset_->batch_size_);
  } else {
    b->rows.resize(static_cast<size_t>(dataset_->batch_size_));
  }
  batches_.push_back(b);
  return b;
}

bool MapAndBatchDataset::Iterator::ReserveChunk(int64_t index, Chunk* chunk) {
  {
    MutexLock lock(&mu_);
    while (!cancelled_ && !input_done_ && (index >= parallelism_ || paused_)) park_cv_.Wait(&mu_);
    if (cancelled_ || input_done_) return false;
  }
  MutexLock input_lock(&input_mu_);
  if (!ReserveRows(chunk)) return false;
  if (chunk->batch != nullptr) ReadInput(chunk);
  return true;
}

// Rows of the back batch (or of a new one) for the next input elements;
// false when cancelled or the input has ended; no batch while paused.
bool MapAndBatchDataset::Iterator::ReserveRows(Chunk* chunk) {
  input_mu_.AssertHeld();
  MutexLock lock(&mu_);
  const int64_t batch_size = dataset_->batch_size_;
  while (!cancelled_ && !input_done_ && !paused_ && BackFullLocked() &&
         static_cast<int64_t>(batches_.size()) >= max_batches_) {
    ++workers_waiting_;
    space_cv_.Wait(&mu_);
    --workers_waiting_;
  }
  if (cancelled_ || input_done_) return false;
  if (paused_) return true;
  chunk->batch = BackFullLocked() ? NewBatchLocked() : batches_.back();
  chunk->first_row = chunk->batch->reserved;
  chunk->count = std::min<int64_t>(static_cast<int64_t>(ChunkSize()), batch_size - chunk->first_row);
  chunk->batch->reserved += chunk->count;
  chunk->first_index = next_index_;
  ++in_flight_;
  Node::Set(node_->buffer_fill, static_cast<int64_t>(batches_.size()) * batch_size);
  return true;
}

// The chunk's input elements (or their errors, or the end of the input).
void MapAndBatchDataset::Iterator::ReadInput(Chunk* chunk) {
  input_mu_.AssertHeld();
  const size_t want = static_cast<size_t>(chunk->count);
  chunk->elements.assign(want, Element{});
  chunk->statuses.assign(want, Status());
  chunk->origins.assign(want, std::nullopt);
  size_t got = 0;
  bool end = false;
  const int64_t input_start = NowNanos();
  for (; got < want; ++got) {
    Status s = input_->GetNext(&chunk->elements[got], &end);
    if (end) break;
    chunk->statuses[got] = s;
    if (const ElementOrigin* o = input_->origin(); s.ok() && o != nullptr) chunk->origins[got] = *o;
  }
  Node::Add(node_->wait_ns, NowNanos() - input_start);
  MutexLock lock(&mu_);
  next_index_ += got;
  if (!end) return;
  // Only this thread reserves rows (under input_mu_): the unused ones are
  // the last of the back batch.
  chunk->batch->reserved -= static_cast<int64_t>(want - got);
  chunk->batch->end = true;
  chunk->count = static_cast<int64_t>(got);
  chunk->end = true;
  input_done_ = true;
  space_cv_.SignalAll();
  park_cv_.SignalAll();
}

Status MapAndBatchDataset::Iterator::MapRow(PendingBatch* b, int64_t row, Element e, ElementIndex at,
                                           const ElementOrigin* origin) {
  const MapAndBatchDataset& d = *dataset_;
  if (d.crop_ != nullptr && d.fixed_shapes_) {
    return NameFailure(d.crop_->Into(std::move(e), at, RowOf(*b, row)), at, origin);
  }
  Result<Element> r = CallMapFn(d.map_.fn, std::move(e), at, origin);
  if (!r.ok()) return r.status();
  if (d.fixed_shapes_) return CopyInto(*r, RowOf(*b, row));
  RowSignature sig;
  for (const Tensor& t : *r) {
    sig.dtypes.push_back(t.dtype());
    sig.shapes.push_back(t.shape());
  }
  std::vector<Tensor> dst;
  {
    MutexLock lock(&mu_);
    if (b->tensors.empty()) Allocate(b, sig.dtypes, sig.shapes, d.batch_size_);
    dst = RowOf(*b, row);
    b->rows[static_cast<size_t>(row)] = sig;
  }
  // A row unlike the one the batch was allocated for is not copied: its
  // signature differs from some other row's, so CheckRows fails the batch.
  static_cast<void>(CopyInto(*r, dst));
  return Status();
}

void MapAndBatchDataset::Iterator::WorkerLoop(int64_t index) {
  Chunk chunk;
  while (true) {
    chunk.batch = nullptr;
    chunk.end = false;
    if (!ReserveChunk(index, &chunk)) return;
    if (chunk.batch == nullptr) continue;  // paused for a save
    const auto start = std::chrono::steady_clock::now();
    const int64_t cpu_start = ThreadCpuNanos();
    std::vector<std::pair<int64_t, Status>> failures;
    for (int64_t j = 0; j < chunk.count; ++j) {
      const size_t k = static_cast<size_t>(j);
      Status s = chunk.statuses[k];
      if (s.ok()) {
        const ElementOrigin* origin = chunk.origins[k] ? &*chunk.origins[k] : nullptr;
        s = MapRow(chunk.batch.get(), chunk.first_row + j, std::move(chunk.elements[k]),
                   ElementIndex{epoch_, chunk.first_index + k}, origin);
      }
      if (!s.ok()) failures.emplace_back(chunk.first_row + j, std::move(s));
    }
    if (chunk.count > 0) {
      const auto wall = std::chrono::steady_clock::now() - start;
      RecordCallTime(wall / chunk.count);
      Node::Add(node_->busy_ns, std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count());
      Node::Add(node_->cpu_ns, std::max<int64_t>(1, ThreadCpuNanos() - cpu_start));
    }
    MutexLock lock(&mu_);
    for (auto& [row, s] : failures) chunk.batch->Fail(std::move(s), row);
    chunk.batch->done += chunk.count;
    --in_flight_;
    if (in_flight_ == 0 && paused_) idle_cv_.SignalAll();
    if (consumer_waiting_ && !batches_.empty() && batches_.front()->Complete(dataset_->batch_size_)) {
      ready_cv_.Signal();
    }
    if (chunk.end) return;
  }
}

// Rows per chunk: enough calls for about kChunkTargetNs of work, within one
// batch; 1 until a call has been timed.
size_t MapAndBatchDataset::Iterator::ChunkSize() const {
  const int64_t ns = call_ns_.load(std::memory_order_relaxed);
  if (ns <= 0) return 1;
  return static_cast<size_t>(std::clamp<int64_t>(kChunkTargetNs / ns, 1, dataset_->batch_size_));
}

void MapAndBatchDataset::Iterator::RecordCallTime(std::chrono::nanoseconds per_call) {
  const int64_t old_ns = call_ns_.load(std::memory_order_relaxed);
  const int64_t ns = std::max<int64_t>(1, per_call.count());
  call_ns_.store(old_ns <= 0 ? ns : (3 * old_ns + ns) / 4, std::memory_order_relaxed);
}

// Saves with the workers paused and no chunk in flight: each pending batch's
// finished rows (and its first error), then the input's position.
Status MapAndBatchDataset::Iterator::Save(IteratorStateWriter* w) {
  {
    MutexLock lock(&mu_);
    paused_ = true;
    space_cv_.SignalAll();
    while (in_flight_ > 0 && !cancelled_) idle_cv_.Wait(&mu_);
  }
  Status s;
  {
    MutexLock input_lock(&input_mu_);
    MutexLock lock(&mu_);
    w->WriteInt("epoch", static_cast<int64_t>(epoch_));
    w->WriteInt("next_index", static_cast<int64_t>(next_index_));
    w->WriteBool("input_done", input_done_);
    w->WriteInt("batches", static_cast<int64_t>(batches_.size()));
    for (size_t i = 0; i < batches_.size(); ++i) {
      IteratorStateWriter bw = w->Child("batch" + std::to_string(i));
      SaveBatch(*batches_[i], &bw);
    }
    IteratorStateWriter input = w->Child("input");
    s = input_->Save(&input);
    paused_ = false;
    park_cv_.SignalAll();
    space_cv_.SignalAll();
  }
  return s;
}

Status MapAndBatchDataset::Iterator::Restore(IteratorStateReader* r) {
  int64_t epoch = 0, next_index = 0, count = 0;
  bool input_done = false;
  SLUICE_RETURN_IF_ERROR(r->ReadInt("epoch", &epoch));
  SLUICE_RETURN_IF_ERROR(r->ReadInt("next_index", &next_index));
  SLUICE_RETURN_IF_ERROR(r->ReadBool("input_done", &input_done));
  SLUICE_RETURN_IF_ERROR(r->ReadInt("batches", &count));
  std::deque<std::shared_ptr<PendingBatch>> batches;
  for (int64_t i = 0; i < count; ++i) {
    auto b = std::make_shared<PendingBatch>();
    SLUICE_RETURN_IF_ERROR(RestoreBatch(r->Child("batch" + std::to_string(i)), dataset_->batch_size_,
                                        dataset_->fixed_shapes_, b.get()));
    batches.push_back(std::move(b));
  }
  epoch_ = static_cast<uint64_t>(epoch);
  RestorePass(*dataset_->map_.epochs, epoch_);
  {
    MutexLock lock(&mu_);
    next_index_ = static_cast<uint64_t>(next_index);
    input_done_ = input_done;
    batches_ = std::move(batches);
  }
  MutexLock input_lock(&input_mu_);
  return RestoreInput(*input_, r);
}

std::unique_ptr<IteratorBase> MapAndBatchDataset::MakeIteratorInternal(const IteratorContext& ctx) const {
  // Options of stages inside the map's input are not merged yet; TF reads
  // the whole tree's, which differs only where an inner with_options sets it.
  // A memory budget or an error policy is applied by the unfused stages.
  const Options o = ctx.model ? ctx.model->BuildOptions() : Options{};
  // A probe runs the unfused stages, whose map is sequential in a probe.
  if (ctx.probe || !o.optimization.map_and_batch_fusion.value_or(true) || o.ram_budget.value_or(0) > 0 ||
      o.error_policy.value_or(ErrorPolicy::kFail) != ErrorPolicy::kFail) {
    return unfused_->MakeIteratorInternal(ctx);
  }
  return std::make_unique<Iterator>(this, ctx, NextPass(*map_.epochs, ctx));
}

}  // namespace

DatasetPtr FuseMapAndBatch(const DatasetPtr& unfused, const DatasetPtr& input, int64_t batch_size,
                           bool drop_remainder) {
  std::optional<ParallelMapParts> map = AsParallelMap(input);
  if (!map || !CanFuse(input->element_spec())) return nullptr;
  if (map->options.error_policy.policy.value_or(ErrorPolicy::kFail) != ErrorPolicy::kFail) return nullptr;
  return std::make_shared<MapAndBatchDataset>(std::move(*map), unfused, batch_size, drop_remainder);
}

Result<DatasetPtr> MapAndBatch(DatasetPtr input, IndexedMapFn fn, ElementSpec out_spec, int64_t batch_size,
                               bool drop_remainder, MapOptions options) {
  if (!options.num_parallel_calls) options.num_parallel_calls = 1;
  SLUICE_ASSIGN_OR_RETURN(DatasetPtr map, MapWithIndex(std::move(input), std::move(fn), std::move(out_spec), options));
  return Batch(std::move(map), batch_size, drop_remainder);
}

}  // namespace sluice::data
