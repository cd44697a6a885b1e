#include "python_exit.h"

#if defined(__GLIBCXX__)
#include <cxxabi.h>  // abi::__forced_unwind
#endif

#include <atomic>
#include <chrono>
#include <thread>

#include "bind_common.h"

namespace sluice::python {
namespace {

bool PythonFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// Set at interpreter exit (ShutdownPythonProducers): from then on Python
// calls from C++ threads fail with Cancelled instead of taking the GIL. A
// thread that takes the GIL while the interpreter finalizes is ended with
// pthread_exit, which cannot unwind through the C++ frames of a runner
// thread.
std::atomic<bool> g_python_exiting{false};
// Threads inside an InPythonScope.
std::atomic<int> g_threads_in_python{0};

// A thread still blocked inside Python (in a sluice call that released the
// GIL) parks when it comes back (GilRelease). REQUIRES: the GIL is held.
void ShutdownPythonProducers() {
  g_python_exiting.store(true);
  GilRelease release;
  for (int i = 0; i < 1000 && g_threads_in_python.load() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

bool PythonGone() { return g_python_exiting.load() || !Py_IsInitialized() || PythonFinalizing(); }

[[noreturn]] void ParkForever() {
  while (true) std::this_thread::sleep_for(std::chrono::hours(1));
}

InPythonScope::InPythonScope() { g_threads_in_python.fetch_add(1); }
InPythonScope::~InPythonScope() { g_threads_in_python.fetch_sub(1); }

PyObjectRef::~PyObjectRef() {
  if (PythonGone()) return;
#if defined(__GLIBCXX__)
  try {
#endif
    PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(obj_);
    PyGILState_Release(state);
#if defined(__GLIBCXX__)
  } catch (abi::__forced_unwind&) {  // ended by the finalizing interpreter
    ParkForever();
  }
#endif
}

void BindPythonExit(nb::module_& m) {
  m.def("_shutdown_python_producers", &ShutdownPythonProducers,
        "atexit hook (sluice/_input.py): Python producers stop taking the GIL.");
}

}  // namespace sluice::python
