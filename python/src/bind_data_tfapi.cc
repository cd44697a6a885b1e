// _core.data's tf.data API completions (datasets.h's Counter, Random,
// AssertCardinality), for sluice/_data_tfapi.py.
//
//   counter(start, step, dtype)                 a Dataset handle
//   random(seed, seed2, rerandomize)            a Dataset handle
//   assert_cardinality(ds, expected)            a Dataset handle
#include <nanobind/nanobind.h>

#include <cstdint>

#include "bind_data.h"

namespace sluice::python {

void BindDataTfapi(nb::module_& d) {
  d.def("counter", [](int64_t start, int64_t step, int dtype) {
    return Wrap(data::Counter(start, step, static_cast<DType>(dtype)));
  }, nb::arg("start"), nb::arg("step"), nb::arg("dtype"));
  d.def("random", [](uint64_t seed, uint64_t seed2, bool rerandomize) {
    return Wrap(data::Random(seed, seed2, rerandomize));
  }, nb::arg("seed"), nb::arg("seed2"), nb::arg("rerandomize_each_iteration"));
  d.def("assert_cardinality", [](const DataDatasetHandle& in, int64_t expected) {
    return Wrap(data::AssertCardinality(in.ds, expected));
  }, nb::arg("dataset"), nb::arg("expected_cardinality"));
}

}  // namespace sluice::python
