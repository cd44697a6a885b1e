// Queue bindings: sluice._core.Queue (any of the four kinds), new_queue(), and
// QueueOps, the fast paths of sluice/queue.py's QueueBase.
//
// Queue is low level on purpose: values arrive already converted by
// sluice/queue.py (one numpy array or bytes object per component, in
// component order) and leave as a list of components; argument checking,
// dicts for named queues and TensorFlow's Python-side errors live in
// sluice/queue.py.
//
// QueueOps does in C++ what sluice/queue.py does for the common values: a
// numpy array of exactly the component's dtype, a Python float/int/bool/bytes/
// str that converts exactly, a tuple/list (or dict, for a queue with names)
// of those. Anything else, and any value sluice/queue.py would reject, makes
// its enqueue return False without touching the queue: the caller then takes
// the Python path, which raises the usual errors. queue.py's _to_component
// stays the one definition of the conversion; this is a cache of its certain
// cases, held to it by python/src/test_queue_conversion_agreement.py. A single enqueue/dequeue
// that need not wait runs with the GIL held; only one that would block
// releases it (with the Ctrl-C check), as the plain bindings always do.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bind_common.h"
#include "sluice/queue/queue.h"

namespace sluice::python {
namespace {

using queue::Queue;
using queue::WaitOptions;
using Timeout = std::optional<double>;
nb::object ShapeToPython(const PartialShape& shape) {
  if (!shape.rank_known()) return nb::none();
  nb::list dims;
  for (int64_t d : shape.dims()) {
    if (d < 0) {
      dims.append(nb::none());
    } else {
      dims.append(d);
    }
  }
  return nb::tuple(dims);
}

void Enqueue(QueueHandle& h, nb::handle values, Timeout timeout) {
  Queue& q = *h.queue;
  Element e = PythonToElement(values, q.dtypes());
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return q.Enqueue(std::move(e), call.wait<WaitOptions>()); });
}

void EnqueueMany(QueueHandle& h, nb::handle values, Timeout timeout) {
  Queue& q = *h.queue;
  Element e = PythonToElement(values, q.dtypes());
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return q.EnqueueMany(std::move(e), call.wait<WaitOptions>()); });
}

// A dequeued component that shares its buffer and is not large (rows of a
// FIFOQueue staging batch, where single enqueues of up to 4 KiB are
// coalesced 64 to a batch, or rows of an enqueue_many batch partly still
// queued) is copied: Python gets a writable array, as for an element of its
// own and as tf.queue gives. Larger shared ones stay read-only zero-copy
// views (TensorToPython).
constexpr size_t kCopySharedBelowBytes = size_t{256} << 10;

void OwnSmallSharedComponents(Element& element) {
  for (Tensor& t : element) {
    if (t.dtype() != DType::kString && t.buffer() != nullptr && !t.buffer()->RefCountIsOne() &&
        t.TotalBytes() <= kCopySharedBelowBytes) {
      t = t.DeepCopy();
    }
  }
}

// Runs a Result<Element>-returning queue call without the GIL.
template <class F>
nb::list DequeueWith(Timeout timeout, F&& fn) {
  BlockingCall call(timeout);
  Result<Element> result = call.Run([&] { return fn(call.wait<WaitOptions>()); });
  Element element = ValueOrThrow(std::move(result));
  OwnSmallSharedComponents(element);
  return ElementToPython(std::move(element));
}

nb::list Dequeue(QueueHandle& h, Timeout timeout) {
  return DequeueWith(timeout, [&](const WaitOptions& w) { return h.queue->Dequeue(w); });
}

nb::list DequeueMany(QueueHandle& h, int64_t n, Timeout timeout) {
  return DequeueWith(timeout, [&](const WaitOptions& w) { return h.queue->DequeueMany(n, w); });
}

nb::list DequeueUpTo(QueueHandle& h, int64_t n, Timeout timeout) {
  return DequeueWith(timeout, [&](const WaitOptions& w) { return h.queue->DequeueUpTo(n, w); });
}

void Close(QueueHandle& h, bool cancel_pending_enqueues, Timeout timeout) {
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return h.queue->Close(cancel_pending_enqueues, call.wait<WaitOptions>()); });
}

// ---- QueueOps -----------------------------------------------------------------------

// A queue as sluice/queue.py's QueueBase declared it (dtypes, shapes and
// names on the Python side: for a PriorityQueue, the priority included).
struct QueueOps {
  struct Component {
    DType dtype = DType::kInvalid;
    // The numpy dtype an array must have to be copied as is; nullptr: no
    // array is (kString, kBFloat16).
    PyObject* descr = nullptr;
    bool shape_known = false;
    std::vector<int64_t> dims;  // when shape_known; -1: unknown dim
  };
  // More components than this take the Python path.
  static constexpr size_t kMaxComponents = 16;

  std::shared_ptr<Queue> queue;
  std::vector<Component> components;
  nb::tuple names;  // empty: no names
  // The names are distinct str: a dict holding exactly them is found by
  // lookups (else dicts take the Python path).
  bool dict_lookup = false;
  // RandomShuffleQueue: a dequeue waits while the queue holds no more.
  int64_t min_after_dequeue = 0;
};

void InitQueueOps(QueueOps* self, const QueueHandle& h, const std::vector<int>& dtypes, const ShapeList& shapes,
                  nb::handle names, int64_t min_after_dequeue) {
  QueueOps ops;
  ops.queue = h.queue;
  if (shapes.size() != dtypes.size()) throw nb::value_error("one shape per dtype");
  for (size_t i = 0; i < dtypes.size(); ++i) {
    QueueOps::Component c;
    c.dtype = static_cast<DType>(dtypes[i]);
    if (c.dtype != DType::kBFloat16) c.descr = NumpyStorageDescr(c.dtype);
    c.shape_known = shapes[i].has_value();
    if (c.shape_known) c.dims = *shapes[i];
    ops.components.push_back(std::move(c));
  }
  if (!names.is_none()) {
    ops.names = nb::steal<nb::tuple>(PySequence_Tuple(names.ptr()));
    if (!ops.names.is_valid()) throw nb::python_error();
    nb::set seen;
    ops.dict_lookup = true;
    for (nb::handle name : ops.names) {
      if (!PyUnicode_CheckExact(name.ptr()) || seen.contains(name)) {
        ops.dict_lookup = false;
        break;
      }
      seen.add(name);
    }
  }
  ops.min_after_dequeue = min_after_dequeue;
  new (self) QueueOps(std::move(ops));
}

// sluice/queue.py's _shape_compatible: `dims` against a declared shape.
bool ShapeFits(const QueueOps::Component& c, int ndim, const Py_intptr_t* dims) {
  if (!c.shape_known) return true;
  if (static_cast<size_t>(ndim) != c.dims.size()) return false;
  for (int i = 0; i < ndim; ++i) {
    if (c.dims[i] >= 0 && c.dims[i] != dims[i]) return false;
  }
  return true;
}

template <class T>
Tensor ScalarOf(DType dtype, T value) {
  Tensor t(dtype, TensorShape{});
  std::memcpy(t.raw_data(), &value, sizeof(value));
  return t;
}

// REQUIRES: T is at most 32 bits wide.
template <class T>
bool IntFits(long long v) {
  static_assert(sizeof(T) <= 4);
  return v >= static_cast<long long>(std::numeric_limits<T>::min()) &&
         v <= static_cast<long long>(std::numeric_limits<T>::max());
}

// A Python scalar as a 0-d tensor of `dtype`, where sluice/queue.py's
// _to_component gives the same value without a warning: a float to float32
// (no overflow) or float64, an int to an integer type it fits or to a float
// type that holds it exactly, a bool to bool, bytes or str (UTF-8) to string.
bool ScalarToTensor(PyObject* v, DType dtype, Tensor* out) {
  if (PyFloat_CheckExact(v)) {
    const double d = PyFloat_AS_DOUBLE(v);
    if (dtype == DType::kFloat64) {
      *out = ScalarOf(dtype, d);
      return true;
    }
    if (dtype == DType::kFloat32) {
      const auto f = static_cast<float>(d);
      if (std::isinf(f) && !std::isinf(d)) return false;  // numpy warns of the overflow
      *out = ScalarOf(dtype, f);
      return true;
    }
    return false;
  }
  if (PyLong_CheckExact(v)) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0) return false;
    if (x == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    constexpr long long kFloatExact = 1LL << 24, kDoubleExact = 1LL << 53;
    switch (dtype) {
      case DType::kInt8: return IntFits<int8_t>(x) && (*out = ScalarOf(dtype, static_cast<int8_t>(x)), true);
      case DType::kInt16: return IntFits<int16_t>(x) && (*out = ScalarOf(dtype, static_cast<int16_t>(x)), true);
      case DType::kInt32: return IntFits<int32_t>(x) && (*out = ScalarOf(dtype, static_cast<int32_t>(x)), true);
      case DType::kInt64: return (*out = ScalarOf(dtype, static_cast<int64_t>(x)), true);
      case DType::kUInt8: return IntFits<uint8_t>(x) && (*out = ScalarOf(dtype, static_cast<uint8_t>(x)), true);
      case DType::kUInt16: return IntFits<uint16_t>(x) && (*out = ScalarOf(dtype, static_cast<uint16_t>(x)), true);
      case DType::kUInt32: return IntFits<uint32_t>(x) && (*out = ScalarOf(dtype, static_cast<uint32_t>(x)), true);
      case DType::kUInt64: return x >= 0 && (*out = ScalarOf(dtype, static_cast<uint64_t>(x)), true);
      case DType::kFloat32:
        return x >= -kFloatExact && x <= kFloatExact && (*out = ScalarOf(dtype, static_cast<float>(x)), true);
      case DType::kFloat64:
        return x >= -kDoubleExact && x <= kDoubleExact && (*out = ScalarOf(dtype, static_cast<double>(x)), true);
      default: return false;
    }
  }
  if (v == Py_True || v == Py_False) {
    return dtype == DType::kBool && (*out = ScalarOf(dtype, v == Py_True), true);
  }
  if (dtype == DType::kString) {
    if (PyBytes_CheckExact(v)) {
      *out = Tensor::String(std::string_view(PyBytes_AS_STRING(v), static_cast<size_t>(PyBytes_GET_SIZE(v))));
      return true;
    }
    if (PyUnicode_CheckExact(v)) {
      Py_ssize_t size = 0;
      const char* utf8 = PyUnicode_AsUTF8AndSize(v, &size);
      if (utf8 == nullptr) {  // lone surrogates: str.encode raises on the Python path
        PyErr_Clear();
        return false;
      }
      *out = Tensor::String(std::string_view(utf8, static_cast<size_t>(size)));
      return true;
    }
  }
  return false;
}

// The component values of one enqueue call: borrowed from a tuple or list
// (nothing can change them while they are converted: no Python code runs),
// owned when looked up in a dict (a key's __eq__ may run Python code).
class ComponentValues {
 public:
  ComponentValues() = default;
  ComponentValues(const ComponentValues&) = delete;
  ComponentValues& operator=(const ComponentValues&) = delete;
  ~ComponentValues() {
    if (owned_) {
      for (size_t i = 0; i < n_; ++i) Py_DECREF(values_[i]);
    }
  }

  // The component values in `values`, in component order, as
  // _check_enqueue_dtypes finds them; false where it would raise or where
  // the container is unusual (a subclass of tuple, list or dict).
  bool Find(const QueueOps& ops, PyObject* values) {
    const size_t n = ops.components.size();
    if (n > QueueOps::kMaxComponents) return false;
    if (PyDict_Check(values)) {
      if (!ops.dict_lookup || !PyDict_CheckExact(values) || static_cast<size_t>(PyDict_GET_SIZE(values)) != n) {
        return false;
      }
      owned_ = true;
      for (size_t i = 0; i < n; ++i) {
        PyObject* name = PyTuple_GET_ITEM(ops.names.ptr(), static_cast<Py_ssize_t>(i));
        PyObject* v = PyDict_GetItemWithError(values, name);
        if (v == nullptr) {
          PyErr_Clear();
          return false;
        }
        Py_INCREF(v);
        values_[n_++] = v;
      }
      return true;
    }
    if (ops.names.size() != 0) return false;
    if (PyTuple_CheckExact(values) || PyList_CheckExact(values)) {
      const bool tuple = PyTuple_CheckExact(values);
      const Py_ssize_t size = tuple ? PyTuple_GET_SIZE(values) : PyList_GET_SIZE(values);
      if (static_cast<size_t>(size) != n) return false;  // the Python path raises
      for (Py_ssize_t i = 0; i < size; ++i) {
        values_[n_++] = tuple ? PyTuple_GET_ITEM(values, i) : PyList_GET_ITEM(values, i);
      }
      return true;
    }
    if (PyTuple_Check(values) || PyList_Check(values) || n != 1) return false;
    values_[n_++] = values;
    return true;
  }

  PyObject* operator[](size_t i) const { return values_[i]; }

 private:
  PyObject* values_[QueueOps::kMaxComponents];
  size_t n_ = 0;
  bool owned_ = false;
};

// The element for enqueue(values), or false: take the Python path.
bool ElementFromValues(const QueueOps& ops, PyObject* values, Element* element) {
  ComponentValues vals;
  if (!vals.Find(ops, values)) return false;
  Element e;
  for (size_t i = 0; i < ops.components.size(); ++i) {
    const QueueOps::Component& c = ops.components[i];
    ContiguousArray array;
    if (AsContiguousArray(vals[i], c.descr, &array)) {
      if (!ShapeFits(c, array.ndim, array.dims)) return false;
      e.push_back(CopyArray(c.dtype, array));
      continue;
    }
    Tensor t;
    if (!ScalarToTensor(vals[i], c.dtype, &t) || !ShapeFits(c, 0, nullptr)) return false;
    e.push_back(std::move(t));
  }
  *element = std::move(e);
  return true;
}

// The batch for enqueue_many(values), or false: take the Python path.
bool BatchFromValues(const QueueOps& ops, PyObject* values, Element* element) {
  ComponentValues vals;
  if (!vals.Find(ops, values)) return false;
  Element e;
  Py_intptr_t rows = -1;
  for (size_t i = 0; i < ops.components.size(); ++i) {
    const QueueOps::Component& c = ops.components[i];
    ContiguousArray array;
    if (!AsContiguousArray(vals[i], c.descr, &array) || array.ndim < 1) return false;
    if (rows >= 0 && array.dims[0] != rows) return false;
    rows = array.dims[0];
    if (!ShapeFits(c, array.ndim - 1, array.dims + 1)) return false;
    e.push_back(CopyArray(c.dtype, array));
  }
  *element = std::move(e);
  return true;
}

// What _dequeue_return_value made of the components: a dict for a queue
// with names, the bare value for one component, else a list.
nb::object ElementToValue(const QueueOps& ops, Element element) {
  OwnSmallSharedComponents(element);
  const size_t n = element.size();
  if (ops.names.size() != 0) {
    nb::dict out;
    for (size_t i = 0; i < n && i < ops.names.size(); ++i) {
      nb::object v = TensorToPython(std::move(element[i]));
      PyObject* name = PyTuple_GET_ITEM(ops.names.ptr(), static_cast<Py_ssize_t>(i));
      if (PyDict_SetItem(out.ptr(), name, v.ptr()) != 0) throw nb::python_error();
    }
    return out;
  }
  if (n == 1) return TensorToPython(std::move(element[0]));
  nb::object out = nb::steal(PyList_New(static_cast<Py_ssize_t>(n)));
  if (!out.is_valid()) throw nb::python_error();
  for (size_t i = 0; i < n; ++i) {
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), TensorToPython(std::move(element[i])).release().ptr());
  }
  return out;
}

// Options for an attempt that must not block: its deadline has passed. A
// single enqueue that would block then fails with DeadlineExceeded having
// admitted nothing; a single dequeue, having taken nothing.
WaitOptions NoWait() {
  WaitOptions w;
  w.deadline = WaitOptions::Clock::time_point();
  return w;
}

// enqueue(values, timeout): True once done, False (nothing done) when the
// values need the Python path.
bool OpsEnqueue(QueueOps& ops, nb::handle values, Timeout timeout) {
  Element e;
  if (!ElementFromValues(ops, values.ptr(), &e)) return false;
  CheckTimeout(timeout);
  Queue& q = *ops.queue;
  if (q.size() < q.capacity()) {  // else it would likely block: don't try
    Status s = q.Enqueue(std::move(e), NoWait());
    if (s.code() != Code::kDeadlineExceeded) {
      ThrowIfError(s);
      return true;
    }
    // Raced to a full queue: nothing was admitted. The element went with
    // the attempt; the values are unchanged (the GIL was held throughout).
    if (!ElementFromValues(ops, values.ptr(), &e)) return false;
  }
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return q.Enqueue(std::move(e), call.wait<WaitOptions>()); });
  return true;
}

bool OpsEnqueueMany(QueueOps& ops, nb::handle values, Timeout timeout) {
  Element e;
  if (!BatchFromValues(ops, values.ptr(), &e)) return false;
  Queue& q = *ops.queue;
  BlockingCall call(timeout);
  RunBlocking(call, [&] { return q.EnqueueMany(std::move(e), call.wait<WaitOptions>()); });
  return true;
}

nb::object OpsDequeue(QueueOps& ops, Timeout timeout) {
  CheckTimeout(timeout);
  Queue& q = *ops.queue;
  if (q.size() > ops.min_after_dequeue) {  // else it would likely block: don't try
    Result<Element> r = q.Dequeue(NoWait());
    if (r.ok()) return ElementToValue(ops, std::move(r).value());
    if (r.status().code() != Code::kDeadlineExceeded) ThrowStatus(r.status());
  }
  BlockingCall call(timeout);
  Result<Element> result = call.Run([&] { return q.Dequeue(call.wait<WaitOptions>()); });
  return ElementToValue(ops, ValueOrThrow(std::move(result)));
}

nb::object OpsDequeueMany(QueueOps& ops, int64_t n, Timeout timeout) {
  BlockingCall call(timeout);
  Result<Element> result = call.Run([&] { return ops.queue->DequeueMany(n, call.wait<WaitOptions>()); });
  return ElementToValue(ops, ValueOrThrow(std::move(result)));
}

nb::object OpsDequeueUpTo(QueueOps& ops, int64_t n, Timeout timeout) {
  BlockingCall call(timeout);
  Result<Element> result = call.Run([&] { return ops.queue->DequeueUpTo(n, call.wait<WaitOptions>()); });
  return ElementToValue(ops, ValueOrThrow(std::move(result)));
}

// ---- QueueOps.enqueue / .dequeue: the per-element entry points ---------------------
//
// Plain CPython methods (METH_FASTCALL) installed on the nanobind class:
// nanobind's dispatcher takes its general path for any call passing None
// (timeout=None, the common case), which costs more than the rest of a
// small dequeue.

// Runs `body`, turning a C++ exception into the Python exception nanobind's
// dispatcher would raise.
template <class F>
PyObject* RawCall(F&& body) noexcept {
  try {
    return body();
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    PyObject* type = PyExc_RuntimeError;
    switch (e.type()) {
      case nb::exception_type::value_error: type = PyExc_ValueError; break;
      case nb::exception_type::type_error: type = PyExc_TypeError; break;
      case nb::exception_type::index_error: type = PyExc_IndexError; break;
      case nb::exception_type::key_error: type = PyExc_KeyError; break;
      default: break;
    }
    PyErr_SetString(type, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// The QueueOps of `self`; nullptr (TypeError set) if it was never initialised.
QueueOps* RawSelf(PyObject* self) {
  if (!nb::inst_ready(self)) {
    PyErr_SetString(PyExc_TypeError, "QueueOps is not initialised");
    return nullptr;
  }
  return nb::inst_ptr<QueueOps>(self);
}

// A timeout argument: None, or a number as nanobind's float caster takes it
// (PyFloat_AsDouble). False with TypeError set otherwise.
bool RawTimeout(const char* method, PyObject* obj, Timeout* out) {
  if (obj == Py_None) {
    *out = std::nullopt;
    return true;
  }
  const double v = PyFloat_CheckExact(obj) ? PyFloat_AS_DOUBLE(obj) : PyFloat_AsDouble(obj);
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Format(PyExc_TypeError, "%s(): timeout must be a non-negative number or None, not %.100s", method,
                 Py_TYPE(obj)->tp_name);
    return false;
  }
  *out = v;
  return true;
}

// enqueue(values, timeout) -> bool
PyObject* RawEnqueue(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "enqueue() takes exactly 2 arguments (values, timeout)");
    return nullptr;
  }
  QueueOps* ops = RawSelf(self);
  if (ops == nullptr) return nullptr;
  Timeout timeout;
  if (!RawTimeout("enqueue", args[1], &timeout)) {
    // Let the Python path check the values first, then refuse the timeout.
    PyErr_Clear();
    Py_INCREF(Py_False);
    return Py_False;
  }
  return RawCall([&] {
    PyObject* done = OpsEnqueue(*ops, args[0], timeout) ? Py_True : Py_False;
    Py_INCREF(done);
    return done;
  });
}

// dequeue(timeout) -> the value
PyObject* RawDequeue(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "dequeue() takes exactly 1 argument (timeout)");
    return nullptr;
  }
  QueueOps* ops = RawSelf(self);
  Timeout timeout;
  if (ops == nullptr || !RawTimeout("dequeue", args[0], &timeout)) return nullptr;
  return RawCall([&] { return OpsDequeue(*ops, timeout).release().ptr(); });
}

PyMethodDef raw_enqueue_def = {"enqueue", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&RawEnqueue)),
                               METH_FASTCALL,
                               "enqueue(values, timeout): True once enqueued; False (nothing done): take the "
                               "Python path."};
PyMethodDef raw_dequeue_def = {"dequeue", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&RawDequeue)),
                               METH_FASTCALL, "dequeue(timeout): the element, as sluice.queue returns it."};

void AddRawMethod(nb::handle type, PyMethodDef* def) {
  nb::object descr = nb::steal(PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(type.ptr()), def));
  if (!descr.is_valid()) throw nb::python_error();
  type.attr(def->ml_name) = descr;
}

QueueHandle NewQueue(const std::string& kind, int32_t capacity, const std::vector<int>& dtypes,
                     const ShapeList& shapes, const std::vector<std::string>& names, const std::string& name,
                     const std::string& shared_name, int32_t min_after_dequeue, int64_t seed, int64_t seed2) {
  queue::RandomShuffleQueueOptions o;
  o.capacity = capacity;
  o.dtypes = DTypesFromPython(dtypes);
  o.shapes = ShapesFromPython(shapes);
  o.names = names;
  o.name = name;
  o.shared_name = shared_name;
  Result<std::shared_ptr<Queue>> q = errors::InvalidArgument("unknown queue kind '", kind, "'");
  if (kind == "fifo") {
    q = queue::NewFIFOQueue(o);
  } else if (kind == "padding_fifo") {
    q = queue::NewPaddingFIFOQueue(o);
  } else if (kind == "priority") {
    q = queue::NewPriorityQueue(o);
  } else if (kind == "random_shuffle") {
    o.min_after_dequeue = min_after_dequeue;
    o.seed = seed;
    o.seed2 = seed2;
    q = queue::NewRandomShuffleQueue(o);
  }
  return QueueHandle{ValueOrThrow(std::move(q))};
}

std::vector<int> DTypesOf(const QueueHandle& h) {
  std::vector<int> out;
  for (DType d : h.queue->dtypes()) out.push_back(static_cast<int>(d));
  return out;
}

nb::list ShapesOf(const QueueHandle& h) {
  nb::list out;
  for (const PartialShape& s : h.queue->shapes()) out.append(ShapeToPython(s));
  return out;
}

}  // namespace

void BindQueue(nb::module_& m) {
  nb::class_<QueueHandle>(m, "Queue", "A sluice queue (C++). Use sluice.queue.FIFOQueue & co., which wrap it.")
      .def("enqueue", &Enqueue, nb::arg("values"), nb::arg("timeout") = nb::none())
      .def("enqueue_many", &EnqueueMany, nb::arg("values"), nb::arg("timeout") = nb::none())
      .def("dequeue", &Dequeue, nb::arg("timeout") = nb::none())
      .def("dequeue_many", &DequeueMany, nb::arg("n"), nb::arg("timeout") = nb::none())
      .def("dequeue_up_to", &DequeueUpTo, nb::arg("n"), nb::arg("timeout") = nb::none())
      .def("close", &Close, nb::arg("cancel_pending_enqueues") = false, nb::arg("timeout") = nb::none())
      .def("is_closed", [](const QueueHandle& h) { return h.queue->is_closed(); })
      .def("size", [](const QueueHandle& h) { return h.queue->size(); })
      .def("stats",
           [](const QueueHandle& h) {
             queue::QueueStats s = h.queue->stats();
             return nb::make_tuple(s.enqueued, s.dequeued);
           })
      .def_prop_ro("type_name", [](const QueueHandle& h) { return std::string(h.queue->type_name()); })
      .def_prop_ro("name", [](const QueueHandle& h) { return h.queue->name(); })
      .def_prop_ro("capacity", [](const QueueHandle& h) { return h.queue->capacity(); })
      .def_prop_ro("dtypes", &DTypesOf)
      .def_prop_ro("shapes", &ShapesOf)
      .def_prop_ro("names", [](const QueueHandle& h) { return h.queue->names(); })
      .def("__eq__", [](const QueueHandle& a, const QueueHandle& b) { return a.queue == b.queue; })
      .def("__hash__", [](const QueueHandle& h) { return std::hash<Queue*>()(h.queue.get()); });

  // sluice/queue.py passes every argument by position.
  nb::class_<QueueOps>(m, "QueueOps", "The fast paths of sluice.queue.QueueBase (private).")
      .def("__init__", &InitQueueOps, nb::arg("queue"), nb::arg("dtypes"), nb::arg("shapes"),
           nb::arg("names").none(), nb::arg("min_after_dequeue"))
      .def("enqueue_many", &OpsEnqueueMany, nb::arg("values").none(), nb::arg("timeout").none(),
           "As enqueue, for enqueue_many.")
      .def("dequeue_many", &OpsDequeueMany, nb::arg("n"), nb::arg("timeout").none())
      .def("dequeue_up_to", &OpsDequeueUpTo, nb::arg("n"), nb::arg("timeout").none());
  AddRawMethod(nb::type<QueueOps>(), &raw_enqueue_def);
  AddRawMethod(nb::type<QueueOps>(), &raw_dequeue_def);

  m.def("new_queue", &NewQueue, nb::arg("kind"), nb::arg("capacity"), nb::arg("dtypes"),
        nb::arg("shapes"), nb::arg("names"), nb::arg("name"), nb::arg("shared_name") = "",
        nb::arg("min_after_dequeue") = 0, nb::arg("seed") = 0, nb::arg("seed2") = 0,
        "Creates a queue. kind: 'fifo', 'random_shuffle', 'padding_fifo' or 'priority'. "
        "dtypes: TensorFlow DataType numbers. shapes: [] (undeclared) or one entry per "
        "component: None (unknown rank) or a list of dims (-1 unknown).");
}

}  // namespace sluice::python
