// Interpreter exit, for C++ threads that call into Python (the Python
// producers, filters and log sink of bind_pipeline.cc): an atexit hook stops
// new calls, and a thread that the finalizing interpreter ends while it
// takes the GIL parks instead of unwinding through C++ frames.
//
// Thread-safety: every function here may be called from any thread, with
// or without the GIL, except where a REQUIRES line says otherwise.
#ifndef SLUICE_PYTHON_SRC_PYTHON_EXIT_H_
#define SLUICE_PYTHON_SRC_PYTHON_EXIT_H_

#include <nanobind/nanobind.h>

namespace sluice::python {

// Whether Python calls must no longer be made: the atexit hook ran, or the
// interpreter is finalizing or gone.
bool PythonGone();

// Where a thread that the finalizing interpreter ends while it takes the GIL
// (CPython < 3.14 calls pthread_exit there) stops instead: its forced unwind
// must not run the C++ cleanups above it (PyGILState_Release without a
// thread state is a fatal error; a runner's frames would try to go on). The
// process is exiting anyway.
[[noreturn]] void ParkForever();

// Counts the calling thread as inside Python (waiting for the GIL or
// running Python) for its lifetime, so that the atexit hook waits for it.
class InPythonScope {
 public:
  InPythonScope();
  ~InPythonScope();
  InPythonScope(const InPythonScope&) = delete;
  InPythonScope& operator=(const InPythonScope&) = delete;
};

// A strong reference to a Python object that may be dropped on any thread,
// with or without the GIL: the destructor takes the GIL to release it (and
// leaks it once the interpreter is going away, when taking the GIL from a
// foreign thread is not allowed).
class PyObjectRef {
 public:
  // REQUIRES: the GIL is held.
  explicit PyObjectRef(nanobind::handle obj) : obj_(obj.inc_ref().ptr()) {}
  PyObjectRef(const PyObjectRef&) = delete;
  PyObjectRef& operator=(const PyObjectRef&) = delete;
  ~PyObjectRef();
  // REQUIRES: the GIL is held.
  nanobind::handle get() const { return obj_; }

 private:
  PyObject* obj_;
};

// Binds _core._shutdown_python_producers, the atexit hook (registered by
// sluice/_input.py): refuses new Python calls, then waits (without the GIL,
// at most about a second) for the threads inside one to leave it.
void BindPythonExit(nanobind::module_& m);

}  // namespace sluice::python

#endif  // SLUICE_PYTHON_SRC_PYTHON_EXIT_H_
