// The definitions of BasicRowRing (row_ring.h), for row_ring.cc's explicit
// instantiation (RowRing) and for tests that instantiate the ring with a
// policy of their own (row_ring_interleaving_test.cc). Include nowhere else.
#ifndef SLUICE_QUEUE_ROW_RING_IMPL_H_
#define SLUICE_QUEUE_ROW_RING_IMPL_H_

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "core/tensor_internal.h"
#include "queue/row_ring.h"

namespace sluice::queue {

namespace row_ring_internal {

// R: at least capacity + kBatchRows (see the header), a power of two so
// that a position's row is a mask and its lap a shift: a division by any R
// costs two divisions per element (docs/perf/row-ring.md).
inline uint64_t RingRows(int64_t capacity, int64_t batch_rows) {
  auto rows = static_cast<uint64_t>(batch_rows);
  while (rows < static_cast<uint64_t>(capacity) + static_cast<uint64_t>(batch_rows)) rows <<= 1;
  return rows;
}

// Whether PrefetchForWrite may run here: x86's PREFETCHW needs the PRFCHW
// CPUID bit (every x86 CPU of the last ten years has it).
inline bool CanPrefetchForWrite() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 8)) != 0;
#else
  return true;
#endif
}

// Asks for the cache line at `p` in a state that a store can write at
// once (exclusive): a hint, with no effect on what memory holds.
inline void PrefetchForWrite(const char* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" : : "m"(*p));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

}  // namespace row_ring_internal

template <class P>
bool BasicRowRing<P>::Fits(int64_t capacity, size_t row_bytes) {
  if (capacity <= 0 || row_bytes == 0) return false;
  if (capacity > (int64_t{1} << 30)) return false;
  return row_ring_internal::RingRows(capacity, kBatchRows) * row_bytes <= kMaxRingBytes;
}

template <class P>
BasicRowRing<P>::BasicRowRing(const Mutex* owner, int64_t capacity, std::vector<DType> dtypes, std::vector<TensorShape> row_shapes)
    : owner_(owner),
      capacity_(capacity),
      rows_(row_ring_internal::RingRows(capacity, kBatchRows)),
      mask_(rows_ - 1),
      lap_shift_(static_cast<unsigned>(__builtin_ctzll(rows_))),
      dtypes_(std::move(dtypes)),
      row_shapes_(std::move(row_shapes)),
      seq_(new Atomic<uint64_t>[rows_]),
      batches_(new Batch[rows_ / kBatchRows]),
      pool_limit_(rows_ / kBatchRows) {
  size_t total = 0;
  for (size_t c = 0; c < dtypes_.size(); ++c) {
    row_bytes_.push_back(static_cast<size_t>(row_shapes_[c].num_elements()) * DTypeSize(dtypes_[c]));
    total += row_bytes_.back();
  }
  prefetch_rows_ = total >= kPrefetchMinRowBytes && row_ring_internal::CanPrefetchForWrite();
  for (uint64_t r = 0; r < rows_; ++r) seq_[r].store(r, std::memory_order_relaxed);
  MutexLock lock(&pool_mu_);
  pool_.reserve(pool_limit_);  // so that Release's push_back cannot throw
}

template <class P>
BasicRowRing<P>::~BasicRowRing() {
  // The rows of an installed lap not yet released still hold their prepaid
  // references (see Prepay).
  for (uint64_t i = 0; i < rows_ / kBatchRows; ++i) {
    Batch& b = batches_[i];
    if (b.data.empty() || b.adopted) continue;
    const auto unreleased = static_cast<int32_t>(kBatchRows - b.released.load(std::memory_order_relaxed) % kBatchRows);
    for (const Tensor& t : b.data) t.buffer()->Unref(unreleased);
  }
}

template <class P>
void BasicRowRing<P>::Prepay(const Element& buffers) noexcept {
  for (const Tensor& t : buffers) t.buffer()->Ref(static_cast<int32_t>(kBatchRows));
}

// ---------------------------------------------------------------------------
// Lock-free

template <class P>
auto BasicRowRing<P>::TryPush(const Element& element) -> Fast {
  uint64_t t = tail_.load(std::memory_order_relaxed);
  while (true) {
    if (t & kFrozen) return Fast::kBusy;
    // head only grows: a stale (smaller) head errs on the full side.
    uint64_t h = head_seen_.load(std::memory_order_relaxed);
    if (static_cast<int64_t>(t - h) >= capacity_) {
      h = head_.load(std::memory_order_acquire) & ~kFrozen;
      head_seen_.store(h, std::memory_order_relaxed);
      if (static_cast<int64_t>(t - h) >= capacity_) return Fast::kFull;
    }
    if (tail_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
  }
  WriteRow(t, element);
  return Fast::kDone;
}

template <class P>
auto BasicRowRing<P>::TryPop(Element* out) -> Fast {
  uint64_t h = head_.load(std::memory_order_relaxed);
  while (true) {
    if (h & kFrozen) return Fast::kBusy;
    const uint64_t s = seq_[h & mask_].load(std::memory_order_acquire);
    const auto ahead = static_cast<int64_t>(s - (h + 1));
    if (ahead < 0) return Fast::kEmpty;  // not pushed, or claimed and not yet published
    if (ahead > 0) {
      h = head_.load(std::memory_order_relaxed);  // h is stale: another pop took it
      continue;
    }
    if (head_.compare_exchange_weak(h, h + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
  }
  *out = ReadRow(h);
  return Fast::kDone;
}

template <class P>
auto BasicRowRing<P>::TryPushBatch(Element& batch) -> Fast {
  constexpr auto kRows = static_cast<uint64_t>(kBatchRows);
  if (capacity_ < kBatchRows) return Fast::kBusy;
  uint64_t t = tail_.load(std::memory_order_relaxed);
  while (true) {
    if (t & kFrozen) return Fast::kBusy;
    if (t % kRows != 0) return Fast::kBusy;
    uint64_t h = head_seen_.load(std::memory_order_relaxed);
    if (static_cast<int64_t>(t + kRows - h) > capacity_) {
      h = head_.load(std::memory_order_acquire) & ~kFrozen;
      head_seen_.store(h, std::memory_order_relaxed);
      if (static_cast<int64_t>(t + kRows - h) > capacity_) return Fast::kFull;
    }
    if (tail_.compare_exchange_weak(t, t + kRows, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
  }
  WriteBatch(t, std::move(batch));
  return Fast::kDone;
}

template <class P>
auto BasicRowRing<P>::TryPopRows(int64_t n, Element* out) -> Fast {
  const auto count = static_cast<uint64_t>(n);
  uint64_t h = head_.load(std::memory_order_relaxed);
  while (true) {
    if (h & kFrozen) return Fast::kBusy;
    if ((h & mask_) % kBatchRows + count > static_cast<uint64_t>(kBatchRows)) return Fast::kBusy;
    // A lap pushed whole is published by one word: no need to read the rows'
    // sequence words (8 cache lines per slot, each from the pushing core).
    // If h is stale, the compare-and-swap below fails.
    const bool whole = batches_[(h & mask_) / kBatchRows].whole.load(std::memory_order_acquire) == h >> lap_shift_;
    // Else the last row first: when it is published, the others usually are.
    bool stale = false, missing = false;
    for (uint64_t i = whole ? 0 : count; i-- > 0;) {
      const uint64_t p = h + i;
      const auto ahead = static_cast<int64_t>(seq_[p & mask_].load(std::memory_order_acquire) - (p + 1));
      if (ahead < 0) {
        missing = true;  // not pushed, or claimed and not yet published
        break;
      }
      if (ahead > 0) {
        stale = true;  // another pop took it: h is stale
        break;
      }
    }
    if (stale) {
      h = head_.load(std::memory_order_relaxed);
      continue;
    }
    if (missing) return Fast::kEmpty;
    if (head_.compare_exchange_weak(h, h + count, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
  }
  ReadRows(h, n, out);
  return Fast::kDone;
}

template <class P>
void BasicRowRing<P>::ReadRows(uint64_t p, int64_t n, Element* out) noexcept {
  const uint64_t index = p & mask_;
  Batch& b = batches_[index / kBatchRows];
  const auto row = static_cast<int64_t>(index % kBatchRows);
  const bool prepaid = !b.adopted;  // read before the release: the next lap may rewrite it
  if (n == kBatchRows) {
    // The whole lap, so this call alone releases it: the buffers move out
    // (an adopted batch without any reference-count traffic), and the rows'
    // prepaid references go in one operation per buffer.
    Release(b, static_cast<uint64_t>(kBatchRows), out);
    if (prepaid) {
      for (const Tensor& t : *out) t.buffer()->Unref(static_cast<int32_t>(kBatchRows));
    }
    return;
  }
  out->clear();
  for (const Tensor& component : b.data) {
    if (prepaid) {
      out->push_back(internal::TensorAttorney::SliceAdoptingRef(component, row, row + n));  // one of the n rows' prepaid references
      if (n > 1) component.buffer()->Unref(static_cast<int32_t>(n - 1));  // never the last: the view holds one
    } else {
      out->push_back(component.Slice(row, row + n));
    }
  }
  Release(b, static_cast<uint64_t>(n));
}

template <class P>
void BasicRowRing<P>::WriteBatch(uint64_t p, Element&& batch) noexcept {
  const uint64_t index = p & mask_;
  const uint64_t lap = p >> lap_shift_;
  Batch& b = batches_[index / kBatchRows];
  // As PrepareBatch, with the caller's tensors as the lap's buffers.
  P::SpinUntil([&] { return b.drained.load(std::memory_order_acquire) == lap; });
  b.data = std::move(batch);  // not prepaid: such a lap usually leaves whole, by move
  b.adopted = true;
  b.lap.store(lap, std::memory_order_release);
  for (uint64_t i = 0; i < static_cast<uint64_t>(kBatchRows); ++i) {
    seq_[index + i].store(p + i + 1, std::memory_order_release);
  }
  b.whole.store(lap, std::memory_order_release);
}

template <class P>
void BasicRowRing<P>::WriteRow(uint64_t p, const Element& element) noexcept {
  const uint64_t index = p & mask_;
  const uint64_t lap = p >> lap_shift_;
  Batch& b = batches_[index / kBatchRows];
  const uint64_t row = index % kBatchRows;
  if (row == 0) {
    PrepareBatch(b, lap);
  } else {
    P::SpinUntil([&] { return b.lap.load(std::memory_order_acquire) == lap; });
  }
  // The rows a later push will write (see kPrefetchAhead): the next ones
  // of this lap's buffers, rows 1 .. kPrefetchAhead when starting it.
  const uint64_t ahead_from = prefetch_rows_ ? (row == 0 ? 1 : row + kPrefetchAhead) : kBatchRows;
  const uint64_t ahead_to = std::min<uint64_t>(row + kPrefetchAhead, kBatchRows - 1);
  for (size_t c = 0; c < row_bytes_.size(); ++c) {
    const size_t bytes = row_bytes_[c];
    char* base = static_cast<char*>(b.data[c].raw_data());
    for (uint64_t r = ahead_from; r <= ahead_to; ++r) {
      const char* line = base + r * bytes;
      for (size_t offset = 0; offset < bytes; offset += 64) row_ring_internal::PrefetchForWrite(line + offset);
    }
    std::memcpy(base + row * bytes, element[c].raw_data(), bytes);
  }
  seq_[index].store(p + 1, std::memory_order_release);
}

template <class P>
Element BasicRowRing<P>::ReadRow(uint64_t p) noexcept {
  const uint64_t index = p & mask_;
  Batch& b = batches_[index / kBatchRows];
  const auto row = static_cast<int64_t>(index % kBatchRows);
  Element out;
  if (b.adopted) {
    for (const Tensor& component : b.data) out.push_back(component.Slice(row));
  } else {
    // The view adopts the row's prepaid reference.
    for (const Tensor& component : b.data) out.push_back(internal::TensorAttorney::SliceAdoptingRef(component, row));
  }
  Release(b, 1);  // from here on b.data may go back to the pool: our view keeps its buffers
  return out;
}

template <class P>
void BasicRowRing<P>::Release(Batch& b, uint64_t n, Element* taken) noexcept {
  // acq_rel: the RMWs of one lap form a release sequence, so the last one
  // happens after every reader of the lap has taken its view of b.data.
  const uint64_t released = b.released.fetch_add(n, std::memory_order_acq_rel) + n;
  if (released % kBatchRows != 0) return;
  Element buffers = std::move(b.data);
  b.data.clear();
  const bool adopted = b.adopted;  // read before the next lap may rewrite it
  b.drained.store(released / kBatchRows, std::memory_order_release);
  // Adopted buffers are the caller's: never pooled. Pool buffers go back,
  // shared with *taken when the lap was taken whole; beyond pool_limit_ they
  // are dropped here (their views, if any, keep them alive).
  if (!adopted) {
    MutexLock lock(&pool_mu_);
    if (pool_.size() < pool_limit_) {
      if (taken != nullptr) {
        pool_.push_back(buffers);
      } else {
        pool_.push_back(std::move(buffers));
      }
    }
  }
  if (taken != nullptr) *taken = std::move(buffers);
}

template <class P>
void BasicRowRing<P>::PrepareBatch(Batch& b, uint64_t lap) noexcept {
  // Every row of the previous lap was claimed by a pop (R >= capacity +
  // kBatchRows); wait until the last of them has given the buffers back.
  P::SpinUntil([&] { return b.drained.load(std::memory_order_acquire) == lap; });
  b.data = TakeBuffers();
  Prepay(b.data);
  b.adopted = false;
  b.lap.store(lap, std::memory_order_release);
}

template <class P>
Element BasicRowRing<P>::TakeBuffers() noexcept {
  while (true) {
    Element candidate;
    {
      MutexLock lock(&pool_mu_);
      if (pool_.empty()) break;
      candidate = std::move(pool_.back());
      pool_.pop_back();
    }
    // A view's Unref (acq_rel) happens before the acquire load in
    // RefCountIsOne: when only we refer to a buffer, nothing reads it.
    if (std::all_of(candidate.begin(), candidate.end(), [](const Tensor& t) { return t.buffer()->RefCountIsOne(); })) {
      return candidate;
    }
    // Still viewed: its views keep it alive; try an older one.
  }
  Element fresh;
  for (size_t c = 0; c < dtypes_.size(); ++c) fresh.push_back(Tensor(dtypes_[c], row_shapes_[c].WithFirstDim(kBatchRows)));
  return fresh;
}

template <class P>
void BasicRowRing<P>::AwaitPublished(uint64_t p) const {
  Atomic<uint64_t>& seq = seq_[p & mask_];
  if (seq.load(std::memory_order_acquire) == p + 1) return;
  P::SpinUntil([&] { return seq.load(std::memory_order_acquire) == p + 1; });
}

// ---------------------------------------------------------------------------
// The lock holder's

template <class P>
void BasicRowRing<P>::Freeze(const Mutex& mu) {
  CheckOwner(mu);
  if (frozen_) return;
  tail_.fetch_or(kFrozen, std::memory_order_acq_rel);
  head_.fetch_or(kFrozen, std::memory_order_acq_rel);
  frozen_ = true;
}

template <class P>
void BasicRowRing<P>::Thaw(const Mutex& mu) {
  CheckOwner(mu);
  head_.store(head_.load(std::memory_order_relaxed) & ~kFrozen, std::memory_order_release);
  tail_.store(tail_.load(std::memory_order_relaxed) & ~kFrozen, std::memory_order_release);
  frozen_ = false;
}

template <class P>
void BasicRowRing<P>::Positions(uint64_t* head, uint64_t* tail) const {
  // Tail, head, tail again: the tail only grows, so when both tail reads
  // agree, the tail held that value when the head was read. A pair read
  // plainly, with pushes and pops running in between, can be laps apart.
  uint64_t t = tail_.load(std::memory_order_acquire) & ~kFrozen;
  for (int attempt = 0;; ++attempt) {
    const uint64_t h = head_.load(std::memory_order_acquire) & ~kFrozen;
    const uint64_t t2 = tail_.load(std::memory_order_acquire) & ~kFrozen;
    if (t2 == t || attempt == 64) {
      // (After 64 changes, a bounded answer: heavy traffic makes any
      // snapshot stale at once anyway.)
      *tail = t2;
      *head = std::min(h, t2);
      if (*tail - *head > static_cast<uint64_t>(capacity_)) *head = *tail - static_cast<uint64_t>(capacity_);
      return;
    }
    t = t2;
  }
}

template <class P>
int64_t BasicRowRing<P>::Size(const Mutex& mu) const {
  CheckOwner(mu);
  uint64_t h, t;
  Positions(&h, &t);
  return static_cast<int64_t>(t - h);
}

template <class P>
void BasicRowRing<P>::Push(const Mutex& mu, const Element& element) {
  CheckOwner(mu);
  const uint64_t t = tail_.load(std::memory_order_relaxed) & ~kFrozen;
  tail_.store((t + 1) | kFrozen, std::memory_order_release);
  WriteRow(t, element);
  ++locked_pushed_;
}

template <class P>
bool BasicRowRing<P>::PushBatch(const Mutex& mu, const Element& batch) {
  CheckOwner(mu);
  const uint64_t t = tail_.load(std::memory_order_relaxed) & ~kFrozen;
  if (t % static_cast<uint64_t>(kBatchRows) != 0) return false;
  Element shared = batch;  // before the claim: nothing may throw after it
  tail_.store((t + static_cast<uint64_t>(kBatchRows)) | kFrozen, std::memory_order_release);
  WriteBatch(t, std::move(shared));
  locked_pushed_ += kBatchRows;
  return true;
}

template <class P>
Element BasicRowRing<P>::Pop(const Mutex& mu) {
  CheckOwner(mu);
  const uint64_t h = head_.load(std::memory_order_relaxed) & ~kFrozen;
  AwaitPublished(h);  // a push claimed before the freeze may still be copying
  head_.store((h + 1) | kFrozen, std::memory_order_release);
  ++locked_popped_;
  return ReadRow(h);
}

template <class P>
int64_t BasicRowRing<P>::TakeRows(const Mutex& mu, int64_t max_rows, Element* batch, int64_t* first_row) {
  CheckOwner(mu);
  const uint64_t h = head_.load(std::memory_order_relaxed) & ~kFrozen;
  const uint64_t index = h & mask_;
  const auto row = static_cast<int64_t>(index % kBatchRows);
  const auto n = static_cast<uint64_t>(std::min<int64_t>(max_rows, kBatchRows - row));
  for (uint64_t i = 0; i < n; ++i) {
    if (seq_[index + i].load(std::memory_order_acquire) != h + i + 1) AwaitPublished(h + i);
  }
  Batch& b = batches_[index / kBatchRows];
  *batch = b.data;  // shares the buffers: the rows stay valid after the release below
  if (!b.adopted) {
    for (const Tensor& t : *batch) t.buffer()->Unref(static_cast<int32_t>(n));  // the rows' prepaid references
  }
  *first_row = row;
  head_.store((h + n) | kFrozen, std::memory_order_release);
  Release(b, n);
  locked_popped_ += static_cast<int64_t>(n);
  return static_cast<int64_t>(n);
}

template <class P>
int64_t BasicRowRing<P>::fast_pushed(const Mutex& mu) const {
  CheckOwner(mu);
  return static_cast<int64_t>(tail_.load(std::memory_order_acquire) & ~kFrozen) - locked_pushed_;
}

template <class P>
int64_t BasicRowRing<P>::fast_popped(const Mutex& mu) const {
  CheckOwner(mu);
  return static_cast<int64_t>(head_.load(std::memory_order_acquire) & ~kFrozen) - locked_popped_;
}

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_ROW_RING_IMPL_H_
