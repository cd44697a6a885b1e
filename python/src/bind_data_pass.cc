// DataPass: GetNext without the GIL, its waits bounded by the Ctrl-C check.
#include "bind_data_pass.h"

#include <optional>

#include "sluice/train/producer.h"

namespace sluice::python {
namespace {

// Touched only on the main thread, with the GIL. Never destroyed: it may
// hold a Python object when the interpreter is gone.
std::optional<nb::python_error>& StashedInterrupt() {
  static auto* stashed = new std::optional<nb::python_error>();
  return *stashed;
}

}  // namespace

void StashInterrupt(nb::python_error interrupt) {
  StashedInterrupt().reset();
  StashedInterrupt().emplace(std::move(interrupt));
}

DataPass::DataPass(const data::DatasetPtr& dataset, bool probe)
    : iterator_(probe ? dataset->MakeProbeIterator() : dataset->MakeIterator()) {}

DataPass::~DataPass() = default;

Status DataPass::Next(Element* out, bool* end_of_sequence) {
  if (!call_ || caller_ != std::this_thread::get_id()) {
    call_.emplace(std::nullopt);
    wait_ = call_->wait<queue::WaitOptions>();
    caller_ = std::this_thread::get_id();
  }
  Status s = call_->Run([&] {
    train::ScopedProducerWait scope(wait_);
    return iterator_->GetNext(out, end_of_sequence);
  });
  if (!s.ok() && StashedInterrupt() && OnMainThread()) {
    nb::python_error interrupt = std::move(*StashedInterrupt());
    StashedInterrupt().reset();
    throw interrupt;
  }
  return s;  // the root iterator turned a stray OutOfRange into Internal
}

}  // namespace sluice::python
