// _core.data.with_options and _core.data.iterator_stats: tf.data.Options
// carried into the engine, and the per-stage statistics of an iterator
// (datasets.h, "Options, statistics and AUTOTUNE").
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <optional>

#include "bind_common.h"
#include "bind_data.h"
#include "bind_data_autotune.h"
#include "bind_data_pass.h"
#include "sluice/data/datasets.h"

namespace sluice::python {
namespace {

namespace nb = nanobind;

nb::dict StageToPython(const data::StageStats& s) {
  nb::dict d;
  d["name"] = s.name;
  d["elements"] = s.elements;
  d["bytes"] = s.bytes;
  d["busy_ns"] = s.busy_ns;
  d["cpu_ns"] = s.cpu_ns;
  d["wait_ns"] = s.wait_ns;
  d["buffer_size"] = s.buffer_size;
  d["buffer_fill"] = s.buffer_fill;
  d["parallelism"] = s.parallelism;
  d["autotune"] = s.autotune;
  return d;
}

// None -> nullopt; otherwise the value as T (TypeError if it is not one).
// (Taken as handles: gcc warns falsely about nanobind's optional casters.)
template <class T>
std::optional<T> OptionalOf(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<T>(h);
}

}  // namespace

void BindDataAutotune(nb::module_& d) {
  d.def(
      "with_options",
      [](const DataDatasetHandle& dataset, nb::handle deterministic, nb::handle autotune_enabled, nb::handle cpu_budget,
         nb::handle ram_budget, nb::handle private_threadpool_size, nb::handle max_intra_op_parallelism,
         nb::handle map_and_batch_fusion) {
        data::Options o;
        o.deterministic = OptionalOf<bool>(deterministic);
        o.autotune = data::AutotuneOptions{OptionalOf<bool>(autotune_enabled), OptionalOf<int64_t>(cpu_budget),
                                           OptionalOf<int64_t>(ram_budget)};
        o.threading = data::ThreadingOptions{OptionalOf<int64_t>(private_threadpool_size),
                                             OptionalOf<int64_t>(max_intra_op_parallelism)};
        o.optimization.map_and_batch_fusion = OptionalOf<bool>(map_and_batch_fusion);
        return Wrap(data::WithOptions(dataset.ds, o));
      },
      nb::arg("dataset"), nb::arg("deterministic").none(), nb::arg("autotune_enabled").none(),
      nb::arg("cpu_budget").none(), nb::arg("ram_budget").none(), nb::arg("private_threadpool_size").none(),
      nb::arg("max_intra_op_parallelism").none(), nb::arg("map_and_batch_fusion").none() = nb::none(),
      "dataset with tf.data.Options' engine fields merged over its own (None: not set).");
  d.def(
      "iterator_stats",
      [](const DataIteratorHandle& iterator) {
        nb::list out;
        if (!iterator.it) return out;  // closed
        for (const data::StageStats& s : data::IteratorStats(iterator.it->iterator())) out.append(StageToPython(s));
        return out;
      },
      nb::arg("iterator"),
      "One dict per live stage of the iterator's tree (sources first, 'Root' last); [] once closed.");
}

}  // namespace sluice::python
