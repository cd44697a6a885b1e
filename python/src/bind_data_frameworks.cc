// _core.data's bridge with the queue world (datasets.h, "Frameworks"):
//
//   _core.data.from_queue(queue)                         a Dataset dequeuing from a _core queue
//   _core.data.dataset_queue_runner(ds, queue, threads)  a _core.QueueRunner enqueuing ds's elements
//
// Both run without the GIL: the runner's threads are C++ threads.
#include <nanobind/nanobind.h>

#include <memory>
#include <utility>

#include "bind_common.h"
#include "bind_data.h"
#include "sluice/data/datasets.h"

namespace sluice::python {

void BindDataFrameworks(nb::module_& d) {
  d.def("from_queue", [](const QueueHandle& q) { return DataDatasetHandle{ValueOrThrow(data::FromQueue(q.queue))}; },
        nb::arg("queue"));
  d.def(
      "dataset_queue_runner",
      [](const DataDatasetHandle& ds, const QueueHandle& q, int num_threads) {
        return WrapQueueRunner(ValueOrThrow(data::DatasetQueueRunner(ds.ds, q.queue, num_threads)));
      },
      nb::arg("dataset"), nb::arg("queue"), nb::arg("num_threads") = 1);
}

}  // namespace sluice::python
