// _core.data's window, scan, take_while, unique, ignore_errors, rebatch and
// group_by_window (datasets.h), for sluice/_data_xforms.py.
//
//   window / next_window        windows as flat elements; next_window opens
//                               an iterator's next one as k Dataset handles
//   interleave_window_py        interleave / flat_map over windows: fn gets
//                               the k Dataset handles of each window
//   scan_py, take_while_py, group_by_window_py   with Python functions
//   skipped_errors(iterator)    what ignore_errors skipped in that pass
//
// Python functions run on the iterator's thread, each call taking the GIL
// (bind_data.h's WithGil); an exception becomes the element's error.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "bind_data.h"

namespace sluice::python {
namespace {

using data::DatasetPtr;

// A window element's k datasets as a Python list of Dataset handles.
// REQUIRES: the GIL.
nb::list WindowToPython(const Element& window, const data::ElementSpec& spec) {
  std::vector<DatasetPtr> parts = ValueOrThrow(data::WindowDatasets(window, spec));
  nb::list out;
  for (DatasetPtr& p : parts) out.append(nb::cast(DataDatasetHandle{std::move(p)}));
  return out;
}

void BindWindow(nb::module_& d) {
  d.def("window", [](const DataDatasetHandle& in, int64_t size, nb::handle shift, int64_t stride, bool drop) {
    return Wrap(data::Window(in.ds, size, OptInt(shift), stride, drop));
  }, nb::arg("dataset"), nb::arg("size"), nb::arg("shift").none(), nb::arg("stride"), nb::arg("drop_remainder"));
  // The next window of an iterator over `windows` as its k datasets, or None at the end.
  d.def("next_window", [](DataIteratorHandle& h, const DataDatasetHandle& windows) -> nb::object {
    if (!h.it) throw nb::value_error("the iterator is closed");
    Element e;
    bool end = false;
    ThrowIfError(h.it->Next(&e, &end));  // releases the GIL; Ctrl-C raises KeyboardInterrupt
    if (end) return nb::none();
    return WindowToPython(e, windows.ds->element_spec());
  });
  // fn(list of the window's Dataset handles) -> a Dataset handle.
  d.def("interleave_window_py", [](const DataDatasetHandle& in, nb::handle fn, const std::vector<int>& out_dtypes,
                                   const std::vector<std::optional<std::vector<int64_t>>>& out_shapes,
                                   int64_t cycle_length, int64_t block_length, nb::handle npc_obj, std::optional<bool> deterministic) {
    auto ref = std::make_shared<DataPyFn>(fn);
    data::ElementSpec spec = in.ds->element_spec();
    data::InterleaveFn f = [ref, spec](Element e) {
      return WithGil<DatasetPtr>([&]() -> Result<DatasetPtr> {
        return nb::cast<const DataDatasetHandle&>(ref->get()(WindowToPython(e, spec))).ds;
      });
    };
    return Wrap(data::Interleave(in.ds, std::move(f), SpecOf(out_dtypes, out_shapes, {}),
                                 data::InterleaveOptions{cycle_length, block_length, OptInt(npc_obj), deterministic}));
  }, nb::arg("dataset"), nb::arg("fn"), nb::arg("out_dtypes"), nb::arg("out_shapes"), nb::arg("cycle_length"),
     nb::arg("block_length"), nb::arg("num_parallel_calls").none(), nb::arg("deterministic").none());
}

// fn(state components, element components) -> ((state values, dtypes), (output values, dtypes)).
void BindScan(nb::module_& d) {
  d.def("scan_py", [](const DataDatasetHandle& in, nb::handle initial_values, const std::vector<int>& initial_dtypes,
                      nb::handle fn, const std::vector<int>& out_dtypes,
                      const std::vector<std::optional<std::vector<int64_t>>>& out_shapes) {
    Element initial = PythonToElement(initial_values, DTypesOf(initial_dtypes));
    auto ref = std::make_shared<DataPyFn>(fn);
    data::ScanFn f = [ref](const Element& state, Element e) {
      using Pair = std::pair<Element, Element>;
      return WithGil<Pair>([&]() -> Result<Pair> {
        nb::tuple r = nb::cast<nb::tuple>(ref->get()(ElementToPython(state), ElementToPython(std::move(e))));
        Result<Element> next_state = ElementFromPython(r[0]);
        if (!next_state.ok()) return next_state.status();
        Result<Element> out = ElementFromPython(r[1]);
        if (!out.ok()) return out.status();
        return Pair(std::move(*next_state), std::move(*out));
      });
    };
    return Wrap(data::Scan(in.ds, std::move(initial), std::move(f), SpecOf(out_dtypes, out_shapes, {})));
  });
}

void BindSelection(nb::module_& d) {
  d.def("take_while_py", [](const DataDatasetHandle& in, nb::handle fn) {
    auto ref = std::make_shared<DataPyFn>(fn);
    data::PredicateFn f = [ref](const Element& e) {
      return CallPython<bool>(*ref, e, [](nb::handle r) -> Result<bool> { return nb::cast<bool>(r); });
    };
    return Wrap(data::TakeWhile(in.ds, std::move(f)));
  });
  d.def("unique", [](const DataDatasetHandle& in) { return Wrap(data::Unique(in.ds)); });
  d.def("ignore_errors", [](const DataDatasetHandle& in, bool log_warning) {
    return Wrap(data::IgnoreErrors(in.ds, log_warning));
  });
  d.def("skipped_errors", [](const DataIteratorHandle& h) -> int64_t { return h.it ? h.it->skipped_errors() : 0; });
  d.def("rebatch", [](const DataDatasetHandle& in, std::vector<int64_t> sizes, bool drop) {
    return Wrap(data::Rebatch(in.ds, std::move(sizes), drop));
  });
}

// key_fn(components) -> int; window_size_fn(key) -> int;
// reduce_fn(key, Dataset handle) -> Dataset handle.
void BindGroupByWindow(nb::module_& d) {
  d.def("group_by_window_py", [](const DataDatasetHandle& in, nb::handle key_fn, nb::handle reduce_fn,
                                 nb::handle window_size_fn, const std::vector<int>& out_dtypes,
                                 const std::vector<std::optional<std::vector<int64_t>>>& out_shapes) {
    auto key = std::make_shared<DataPyFn>(key_fn);
    auto reduce = std::make_shared<DataPyFn>(reduce_fn);
    auto size = std::make_shared<DataPyFn>(window_size_fn);
    data::KeyFn k = [key](const Element& e) {
      return CallPython<int64_t>(*key, e, [](nb::handle r) -> Result<int64_t> { return nb::cast<int64_t>(r); });
    };
    data::WindowSizeFn w = [size](int64_t k) {
      return WithGil<int64_t>([&]() -> Result<int64_t> { return nb::cast<int64_t>(size->get()(k)); });
    };
    data::ReduceFn r = [reduce](int64_t k, DatasetPtr window) {
      return WithGil<DatasetPtr>([&]() -> Result<DatasetPtr> {
        nb::object handle = nb::cast(DataDatasetHandle{std::move(window)});
        return nb::cast<const DataDatasetHandle&>(reduce->get()(k, handle)).ds;
      });
    };
    return Wrap(data::GroupByWindow(in.ds, std::move(k), std::move(r), std::move(w),
                                    SpecOf(out_dtypes, out_shapes, {})));
  });
}

}  // namespace

void BindDataXforms(nb::module_& d) {
  BindWindow(d);
  BindScan(d);
  BindSelection(d);
  BindGroupByWindow(d);
}

}  // namespace sluice::python
