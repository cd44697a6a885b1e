// What the _core.data binding files share (bind_data.cc defines it): the
// dataset and iterator handles, Python callables that C++ threads call, and
// element / signature conversions.
#ifndef SLUICE_PYTHON_SRC_BIND_DATA_H_
#define SLUICE_PYTHON_SRC_BIND_DATA_H_

#include <nanobind/nanobind.h>
#if defined(__GLIBCXX__)
#include <cxxabi.h>  // abi::__forced_unwind
#endif

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bind_common.h"
#include "bind_data_pass.h"
#include "python_exit.h"
#include "sluice/data/datasets.h"

namespace sluice::python {

// _core.data.Dataset.
struct DataDatasetHandle {
  data::DatasetPtr ds;
};

// _core.data.Iterator: one pass. Destroying the tree runs without the GIL: it
// joins worker threads that may be waiting for it. The atexit hook closes
// the live ones.
struct DataIteratorHandle {
  explicit DataIteratorHandle(std::unique_ptr<DataPass> pass);
  DataIteratorHandle(const DataIteratorHandle&) = delete;
  DataIteratorHandle& operator=(const DataIteratorHandle&) = delete;
  ~DataIteratorHandle();
  // REQUIRES: the GIL is held.
  void Close();

  std::unique_ptr<DataPass> it;
};

// True once the interpreter is finalizing (or gone). Not python_exit.h's
// PythonGone(), which is true from the producers' atexit hook on: the data
// iterators' own hook must still be able to call Python and join workers
// that finish a Python call. ParkForever(): python_exit.h.
bool InterpreterFinalizing();

// A strong reference to a Python callable that C++ threads call and may drop
// last: the destructor takes the GIL (and leaks once Python is going away).
class DataPyFn {
 public:
  explicit DataPyFn(nb::handle fn) : fn_(fn.inc_ref().ptr()) {}
  DataPyFn(const DataPyFn&) = delete;
  DataPyFn& operator=(const DataPyFn&) = delete;
  ~DataPyFn() {
    if (InterpreterFinalizing()) return;
    nb::gil_scoped_acquire gil;
    Py_DECREF(fn_);
  }
  nb::handle get() const { return fn_; }

 private:
  PyObject* fn_;
};

// The status of the Python exception being handled. REQUIRES: the GIL.
Status StatusOfPythonError(nb::python_error& e);

// Calls `call()` (which calls Python) with the GIL; its result or the
// exception's status (an OpError keeps its code, anything else is Unknown);
// Cancelled once Python is gone.
template <class R, class Call>
Result<R> WithGil(Call call) {
  if (InterpreterFinalizing()) return errors::Cancelled("the Python interpreter is exiting");
#if defined(__GLIBCXX__)
  try {
#endif
    nb::gil_scoped_acquire gil;
    try {
      return call();
    } catch (nb::python_error& err) {
      if (err.matches(PyExc_KeyboardInterrupt) && OnMainThread()) {
        // Ctrl-C while the function ran on the caller's thread: next() raises it.
        StashInterrupt(std::move(err));
        return errors::Cancelled("interrupted by a Python signal handler");
      }
      Status s = StatusOfPythonError(err);
      err.restore();
      PyErr_Clear();
      return s;
    } catch (const std::exception& err) {
      return errors::InvalidArgument(err.what());
    }
#if defined(__GLIBCXX__)
  } catch (abi::__forced_unwind&) {  // ended by the finalizing interpreter
    ParkForever();
  }
#endif
}

// Calls fn(list of the components as numpy) with the GIL; `then` turns its
// result into R.
template <class R, class Then>
Result<R> CallPython(const DataPyFn& fn, Element e, Then then) {
  return WithGil<R>([&]() -> Result<R> { return then(fn.get()(ElementToPython(std::move(e)))); });
}

// fn returns (values, dtype numbers), each value already converted to its
// dtype's storage by the Python layer.
Result<Element> ElementFromPython(nb::handle result);
data::ElementSpec SpecOf(const std::vector<int>& dtypes, const std::vector<std::optional<std::vector<int64_t>>>& shapes,
                         std::vector<std::string> names);
// (dtype numbers, shapes or None, names).
nb::tuple SpecToPython(const data::ElementSpec& spec);
// None -> nullopt (top-level std::optional arguments would need nb::arg().none()).
std::optional<int64_t> OptInt(nb::handle h);
std::vector<DType> DTypesOf(const std::vector<int>& numbers);
DataDatasetHandle Wrap(Result<data::DatasetPtr> r);
// next() of a thread-less iterator handle (ShardedIterator,
// RecordFilesIterator): its next element as a list, None at its end. GetNext
// runs without the GIL. ValueError when `it` is null (the handle is closed).
// REQUIRES: the GIL is held.
nb::object NextOrNone(data::IteratorBase* it);

// The bindings of window, scan, take_while, unique, ignore_errors, rebatch
// and group_by_window (bind_data_xforms.cc).
void BindDataXforms(nb::module_& d);
// The memory budget's and error policies' options and reports
// (bind_data_budget.cc).
void BindDataBudget(nb::module_& d);
// list_files, the readers over name datasets, CsvDataset, cache(filename),
// choose/sample_from_datasets and sparse batching (bind_data_sources.cc).
void BindDataSources(nb::module_& d);
// The queue bridge and C++ generators (bind_data_frameworks.cc).
void BindDataFrameworks(nb::module_& d);
// from_record_files and the global shuffle (bind_data_global_shuffle.cc).
void BindDataGlobalShuffle(nb::module_& d);
// Iterator checkpoints: save_iterator / restore_iterator (bind_data_checkpoint.cc).
void BindDataCheckpoint(nb::module_& d);
// sluice.distribute's contexts, sharded datasets (bind_data_distribute.cc).
void BindDataDistribute(nb::module_& d);
// tf.io.read_file and tf.io.matching_files, eager (bind_data_file_ops.cc).
void BindDataFileOps(nb::module_& d);
// tf.data API completions: counter, random, assert_cardinality (bind_data_tfapi.cc).
void BindDataTfapi(nb::module_& d);

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_BIND_DATA_H_
