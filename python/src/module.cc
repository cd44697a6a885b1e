// sluice._core: the C++ engine's Python extension (nanobind). The pure-Python
// package `sluice` (python/sluice/) wraps it with TensorFlow's names.
#include <nanobind/nanobind.h>

#include "bind_common.h"

NB_MODULE(_core, m) {
  m.doc() = "sluice C++ core: queues, tensors and the train layer (see the sluice package).";
  sluice::python::BindCore(m);
  sluice::python::BindQueue(m);
  sluice::python::BindTrain(m);
  sluice::python::BindIo(m);
  sluice::python::BindOps(m);
  sluice::python::BindImageCodec(m);
  sluice::python::BindImageOps(m);
  sluice::python::BindPipeline(m);
  sluice::python::BindSparseBatch(m);
  sluice::python::BindData(m);
}
