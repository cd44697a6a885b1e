// Bindings of pipeline/sparse_batch.h: batching SparseTensors as TensorFlow's
// tf.train batchers do. sluice/_sparse_batch.py wraps them.
//
//   _core.pack_sparse_producer(producer, triples, enqueue_many=False)
//       A _core.Producer whose SparseTensors (each a triple of component
//       indices: indices, values, dense_shape) are packed into one string
//       scalar per example (train::MapPackSparse). Runs in C++ on the
//       runner threads, never taking the GIL.
//   _core.unpack_sparse_batch(packed, dtype=None) -> (indices, values, dense_shape)
//       A dequeued batch of packed strings (an object array or a sequence of
//       bytes) as one batched SparseTensor's numpy arrays
//       (train::UnpackSparseBatch), decoded without the GIL.
//
// Errors: InvalidArgument (a bad triple at build time, a corrupt or
// inconsistent batch) becomes sluice.errors.InvalidArgumentError; TypeError
// for a `packed` that is not a sequence of bytes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bind_common.h"
#include "sluice/core/dtype.h"
#include "sluice/core/status.h"
#include "sluice/ops/composite_tensor.h"
#include "sluice/pipeline/producer_ops.h"
#include "sluice/pipeline/sparse_batch.h"

namespace sluice::python {
namespace {

// `triples`: (indices, values, dense_shape) component indices, each >= 0.
train::TypedProducer NewPackSparseProducer(const train::TypedProducer& input,
                                           const std::vector<std::tuple<int, int, int>>& triples, bool enqueue_many) {
  std::vector<train::SparseComponents> sparse;
  for (const auto& [indices, values, dense_shape] : triples) {
    if (indices < 0 || values < 0 || dense_shape < 0) throw nb::value_error("component indices must be >= 0");
    sparse.push_back(train::SparseComponents{static_cast<size_t>(indices), static_cast<size_t>(values),
                                             static_cast<size_t>(dense_shape)});
  }
  return ValueOrThrow(train::MapPackSparse(input, std::move(sparse), enqueue_many));
}

// The bytes of each item of `packed`, viewed in place: the returned list
// holds a reference to every item, so the views stay valid while it lives
// (without the GIL too). REQUIRES: the GIL is held.
nb::object PackedItems(nb::handle packed, std::vector<std::string_view>* views) {
  if (PyBytes_Check(packed.ptr()) || PyUnicode_Check(packed.ptr())) {
    throw nb::type_error("unpack_sparse_batch expects a sequence of packed SparseTensors (bytes), not one string");
  }
  nb::object items = nb::steal(PySequence_Fast(packed.ptr(), "unpack_sparse_batch expects a sequence of bytes"));
  if (!items.is_valid()) throw nb::python_error();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.ptr());
  PyObject** item = PySequence_Fast_ITEMS(items.ptr());
  views->reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!PyBytes_Check(item[i])) {
      throw nb::type_error("unpack_sparse_batch expects bytes items (packed SparseTensors)");
    }
    views->emplace_back(PyBytes_AS_STRING(item[i]), static_cast<size_t>(PyBytes_GET_SIZE(item[i])));
  }
  return items;
}

nb::tuple UnpackSparseBatch(nb::handle packed, std::optional<int> dtype) {
  std::vector<std::string_view> views;
  nb::object keep_alive = PackedItems(packed, &views);
  std::optional<DType> want;
  if (dtype) want = static_cast<DType>(*dtype);
  Result<ops::SparseTensor> batch = [&] {
    GilRelease release;
    return train::UnpackSparseBatch(views, want);
  }();
  ThrowIfError(batch.status());
  return nb::make_tuple(TensorToPython(batch->indices), TensorToPython(batch->values),
                        TensorToPython(batch->dense_shape));
}

}  // namespace

void BindSparseBatch(nb::module_& m) {
  m.def("pack_sparse_producer", &NewPackSparseProducer, nb::arg("producer"), nb::arg("triples"),
        nb::arg("enqueue_many") = false,
        "The producer with each (indices, values, dense_shape) triple of components packed into one string "
        "component at the position of its first part (train::MapPackSparse).");
  m.def("unpack_sparse_batch", &UnpackSparseBatch, nb::arg("packed"), nb::arg("dtype").none() = nb::none(),
        "A batch of packed SparseTensors -> (indices, values, dense_shape) of the batched SparseTensor, "
        "decoded without the GIL (train::UnpackSparseBatch). `dtype`: the expected values' DataType number.");
}

}  // namespace sluice::python
