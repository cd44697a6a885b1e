// What bind_data_autotune.cc needs of bind_data.cc's handle types (which
// stay private there): the C++ objects behind _core.data.Dataset and
// _core.data.Iterator, and a new Dataset handle. All REQUIRE the GIL.
#ifndef SLUICE_PYTHON_SRC_BIND_DATA_AUTOTUNE_H_
#define SLUICE_PYTHON_SRC_BIND_DATA_AUTOTUNE_H_

#include <nanobind/nanobind.h>

#include "sluice/data/dataset.h"

namespace sluice::python {

// The dataset of a _core.data.Dataset (TypeError for anything else).
data::DatasetPtr DataDatasetOf(nanobind::handle dataset);
// A new _core.data.Dataset of `ds`.
nanobind::object DataDatasetToPython(data::DatasetPtr ds);
// The iterator of a _core.data.Iterator; nullptr once it is closed.
const data::IteratorBase* DataIteratorOf(nanobind::handle iterator);

// with_options and iterator_stats (bind_data_autotune.cc).
void BindDataAutotune(nanobind::module_& d);

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_BIND_DATA_AUTOTUNE_H_
