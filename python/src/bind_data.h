// What the data binding files share (bind_data.cc and bind_data_<topic>.cc).
#ifndef SLUICE_PYTHON_SRC_BIND_DATA_H_
#define SLUICE_PYTHON_SRC_BIND_DATA_H_

#include <nanobind/nanobind.h>

#include <memory>

#include "sluice/data/dataset.h"

namespace sluice::python {

// A _core.data.Dataset: an immutable data::DatasetPtr. Thread-safe.
struct DataDatasetHandle {
  data::DatasetPtr ds;
};

// The bindings of bind_data_frameworks.cc (the queue bridge), added to the
// _core.data module `d`.
void BindDataFrameworks(nanobind::module_& d);

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_BIND_DATA_H_
