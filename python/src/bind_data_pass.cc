// DataPass: GetNext on a helper thread for main-thread callers, so that
// Ctrl-C interrupts a blocked next() without losing the element.
#include "bind_data_pass.h"

#include <utility>

#include "bind_common.h"
#include "sluice/core/thread_pool.h"

namespace sluice::python {

DataPass::DataPass(const data::DatasetPtr& dataset, bool probe)
    : iterator_(dataset->MakeIteratorInternal(data::IteratorContext{cancellation_, probe})) {}

DataPass::~DataPass() {
  cancellation_->StartCancel();
  {
    MutexLock lock(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  if (helper_.joinable()) helper_.join();
  iterator_.reset();
}

Status DataPass::GetNextNow(Element* out, bool* end_of_sequence) {
  Status s = iterator_->GetNext(out, end_of_sequence);
  if (errors::IsOutOfRange(s)) {
    // OutOfRange would read as the end of the sequence to a caller.
    return Status(Code::kInternal, "an iterator returned OutOfRange instead of end_of_sequence: " + s.message());
  }
  return s;
}

void DataPass::HelperLoop() {
  SetCurrentThreadName("sluice_data_next");
  while (true) {
    {
      MutexLock lock(&mu_);
      while (!stop_ && !(requested_ && !done_)) cv_.Wait(&mu_);
      if (stop_) return;
    }
    Element e;
    bool end = false;
    Status s = GetNextNow(&e, &end);
    MutexLock lock(&mu_);
    status_ = std::move(s);
    element_ = std::move(e);
    end_ = end;
    done_ = true;
    cv_.SignalAll();
  }
}

Status DataPass::Next(Element* out, bool* end_of_sequence) {
  bool pending;
  {
    MutexLock lock(&mu_);
    pending = requested_;
  }
  if (!pending && !OnMainThread()) {
    GilRelease release;
    return GetNextNow(out, end_of_sequence);
  }
  if (!helper_.joinable()) helper_ = std::thread([this] { HelperLoop(); });
  {
    MutexLock lock(&mu_);
    if (!requested_) {
      requested_ = true;
      done_ = false;
      cv_.SignalAll();
    }
  }
  const bool interruptible = OnMainThread();
  while (true) {
    {
      GilRelease release;
      MutexLock lock(&mu_);
      if (!done_) cv_.WaitFor(&mu_, BlockingCall::kInterruptInterval);
      if (done_) {
        requested_ = false;
        done_ = false;
        *out = std::move(element_);
        element_ = Element();
        *end_of_sequence = end_;
        return std::move(status_);
      }
    }
    if (interruptible && PyErr_CheckSignals() != 0) throw nb::python_error();
  }
}

}  // namespace sluice::python
