// _core.BatchOptions: train::ShuffleBatchOptions (BatchOptions and the
// shuffle forms' min_after_dequeue and seed) bound once, filled by keyword,
// its defaults those of the C++ structs (include/sluice/train/batchers.h).
// sluice/_input.py passes the options of tf.train.batch & co. through it to
// _core.new_batcher (bind_pipeline.cc); Batch/BatchJoin ignore the shuffle
// fields.
//
// Thread-safety: a bound options object is a value; Python code builds it
// with the GIL held, and new_batcher copies it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bind_common.h"
#include "sluice/core/dtype.h"
#include "sluice/core/shape.h"
#include "sluice/train/batchers.h"

namespace sluice::python {
namespace {

using Options = train::ShuffleBatchOptions;

void Init(Options* self, int64_t batch_size, int num_threads, int32_t capacity, bool enqueue_many,
          const std::vector<int>& dtypes, const ShapeList& shapes, bool dynamic_pad, bool allow_smaller_final_batch,
          std::string shared_name, std::string name, int32_t min_after_dequeue, std::optional<int64_t> seed) {
  Options o;
  o.batch_size = batch_size;
  o.num_threads = num_threads;
  o.capacity = capacity;
  o.enqueue_many = enqueue_many;
  o.dtypes = DTypesFromPython(dtypes);
  o.shapes = ShapesFromPython(shapes);
  o.dynamic_pad = dynamic_pad;
  o.allow_smaller_final_batch = allow_smaller_final_batch;
  o.shared_name = std::move(shared_name);
  o.name = std::move(name);
  o.min_after_dequeue = min_after_dequeue;
  o.seed = seed;
  new (self) Options(std::move(o));
}

}  // namespace

void BindBatchOptions(nb::module_& m) {
  const Options d;  // the defaults
  nb::class_<Options>(m, "BatchOptions",
                      "train::ShuffleBatchOptions: keyword arguments only; an option not given keeps the C++ "
                      "default. dtypes are DType numbers; shapes a list of None (unknown rank) or lists of dims "
                      "(-1 unknown).")
      .def("__init__", &Init, nb::kw_only(), nb::arg("batch_size") = d.batch_size,
           nb::arg("num_threads") = d.num_threads, nb::arg("capacity") = d.capacity,
           nb::arg("enqueue_many") = d.enqueue_many, nb::arg("dtypes") = std::vector<int>{},
           nb::arg("shapes") = ShapeList{}, nb::arg("dynamic_pad") = d.dynamic_pad,
           nb::arg("allow_smaller_final_batch") = d.allow_smaller_final_batch,
           nb::arg("shared_name") = d.shared_name, nb::arg("name") = d.name,
           nb::arg("min_after_dequeue") = d.min_after_dequeue, nb::arg("seed").none() = d.seed)
      .def_ro("batch_size", &Options::batch_size)
      .def_ro("num_threads", &Options::num_threads)
      .def_ro("capacity", &Options::capacity)
      .def_ro("enqueue_many", &Options::enqueue_many)
      .def_prop_ro("dtypes", [](const Options& o) { return DTypesToPython(o.dtypes); })
      .def_prop_ro("shapes", [](const Options& o) { return ShapesToPython(o.shapes); })
      .def_ro("dynamic_pad", &Options::dynamic_pad)
      .def_ro("allow_smaller_final_batch", &Options::allow_smaller_final_batch)
      .def_ro("shared_name", &Options::shared_name)
      .def_ro("name", &Options::name)
      .def_ro("min_after_dequeue", &Options::min_after_dequeue)
      .def_ro("seed", &Options::seed);
}

}  // namespace sluice::python
