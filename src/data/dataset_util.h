// Helpers shared by the dataset implementations (private to src/data).
#ifndef SLUICE_SRC_DATA_DATASET_UTIL_H_
#define SLUICE_SRC_DATA_DATASET_UTIL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "sluice/core/cancellation.h"
#include "sluice/data/checkpoint.h"
#include "sluice/data/dataset.h"

namespace sluice::data {

// Registers `on_cancel` with the tree's CancellationManager for its lifetime.
// If cancellation has already started, runs it at once. Deregistering waits
// for a running callback, so destroy this without holding a lock that
// on_cancel takes.
class CancelRegistration {
 public:
  CancelRegistration(const IteratorContext& ctx, std::function<void()> on_cancel);
  ~CancelRegistration();
  CancelRegistration(const CancelRegistration&) = delete;
  CancelRegistration& operator=(const CancelRegistration&) = delete;

 private:
  std::shared_ptr<CancellationManager> cm_;
  CancellationManager::Token token_ = CancellationManager::kInvalidToken;
};

// Unimplemented: "<name> cannot be checkpointed".
Status CannotCheckpoint(std::string_view name);

// Save / Restore of an iterator whose only position is its input's: the
// input's state under the child "input".
inline Status SaveInput(IteratorBase& input, IteratorStateWriter* w) {
  IteratorStateWriter child = w->Child("input");
  return input.Save(&child);
}
inline Status RestoreInput(IteratorBase& input, IteratorStateReader* r) {
  IteratorStateReader child = r->Child("input");
  return input.Restore(&child);
}

// An iterator over `dataset` (a DatasetPtr of the concrete type), which it
// keeps alive.
template <class D>
class DatasetIterator : public IteratorBase {
 public:
  explicit DatasetIterator(const D* dataset)
      : dataset_(std::static_pointer_cast<const D>(dataset->shared_from_this())) {}

  Status Save(IteratorStateWriter*) override { return CannotCheckpoint(dataset_->DebugName()); }
  Status Restore(IteratorStateReader*) override { return CannotCheckpoint(dataset_->DebugName()); }

 protected:
  const std::shared_ptr<const D> dataset_;
};

// The pass number of a new iterator of a dataset that counts its iterators
// (each epoch under Repeat is a pass): the counter's next value. A probe pass
// (or an uncounted one) sees that value without taking it, so tracing a
// Python function does not shift the seeds or epochs of the real passes.
inline uint64_t NextPass(std::atomic<uint64_t>& passes, const IteratorContext& ctx) {
  return ctx.probe || ctx.uncounted ? passes.load(std::memory_order_relaxed)
                                    : passes.fetch_add(1, std::memory_order_relaxed);
}

// After restoring an iterator that took pass `pass` of a pass-counted
// dataset: the passes made after it (the next epochs under Repeat) continue
// from pass + 1, as in the saved process.
inline void RestorePass(std::atomic<uint64_t>& passes, uint64_t pass) {
  uint64_t cur = passes.load(std::memory_order_relaxed);
  while (cur < pass + 1 && !passes.compare_exchange_weak(cur, pass + 1, std::memory_order_relaxed)) {
  }
}

inline Status InvalidArgument(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }
Status CheckInput(const DatasetPtr& input, std::string_view op);

// An integer-valued scalar of `dtype` (range and counter elements): v cast
// as C++ casts it.
Tensor IntScalarOf(DType dtype, int64_t v);

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_DATASET_UTIL_H_
