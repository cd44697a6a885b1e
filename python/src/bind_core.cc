// Core bindings: Status -> exception, BlockingCall, Tensor <-> numpy.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bind_common.h"
#include "sluice/core/dtype.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::python {
namespace {

// Python objects looked up once, at module initialisation (never from a
// function-local static: its guard would be taken with the GIL held while the
// import may release it). Deliberately leaked: they live as long as the
// interpreter, and must not be released after it is finalised.
struct Globals {
  PyObject* from_status = nullptr;     // sluice.errors._from_status
  PyObject* np_asarray = nullptr;      // numpy.asarray
  PyObject* np_empty = nullptr;        // numpy.empty
  PyObject* np_object = nullptr;       // numpy.dtype(object)
  PyObject* bfloat16 = nullptr;        // ml_dtypes.bfloat16, or nullptr
  unsigned long main_thread_ident = 0;  // threading.main_thread().ident
};
Globals g;

nb::object Borrow(PyObject* o) { return nb::borrow(o); }
// A new reference, leaked on purpose (see Globals).
PyObject* Leak(nb::object o) { return o.release().ptr(); }

}  // namespace

// ---- Status -> exception ------------------------------------------------------

[[noreturn]] void ThrowStatus(const Status& status) {
  assert(!status.ok());
  assert(PyGILState_Check());
  const std::string& msg = status.message();
  nb::object message = nb::steal(
      PyUnicode_DecodeUTF8(msg.data(), static_cast<Py_ssize_t>(msg.size()), "backslashreplace"));
  if (!message.is_valid()) throw nb::python_error();
  nb::dict payloads;
  for (const auto& [key, value] : status.payloads()) {
    payloads[nb::str(key.data(), key.size())] = nb::bytes(value.data(), value.size());
  }
  nb::object exc = Borrow(g.from_status)(static_cast<int>(status.code()), message, payloads);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw nb::python_error();
}

// ---- The GIL and blocking calls ---------------------------------------------------

namespace {

bool InterpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

}  // namespace

bool OnMainThread() { return PyThread_get_thread_ident() == g.main_thread_ident; }

GilRelease::~GilRelease() {
  if (!OnMainThread()) {
    while (InterpreterFinalizing()) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  PyEval_RestoreThread(state_);
}

struct BlockingCall::Pending {
  // Touched only with the GIL held.
  std::optional<nb::python_error> error;
};

namespace {

std::optional<std::chrono::steady_clock::time_point> DeadlineAfter(std::optional<double> timeout_secs) {
  if (!timeout_secs) return std::nullopt;
  if (!(*timeout_secs >= 0)) throw nb::value_error("timeout must be a non-negative number or None");
  double secs = std::min(*timeout_secs, 1e9);  // no overflow for timeout=1e300
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(secs));
}

}  // namespace

BlockingCall::BlockingCall(std::optional<double> timeout_secs) : deadline_(DeadlineAfter(timeout_secs)) {
  if (!OnMainThread()) return;
  pending_ = std::make_shared<Pending>();
  interrupt_check_ = [pending = pending_]() -> Status {
    nb::gil_scoped_acquire gil;
    if (!pending->error && PyErr_CheckSignals() != 0) pending->error.emplace();
    if (pending->error) return errors::Cancelled("interrupted by a Python signal handler");
    return Status();
  };
}

void BlockingCall::RaisePendingInterrupt() {
  if (pending_ && pending_->error) {
    nb::python_error error = std::move(*pending_->error);
    pending_->error.reset();
    throw error;
  }
}

bool WaitInterruptibly(std::optional<double> timeout_secs,
                       const std::function<bool(std::optional<std::chrono::nanoseconds>)>& wait_for) {
  using Clock = std::chrono::steady_clock;
  const std::optional<Clock::time_point> deadline = DeadlineAfter(timeout_secs);
  const bool interruptible = OnMainThread();
  for (;;) {
    std::optional<std::chrono::nanoseconds> chunk;
    if (deadline) chunk = std::max(std::chrono::nanoseconds(0), *deadline - Clock::now());
    if (interruptible && (!chunk || *chunk > BlockingCall::kInterruptInterval)) {
      chunk = BlockingCall::kInterruptInterval;
    }
    bool done;
    {
      GilRelease release;
      done = wait_for(chunk);
    }
    if (done) return true;
    if (interruptible && PyErr_CheckSignals() != 0) throw nb::python_error();
    if (deadline && Clock::now() >= *deadline) return false;
  }
}

// ---- Tensor <-> Python ------------------------------------------------------------------

namespace {

// numpy's __array_interface__ type string for a plain dtype.
std::string TypeStr(DType dtype) {
  const char endian = std::endian::native == std::endian::little ? '<' : '>';
  auto str = [&](char kind, size_t size) {
    return std::string(1, size == 1 ? '|' : endian) + kind + std::to_string(size);
  };
  switch (dtype) {
    case DType::kBool: return "|b1";
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64: return str('f', DTypeSize(dtype));
    case DType::kComplex64:
    case DType::kComplex128: return str('c', DTypeSize(dtype));
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64: return str('i', DTypeSize(dtype));
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kBFloat16: return str('u', DTypeSize(dtype));  // bfloat16: the bits
    default: return "";
  }
}

nb::tuple ShapeTuple(const TensorShape& shape) {
  nb::list dims;
  for (int64_t d : shape.dims()) dims.append(d);
  return nb::tuple(dims);
}

// Owns one reference to a Tensor's buffer on behalf of the numpy arrays
// viewing it (the array's `base`). Immutable.
struct TensorRef {
  Tensor tensor;
  bool writable;

  nb::dict ArrayInterface() const {
    nb::dict d;
    d["version"] = 3;
    d["shape"] = ShapeTuple(tensor.shape());
    d["typestr"] = TypeStr(tensor.dtype());
    d["data"] = nb::make_tuple(reinterpret_cast<uintptr_t>(tensor.raw_data()), !writable);
    return d;
  }
};

nb::object NumpyEmpty(const TensorShape& shape, nb::handle dtype) {
  return Borrow(g.np_empty)(ShapeTuple(shape), dtype);
}

nb::object StringTensorToPython(const Tensor& t) {
  std::span<const std::string> values = t.flat<std::string>();
  if (t.rank() == 0) return nb::bytes(values[0].data(), values[0].size());
  nb::object flat = Borrow(g.np_empty)(static_cast<Py_ssize_t>(values.size()), Borrow(g.np_object));
  for (size_t i = 0; i < values.size(); ++i) {
    nb::object item = nb::bytes(values[i].data(), values[i].size());
    if (PySequence_SetItem(flat.ptr(), static_cast<Py_ssize_t>(i), item.ptr()) != 0) {
      throw nb::python_error();
    }
  }
  return flat.attr("reshape")(ShapeTuple(t.shape()));
}

// bfloat16 -> float32 is exact: the bf16 bits are the float's upper half.
Tensor BFloat16ToFloat32(const Tensor& t) {
  Tensor out(DType::kFloat32, t.shape());
  const uint16_t* in = static_cast<const uint16_t*>(t.raw_data());
  float* dst = out.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(&dst[i], &bits, sizeof(bits));
  }
  return out;
}

}  // namespace

nb::object TensorToPython(Tensor tensor) {
  const DType dtype = tensor.dtype();
  if (dtype == DType::kString) return StringTensorToPython(tensor);
  if (dtype == DType::kBFloat16 && g.bfloat16 == nullptr) tensor = BFloat16ToFloat32(tensor);
  std::string typestr = TypeStr(tensor.dtype());
  if (typestr.empty()) throw nb::type_error("tensor of an unsupported dtype");
  nb::object array;
  if (tensor.num_elements() == 0) {
    array = NumpyEmpty(tensor.shape(), nb::str(typestr.c_str()));
  } else {
    // Writable only if nobody else can see these bytes: the buffer is ours
    // alone (a slice of a batch still queued, or a tensor a C++ producer
    // reuses, is shared and so read-only here).
    bool writable = tensor.buffer() != nullptr && tensor.buffer()->RefCountIsOne();
    nb::object ref = nb::cast(TensorRef{std::move(tensor), writable});
    array = Borrow(g.np_asarray)(ref);
  }
  if (dtype == DType::kBFloat16 && g.bfloat16 != nullptr) {
    array = array.attr("view")(Borrow(g.bfloat16));  // zero-copy reinterpretation
  }
  return array;
}

nb::list ElementToPython(Element element) {
  nb::list out;
  for (Tensor& t : element) out.append(TensorToPython(std::move(t)));
  return out;
}

namespace {

// RAII for PyObject_GetBuffer.
class BufferView {
 public:
  explicit BufferView(nb::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      throw nb::type_error("expected a C-contiguous numpy array");
    }
  }
  ~BufferView() { PyBuffer_Release(&view_); }
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;
  const Py_buffer& view() const { return view_; }

 private:
  Py_buffer view_{};
};

TensorShape ShapeOf(const Py_buffer& view) {
  std::vector<int64_t> dims(view.shape, view.shape + view.ndim);
  return TensorShape(std::span<const int64_t>(dims));
}

Tensor StringsToTensor(nb::handle value) {
  if (PyBytes_Check(value.ptr())) {
    return Tensor::String(std::string_view(PyBytes_AS_STRING(value.ptr()),
                                           static_cast<size_t>(PyBytes_GET_SIZE(value.ptr()))));
  }
  std::vector<int64_t> dims = nb::cast<std::vector<int64_t>>(value.attr("shape"));
  nb::list flat = nb::cast<nb::list>(value.attr("ravel")().attr("tolist")());
  Tensor t(DType::kString, TensorShape(std::span<const int64_t>(dims)));
  std::span<std::string> out = t.flat<std::string>();
  if (flat.size() != out.size()) throw nb::value_error("string array size mismatch");
  for (size_t i = 0; i < out.size(); ++i) {
    PyObject* item = flat[i].ptr();
    if (!PyBytes_Check(item)) throw nb::type_error("string tensors hold bytes");
    out[i].assign(PyBytes_AS_STRING(item), static_cast<size_t>(PyBytes_GET_SIZE(item)));
  }
  return t;
}

}  // namespace

Tensor PythonToTensor(nb::handle value, DType dtype) {
  if (dtype == DType::kString) return StringsToTensor(value);
  if (!IsPlainDType(dtype)) throw nb::type_error("invalid dtype");
  BufferView buffer(value);
  const Py_buffer& view = buffer.view();
  if (static_cast<size_t>(view.itemsize) != DTypeSize(dtype)) {
    throw nb::type_error(("array item size does not match dtype " +
                          std::string(DTypeName(dtype))).c_str());
  }
  // Copy in: see the header.
  Tensor t(dtype, ShapeOf(view));
  if (t.TotalBytes() != static_cast<size_t>(view.len)) throw nb::value_error("array size mismatch");
  if (view.len > 0) std::memcpy(t.raw_data(), view.buf, static_cast<size_t>(view.len));
  return t;
}

Element PythonToElement(nb::handle values, const std::vector<DType>& dtypes) {
  nb::sequence seq = nb::borrow<nb::sequence>(values);
  size_t n = nb::len(seq);
  if (n != dtypes.size()) throw nb::value_error("wrong number of components");
  std::vector<Tensor> components;
  components.reserve(n);
  for (size_t i = 0; i < n; ++i) components.push_back(PythonToTensor(seq[i], dtypes[i]));
  return Element(std::move(components));
}

// ---- module ------------------------------------------------------------------------------

namespace {

void InitGlobals() {
  g.from_status = Leak(nb::module_::import_("sluice.errors").attr("_from_status"));
  nb::module_ np = nb::module_::import_("numpy");
  g.np_asarray = Leak(np.attr("asarray"));
  g.np_empty = Leak(np.attr("empty"));
  g.np_object = np.attr("dtype")(nb::module_::import_("builtins").attr("object")).release().ptr();
  try {
    g.bfloat16 = Leak(nb::module_::import_("ml_dtypes").attr("bfloat16"));
  } catch (const nb::python_error&) {
    g.bfloat16 = nullptr;  // optional: bfloat16 comes out as float32
  }
  g.main_thread_ident = nb::cast<unsigned long>(
      nb::module_::import_("threading").attr("main_thread")().attr("ident"));
}

// Test hooks: raise the exception for a status / round-trip a tensor.
void RaiseStatus(int code, nb::handle message, const nb::dict& payloads) {
  std::string text = nb::isinstance<nb::bytes>(message)
                         ? std::string(nb::borrow<nb::bytes>(message).c_str(), nb::len(message))
                         : nb::cast<std::string>(message);
  Status s(static_cast<Code>(code), text);
  for (auto [k, v] : payloads) s = s.WithPayload(nb::cast<std::string>(k), nb::cast<std::string>(v));
  if (s.ok()) return;
  ThrowStatus(s);
}

}  // namespace

void BindCore(nb::module_& m) {
  InitGlobals();
  // Daemon threads (QueueRunner threads, as in TF) may still hold sluice
  // objects when the interpreter exits; that is not a leak worth a report.
  nb::set_leak_warnings(false);

  nb::class_<TensorRef>(m, "_TensorRef",
                        "Owns a reference to a sluice Tensor; the base of the numpy arrays viewing it.")
      .def_prop_ro("__array_interface__", &TensorRef::ArrayInterface)
      .def_prop_ro("data_ptr", [](const TensorRef& r) { return reinterpret_cast<uintptr_t>(r.tensor.raw_data()); })
      .def_prop_ro("nbytes", [](const TensorRef& r) { return r.tensor.TotalBytes(); })
      .def_prop_ro("dtype", [](const TensorRef& r) { return std::string(DTypeName(r.tensor.dtype())); })
      .def_prop_ro("shape", [](const TensorRef& r) { return ShapeTuple(r.tensor.shape()); })
      .def_prop_ro("writable", [](const TensorRef& r) { return r.writable; });

  m.def("dtype_name", [](int d) { return std::string(DTypeName(static_cast<DType>(d))); },
        "TensorFlow's name of the DataType number `d` ('' if unknown).");
  m.def("dtype_size", [](int d) { return DTypeSize(static_cast<DType>(d)); });
  m.def("code_name", [](int c) { return std::string(CodeName(static_cast<Code>(c))); });
  m.attr("has_ml_dtypes") = g.bfloat16 != nullptr;

  m.def("_raise_status", &RaiseStatus, nb::arg("code"), nb::arg("message"),
        nb::arg("payloads") = nb::dict(), "Test hook: raises the exception for a C++ Status.");
  m.def(
      "_roundtrip",
      [](nb::handle value, int dtype) {
        return TensorToPython(PythonToTensor(value, static_cast<DType>(dtype)));
      },
      "Test hook: copies a converted value into a Tensor and views it back.");
  m.def(
      "_shared_views",
      [](nb::handle value, int dtype) {
        Tensor t = PythonToTensor(value, static_cast<DType>(dtype));
        Tensor copy = t;  // shares the buffer: both views are read-only
        return nb::make_tuple(TensorToPython(std::move(t)), TensorToPython(std::move(copy)));
      },
      "Test hook: two numpy views of one Tensor's buffer.");
}

}  // namespace sluice::python
