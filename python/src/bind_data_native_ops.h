// _core.data.map_native_chain and _core.data.producer_native_chain: the
// native element ops of sluice/data/native_ops.h, fused into one map
// (bind_data_native_ops.cc).
#ifndef SLUICE_PYTHON_SRC_BIND_DATA_NATIVE_OPS_H_
#define SLUICE_PYTHON_SRC_BIND_DATA_NATIVE_OPS_H_

#include <nanobind/nanobind.h>

namespace sluice::python {

void BindDataNativeOps(nanobind::module_& d);

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_BIND_DATA_NATIVE_OPS_H_
