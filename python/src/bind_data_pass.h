// DataPass: one pass over a dataset whose next() answers Ctrl-C
// (bind_data_pass.cc).
//
// A GetNext may block where the tree waits for its threads (a parallel map's
// or a prefetch's consumer) or for a queue (FromQueue). Next() runs it
// without the GIL under a train::ScopedProducerWait whose interrupt check
// (BlockingCall's: on the main thread, PyErr_CheckSignals() every
// kInterruptInterval) those waits run, so Ctrl-C raises KeyboardInterrupt at
// once. The wait is abandoned before an element is taken: the next Next()
// returns it. A Python function or generator that the tree runs on the
// calling thread gets the KeyboardInterrupt itself: the binding stashes it
// (StashInterrupt) and Next() raises it; that element is lost.
//
// Thread-safety: one caller at a time (as any iterator). The destructor
// cancels the tree and joins its threads.
#ifndef SLUICE_PYTHON_SRC_BIND_DATA_PASS_H_
#define SLUICE_PYTHON_SRC_BIND_DATA_PASS_H_

#include <memory>
#include <optional>
#include <thread>

#include "bind_common.h"
#include "sluice/core/cancellation.h"
#include "sluice/data/dataset.h"

namespace sluice::python {

// Keeps `interrupt` (a KeyboardInterrupt a Python function raised on the
// main thread, inside GetNext) for DataPass::Next to raise once GetNext
// returns. REQUIRES: the GIL is held, on the main thread.
void StashInterrupt(nb::python_error interrupt);

class DataPass {
 public:
  // probe: a probe pass (data::IteratorContext::probe).
  explicit DataPass(const data::DatasetPtr& dataset, bool probe = false);
  DataPass(const DataPass&) = delete;
  DataPass& operator=(const DataPass&) = delete;
  // REQUIRES: the GIL is not held (a Python function in the tree may need it
  // to finish).
  ~DataPass();

  // The next element, as IteratorBase::GetNext (a stray OutOfRange becomes
  // Internal). Raises (nb::python_error) what a signal handler raised while
  // it waited. REQUIRES: the GIL is held.
  Status Next(Element* out, bool* end_of_sequence);
  // IteratorBase::skipped_errors of the tree.
  int64_t skipped_errors() const { return iterator_->skipped_errors(); }
  // The root iterator (IteratorStats reads it; thread-safe).
  const data::IteratorBase& iterator() const { return *iterator_; }
  // The root iterator, for a checkpoint's save and restore (one caller at a time).
  data::IteratorBase& mutable_iterator() { return *iterator_; }

 private:
  // The root iterator: its destruction cancels the tree and joins its threads.
  std::unique_ptr<data::IteratorBase> iterator_;
  // The interrupt check of the thread that called last (made once per
  // thread change rather than per call: next() is called per element).
  std::optional<BlockingCall> call_;
  queue::WaitOptions wait_;
  std::thread::id caller_;
};

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_BIND_DATA_PASS_H_
