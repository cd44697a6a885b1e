// Bindings of the tf.train input pipeline: the producers, the batchers and
// the queue statistics. sluice/train.py wraps them with TensorFlow's names.
//
//   _core.Producer        a train::Producer with its output signature
//                         (dtypes, shapes, component names). Made by the
//                         *_producer functions below; composable (parse,
//                         filter, limit_epochs) in C++.
//   _core.BatchQueue      train::BatchQueue (the output of a batcher)
//   _core.QueueMonitor    train::QueueMonitor
//
// Native producers (reader, dequeue, slice) and the native stages over them
// (parse_example, decode_jpeg, random_resized_crop, select: thin wrappers of
// pipeline/producer_ops.h) run entirely in C++ on the runner threads and never
// take the GIL. A Python producer
// (python_producer) takes the GIL for each call, calls the Python function
// and copies the components it returns into Tensors, then lets the GIL go.
// A Python exception becomes a Status there: sluice.errors.OpError keeps its
// code (so OutOfRangeError ends the thread quietly), anything else is
// Unknown; the exception's token in sluice._input's stash (its
// `_sluice_token` attribute, or a fresh stash made here) travels as the
// payload "sluice.python.exception" so that the Coordinator can raise the
// original exception object. No exception, however broken its __str__,
// escapes a runner thread (StatusOfPythonError).
//
// Filters (filter_producer, mask_rows_producer, and a Python producer's
// keep_input in sluice/_input.py, which returns None for a rejected example)
// take one input example per call: a rejection returns train::SkippedStep()
// (sluice/train/producer.h), which the batchers' enqueue op counts as a step
// with nothing to enqueue, as TF runs a no-op for keep_input=false. The runner thread then checks its stop
// conditions before the next call, so a filter that rejects everything
// never holds up a coordinator stop or a runner's destruction.
//
// GIL: every call that may block (a batch dequeue, a producer call, dropping
// the last reference to a runner, which joins its threads) runs without it.
// A Python object held by a C++ producer is released under the GIL
// (PyObjectRef), on whatever thread drops it. Interpreter exit (the atexit
// hook, threads ended by the finalizing interpreter) is python_exit.h's.
#include <nanobind/nanobind.h>
#if defined(__GLIBCXX__)
#include <cxxabi.h>  // abi::__forced_unwind
#endif
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "bind_common.h"
#include "python_exit.h"
#include "sluice/core/dtype.h"
#include "sluice/core/element.h"
#include "sluice/core/logging.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/image/codec.h"
#include "sluice/image/normalize.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/image/resize.h"
#include "sluice/io/reader_base.h"
#include "sluice/ops/feature_spec.h"
#include "sluice/ops/parse_example.h"
#include "sluice/pipeline/producer_ops.h"
#include "sluice/queue/queue.h"
#include "sluice/train/batchers.h"
#include "sluice/train/input_producers.h"
#include "sluice/train/producer.h"
#include "sluice/train/queue_monitor.h"

namespace sluice::python {
namespace {

// The payload naming the Python exception a status stands for (the same key
// as sluice/train.py's _PY_EXCEPTION_PAYLOAD).
constexpr char kPythonExceptionPayload[] = "sluice.python.exception";

// ---- Producers -----------------------------------------------------------------

// A producer and its output signature: one example's components, or for a
// producer of batches (reader_up_to_producer, for enqueue_many batchers)
// a batch of them, whose shapes include the leading batch dimension (-1).
// The native stages (pipeline/producer_ops.h) compute their outputs'
// signatures from it.
using ProducerHandle = train::TypedProducer;

// None (unknown rank) or a list of dims, -1 for an unknown one.
PartialShape ToShape(nb::handle obj) {
  if (obj.is_none()) return PartialShape::UnknownRank();
  return PartialShape(nb::cast<std::vector<int64_t>>(obj));
}

// str(obj) as UTF-8 (lone surrogates escaped), or nullopt when str() raises
// or returns something else than a str; that error is cleared. Calls no
// C++ code that throws. REQUIRES: the GIL is held.
std::optional<std::string> SafeStr(PyObject* obj) {
  PyObject* str = PyObject_Str(obj);
  if (str == nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  PyObject* utf8 = PyUnicode_AsEncodedString(str, "utf-8", "backslashreplace");
  Py_DECREF(str);
  if (utf8 == nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  std::string out(PyBytes_AS_STRING(utf8), static_cast<size_t>(PyBytes_GET_SIZE(utf8)));
  Py_DECREF(utf8);
  return out;
}

// The unqualified name of `obj`'s type ("ValueError"), without calling Python.
std::string TypeName(PyObject* obj) {
  const char* name = Py_TYPE(obj)->tp_name;
  const char* dot = std::strrchr(name, '.');
  return dot != nullptr ? dot + 1 : name;
}

// Attribute `name` of `obj` as a new reference, or nullptr (error cleared).
nb::object AttrOrNull(PyObject* obj, const char* name) {
  PyObject* value = PyObject_GetAttrString(obj, name);
  if (value == nullptr) PyErr_Clear();
  return nb::steal(value);
}

// The token under which sluice._input keeps `exc` for the Coordinator: its
// `_sluice_token` (set where sluice.train stashed it), else, if `stash`, a
// fresh stash by sluice._input._stash_exception. Empty if neither works.
std::string ExceptionToken(PyObject* exc, bool stash) {
  if (nb::object token = AttrOrNull(exc, "_sluice_token"); token.is_valid() && PyUnicode_Check(token.ptr())) {
    return SafeStr(token.ptr()).value_or("");
  }
  if (!stash) return "";
  nb::object input = nb::steal(PyImport_ImportModule("sluice._input"));
  if (!input.is_valid()) {
    PyErr_Clear();
    return "";
  }
  nb::object stash_fn = AttrOrNull(input.ptr(), "_stash_exception");
  if (!stash_fn.is_valid()) return "";
  nb::object token = nb::steal(PyObject_CallOneArg(stash_fn.ptr(), exc));
  if (!token.is_valid()) {
    PyErr_Clear();
    return "";
  }
  return PyUnicode_Check(token.ptr()) ? SafeStr(token.ptr()).value_or("") : "";
}

// The exception object of `error`, which it consumes. Before Python 3.12 an
// exception raised as a bare type (KeyboardInterrupt, from the signal
// handler) has no object until normalised, and python_error::value() is
// null. Null if normalising fails (that error cleared). REQUIRES: the GIL.
nb::object ExceptionObject(nb::python_error& error) {
#if PY_VERSION_HEX < 0x030C0000
  error.restore();
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (value != nullptr && traceback != nullptr) PyException_SetTraceback(value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  if (PyErr_Occurred() != nullptr) PyErr_Clear();
  return nb::steal(value);
#else
  return nb::borrow(error.value());
#endif
}

// The Status of a Python exception raised by user code on a runner thread:
// sluice.errors.OpError keeps its code and message, anything else is Unknown
// "<Type>: <str>". Whatever the exception does (a __str__ that raises or
// returns a non-string, a broken error_code), this returns a status and
// leaves no Python error set: nothing may escape a runner thread.
// REQUIRES: the GIL is held.
Status StatusOfPythonError(nb::python_error& error) {
  nb::object exception = ExceptionObject(error);
  if (!exception.is_valid()) return Status(Code::kUnknown, "<an exception that could not be instantiated>");
  PyObject* exc = exception.ptr();
  const std::string type = TypeName(exc);
  const std::string unprintable = "<unprintable " + type + " object>";
  int code = static_cast<int>(Code::kUnknown);
  std::optional<std::string> message;
  int is_op_error = 0;
  if (nb::object module = nb::steal(PyImport_ImportModule("sluice.errors")); module.is_valid()) {
    if (nb::object op_error = AttrOrNull(module.ptr(), "OpError"); op_error.is_valid()) {
      is_op_error = PyObject_IsInstance(exc, op_error.ptr());
    }
  }
  if (PyErr_Occurred() != nullptr) PyErr_Clear();
  if (is_op_error == 1) {
    if (nb::object c = AttrOrNull(exc, "error_code"); c.is_valid() && PyLong_Check(c.ptr())) {
      const long value = PyLong_AsLong(c.ptr());
      if (value == -1 && PyErr_Occurred() != nullptr) PyErr_Clear();
      if (value > 0 && value <= static_cast<long>(Code::kUnauthenticated)) code = static_cast<int>(value);
    }
    if (nb::object m = AttrOrNull(exc, "message"); m.is_valid()) message = SafeStr(m.ptr());
  } else {
    message = type + ": " + SafeStr(exc).value_or(unprintable);
  }
  Status s(static_cast<Code>(code), message.value_or(unprintable));
  // The routine end of an input (OutOfRangeError, once per runner thread)
  // is not stashed: it would push out of the bounded stash the error that
  // coord.join() is to raise.
  const bool stash = code != static_cast<int>(Code::kOutOfRange);
  if (std::string token = ExceptionToken(exc, stash); !token.empty()) {
    s = s.WithPayload(kPythonExceptionPayload, token);
  }
  return s;
}

// `fn()` with its exceptions as statuses; no exception leaves it (but a
// forced unwind, which must go on). REQUIRES: the GIL is held.
template <class T, class F>
Result<T> CallWithStatus(F& fn) {
  try {
    return fn();
  } catch (nb::python_error& e) {
    return StatusOfPythonError(e);
  } catch (const nb::builtin_exception& e) {  // conversion errors (TypeError, ValueError)
    return Status(Code::kInvalidArgument, e.what());
#if defined(__GLIBCXX__)
  } catch (abi::__forced_unwind&) {
    throw;
#endif
  } catch (const std::exception& e) {
    return Status(Code::kInternal, e.what());
  } catch (...) {
    return Status(Code::kInternal, "an unknown C++ exception in a Python callback");
  }
}

// Runs `fn` with the GIL held, from a thread that may not hold it; Python
// exceptions become statuses. Cancelled once the interpreter is going away.
// The GIL is taken by hand, not with nb::gil_scoped_acquire: if the
// interpreter starts finalizing meanwhile, CPython ends this thread with
// pthread_exit when it (re)takes the GIL (in PyGILState_Ensure, or whenever
// the running Python code lets the GIL go and takes it back). That forced
// unwind is caught here and the thread parks for good, without releasing a
// GIL it no longer holds (a fatal error that aborted the process).
template <class T, class F>
Result<T> WithGil(F&& fn) {
  InPythonScope in_python;
  if (PythonGone()) return Status(Code::kCancelled, "Python is shutting down");
#if defined(__GLIBCXX__)
  try {
#endif
    const PyGILState_STATE state = PyGILState_Ensure();
    Result<T> out = CallWithStatus<T>(fn);
    PyGILState_Release(state);
    return out;
#if defined(__GLIBCXX__)
  } catch (abi::__forced_unwind&) {
    ParkForever();  // never rethrown: the thread never runs again
  }
#endif
}

// ---- Logging ---------------------------------------------------------------------

// The core log sink of the extension (sluice/core/logging.h): each message
// goes to Python's logging, logger "sluice" (WARNING for a warning), so an
// application filters or redirects it as any other. Called on any thread
// (a runner thread reading a file, the main thread in a blocking call),
// with or without the GIL; it takes the GIL as a Python producer does
// (WithGil), and once the interpreter is exiting, or if logging fails,
// the message goes to stderr instead.
void LogToPython(LogSeverity severity, std::string_view message) {
  const int level = severity == LogSeverity::kInfo ? 20 : severity == LogSeverity::kWarning ? 30 : 40;
  Result<bool> logged = WithGil<bool>([&]() -> Result<bool> {
    nb::object text = nb::steal(
        PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace"));
    if (!text.is_valid()) throw nb::python_error();
    nb::object logger = nb::module_::import_("logging").attr("getLogger")("sluice");
    logger.attr("log")(level, "%s", text);
    return true;
  });
  if (!logged.ok()) LogToStderr(severity, message);
}

// `fn()` returns a list of components already converted by sluice.train
// (numpy arrays of each dtype's storage type; bytes or object arrays for
// strings), copied here into Tensors; or None when its keep_input rejected
// the example (a skipped step).
ProducerHandle NewPythonProducer(nb::handle fn, const std::vector<int>& dtypes, const ShapeList& shapes) {
  auto ref = std::make_shared<PyObjectRef>(fn);
  std::vector<DType> types = DTypesFromPython(dtypes);
  train::Producer producer = [ref, types]() -> Result<Element> {
    return WithGil<Element>([&]() -> Result<Element> {
      nb::object components = ref->get()();
      if (components.is_none()) return train::SkippedStep();
      return PythonToElement(components, types);
    });
  };
  return ProducerHandle{std::move(producer), std::move(types), ShapesFromPython(shapes), {}};
}

// Raises the Python exception that `status` stands for (a callback's, kept
// by sluice._input under the token of its payload), if it is still kept,
// so that a direct call raises what the user's code raised. REQUIRES: the
// GIL is held.
void RaiseStashedException(const Status& status) {
  const std::optional<std::string> token = status.GetPayload(kPythonExceptionPayload);
  if (!token) return;
  nb::object exc = nb::module_::import_("sluice._input").attr("_stashed_exception")(nb::str(token->c_str()));
  if (exc.is_none()) return;
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw nb::python_error();
}

// Between the skipped steps of a filter that keeps rejecting, the deadline
// and the interrupt check of `wait` (at its interval), which no queue wait
// runs while examples keep coming.
class SkippedStepCheck {
 public:
  explicit SkippedStepCheck(const queue::WaitOptions& wait)
      : wait_(wait), next_check_(queue::WaitOptions::Clock::now() + wait.interrupt_check_interval) {}

  Status Check() {
    const auto now = queue::WaitOptions::Clock::now();
    if (wait_.deadline && now >= *wait_.deadline) {
      return errors::DeadlineExceeded("Timed out waiting for notification");
    }
    if (wait_.interrupt_check && now >= next_check_) {
      next_check_ = now + wait_.interrupt_check_interval;
      return wait_.interrupt_check();
    }
    return Status();
  }

 private:
  const queue::WaitOptions& wait_;
  queue::WaitOptions::Clock::time_point next_check_;
};

// One call of the producer from Python, without the GIL: the next example (a
// filter's skipped steps are retried here). Its queue waits use the call's
// WaitOptions (train::ScopedProducerWait), so Ctrl-C (on the main thread)
// and `timeout` end a call blocked on an empty input, as a queue dequeue.
nb::list CallProducer(const ProducerHandle& h, std::optional<double> timeout) {
  BlockingCall call(timeout);
  const queue::WaitOptions wait = call.wait<queue::WaitOptions>();
  Result<Element> e = call.Run([&]() -> Result<Element> {
    train::ScopedProducerWait scope(wait);
    SkippedStepCheck check(wait);
    while (true) {
      Result<Element> r = h.producer();
      if (!train::IsSkippedStep(r.status())) return r;
      if (Status s = check.Check(); !s.ok()) return s;
    }
  });
  if (!e.ok()) {
    RaiseStashedException(e.status());
    ThrowStatus(e.status());  // not ValueOrThrow(std::move(e)): gcc 12 -Wmaybe-uninitialized false positive
  }
  return ElementToPython(*e);
}

ProducerHandle NewReaderProducer(nb::handle reader, const QueueHandle& filename_queue) {
  return ProducerHandle{train::ReaderProducer(ReaderOf(reader), filename_queue.queue),
                        {DType::kString, DType::kString},
                        {PartialShape(TensorShape({})), PartialShape(TensorShape({}))},
                        {"key", "value"}};
}

ProducerHandle NewReaderUpToProducer(nb::handle reader, const QueueHandle& filename_queue, int64_t num_records) {
  if (num_records < 1) throw nb::value_error("num_records must be >= 1");
  // Batches of 1..num_records records: the leading (batch) dimension is
  // declared, as an enqueue_many batcher expects of its producer.
  return ProducerHandle{train::ReaderUpToProducer(ReaderOf(reader), filename_queue.queue, num_records),
                        {DType::kString, DType::kString},
                        {PartialShape({-1}), PartialShape({-1})},
                        {"key", "value"}};
}

ProducerHandle NewDequeueProducer(const QueueHandle& q) {
  return ProducerHandle{train::DequeueProducer(q.queue), q.queue->dtypes(), q.queue->shapes(), q.queue->names()};
}

// The native stages of pipeline/producer_ops.h; their build errors
// (InvalidArgument) become ValueError in sluice/_input.py.

// Each example's string scalar `value_index` parsed as a tf.train.Example
// (parse_single_example); the outputs, in the parser's (sorted) order,
// replace the example. A VarLenFeature/SparseFeature is three components
// ("<key>/indices", "<key>/values", "<key>/dense_shape").
ProducerHandle NewParseExampleProducer(const ProducerHandle& input, nb::handle parser_obj, int value_index) {
  if (value_index < 0) throw nb::value_error("value_index must name a string component of the producer");
  return ValueOrThrow(train::MapParseExample(input, ExampleParserOf(parser_obj), static_cast<size_t>(value_index)));
}

size_t ComponentIndex(int component) {
  if (component < 0) throw nb::value_error("component must be >= 0");
  return static_cast<size_t>(component);
}

ProducerHandle NewDecodeJpegProducer(const ProducerHandle& input, int component, int channels, int ratio,
                                     bool fancy_upscaling, const std::string& dct_method) {
  image::DecodeJpegOptions o;
  o.channels = channels;
  o.ratio = ratio;
  o.fancy_upscaling = fancy_upscaling;
  o.dct_method = dct_method;
  return ValueOrThrow(train::MapDecodeJpeg(input, ComponentIndex(component), std::move(o)));
}

// `options`: a _core.RandomResizedCropOptions (bind_crop_options.cc).
ProducerHandle NewRandomResizedCropProducer(const ProducerHandle& input, int component,
                                            const image::RandomResizedCropOptions& options, uint64_t seed) {
  return ValueOrThrow(train::MapRandomResizedCrop(input, ComponentIndex(component), options, seed));
}

ProducerHandle NewSelectProducer(const ProducerHandle& input, const std::vector<int>& components) {
  std::vector<size_t> indices;
  for (int c : components) indices.push_back(ComponentIndex(c));
  return ValueOrThrow(train::MapSelect(input, std::move(indices)));
}

// A producer that calls `input` once per call and hands the element, with the
// Python callable `predicate`, to `decide`, which returns what to yield: an
// element, std::nullopt (rejected: a skipped step, see the file comment) or
// an error. Errors of `input` (a skipped step of an inner filter included)
// pass through.
template <class Decide>
ProducerHandle PythonFilteredProducer(const ProducerHandle& input, nb::handle predicate, Decide decide) {
  auto ref = std::make_shared<PyObjectRef>(predicate);
  ProducerHandle out = input;
  out.producer = [in = input.producer, ref, decide]() -> Result<Element> {
    Result<Element> e = in();
    if (!e.ok()) return e;
    Result<std::optional<Element>> kept = decide(std::move(*e), *ref);
    if (!kept.ok()) return kept.status();
    if (!kept->has_value()) return train::SkippedStep();
    return std::move(**kept);
  };
  return out;
}

// Calls the input producer and yields its example if `predicate` (a Python
// function of the list of components, returning a truth value) accepts it;
// a skipped step otherwise.
ProducerHandle NewFilterProducer(const ProducerHandle& input, nb::handle predicate) {
  return PythonFilteredProducer(input, predicate,
                                [](Element e, const PyObjectRef& ref) -> Result<std::optional<Element>> {
    Result<bool> keep = WithGil<bool>([&] { return nb::cast<bool>(nb::bool_(ref.get()(ElementToPython(e)))); });
    if (!keep.ok()) return keep.status();
    if (!*keep) return std::optional<Element>();
    return std::optional<Element>(std::move(e));
  });
}

// enqueue_many's keep_input as a callable: calls the input producer for a
// batch (components with a leading dimension), asks `predicate` (a Python
// function of the batch's list of components) for one truth value per row,
// as TF's vector keep_input, and yields the kept rows: the batch itself
// when all are kept, a skipped step when none are.
ProducerHandle NewMaskRowsProducer(const ProducerHandle& input, nb::handle predicate) {
  return PythonFilteredProducer(input, predicate,
                                [](Element e, const PyObjectRef& ref) -> Result<std::optional<Element>> {
    if (e.empty() || e[0].rank() < 1) {
      return errors::InvalidArgument("keep_input with enqueue_many: the producer's batch has no leading dimension");
    }
    const int64_t rows = e[0].shape().dim(0);
    Result<std::vector<bool>> mask = WithGil<std::vector<bool>>([&] {
      nb::object flags = ref.get()(ElementToPython(e));
      nb::object numpy = nb::module_::import_("numpy");
      return nb::cast<std::vector<bool>>(
          numpy.attr("asarray")(flags, nb::arg("dtype") = "bool").attr("reshape")(-1).attr("tolist")());
    });
    if (!mask.ok()) return mask.status();
    if (static_cast<int64_t>(mask->size()) != rows) {
      return errors::InvalidArgument("keep_input with enqueue_many must give one value per example: got ",
                                     mask->size(), " for a batch of ", rows);
    }
    std::vector<int64_t> kept;
    for (int64_t r = 0; r < rows; ++r) {
      if ((*mask)[static_cast<size_t>(r)]) kept.push_back(r);
    }
    if (kept.empty()) return std::optional<Element>();
    if (static_cast<int64_t>(kept.size()) == rows) return std::optional<Element>(std::move(e));
    Element rows_out;
    for (const Tensor& component : e) rows_out.push_back(component.Gather(kept));
    return std::optional<Element>(std::move(rows_out));
  });
}

ProducerHandle NewLimitEpochsProducer(const ProducerHandle& input, std::optional<int64_t> num_epochs) {
  ProducerHandle out = input;
  out.producer = ValueOrThrow(train::LimitEpochs(input.producer, num_epochs));
  return out;
}

std::vector<Tensor> ToTensors(const nb::list& values, const std::vector<DType>& dtypes) {
  if (values.size() != dtypes.size()) throw nb::value_error("one dtype per value is required");
  std::vector<Tensor> out;
  for (size_t i = 0; i < dtypes.size(); ++i) out.push_back(PythonToTensor(values[i], dtypes[i]));
  return out;
}

ProducerHandle NewLimitEpochsValue(const nb::list& values, const std::vector<int>& dtypes,
                                   std::optional<int64_t> num_epochs) {
  ProducerHandle out;
  out.dtypes = DTypesFromPython(dtypes);
  std::vector<Tensor> tensors = ToTensors(values, out.dtypes);
  for (const Tensor& t : tensors) out.shapes.push_back(PartialShape(t.shape()));
  out.producer = ValueOrThrow(train::LimitEpochs(Element(std::move(tensors)), num_epochs));
  return out;
}

// ---- Input producers (queues) ----------------------------------------------------

// The options shared by the input producers; sluice/_input.py passes them all;
// (seed, seed2) is TF's seed pair ((0, 0): non-deterministic).
train::ProducerOptions ToProducerOptions(std::optional<int64_t> num_epochs, bool shuffle,
                                         int64_t seed, int64_t seed2, int32_t capacity,
                                         const std::string& shared_name, const std::string& name) {
  train::ProducerOptions o;
  o.num_epochs = num_epochs;
  o.shuffle = shuffle;
  o.seed = seed;
  o.seed2 = seed2;
  o.capacity = capacity;
  o.shared_name = shared_name;
  o.name = name;
  return o;
}

QueueHandle QueueOf(Result<train::ProducerQueue> made) { return QueueHandle{ValueOrThrow(std::move(made)).queue}; }

// `cancel_op`: None, or a producer of no components (sluice/_input.py wraps
// the user's callable so, taking the GIL like every Python producer); the
// runner ignores its status, as TensorFlow's QueueRunner ignores cancel_op's
// errors.
void SetCancelOp(nb::handle cancel_op, train::ProducerOptions* o) {
  if (cancel_op.is_none()) return;
  o->cancel_op = [producer = nb::cast<const ProducerHandle&>(cancel_op).producer] { return producer().status(); };
}

// `values`: a list of bytes (sluice/train.py encodes str).
QueueHandle NewStringInputProducer(const nb::list& values, std::optional<int64_t> num_epochs, bool shuffle,
                                   int64_t seed, int64_t seed2, int32_t capacity, const std::string& shared_name,
                                   const std::string& name, nb::handle cancel_op) {
  std::vector<std::string> strings;
  for (nb::handle v : values) {
    nb::bytes b = nb::cast<nb::bytes>(v);
    strings.emplace_back(b.c_str(), b.size());
  }
  train::ProducerOptions o = ToProducerOptions(num_epochs, shuffle, seed, seed2, capacity, shared_name, name);
  SetCancelOp(cancel_op, &o);
  return QueueOf(train::StringInputProducer(strings, std::move(o)));
}

QueueHandle NewRangeInputProducer(int32_t limit, std::optional<int64_t> num_epochs, bool shuffle,
                                  int64_t seed, int64_t seed2, int32_t capacity, const std::string& shared_name,
                                  const std::string& name) {
  return QueueOf(train::RangeInputProducer(
      limit, ToProducerOptions(num_epochs, shuffle, seed, seed2, capacity, shared_name, name)));
}

QueueHandle NewInputProducer(nb::handle value, int dtype, nb::handle element_shape, std::optional<int64_t> num_epochs,
                             bool shuffle, int64_t seed, int64_t seed2, int32_t capacity,
                             const std::string& shared_name, const std::string& name, nb::handle cancel_op) {
  Tensor input = PythonToTensor(value, static_cast<DType>(dtype));
  train::InputProducerOptions o;
  static_cast<train::ProducerOptions&>(o) =
      ToProducerOptions(num_epochs, shuffle, seed, seed2, capacity, shared_name, name);
  SetCancelOp(cancel_op, &o);
  if (!element_shape.is_none()) o.element_shape = ToShape(element_shape);
  return QueueOf(train::InputProducer(std::move(input), std::move(o)));
}

ProducerHandle NewSliceInputProducer(const nb::list& values, const std::vector<int>& dtypes,
                                     std::optional<int64_t> num_epochs, bool shuffle, int64_t seed, int64_t seed2,
                                     int32_t capacity, const std::string& shared_name, const std::string& name) {
  ProducerHandle out;
  out.dtypes = DTypesFromPython(dtypes);
  std::vector<Tensor> tensors = ToTensors(values, out.dtypes);
  for (const Tensor& t : tensors) {
    if (t.rank() < 1) throw nb::value_error("slice_input_producer: every tensor must have rank >= 1");
    std::span<const int64_t> dims = t.shape().dims();
    out.shapes.push_back(PartialShape(std::vector<int64_t>(dims.begin() + 1, dims.end())));
  }
  out.producer = ValueOrThrow(train::SliceInputProducer(
      std::move(tensors), ToProducerOptions(num_epochs, shuffle, seed, seed2, capacity, shared_name, name)));
  return out;
}

// `pattern_args`: str, bytes or os.PathLike each (PathArg).
nb::list MatchFilenamesOnce(const nb::list& pattern_args) {
  std::vector<std::string> patterns;
  for (nb::handle p : pattern_args) patterns.push_back(PathArg(p));
  Result<std::vector<std::string>> files = [&] {
    GilRelease release;
    return train::MatchFilenamesOnce(patterns);
  }();
  nb::list out;
  for (const std::string& f : ValueOrThrow(std::move(files))) out.append(nb::bytes(f.data(), f.size()));
  return out;
}

// ---- Batchers --------------------------------------------------------------------

// Holds a batcher's output. Dropping the last reference to its runner stops
// and joins the runner's threads, which may wait for the GIL (Python
// producers), so the destructor lets the GIL go first.
struct BatchHandle {
  std::optional<train::BatchQueue> batch;

  explicit BatchHandle(train::BatchQueue b) : batch(std::move(b)) {}
  BatchHandle(const BatchHandle&) = delete;
  BatchHandle& operator=(const BatchHandle&) = delete;
  ~BatchHandle() {
    if (!batch) return;
    if (!Py_IsInitialized() || !PyGILState_Check()) {
      batch.reset();
      return;
    }
    GilRelease release;
    batch.reset();
  }
};

// kind: "batch" or "shuffle_batch"; `join`: one thread per producer;
// keep_input: a constant (sluice/train.py turns a predicate into a filter
// producer).
// `options`: a _core.BatchOptions (bind_batch_options.cc); the plain forms
// use its BatchOptions part.
std::unique_ptr<BatchHandle> NewBatcher(const std::string& kind, const std::vector<const ProducerHandle*>& producers,
                                        bool join, bool keep_input, const train::ShuffleBatchOptions& options) {
  train::ShuffleBatchOptions o = options;
  std::vector<train::Producer> fns;
  for (const ProducerHandle* p : producers) fns.push_back(p->producer);
  const bool shuffle = kind == "shuffle_batch";
  if (!shuffle && kind != "batch") throw nb::value_error("kind must be 'batch' or 'shuffle_batch'");
  if (!join && fns.size() != 1) throw nb::value_error("exactly one producer is required");
  // Built and unwrapped in one expression: a Result assigned after its
  // construction trips gcc 12's -Wmaybe-uninitialized on BatchQueue's move.
  auto make = [&]() -> Result<train::BatchQueue> {
    if (join) {
      return shuffle ? train::MaybeShuffleBatchJoin(std::move(fns), keep_input, std::move(o))
                     : train::MaybeBatchJoin(std::move(fns), keep_input, std::move(o));
    }
    return shuffle ? train::MaybeShuffleBatch(std::move(fns[0]), keep_input, std::move(o))
                   : train::MaybeBatch(std::move(fns[0]), keep_input, static_cast<train::BatchOptions>(o));
  };
  return std::make_unique<BatchHandle>(ValueOrThrow(make()));
}

// Each call dequeues the next batch of `h` (TF's batch of a batch): the
// batch queue's components with a leading dimension of batch_size (unknown
// with allow_smaller_final_batch); OutOfRange once its input has ended.
ProducerHandle NewBatchProducer(const BatchHandle& h) {
  const train::BatchQueue& b = *h.batch;
  ProducerHandle out;
  out.dtypes = b.queue()->dtypes();
  out.names = b.queue()->names();
  const int64_t leading = b.allow_smaller_final_batch() ? -1 : b.batch_size();
  for (const PartialShape& s : b.queue()->shapes()) {
    if (!s.rank_known()) {
      out.shapes.push_back(PartialShape::UnknownRank());
      continue;
    }
    std::vector<int64_t> dims = {leading};
    dims.insert(dims.end(), s.dims().begin(), s.dims().end());
    out.shapes.push_back(PartialShape(std::move(dims)));
  }
  out.producer = [b]() { return b.Dequeue(); };
  return out;
}

nb::list DequeueBatch(const BatchHandle& h, std::optional<double> timeout) {
  const train::BatchQueue& b = *h.batch;
  BlockingCall call(timeout);
  Result<Element> e = call.Run([&] { return b.Dequeue(call.wait<queue::WaitOptions>()); });
  ThrowIfError(e.status());  // as in CallProducer
  return ElementToPython(*e);
}

// ---- Queue statistics ---------------------------------------------------------------

nb::dict StatsToPython(const queue::QueueStats& s) {
  nb::dict d;
  d["id"] = s.id;
  d["name"] = s.name;
  d["type"] = s.type;
  d["capacity"] = s.capacity;
  d["min_after_dequeue"] = s.min_after_dequeue;
  d["size"] = s.size;
  d["fraction_full"] = s.fraction_full();
  d["fraction_over_min_full"] = s.fraction_over_min_full();
  d["enqueued"] = s.enqueued;
  d["dequeued"] = s.dequeued;
  d["closed"] = s.closed;
  return d;
}

nb::list AllQueueStats() {
  std::vector<queue::QueueStats> stats;
  {
    GilRelease release;  // takes every queue's lock in turn
    stats = queue::AllQueueStats();
  }
  nb::list out;
  for (const queue::QueueStats& s : stats) out.append(StatsToPython(s));
  return out;
}

// Owns a monitor; its destructor joins the sampling thread, without the GIL
// (the thread never takes it, but a sample may wait on a queue's lock).
struct MonitorHandle {
  std::unique_ptr<train::QueueMonitor> monitor;

  explicit MonitorHandle(std::unique_ptr<train::QueueMonitor> m) : monitor(std::move(m)) {}
  MonitorHandle(const MonitorHandle&) = delete;
  MonitorHandle& operator=(const MonitorHandle&) = delete;
  ~MonitorHandle() {
    if (!Py_IsInitialized() || !PyGILState_Check()) {
      monitor.reset();
      return;
    }
    GilRelease release;
    monitor.reset();
  }
};

std::unique_ptr<MonitorHandle> NewMonitor(double interval_secs, size_t history) {
  if (!(interval_secs > 0)) throw nb::value_error("interval_secs must be > 0");
  train::QueueMonitorOptions o;
  o.interval = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(interval_secs));
  o.history = history;
  return std::make_unique<MonitorHandle>(ValueOrThrow(train::QueueMonitor::Create(std::move(o))));
}

nb::list MonitorSeries(const MonitorHandle& h) {
  std::vector<train::QueueSeries> series;
  {
    GilRelease release;
    series = h.monitor->Series();
  }
  nb::list out;
  for (const train::QueueSeries& s : series) {
    nb::dict d;
    d["id"] = s.id;
    d["name"] = s.name;
    d["type"] = s.type;
    d["capacity"] = s.capacity;
    d["min_after_dequeue"] = s.min_after_dequeue;
    d["enqueue_rate"] = s.enqueue_rate();
    d["dequeue_rate"] = s.dequeue_rate();
    d["mean_fraction_full"] = s.mean_fraction_full();
    nb::list points;
    const auto origin = s.points.empty() ? train::QueueSeries::Clock::time_point() : s.points.front().time;
    for (const train::QueueSeries::Point& p : s.points) {
      nb::dict pd;
      pd["time"] = std::chrono::duration<double>(p.time - origin).count();
      pd["size"] = p.size;
      pd["fraction_full"] = p.fraction_full;
      pd["enqueued"] = p.enqueued;
      pd["dequeued"] = p.dequeued;
      pd["closed"] = p.closed;
      points.append(pd);
    }
    d["points"] = points;
    out.append(d);
  }
  return out;
}

}  // namespace

void BindPipeline(nb::module_& m) {
  nb::class_<ProducerHandle>(m, "Producer",
                             "A train::Producer and its output signature (see sluice.train.NativeProducer).")
      .def("__call__", &CallProducer, nb::arg("timeout") = nb::none(),
           "One call, without the GIL: a list of components. Ctrl-C and `timeout` end a blocked call.")
      .def_prop_ro("dtypes", [](const ProducerHandle& h) { return DTypesToPython(h.dtypes); })
      .def_prop_ro("shapes", [](const ProducerHandle& h) { return ShapesToPython(h.shapes); })
      .def_prop_ro("names", [](const ProducerHandle& h) { return h.names; });
  m.def("python_producer", &NewPythonProducer, nb::arg("fn"), nb::arg("dtypes"), nb::arg("shapes"));
  m.def("reader_producer", &NewReaderProducer, nb::arg("reader"), nb::arg("filename_queue"));
  m.def("reader_up_to_producer", &NewReaderUpToProducer, nb::arg("reader"), nb::arg("filename_queue"),
        nb::arg("num_records"));
  m.def("dequeue_producer", &NewDequeueProducer, nb::arg("queue"));
  m.def("parse_example_producer", &NewParseExampleProducer, nb::arg("producer"), nb::arg("parser"),
        nb::arg("value_index"));
  m.def("decode_jpeg_producer", &NewDecodeJpegProducer, nb::arg("producer"), nb::arg("component"),
        nb::arg("channels"), nb::arg("ratio"), nb::arg("fancy_upscaling"), nb::arg("dct_method"));
  m.def("random_resized_crop_producer", &NewRandomResizedCropProducer, nb::arg("producer"), nb::arg("component"),
        nb::arg("options"), nb::arg("seed"));
  m.def("select_producer", &NewSelectProducer, nb::arg("producer"), nb::arg("components"));
  m.def("filter_producer", &NewFilterProducer, nb::arg("producer"), nb::arg("predicate"));
  m.def("mask_rows_producer", &NewMaskRowsProducer, nb::arg("producer"), nb::arg("predicate"));
  m.def("limit_epochs_producer", &NewLimitEpochsProducer, nb::arg("producer"), nb::arg("num_epochs").none());
  m.def("limit_epochs_value", &NewLimitEpochsValue, nb::arg("values"), nb::arg("dtypes"),
        nb::arg("num_epochs").none());

  m.def("string_input_producer", &NewStringInputProducer, nb::arg("strings"), nb::arg("num_epochs").none(),
        nb::arg("shuffle"), nb::arg("seed"), nb::arg("seed2"), nb::arg("capacity"), nb::arg("shared_name"),
        nb::arg("name"), nb::arg("cancel_op").none() = nb::none());
  m.def("range_input_producer", &NewRangeInputProducer, nb::arg("limit"), nb::arg("num_epochs").none(),
        nb::arg("shuffle"), nb::arg("seed"), nb::arg("seed2"), nb::arg("capacity"), nb::arg("shared_name"),
        nb::arg("name"));
  m.def("input_producer", &NewInputProducer, nb::arg("value"), nb::arg("dtype"), nb::arg("element_shape").none(),
        nb::arg("num_epochs").none(), nb::arg("shuffle"), nb::arg("seed"), nb::arg("seed2"), nb::arg("capacity"),
        nb::arg("shared_name"), nb::arg("name"), nb::arg("cancel_op").none() = nb::none());
  m.def("slice_input_producer", &NewSliceInputProducer, nb::arg("values"), nb::arg("dtypes"),
        nb::arg("num_epochs").none(), nb::arg("shuffle"), nb::arg("seed"), nb::arg("seed2"), nb::arg("capacity"),
        nb::arg("shared_name"), nb::arg("name"));
  m.def("match_filenames_once", &MatchFilenamesOnce, nb::arg("patterns"));

  nb::class_<BatchHandle>(m, "BatchQueue", "train::BatchQueue: the output of a batcher.")
      .def("dequeue", &DequeueBatch, nb::arg("timeout") = nb::none(),
           "The next batch (a list of components), without the GIL.")
      .def_prop_ro("queue", [](const BatchHandle& h) { return QueueHandle{h.batch->queue()}; })
      .def_prop_ro("batch_size", [](const BatchHandle& h) { return h.batch->batch_size(); })
      .def_prop_ro("runner_name", [](const BatchHandle& h) { return h.batch->runner()->name(); });
  m.def("batch_producer", &NewBatchProducer, nb::arg("batch_queue"),
        "A producer of the batches of a batcher (for another batcher).");
  BindBatchOptions(m);
  m.def("new_batcher", &NewBatcher, nb::arg("kind"), nb::arg("producers"), nb::arg("join"), nb::arg("keep_input"),
        nb::arg("options"));

  // From now on the library's warnings go to Python's logging.
  SetLogSink(&LogToPython);

  BindPythonExit(m);
  m.def("all_queue_stats", &AllQueueStats, "queue::AllQueueStats(): one dict per live queue, in creation order.");
  nb::class_<MonitorHandle>(m, "QueueMonitor", "train::QueueMonitor (see sluice.train.QueueMonitor).")
      .def(nb::new_(&NewMonitor), nb::arg("interval_secs"), nb::arg("history"))
      .def("start", [](MonitorHandle& h) { ThrowIfError(h.monitor->Start()); })
      .def("stop",
           [](MonitorHandle& h) {
             GilRelease release;
             h.monitor->Stop();
           })
      .def("sample",
           [](MonitorHandle& h) {
             GilRelease release;
             h.monitor->Sample();
           })
      .def("series", &MonitorSeries)
      .def("report", [](const MonitorHandle& h) {
        GilRelease release;
        return h.monitor->Report();
      });
}

}  // namespace sluice::python
