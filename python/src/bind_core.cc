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

// numpy's C API, looked up at run time as pybind11/numpy.h does, so that
// building needs no numpy headers: the function table numpy exports as the
// capsule numpy._core._multiarray_umath._ARRAY_API (numpy.core... before
// 2.0), indexed by the slot numbers of numpy's __multiarray_api.h, and the
// leading fields of PyArrayObject (ndarraytypes.h). numpy 1.x and 2.x agree on
// both (they are numpy's stable ABI).
struct NumpyApi {
  static constexpr int kGetNDArrayCVersion = 0;
  static constexpr int kArrayType = 2;
  static constexpr int kNewFromDescr = 94;
  static constexpr int kSetBaseObject = 282;
  // NPY_ARRAY_* flags.
  static constexpr int kCContiguous = 0x0001;
  static constexpr int kAligned = 0x0100;
  static constexpr int kWriteable = 0x0400;

  PyTypeObject* ndarray = nullptr;  // numpy.ndarray
  PyObject* (*new_from_descr)(PyTypeObject* subtype, PyObject* descr, int nd, const Py_intptr_t* dims,
                              const Py_intptr_t* strides, void* data, int flags, PyObject* obj) = nullptr;
  int (*set_base_object)(PyObject* array, PyObject* base) = nullptr;
};

// The leading fields of numpy's PyArrayObject_fields.
struct NumpyArrayFields {
  PyObject_HEAD
  char* data;
  int nd;
  Py_intptr_t* dimensions;
  Py_intptr_t* strides;
  PyObject* base;
  PyObject* descr;
  int flags;
};

constexpr size_t kNumDTypeSlots = 32;  // > every DType value (TensorFlow's DataType numbers)

// Python objects looked up once, at module initialisation (never from a
// function-local static: its guard would be taken with the GIL held while the
// import may release it). Deliberately leaked: they live as long as the
// interpreter, and must not be released after it is finalised.
struct Globals {
  PyObject* from_status = nullptr;     // sluice.errors._from_status
  PyObject* np_empty = nullptr;        // numpy.empty
  PyObject* np_object = nullptr;       // numpy.dtype(object)
  PyObject* bfloat16 = nullptr;        // ml_dtypes.bfloat16, or nullptr
  unsigned long main_thread_ident = 0;  // threading.main_thread().ident
  NumpyApi np;
  // numpy.dtype of each plain DType's storage (np.dtype(np.float32), ...;
  // bfloat16: uint16), and of the arrays handed out (the same, but bfloat16:
  // ml_dtypes' bfloat16, or nullptr without ml_dtypes, whose bfloat16 tensors
  // become float32 first). nullptr for the others.
  PyObject* storage_descr[kNumDTypeSlots] = {};
  PyObject* out_descr[kNumDTypeSlots] = {};
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

void CheckTimeout(std::optional<double> timeout_secs) {
  if (timeout_secs && !(*timeout_secs >= 0)) throw nb::value_error("timeout must be a non-negative number or None");
}

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
  CheckTimeout(timeout_secs);
  if (!timeout_secs) return std::nullopt;
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

// ---- File paths --------------------------------------------------------------------------

std::string PathArg(nb::handle path) {
  PyObject* bytes = nullptr;
  if (PyUnicode_FSConverter(path.ptr(), &bytes) == 0) throw nb::python_error();
  std::string out(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
  Py_DECREF(bytes);
  return out;
}

nb::str PathToPython(std::string_view path) {
  PyObject* str = PyUnicode_DecodeFSDefaultAndSize(path.data(), static_cast<Py_ssize_t>(path.size()));
  if (str == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(str);
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

// sluice._core._TensorRef: owns one reference to a Tensor's buffer on behalf
// of the numpy arrays viewing it (the arrays' `base`). Immutable; made only
// here. A plain CPython type rather than a nanobind class, since one is made
// on every dequeue: a nanobind instance would also register itself in
// nanobind's instance map, and take itself out again when freed.
struct TensorRefObject {
  PyObject_HEAD
  Tensor tensor;  // constructed by NewTensorRef
  bool writable;
};

PyTypeObject* tensor_ref_type = nullptr;  // leaked, as Globals

const Tensor& RefTensor(PyObject* self) { return reinterpret_cast<TensorRefObject*>(self)->tensor; }

// Runs a getter's body, turning a C++ exception into a Python one.
template <class F>
PyObject* Getter(F&& body) noexcept {
  try {
    return body().release().ptr();
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyObject* TensorRefArrayInterface(PyObject* self, void*) {
  return Getter([&] {
    const Tensor& t = RefTensor(self);
    nb::dict d;
    d["version"] = 3;
    d["shape"] = ShapeTuple(t.shape());
    d["typestr"] = TypeStr(t.dtype());
    d["data"] = nb::make_tuple(reinterpret_cast<uintptr_t>(t.raw_data()),
                               !reinterpret_cast<TensorRefObject*>(self)->writable);
    return nb::object(d);
  });
}
PyObject* TensorRefDataPtr(PyObject* self, void*) {
  return Getter([&] { return nb::cast(reinterpret_cast<uintptr_t>(RefTensor(self).raw_data())); });
}
PyObject* TensorRefNBytes(PyObject* self, void*) {
  return Getter([&] { return nb::cast(RefTensor(self).TotalBytes()); });
}
PyObject* TensorRefDType(PyObject* self, void*) {
  return Getter([&] { return nb::cast(std::string(DTypeName(RefTensor(self).dtype()))); });
}
PyObject* TensorRefShape(PyObject* self, void*) {
  return Getter([&] { return nb::object(ShapeTuple(RefTensor(self).shape())); });
}
PyObject* TensorRefWritable(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<TensorRefObject*>(self)->writable);
}

PyObject* TensorRefNew(PyTypeObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_TypeError, "cannot create 'sluice._core._TensorRef' instances");
  return nullptr;
}

void TensorRefDealloc(PyObject* self) {
  reinterpret_cast<TensorRefObject*>(self)->tensor.~Tensor();
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);  // an instance of a heap type holds a reference to it
}

PyGetSetDef tensor_ref_getset[] = {
    {"__array_interface__", &TensorRefArrayInterface, nullptr, nullptr, nullptr},
    {"data_ptr", &TensorRefDataPtr, nullptr, "Address of the first byte.", nullptr},
    {"nbytes", &TensorRefNBytes, nullptr, "Size in bytes.", nullptr},
    {"dtype", &TensorRefDType, nullptr, "The Tensor's dtype name.", nullptr},
    {"shape", &TensorRefShape, nullptr, "The Tensor's shape (a tuple).", nullptr},
    {"writable", &TensorRefWritable, nullptr, "Whether the arrays viewing it may write.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot tensor_ref_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&TensorRefDealloc)},
    {Py_tp_new, reinterpret_cast<void*>(&TensorRefNew)},
    {Py_tp_getset, tensor_ref_getset},
    {Py_tp_doc, const_cast<char*>("Owns a reference to a sluice Tensor; the base of the numpy arrays viewing it.")},
    {0, nullptr}};

PyType_Spec tensor_ref_spec = {"sluice._core._TensorRef", static_cast<int>(sizeof(TensorRefObject)), 0,
                               Py_TPFLAGS_DEFAULT, tensor_ref_slots};

// A new _TensorRef owning `tensor`.
nb::object NewTensorRef(Tensor tensor, bool writable) {
  nb::object self = nb::steal(tensor_ref_type->tp_alloc(tensor_ref_type, 0));
  if (!self.is_valid()) throw nb::python_error();
  auto* ref = reinterpret_cast<TensorRefObject*>(self.ptr());
  new (&ref->tensor) Tensor(std::move(tensor));
  ref->writable = writable;
  return self;
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
  const auto slot = static_cast<size_t>(tensor.dtype());
  PyObject* descr = slot < kNumDTypeSlots ? g.out_descr[slot] : nullptr;
  if (descr == nullptr) throw nb::type_error("tensor of an unsupported dtype");
  const int nd = tensor.rank();
  Py_intptr_t inline_dims[TensorShape::kInlineDims];
  std::vector<Py_intptr_t> heap_dims;
  Py_intptr_t* dims = inline_dims;
  if (nd > TensorShape::kInlineDims) {
    heap_dims.resize(static_cast<size_t>(nd));
    dims = heap_dims.data();
  }
  for (int i = 0; i < nd; ++i) dims[i] = static_cast<Py_intptr_t>(tensor.shape().dim(i));
  // An empty tensor: numpy allocates the array itself (as numpy.empty).
  void* data = nullptr;
  int flags = 0;
  nb::object base;
  if (tensor.num_elements() > 0) {
    data = tensor.raw_data();
    // Writable only if nobody else can see these bytes: the buffer is ours
    // alone (a slice of a batch still queued, or a tensor a C++ producer
    // reuses, is shared and so read-only here).
    const bool writable = tensor.buffer() != nullptr && tensor.buffer()->RefCountIsOne();
    const size_t size = DTypeSize(tensor.dtype());
    const bool complex = tensor.dtype() == DType::kComplex64 || tensor.dtype() == DType::kComplex128;
    const size_t alignment = complex ? size / 2 : size;  // numpy's for these types
    flags = (writable ? NumpyApi::kWriteable : 0) |
            (reinterpret_cast<uintptr_t>(data) % alignment == 0 ? NumpyApi::kAligned : 0);
    base = NewTensorRef(std::move(tensor), writable);
  }
  Py_INCREF(descr);  // stolen by new_from_descr
  nb::object array =
      nb::steal(g.np.new_from_descr(g.np.ndarray, descr, nd, dims, nullptr, data, flags, nullptr));
  if (!array.is_valid()) throw nb::python_error();
  // The array's base owns the buffer (a stolen reference, even on failure).
  if (base.is_valid() && g.np.set_base_object(array.ptr(), base.release().ptr()) != 0) {
    throw nb::python_error();
  }
  return array;
}

PyObject* NumpyStorageDescr(DType dtype) {
  const auto slot = static_cast<size_t>(dtype);
  return slot < kNumDTypeSlots ? g.storage_descr[slot] : nullptr;
}

bool AsContiguousArray(PyObject* obj, PyObject* descr, ContiguousArray* out) {
  if (Py_TYPE(obj) != g.np.ndarray || descr == nullptr) return false;
  const auto* a = reinterpret_cast<const NumpyArrayFields*>(obj);
  if (a->descr != descr || (a->flags & NumpyApi::kCContiguous) == 0) return false;
  out->data = a->data;
  out->ndim = a->nd;
  out->dims = a->dimensions;
  return true;
}

Tensor CopyArray(DType dtype, const ContiguousArray& array) {
  int64_t inline_dims[TensorShape::kInlineDims];
  std::vector<int64_t> heap_dims;
  int64_t* dims = inline_dims;
  if (array.ndim > TensorShape::kInlineDims) {
    heap_dims.resize(static_cast<size_t>(array.ndim));
    dims = heap_dims.data();
  }
  for (int i = 0; i < array.ndim; ++i) dims[i] = static_cast<int64_t>(array.dims[i]);
  Tensor t(dtype, TensorShape(std::span<const int64_t>(dims, static_cast<size_t>(array.ndim))));
  const size_t bytes = t.TotalBytes();
  if (bytes > 0) std::memcpy(t.raw_data(), array.data, bytes);
  return t;
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

std::vector<DType> DTypesFromPython(const std::vector<int>& numbers) {
  std::vector<DType> out;
  out.reserve(numbers.size());
  for (int d : numbers) out.push_back(static_cast<DType>(d));
  return out;
}

std::vector<PartialShape> ShapesFromPython(const ShapeList& shapes) {
  std::vector<PartialShape> out;
  out.reserve(shapes.size());
  for (const auto& s : shapes) out.push_back(s ? PartialShape(*s) : PartialShape::UnknownRank());
  return out;
}

std::vector<int> DTypesToPython(const std::vector<DType>& dtypes) {
  std::vector<int> out;
  out.reserve(dtypes.size());
  for (DType d : dtypes) out.push_back(static_cast<int>(d));
  return out;
}

nb::list ShapesToPython(const std::vector<PartialShape>& shapes) {
  nb::list out;
  for (const PartialShape& s : shapes) out.append(s.rank_known() ? nb::cast(s.dims()) : nb::none());
  return out;
}

// ---- module ------------------------------------------------------------------------------

namespace {

void InitNumpyApi() {
  nb::object multiarray;
  try {
    multiarray = nb::module_::import_("numpy._core._multiarray_umath");  // numpy >= 2
  } catch (const nb::python_error&) {
    multiarray = nb::module_::import_("numpy.core._multiarray_umath");
  }
  nb::object capsule = multiarray.attr("_ARRAY_API");
  auto** api = static_cast<void**>(PyCapsule_GetPointer(capsule.ptr(), nullptr));
  if (api == nullptr) throw nb::python_error();
  const unsigned abi = reinterpret_cast<unsigned (*)()>(api[NumpyApi::kGetNDArrayCVersion])();
  if (abi >> 24 != 1 && abi >> 24 != 2) {
    throw nb::import_error(("sluice: unsupported numpy C ABI version " + std::to_string(abi)).c_str());
  }
  g.np.ndarray = static_cast<PyTypeObject*>(api[NumpyApi::kArrayType]);
  g.np.new_from_descr = reinterpret_cast<decltype(g.np.new_from_descr)>(api[NumpyApi::kNewFromDescr]);
  g.np.set_base_object = reinterpret_cast<decltype(g.np.set_base_object)>(api[NumpyApi::kSetBaseObject]);
  // The capsule's table lives as long as numpy; keep numpy loaded for ever.
  Leak(multiarray);
}

void InitGlobals() {
  g.from_status = Leak(nb::module_::import_("sluice.errors").attr("_from_status"));
  nb::module_ np = nb::module_::import_("numpy");
  g.np_empty = Leak(np.attr("empty"));
  g.np_object = np.attr("dtype")(nb::module_::import_("builtins").attr("object")).release().ptr();
  try {
    g.bfloat16 = Leak(nb::module_::import_("ml_dtypes").attr("bfloat16"));
  } catch (const nb::python_error&) {
    g.bfloat16 = nullptr;  // optional: bfloat16 comes out as float32
  }
  g.main_thread_ident = nb::cast<unsigned long>(
      nb::module_::import_("threading").attr("main_thread")().attr("ident"));
  InitNumpyApi();
  nb::object np_dtype = np.attr("dtype");
  for (size_t slot = 0; slot < kNumDTypeSlots; ++slot) {
    const auto dtype = static_cast<DType>(slot);
    const std::string typestr = TypeStr(dtype);
    if (!IsPlainDType(dtype) || typestr.empty()) continue;
    g.storage_descr[slot] = Leak(np_dtype(nb::str(typestr.c_str())));
    g.out_descr[slot] = g.storage_descr[slot];
  }
  const auto bf16 = static_cast<size_t>(DType::kBFloat16);
  g.out_descr[bf16] = g.bfloat16 != nullptr ? Leak(np_dtype(Borrow(g.bfloat16))) : nullptr;
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

  tensor_ref_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&tensor_ref_spec));
  if (tensor_ref_type == nullptr) throw nb::python_error();
  m.attr("_TensorRef") = nb::borrow(reinterpret_cast<PyObject*>(tensor_ref_type));

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
