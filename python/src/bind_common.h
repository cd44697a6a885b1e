// Shared helpers of the sluice._core bindings: the one place where a C++
// Status becomes a Python exception, the Tensor <-> numpy conversions, and
// BlockingCall, which runs a blocking C++ call without the GIL while still
// answering Ctrl-C.
//
// Threading contract of every binding: C++ code that may block (queue waits,
// joins, condition variables) runs with the GIL released; Python objects are
// only touched with the GIL held; an error Status is turned into an exception
// only after the GIL has been taken back (TF record_io_wrapper.cc).
#ifndef SLUICE_PYTHON_SRC_BIND_COMMON_H_
#define SLUICE_PYTHON_SRC_BIND_COMMON_H_

#include <nanobind/nanobind.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"

namespace sluice::io {
class ReaderBase;
}  // namespace sluice::io
namespace sluice::ops {
class ExampleParser;
}  // namespace sluice::ops
namespace sluice::train {
class QueueRunner;
}  // namespace sluice::train

namespace sluice::python {

namespace nb = nanobind;

// ---- Status -> exception (the single translation point) -------------------

// Raises sluice.errors.<Name>Error for `status` (built by
// sluice.errors._from_status, which also maps the code to the class).
// REQUIRES: !status.ok(); the GIL is held.
[[noreturn]] void ThrowStatus(const Status& status);

inline void ThrowIfError(const Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

template <class T>
T ValueOrThrow(Result<T> result) {
  if (!result.ok()) ThrowStatus(result.status());
  return std::move(result).value();
}

// ---- The GIL and blocking calls -----------------------------------------------

// Raises ValueError unless `timeout_secs` is None or >= 0 (BlockingCall's
// check, for calls that may finish without one).
void CheckTimeout(std::optional<double> timeout_secs);

// True on the thread that runs Python's signal handlers
// (threading.main_thread()). Any thread, GIL or not.
bool OnMainThread();

// Releases the GIL for its lifetime (nb::gil_scoped_release), but a thread
// other than the main one that gets back while the interpreter is shutting
// down parks for ever instead of retaking the GIL: Python would end it with
// pthread_exit, whose forced unwinding through C++ frames aborts the process
// (Python 3.14 parks such threads itself). The process is exiting anyway.
class GilRelease {
 public:
  GilRelease() : state_(PyEval_SaveThread()) {}
  ~GilRelease();
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  PyThreadState* state_;
};

// Options for one blocking call made from Python: an optional timeout and a
// Ctrl-C check. Build it with the GIL held, then Run() the C++ call:
//
//   BlockingCall call(timeout);
//   Status s = call.Run([&] { return q->Enqueue(e, call.wait<WaitOptions>()); });
//
// Run() releases the GIL around the call and, once it has the GIL back,
// raises the KeyboardInterrupt (or whatever a signal handler raised) that
// interrupted the wait. On the main thread only (where Python runs signal
// handlers), the blocked call runs `interrupt_check()` every
// kInterruptInterval: it takes the GIL briefly and calls
// PyErr_CheckSignals(); a raised exception is stashed here and the C++ call is
// abandoned with Cancelled.
class BlockingCall {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kInterruptInterval{50};

  // `timeout_secs`: None waits forever; must be >= 0 (ValueError otherwise).
  explicit BlockingCall(std::optional<double> timeout_secs);
  BlockingCall(const BlockingCall&) = delete;
  BlockingCall& operator=(const BlockingCall&) = delete;

  const std::optional<Clock::time_point>& deadline() const { return deadline_; }

  // Any options struct with deadline / interrupt_check /
  // interrupt_check_interval members (queue::WaitOptions).
  template <class Options>
  Options wait() const {
    Options o;
    o.deadline = deadline_;
    o.interrupt_check = interrupt_check_;
    o.interrupt_check_interval = kInterruptInterval;
    return o;
  }

  // Runs `fn` without the GIL, then raises a pending interrupt. Returns fn's
  // result; the caller raises its error status (with the GIL held).
  template <class F>
  auto Run(F&& fn) -> decltype(fn()) {
    std::optional<decltype(fn())> result;
    {
      GilRelease release;
      result.emplace(fn());
    }
    RaisePendingInterrupt();
    return std::move(*result);
  }

  // Raises the exception a signal handler raised during the wait, if any.
  // REQUIRES: the GIL is held.
  void RaisePendingInterrupt();

 private:
  struct Pending;
  std::optional<Clock::time_point> deadline_;
  std::shared_ptr<Pending> pending_;  // shared with interrupt_check_
  std::function<Status()> interrupt_check_;  // empty off the main thread
};

// Convenience: the GIL-free run of a Status-returning call, raising its error.
template <class F>
void RunBlocking(BlockingCall& call, F&& fn) {
  ThrowIfError(call.Run(std::forward<F>(fn)));
}

// For C++ waits that take a timeout but no interrupt check (Coordinator,
// Thread): calls `wait_for(chunk)` without the GIL until it returns true
// (then returns true) or `timeout_secs` passes (false; None: never). On the
// main thread the waits are cut into kInterruptInterval chunks with
// PyErr_CheckSignals() between them, so Ctrl-C raises KeyboardInterrupt.
// `wait_for(nullopt)` must wait without a time limit.
// REQUIRES: the GIL is held.
bool WaitInterruptibly(std::optional<double> timeout_secs,
                       const std::function<bool(std::optional<std::chrono::nanoseconds>)>& wait_for);

// ---- File paths ------------------------------------------------------------------

// A path argument as the bytes the operating system takes, by os.fsencode's
// rules: a str is encoded with the file system encoding and surrogateescape
// (so os.fsdecode of any file name comes back to its bytes), bytes are taken
// as they are, an os.PathLike is unwrapped first. The one conversion of
// every binding that takes a path. TypeError for another type, ValueError
// for an embedded NUL. REQUIRES: the GIL is held.
std::string PathArg(nb::handle path);

// A path as Python shows it: os.fsdecode of its bytes (a str; bytes that do
// not decode become lone surrogates). REQUIRES: the GIL is held.
nb::str PathToPython(std::string_view path);

// ---- Tensor <-> Python --------------------------------------------------------

// Copies a Python value into a new Tensor of `dtype`. The Python layer
// (sluice/queue.py) has already converted it: for numbers, a C-contiguous
// numpy array of exactly the dtype's item type (bfloat16 as uint16 bits); for
// kString, a numpy object array of bytes. Copying in (rather than borrowing
// numpy's memory) keeps enqueued tensors immutable whatever the caller does
// with its array afterwards. TypeError/ValueError on a malformed value.
Tensor PythonToTensor(nb::handle value, DType dtype);

// A numpy view of `tensor` (zero-copy for numbers: the array's base is a
// sluice._core._TensorRef owning a reference to the Tensor's buffer; writable
// only if no other Tensor shares that buffer), bytes for a string scalar, an
// object array of bytes for other string tensors. bfloat16: an ml_dtypes
// bfloat16 view when ml_dtypes is installed, else a float32 copy (exact).
// Numbers go through numpy's C API (PyArray_NewFromDescr), no Python call.
nb::object TensorToPython(Tensor tensor);

// numpy.dtype of `dtype`'s storage (np.dtype(np.float32), ...; bfloat16:
// uint16), one object per dtype for the process; nullptr for kString.
PyObject* NumpyStorageDescr(DType dtype);

// A numpy array the fast paths copy from as is.
struct ContiguousArray {
  const void* data;
  int ndim;
  const Py_intptr_t* dims;
};
// True, filling `out`, if `obj` is exactly a numpy.ndarray (no subclass),
// C-contiguous, whose dtype is the object `descr` (a NumpyStorageDescr:
// native byte order). Reads the array's fields; never calls Python.
bool AsContiguousArray(PyObject* obj, PyObject* descr, ContiguousArray* out);
// A new Tensor of `dtype` (whose storage type `array` has) holding a copy.
Tensor CopyArray(DType dtype, const ContiguousArray& array);

// The signature lists of a queue, producer or batcher as the Python layer
// passes them: DType numbers, and per component None (unknown rank) or a
// list of dims with -1 for an unknown one. One conversion for every binding.
using ShapeList = std::vector<std::optional<std::vector<int64_t>>>;
std::vector<DType> DTypesFromPython(const std::vector<int>& numbers);
std::vector<PartialShape> ShapesFromPython(const ShapeList& shapes);
std::vector<int> DTypesToPython(const std::vector<DType>& dtypes);
nb::list ShapesToPython(const std::vector<PartialShape>& shapes);  // None or a list of dims, -1 unknown

// A Python list of the components, converted by TensorToPython.
nb::list ElementToPython(Element element);
// `values` (a sequence) to an Element, component i converted to dtypes[i].
// REQUIRES: len(values) == dtypes.size() (the Python layer checks).
Element PythonToElement(nb::handle values, const std::vector<DType>& dtypes);

// ---- Handles ---------------------------------------------------------------------

// The Python objects of shared C++ objects hold them through these handles,
// never through nanobind's std::shared_ptr caster: a shared_ptr made from a
// Python object drops its last reference by taking the GIL, which a C++
// runner thread must never need (it may be the last owner, and may let go
// while the interpreter shuts down). A handle owns a plain shared_ptr.
struct QueueHandle {
  std::shared_ptr<queue::Queue> queue;
};

// A _core.QueueRunner (bind_train.cc) owning `runner`. REQUIRES: the GIL.
nb::object WrapQueueRunner(std::shared_ptr<train::QueueRunner> runner);

// The C++ objects behind Python objects of other binding files, for the
// native producers of bind_pipeline.cc. TypeError (nb::cast) for an object of
// another type. REQUIRES: the GIL is held.
std::shared_ptr<io::ReaderBase> ReaderOf(nb::handle reader);  // a _core.Reader (bind_io.cc)
ops::ExampleParser ExampleParserOf(nb::handle parser);       // a _core.ExampleParser (bind_ops.cc)

// Bindings of each layer (called from module.cc, in this order).
void BindCore(nb::module_& m);
void BindQueue(nb::module_& m);
void BindTrain(nb::module_& m);
void BindIo(nb::module_& m);   // bind_io.cc: records, readers, TFRecord files
void BindIoScan(nb::module_& m);  // bind_io_scan.cc: scan_records (called by BindIo)
void BindOps(nb::module_& m);  // bind_ops.cc: Example parsing, CSV, decode_*
void BindImageCodec(nb::module_& m);  // bind_image_codec.cc: decode/encode JPEG, PNG
void BindImageOps(nb::module_& m);    // bind_image_ops.cc: resize, crop, flip, colour
void BindCropOptions(nb::module_& m);  // bind_crop_options.cc: _core.RandomResizedCropOptions (by keyword)
void BindBatchOptions(nb::module_& m);  // bind_batch_options.cc: _core.BatchOptions (by keyword)
void BindPipeline(nb::module_& m);    // bind_pipeline.cc: tf.train producers, batchers, queue stats
void BindSparseBatch(nb::module_& m);  // bind_sparse_batch.cc: packing SparseTensors for the batchers
void BindData(nb::module_& m);         // bind_data.cc: tf.data datasets and iterators (_core.data)

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_BIND_COMMON_H_
