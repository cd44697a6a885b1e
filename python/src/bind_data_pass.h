// DataPass: one pass over a dataset whose next() answers Ctrl-C
// (bind_data_pass.cc).
//
// A GetNext may block anywhere in the tree (a parallel map's consumer, a
// prefetch buffer, a queue source). On the main thread, where Python runs
// signal handlers, the pass runs GetNext on a helper thread of its own and
// waits for it in kInterruptInterval slices, calling PyErr_CheckSignals()
// between them: a KeyboardInterrupt is raised at once, and the call stays
// pending, so the next Next() returns its element (none is lost or
// skipped). Off the main thread GetNext runs on the caller's thread.
//
// Thread-safety: one caller at a time (as any iterator). The destructor
// cancels the tree (waking a blocked GetNext), joins the helper, then
// destroys the tree.
#ifndef SLUICE_PYTHON_SRC_BIND_DATA_PASS_H_
#define SLUICE_PYTHON_SRC_BIND_DATA_PASS_H_

#include <memory>
#include <thread>

#include "sluice/core/cancellation.h"
#include "sluice/core/mutex.h"
#include "sluice/data/dataset.h"

namespace sluice::python {

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
  // it waited; the GetNext it started goes on, and the next call returns
  // its result. REQUIRES: the GIL is held.
  Status Next(Element* out, bool* end_of_sequence);

 private:
  Status GetNextNow(Element* out, bool* end_of_sequence);
  void HelperLoop() SLUICE_EXCLUDES(mu_);

  // Constant after construction:
  const std::shared_ptr<CancellationManager> cancellation_ = std::make_shared<CancellationManager>();
  // Used by one thread at a time: the caller, or the helper while a call is
  // pending (the caller then waits for it).
  std::unique_ptr<data::IteratorBase> iterator_;

  Mutex mu_;
  CondVar cv_;
  bool requested_ SLUICE_GUARDED_BY(mu_) = false;  // a call waits for the helper
  bool done_ SLUICE_GUARDED_BY(mu_) = false;       // its result is below
  bool stop_ SLUICE_GUARDED_BY(mu_) = false;
  Status status_ SLUICE_GUARDED_BY(mu_);
  Element element_ SLUICE_GUARDED_BY(mu_);
  bool end_ SLUICE_GUARDED_BY(mu_) = false;
  std::thread helper_;  // started by the first main-thread call
};

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_BIND_DATA_PASS_H_
