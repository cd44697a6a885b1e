// _core.data.save_iterator / restore_iterator: iterator checkpoints
// (sluice/data/checkpoint.h) as bytes, for sluice/_data_checkpoint.py.
//
// Both run without the GIL: a save waits for a parallel map's calls in
// flight, and a restore makes an interleave's inputs again, either of which
// may call Python functions that take the GIL. A save's waits answer Ctrl-C
// as next()'s do (the iterator goes on unchanged).
#include <nanobind/nanobind.h>

#include <optional>
#include <string>

#include "bind_common.h"
#include "bind_data.h"
#include "bind_data_pass.h"
#include "sluice/data/checkpoint.h"
#include "sluice/train/producer.h"

namespace sluice::python {

void BindDataCheckpoint(nb::module_& d) {
  d.def(
      "save_iterator",
      [](DataIteratorHandle& h) {
        if (!h.it) throw nb::value_error("the iterator is closed");
        BlockingCall call(std::nullopt);
        const queue::WaitOptions wait = call.wait<queue::WaitOptions>();
        Result<std::string> saved = call.Run([&] {  // without the GIL; raises a pending KeyboardInterrupt
          train::ScopedProducerWait scope(wait);
          return data::SaveIterator(h.it->mutable_iterator());
        });
        std::string bytes = ValueOrThrow(std::move(saved));
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("iterator"),
      "The iterator's position as bytes. UnimplementedError naming a stage that cannot be saved.");
  d.def(
      "restore_iterator",
      [](DataIteratorHandle& h, nb::bytes state) {
        if (!h.it) throw nb::value_error("the iterator is closed");
        std::string bytes(state.c_str(), state.size());
        Status s;
        {
          nb::gil_scoped_release release;
          s = data::RestoreIterator(h.it->mutable_iterator(), bytes);
        }
        ThrowIfError(s);
      },
      nb::arg("iterator"), nb::arg("state"),
      "Puts the iterator at the position `state` holds. DataLossError for corrupt bytes, InvalidArgumentError "
      "for another pipeline's checkpoint.");
}

}  // namespace sluice::python
