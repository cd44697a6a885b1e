// Train-layer bindings: the C++ Coordinator and Thread that sluice.train
// builds on, and C++ QueueRunners (built-in producers whose threads run
// without the GIL).
//
// sluice.train.Coordinator wraps a _core.Coordinator: the stop flag and the
// first recorded error live in C++, so C++ runner threads stop with the Python
// coordinator and report their errors to it; the Python exception objects
// (with their tracebacks) stay in Python, tied to the C++ record by a payload.
// Statuses cross to Python as (code, message, payloads) tuples, which
// sluice.errors._from_status turns into exceptions.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bind_common.h"
#include "sluice/queue/queue.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/queue_runner.h"
#include "sluice/train/queue_runner_registry.h"
#include "sluice/train/thread.h"

namespace sluice::python {
namespace {

using train::Coordinator;
using train::QueueRunner;
using train::Thread;
using ThreadList = std::vector<std::shared_ptr<Thread>>;

std::chrono::nanoseconds Seconds(double secs) {
  secs = std::max(0.0, std::min(secs, 1e9));
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(secs));
}

// None for OK, else (code, message, {key: bytes}).
nb::object StatusTuple(const Status& s) {
  if (s.ok()) return nb::none();
  nb::dict payloads;
  for (const auto& [k, v] : s.payloads()) payloads[nb::str(k.data(), k.size())] = nb::bytes(v.data(), v.size());
  return nb::make_tuple(static_cast<int>(s.code()), s.message(), payloads);
}

std::vector<Code> ToCodes(const std::vector<int>& ints) {
  std::vector<Code> out;
  for (int c : ints) out.push_back(static_cast<Code>(c));
  return out;
}

std::vector<int> FromCodes(const std::vector<Code>& codes) {
  std::vector<int> out;
  for (Code c : codes) out.push_back(static_cast<int>(c));
  return out;
}

// ---- Handles (see QueueHandle in bind_common.h) --------------------------------

struct ThreadHandle {
  std::shared_ptr<Thread> thread;
};

struct CoordinatorHandle {
  std::shared_ptr<Coordinator> coord;
};

nb::list WrapThreads(const ThreadList& threads) {
  nb::list out;
  for (const auto& t : threads) out.append(nb::cast(ThreadHandle{t}));
  return out;
}

ThreadList UnwrapThreads(const std::vector<const ThreadHandle*>& handles) {
  ThreadList out;
  for (const ThreadHandle* h : handles) out.push_back(h->thread);
  return out;
}

std::shared_ptr<Coordinator> CoordOrNull(const CoordinatorHandle* h) { return h ? h->coord : nullptr; }

// ---- Thread -------------------------------------------------------------------

void JoinThread(ThreadHandle& h, std::optional<double> timeout) {
  Thread& t = *h.thread;
  WaitInterruptibly(timeout, [&](std::optional<std::chrono::nanoseconds> chunk) {
    if (!chunk) {
      t.Join();
      return true;
    }
    return t.JoinFor(*chunk);
  });
}

void StartThread(ThreadHandle& h) {
  if (!h.thread->Start()) {
    throw nb::builtin_exception(nb::exception_type::runtime_error, "threads can only be started once");
  }
}

std::string ThreadRepr(const ThreadHandle& h) {
  const Thread& t = *h.thread;
  return "<sluice._core.Thread(" + t.name() + ", " +
         (t.is_alive() ? "started" : t.finished() ? "stopped" : "initial") + ")>";
}

// ---- Coordinator ----------------------------------------------------------------

bool WaitForStop(const CoordinatorHandle& h, std::optional<double> timeout) {
  const Coordinator& c = *h.coord;
  if (timeout && *timeout <= 0) return c.should_stop();  // TF: a negative timeout just checks
  return WaitInterruptibly(timeout, [&](std::optional<std::chrono::nanoseconds> chunk) {
    return c.WaitForStop(chunk);
  });
}

nb::object RequestStopWith(CoordinatorHandle& h, int code, const std::string& message, const nb::dict& payloads) {
  Status s(static_cast<Code>(code), message);
  for (auto [k, v] : payloads) s = s.WithPayload(nb::cast<std::string>(k), nb::cast<std::string>(v));
  return StatusTuple(h.coord->RequestStop(s));
}

// Waits for nothing itself: sluice.train.Coordinator.join has already waited
// (interruptibly) for the threads or the stop. Marks the coordinator joined
// and returns its status.
nb::object JoinCoordinator(CoordinatorHandle& h, const std::vector<const ThreadHandle*>& threads, double grace,
                           bool ignore_live_threads) {
  ThreadList list = UnwrapThreads(threads);
  Status s;
  {
    GilRelease release;
    s = h.coord->Join(std::move(list), Seconds(grace), ignore_live_threads);
  }
  return StatusTuple(s);
}

// ---- C++ QueueRunner ---------------------------------------------------------------

// Owns a C++ runner for Python. Dropping the last reference to a runner stops
// and joins its threads, so do that without the GIL.
struct RunnerHandle {
  std::shared_ptr<QueueRunner> runner;

  explicit RunnerHandle(std::shared_ptr<QueueRunner> r) : runner(std::move(r)) {}
  RunnerHandle(const RunnerHandle&) = delete;
  RunnerHandle& operator=(const RunnerHandle&) = delete;
  ~RunnerHandle() {
    if (!runner) return;
    if (!Py_IsInitialized() || !PyGILState_Check()) {
      runner.reset();
      return;
    }
    GilRelease release;
    runner.reset();
  }
};

nb::list CreateRunnerThreads(RunnerHandle& h, const CoordinatorHandle* coord, bool start) {
  return WrapThreads(h.runner->CreateThreads(CoordOrNull(coord), start));  // never blocks
}

// A registry of runners (a sluice.train.Graph's). Clearing or dropping it
// may stop and join runners, which may wait for the GIL: done without it.
struct RegistryHandle {
  std::unique_ptr<train::QueueRunnerRegistry> registry = std::make_unique<train::QueueRunnerRegistry>();

  RegistryHandle() = default;
  RegistryHandle(const RegistryHandle&) = delete;
  RegistryHandle& operator=(const RegistryHandle&) = delete;
  ~RegistryHandle() {
    if (!Py_IsInitialized() || !PyGILState_Check()) {
      registry.reset();
      return;
    }
    GilRelease release;
    registry.reset();
  }
};

nb::list RunnersOf(const train::QueueRunnerRegistry& registry) {
  nb::list out;
  for (auto& r : registry.runners()) out.append(nb::cast(std::make_unique<RunnerHandle>(std::move(r))));
  return out;
}

// The registries made current by push_registry on this thread, innermost last.
thread_local std::vector<std::unique_ptr<train::ScopedQueueRunnerRegistry>> registry_scopes;

// The runners of the process-wide registry, in the order added (what
// sluice.train.get_queue_runners lists beside the Python ones). Each handle
// is new; handles of one runner compare equal.
nb::list RegisteredRunners() {
  nb::list out;
  for (auto& r : train::QueueRunnerRegistry::Default().runners()) {
    out.append(nb::cast(std::make_unique<RunnerHandle>(std::move(r))));
  }
  return out;
}

nb::list RunnerExceptions(const RunnerHandle& h) {
  nb::list out;
  for (const Status& s : h.runner->exceptions_raised()) out.append(StatusTuple(s));
  return out;
}

// A built-in producer: each step moves one element from `src` to `dst`
// without the GIL; src's OutOfRange (closed and drained) ends a thread, and
// the last thread to end closes dst.
std::unique_ptr<RunnerHandle> NewTransferRunner(const QueueHandle& src_handle, const QueueHandle& dst_handle,
                                                int num_threads, const std::vector<int>& queue_closed_codes) {
  std::shared_ptr<queue::Queue> src = src_handle.queue, dst = dst_handle.queue;
  train::QueueRunnerOptions o;
  o.queue = dst;
  for (int i = 0; i < num_threads; ++i) {
    o.enqueue_ops.push_back([src, dst]() -> Status {
      Result<Element> e = src->Dequeue();
      if (!e.ok()) return e.status();
      return dst->Enqueue(std::move(e).value());
    });
    // StrCat, not operator+: gcc 12 -O3 reports a false -Wrestrict for `"_" + std::to_string(i)`.
    o.enqueue_op_names.push_back(i ? StrCat("transfer_from_", src->name(), "_", i)
                                   : StrCat("transfer_from_", src->name()));
  }
  if (!queue_closed_codes.empty()) o.queue_closed_codes = ToCodes(queue_closed_codes);
  return std::make_unique<RunnerHandle>(ValueOrThrow(QueueRunner::Create(std::move(o))));
}

}  // namespace

nb::object WrapQueueRunner(std::shared_ptr<train::QueueRunner> runner) {
  return nb::cast(std::make_unique<RunnerHandle>(std::move(runner)));
}

void BindTrain(nb::module_& m) {
  nb::class_<ThreadHandle>(m, "Thread",
                           "A C++ thread (sluice::train::Thread): the handle of a C++ runner thread. "
                           "Joinable like threading.Thread; always a daemon.")
      .def_prop_ro("name", [](const ThreadHandle& h) { return h.thread->name(); })
      .def("is_alive", [](const ThreadHandle& h) { return h.thread->is_alive(); })
      .def_prop_ro("started", [](const ThreadHandle& h) { return h.thread->started(); })
      .def_prop_ro("finished", [](const ThreadHandle& h) { return h.thread->finished(); })
      .def("start", &StartThread)
      .def("join", &JoinThread, nb::arg("timeout") = nb::none(),
           "Waits until the thread ends or `timeout` seconds pass (GIL released).")
      .def_prop_rw(
          "daemon", [](const ThreadHandle&) { return true; }, [](ThreadHandle&, bool) {},
          "Always True: C++ threads never hold up the interpreter's exit.")
      .def("__eq__", [](const ThreadHandle& a, const ThreadHandle& b) { return a.thread == b.thread; })
      .def("__hash__", [](const ThreadHandle& h) { return std::hash<Thread*>()(h.thread.get()); })
      .def("__repr__", &ThreadRepr);

  nb::class_<CoordinatorHandle>(m, "Coordinator", "sluice::train::Coordinator; see sluice.train.Coordinator.")
      .def("should_stop", [](const CoordinatorHandle& h) { return h.coord->should_stop(); })
      .def("request_stop", [](CoordinatorHandle& h) { h.coord->RequestStop(); })
      .def("request_stop_with", &RequestStopWith, nb::arg("code"), nb::arg("message"),
           nb::arg("payloads") = nb::dict(),
           "RequestStop(Status). Returns None, or the status tuple if already joined.")
      .def("clear_stop", [](CoordinatorHandle& h) { h.coord->ClearStop(); })
      .def("wait_for_stop", &WaitForStop, nb::arg("timeout") = nb::none())
      .def(
          "register_thread", [](CoordinatorHandle& h, const ThreadHandle& t) { h.coord->RegisterThread(t.thread); },
          nb::arg("thread"))
      .def("join", &JoinCoordinator, nb::arg("threads"), nb::arg("stop_grace_period_secs"),
           nb::arg("ignore_live_threads"))
      .def_prop_ro("joined", [](const CoordinatorHandle& h) { return h.coord->joined(); })
      .def("requested_status", [](const CoordinatorHandle& h) { return StatusTuple(h.coord->requested_status()); })
      .def_prop_ro("clean_stop_codes",
                   [](const CoordinatorHandle& h) { return FromCodes(h.coord->clean_stop_codes()); });
  m.def(
      "new_coordinator",
      [](const std::vector<int>& clean_stop_codes) {
        return CoordinatorHandle{std::make_shared<Coordinator>(ToCodes(clean_stop_codes))};
      },
      nb::arg("clean_stop_codes"));
  m.attr("THREADS_STILL_RUNNING") = std::string(Coordinator::kThreadsStillRunning);
  m.attr("STRAGGLERS_PAYLOAD") = std::string(Coordinator::kStragglersPayload);

  nb::class_<RunnerHandle>(m, "QueueRunner", "A C++ sluice::train::QueueRunner (built-in producers).")
      .def("create_threads", &CreateRunnerThreads, nb::arg("coord").none() = nb::none(), nb::arg("start") = false)
      .def_prop_ro("exceptions_raised", &RunnerExceptions)
      .def_prop_ro("running", [](const RunnerHandle& h) { return h.runner->running(); })
      .def_prop_ro("has_run", [](const RunnerHandle& h) { return h.runner->has_run(); })
      .def_prop_ro("input_exhausted", [](const RunnerHandle& h) { return h.runner->input_exhausted(); })
      .def_prop_ro("name", [](const RunnerHandle& h) { return h.runner->name(); })
      .def_prop_ro("queue", [](const RunnerHandle& h) { return QueueHandle{h.runner->queue()}; })
      .def_prop_ro("enqueue_op_names", [](const RunnerHandle& h) { return h.runner->enqueue_op_names(); })
      .def_prop_ro("queue_closed_codes",
                   [](const RunnerHandle& h) { return FromCodes(h.runner->queue_closed_codes()); })
      .def("__eq__", [](const RunnerHandle& a, const RunnerHandle& b) { return a.runner == b.runner; })
      .def("__hash__", [](const RunnerHandle& h) { return std::hash<QueueRunner*>()(h.runner.get()); });
  m.def("new_transfer_runner", &NewTransferRunner, nb::arg("src"), nb::arg("dst"), nb::arg("num_threads") = 1,
        nb::arg("queue_closed_codes") = std::vector<int>());
  m.def(
      "add_queue_runner", [](const RunnerHandle& h) { train::AddQueueRunner(h.runner); },
      "Adds a C++ runner to the process-wide registry.");
  m.def(
      "start_queue_runners",
      [](const CoordinatorHandle* coord, bool start) {
        return WrapThreads(train::StartQueueRunners(CoordOrNull(coord), start));
      },
      nb::arg("coord").none() = nb::none(), nb::arg("start") = true,
      "CreateThreads on every C++ runner of the process-wide registry.");
  m.def(
      "clear_queue_runners",
      [] {
        GilRelease release;  // may stop and join runners
        train::QueueRunnerRegistry::Default().Clear();
      },
      "Forgets the C++ runners of the process-wide registry (stopping and joining them).");
  m.def("num_queue_runners", [] { return train::QueueRunnerRegistry::Default().runners().size(); });
  nb::class_<RegistryHandle>(m, "QueueRunnerRegistry",
                             "A train::QueueRunnerRegistry: the runners of one sluice.train.Graph.")
      .def(nb::init<>())
      .def("runners", [](const RegistryHandle& h) { return RunnersOf(*h.registry); },
           "The runners, in the order added (new handles; handles of one runner compare equal).")
      .def("add", [](RegistryHandle& h, const RunnerHandle& r) { h.registry->Add(r.runner); }, nb::arg("runner"))
      .def(
          "clear",
          [](RegistryHandle& h) {
            GilRelease release;  // may stop and join runners
            h.registry->Clear();
          },
          "Forgets the runners (stopping and joining those whose last reference this was).")
      .def(
          "start",
          [](RegistryHandle& h, const CoordinatorHandle* coord, bool start) {
            return WrapThreads(train::StartQueueRunners(CoordOrNull(coord), start, h.registry.get()));
          },
          nb::arg("coord").none() = nb::none(), nb::arg("start") = true,
          "StartQueueRunners on this registry (skips runners whose run ended).");
  m.def(
      "push_registry",
      [](RegistryHandle& h) {
        registry_scopes.push_back(std::make_unique<train::ScopedQueueRunnerRegistry>(h.registry.get()));
      },
      nb::arg("registry"),
      "Makes `registry` QueueRunnerRegistry::Current() on this thread until pop_registry.");
  m.def(
      "pop_registry",
      [] {
        if (!registry_scopes.empty()) registry_scopes.pop_back();
      },
      "Ends the innermost push_registry of this thread.");
  m.def("queue_runners", &RegisteredRunners, "The C++ runners of the process-wide registry, in the order added.");
}

}  // namespace sluice::python
