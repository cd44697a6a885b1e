#include "queue/fifo_queue.h"

#include <algorithm>
#include <cstring>

#include "queue/shared_queues.h"

namespace sluice::queue {
namespace {

// Bytes per row of `t` (a batch: rank >= 1).
size_t RowBytes(const Tensor& t) {
  const int64_t rows = t.shape().dim(0);
  return rows == 0 ? 0 : t.TotalBytes() / static_cast<size_t>(rows);
}

// If the batched piece `piece` ends where rows [begin, ...) of `batch` start,
// in the same buffers, the row of `batch` where `piece` starts; else -1.
// Then the two are one slice of `batch`: consecutive singles coalesced into one
// staging batch but stored as two chunks (the first drained in between), or
// an enqueue_many admitted in parts.
int64_t JoinRow(const Element& piece, const Element& batch, int64_t begin) {
  int64_t start = -1;
  for (size_t c = 0; c < batch.size(); ++c) {
    const Tensor& p = piece[c];
    const Tensor& b = batch[c];
    if (!p.SharesBufferWith(b)) return -1;
    const size_t row = RowBytes(b);
    const char* base = static_cast<const char*>(b.raw_data());
    const char* first = static_cast<const char*>(p.raw_data());
    if (row == 0 || first < base || first + p.TotalBytes() != base + begin * row) return -1;
    const auto s = static_cast<int64_t>(static_cast<size_t>(first - base) / row);
    if (start >= 0 && s != start) return -1;
    start = s;
  }
  return start;
}

}  // namespace

FIFOQueue::FIFOQueue(std::string name, int32_t capacity, std::vector<DType> dtypes,
                     std::vector<PartialShape> shapes, std::vector<std::string> names)
    : QueueBase(std::move(name), capacity, std::move(dtypes), std::move(shapes), std::move(names)) {
  // Coalesce only what a row copy can hold: fixed-size values (not strings)
  // of one known shape per component, small enough to copy under mu_.
  if (this->shapes().empty() || this->shapes().size() != this->dtypes().size()) return;
  size_t total = 0;
  std::vector<size_t> row_bytes;
  for (size_t c = 0; c < this->dtypes().size(); ++c) {
    const DType dtype = this->dtypes()[c];
    const PartialShape& shape = this->shapes()[c];
    if (dtype == DType::kString || DTypeSize(dtype) == 0 || !shape.fully_defined()) return;
    row_bytes.push_back(static_cast<size_t>(shape.ToTensorShape().num_elements()) * DTypeSize(dtype));
    total += row_bytes.back();
  }
  if (total > kCoalesceMaxRowBytes) return;
  row_bytes_ = std::move(row_bytes);
  if (this->capacity() != kUnbounded && RowRing::Fits(this->capacity(), total)) {
    std::vector<TensorShape> row_shapes;
    for (const PartialShape& shape : this->shapes()) row_shapes.push_back(shape.ToTensorShape());
    ring_ = std::make_unique<RowRing>(&mu_, this->capacity(), this->dtypes(), std::move(row_shapes));
  }
  // A full queue spans capacity / kStageRows batches; 16 bounds what an
  // unbounded (or huge) queue keeps once drained (at most 4 MiB).
  const int64_t cap = this->capacity();
  max_retired_ = static_cast<size_t>(std::min<int64_t>(cap / kStageRows + 2, 16));
}

FIFOQueue::FastResult FIFOQueue::FromRing(RowRing::Fast r) {
  switch (r) {
    case RowRing::Fast::kDone: return FastResult::kDone;
    case RowRing::Fast::kBusy: return FastResult::kBusy;
    case RowRing::Fast::kFull: return FastResult::kFull;
    case RowRing::Fast::kEmpty: return FastResult::kEmpty;
  }
  return FastResult::kBusy;
}

FIFOQueue::FastResult FIFOQueue::TryEnqueueFast(const Element& element) {
  if (!ring_) return FastResult::kBusy;
  return FromRing(ring_->TryPush(element));
}

FIFOQueue::FastResult FIFOQueue::TryDequeueFast(Element* out) {
  if (!ring_) return FastResult::kBusy;
  return FromRing(ring_->TryPop(out));
}

FIFOQueue::FastResult FIFOQueue::TryEnqueueManyFast(Element& batch, int64_t rows) {
  if (!ring_ || rows != RowRing::kBatchRows) return FastResult::kBusy;
  return FromRing(ring_->TryPushBatch(batch));
}

FIFOQueue::FastResult FIFOQueue::TryDequeueManyFast(int64_t n, Element* out) {
  if (!ring_ || n > RowRing::kBatchRows) return FastResult::kBusy;
  return FromRing(ring_->TryPopRows(n, out));
}

void FIFOQueue::FastCountsLocked(int64_t* enqueued, int64_t* dequeued) const {
  if (!ring_) return;
  *enqueued = ring_->fast_pushed(mu_);
  *dequeued = ring_->fast_popped(mu_);
}

void FIFOQueue::PushLocked(Element&& element) {
  if (ring_ && chunks_.empty()) {
    ring_->Push(mu_, element);  // room: the caller checked StoredLocked() < capacity
    return;
  }
  if (coalesces()) {
    CoalesceLocked(element);
    return;
  }
  SealTailLocked();
  Chunk& slot = chunks_.append_slot();  // saves a move of the ~180-byte chunk
  slot.data = std::move(element);
  slot.begin = 0;
  slot.end = 1;
  slot.batched = false;
  slot.staging = false;
  ++stored_;
}

void FIFOQueue::CoalesceLocked(const Element& element) {
  mu_.AssertHeld();
  if (chunks_.empty() || !chunks_.back().staging) {
    if (stage_rows_ == kStageRows) NextStageLocked();
    Chunk& slot = chunks_.append_slot();
    slot.data = stage_;
    slot.begin = stage_rows_;
    slot.end = stage_rows_;
    slot.batched = true;
    slot.staging = true;
  }
  Chunk& tail = chunks_.back();
  for (size_t c = 0; c < row_bytes_.size(); ++c) {
    const size_t bytes = row_bytes_[c];
    std::memcpy(static_cast<char*>(stage_[c].raw_data()) + static_cast<size_t>(stage_rows_) * bytes,
                element[c].raw_data(), bytes);
  }
  ++stage_rows_;
  ++tail.end;
  ++stored_;
  if (stage_rows_ == kStageRows) tail.staging = false;  // full: the next one starts a new batch
}

void FIFOQueue::NextStageLocked() {
  mu_.AssertHeld();
  if (!stage_.empty()) {
    if (retired_.size() >= max_retired_) retired_.pop_front();  // still shared: lives on in its users
    retired_.push_back(std::move(stage_));
  }
  stage_rows_ = 0;
  if (!retired_.empty()) {
    // The only reference left is ours, so no reader of its rows remains
    // (their Unref, acq_rel, happens before this acquire load): safe to
    // overwrite.
    const Element& oldest = retired_.front();
    if (std::all_of(oldest.begin(), oldest.end(), [](const Tensor& t) { return t.buffer()->RefCountIsOne(); })) {
      stage_ = retired_.pop_front();
      return;
    }
  }
  Element fresh;
  for (size_t c = 0; c < dtypes().size(); ++c) {
    fresh.push_back(Tensor(dtypes()[c], shapes()[c].ToTensorShape().WithFirstDim(kStageRows)));
  }
  stage_ = std::move(fresh);
}

// An enqueue_many batch is stored as one chunk sharing the batch's buffers,
// not as one element per row.
void FIFOQueue::PushRowsLocked(const Element& batch, int64_t begin, int64_t count) {
  // A whole slot-sized batch goes into the ring by reference when the ring
  // is at a slot boundary (room: the caller admitted count elements), so
  // that the ring can thaw again. Part of a larger batch is stored whole as
  // a chunk instead: its parts then leave as one slice of it (AppendRows),
  // where parts adopted into ring slots would have to be copied together.
  if (ring_ && chunks_.empty() && begin == 0 && count == RowRing::kBatchRows &&
      batch[0].shape().dim(0) == count && ring_->PushBatch(mu_, batch)) {
    return;
  }
  SealTailLocked();
  chunks_.push_back(Chunk{batch, begin, begin + count, true, false});
  stored_ += count;
}

Element FIFOQueue::PopLocked() {
  if (front_stored_ > 0) {
    --front_stored_;
    return PopFromLocked(front_);
  }
  if (ring_ && ring_->Size(mu_) > 0) return ring_->Pop(mu_);
  return PopFromLocked(chunks_);
}

Element FIFOQueue::PopFromLocked(RingBuffer<Chunk>& line) {
  Chunk& front = line.front();
  --stored_;
  if (!front.batched) {
    Element out(std::move(front.data));
    line.drop_front();
    return out;
  }
  Element row;
  for (const Tensor& component : front.data) row.push_back(component.Slice(front.begin));
  if (++front.begin == front.end) {
    front.data.clear();  // drops the batch reference now, not when the slot is reused
    line.drop_front();
  }
  return row;
}

void FIFOQueue::TakeLocked(int64_t n, std::vector<Piece>* out) {
  const int64_t from_front = std::min(n, front_stored_);
  if (from_front > 0) {
    TakeFromLocked(front_, from_front, out);
    front_stored_ -= from_front;
    n -= from_front;
  }
  if (ring_ && n > 0) {
    Element batch;
    int64_t first = 0;
    for (int64_t left = std::min(n, ring_->Size(mu_)); left > 0;) {
      const int64_t k = ring_->TakeRows(mu_, left, &batch, &first);
      AppendRows(batch, first, k, out);
      left -= k;
      n -= k;
    }
  }
  if (n > 0) TakeFromLocked(chunks_, n, out);
}

void FIFOQueue::AppendRows(const Element& batch, int64_t begin, int64_t k, std::vector<Piece>* out) {
  const int64_t join = out->empty() || !out->back().batched ? -1 : JoinRow(out->back().data, batch, begin);
  if (join >= 0) {
    // Extends the previous piece: one slice instead of two pieces to copy.
    Piece& prev = out->back();
    for (size_t c = 0; c < batch.size(); ++c) prev.data[c] = batch[c].Slice(join, begin + k);
    prev.rows += k;
    return;
  }
  Element rows;
  for (const Tensor& component : batch) rows.push_back(component.Slice(begin, begin + k));
  out->push_back(Piece{std::move(rows), k, true});
}

void FIFOQueue::TakeFromLocked(RingBuffer<Chunk>& line, int64_t n, std::vector<Piece>* out) {
  stored_ -= n;
  while (n > 0) {
    Chunk& front = line.front();
    if (!front.batched) {
      out->push_back(Piece{std::move(front.data), 1, false});
      line.drop_front();
      --n;
      continue;
    }
    const int64_t k = std::min(n, front.end - front.begin);
    AppendRows(front.data, front.begin, k, out);
    front.begin += k;
    n -= k;
    if (front.begin == front.end) {
      front.data.clear();
      line.drop_front();
    }
  }
}

void FIFOQueue::RestoreLocked(std::vector<Piece>* held) {
  // In front of everything, the ring included.
  for (auto it = held->rbegin(); it != held->rend(); ++it) {
    stored_ += it->rows;
    front_stored_ += it->rows;
    front_.push_front(Chunk{std::move(it->data), 0, it->rows, it->batched, false});
  }
  held->clear();
}

Result<std::shared_ptr<Queue>> NewFIFOQueue(QueueOptions o) {
  for (const PartialShape& s : o.shapes) {
    if (!s.fully_defined()) {
      return errors::InvalidArgument("All shapes must be fully defined for FIFOQueue; got ", s.DebugString());
    }
  }
  QueueSignature sig{"FIFOQueue", o.capacity < 0 ? Queue::kUnbounded : o.capacity, o.dtypes, o.shapes};
  return CreateOrShare(o.shared_name, sig, [&]() -> Result<std::shared_ptr<Queue>> {
    auto q = std::make_shared<FIFOQueue>(o.name.empty() ? "fifo_queue" : o.name, o.capacity, o.dtypes, o.shapes,
                                         o.names);
    SLUICE_RETURN_IF_ERROR(q->Initialize());
    return std::shared_ptr<Queue>(std::move(q));
  });
}

}  // namespace sluice::queue
