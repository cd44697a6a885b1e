// _core.data.with_options and _core.data.iterator_stats
// (bind_data_autotune.cc).
#ifndef SLUICE_PYTHON_SRC_BIND_DATA_AUTOTUNE_H_
#define SLUICE_PYTHON_SRC_BIND_DATA_AUTOTUNE_H_

#include <nanobind/nanobind.h>

namespace sluice::python {

void BindDataAutotune(nanobind::module_& d);

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_BIND_DATA_AUTOTUNE_H_
