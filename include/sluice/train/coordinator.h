// Coordinator: lets a set of threads stop together and report why
// (tf.train.Coordinator; docs/spec/tf-queues.md section 6).
//
// Any thread may request a stop, optionally with the error that made it stop;
// every thread polls should_stop() (or blocks in WaitForStop()) and winds
// down; one thread then calls Join() to wait for them and learn the first
// error. Errors are Statuses: an error whose code is one of the coordinator's
// clean-stop codes (default: OutOfRange, the end of the input) counts as a
// plain stop. Only the first error reported before or at the first stop
// request is kept; later ones are dropped, which is what keeps a shutdown
// quiet (the Cancelled errors that the stop itself causes are ignored).
//
// TensorFlow's names map as: should_stop -> should_stop(), request_stop ->
// RequestStop, clear_stop -> ClearStop, wait_for_stop -> WaitForStop,
// register_thread -> RegisterThread, join -> Join, joined -> joined(),
// raise_requested_exception -> requested_status(), stop_on_exception ->
// StopOnError. Where TF raises, these return the Status.
//
// Thread-safety: every method is thread-safe. Blocking calls (WaitForStop,
// Join) are woken at once by a stop request; Join also by the end of each
// thread it waits for. No user code runs under the coordinator's lock.
//
// Ownership: a Coordinator holds a reference to every thread registered with
// it until the next Join. Threads made by this layer (LooperThread,
// QueueRunner) take their coordinator as a std::shared_ptr and hold it while
// they run (not before they start, so a registered thread never started does
// not keep alive the coordinator that holds it), so a coordinator lives as
// long as the threads that poll it. It must not be destroyed while a call on
// it is blocked.
#ifndef SLUICE_TRAIN_COORDINATOR_H_
#define SLUICE_TRAIN_COORDINATOR_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "sluice/core/cancellation.h"
#include "sluice/core/status.h"
#include "sluice/train/thread.h"

namespace sluice::train {

class Coordinator {
 public:
  static constexpr std::chrono::seconds kDefaultStopGracePeriod{120};
  // The message fragment of Join's straggler error (TF raises RuntimeError
  // with it; the Python binding should too).
  static constexpr std::string_view kThreadsStillRunning =
      "Coordinator stopped with threads still running: ";
  // Payload key on Join's straggler error: the names, separated by spaces.
  static constexpr std::string_view kStragglersPayload = "sluice.train.stragglers";

  // `clean_stop_codes`: error codes that RequestStop treats as no error. TF's
  // default is OutOfRange; pass {} to keep every error.
  explicit Coordinator(std::vector<Code> clean_stop_codes = {Code::kOutOfRange});
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;
  ~Coordinator();

  // True once a stop has been requested (and not cleared). Never blocks.
  bool should_stop() const;

  // Requests a stop with no error. Wakes every WaitForStop and Join at once.
  // Never fails, never blocks.
  void RequestStop();
  // Requests a stop because of `status`. A clean-stop code or OK counts as
  // no error. Otherwise the error is recorded if it is the first one and no
  // stop was requested before; if a stop was already requested it is dropped.
  // Returns OK, except after Join() (until ClearStop()): then nobody would
  // see a recorded error, so a non-clean `status` is returned to the caller
  // (TF raises it in the caller) and nothing is recorded. Never blocks.
  Status RequestStop(const Status& status);

  // Forgets the stop request, the recorded error and the joined flag, so the
  // coordinator can be used again. Registered threads are kept.
  void ClearStop();

  // Blocks until a stop is requested (returns true), `timeout` passes
  // (false; nullopt: no timeout; zero or negative: just checks), or
  // `cancellation` (not owned; may be null) is cancelled (false). Woken at
  // once by RequestStop.
  bool WaitForStop(std::optional<std::chrono::nanoseconds> timeout = std::nullopt,
                   CancellationManager* cancellation = nullptr) const;

  // Adds `thread` to the set that the next Join waits for (once, however often
  // it is registered). REQUIRES: thread != nullptr.
  void RegisterThread(std::shared_ptr<Thread> thread);

  // Waits for the registered threads and `threads` (those registered later
  // are not waited for):
  //  1. until every one has finished, or a stop is requested (blocks for ever
  //     if neither happens); then
  //  2. up to `stop_grace_period` more for those still running.
  // Then marks the coordinator joined and forgets the registered threads.
  // Returns the recorded error if there is one (it takes precedence); else,
  // if threads are still running, DeadlineExceeded "Coordinator stopped with
  // threads still running: <names separated by spaces>" (payload
  // kStragglersPayload: the names), unless `ignore_live_threads`; else OK.
  // Threads still running are not stopped: they go on, as daemons would.
  [[nodiscard]] Status Join(std::vector<std::shared_ptr<Thread>> threads = {},
                            std::chrono::nanoseconds stop_grace_period = kDefaultStopGracePeriod,
                            bool ignore_live_threads = false);

  // True once Join has returned (until ClearStop()).
  bool joined() const;
  // The recorded error, or OK (TF's raise_requested_exception).
  Status requested_status() const;
  // Constant after construction.
  const std::vector<Code>& clean_stop_codes() const;

  // Runs `fn`; if it returns an error, requests a stop with it (TF's
  // stop_on_exception: the error is reported, not passed on). Returns what
  // RequestStop returns: OK, or the error itself if the coordinator has
  // already been joined.
  Status StopOnError(const std::function<Status()>& fn);

 private:
  struct Impl;
  // Shared with the exit callbacks that Join leaves on threads, which may
  // outlive this object.
  const std::shared_ptr<Impl> impl_;
};

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_COORDINATOR_H_
