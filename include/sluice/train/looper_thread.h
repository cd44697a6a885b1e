// LooperThread: a thread that runs a function over and over until its
// Coordinator stops (tf.train.LooperThread; docs/spec/tf-queues.md
// section 7). Used for periodic work beside a training loop: summaries,
// checkpoints, monitoring.
//
// The thread runs, under the coordinator's StopOnError:
//   start_loop();
//   no timer_interval: while (!coord->should_stop()) run_loop();
//   timer_interval i:  run_loop() at t0, t0+i, t0+2i, ... (the first call at
//                      once; after an overrun the missed calls run back to
//                      back), returning as soon as a stop is requested;
//   stop_loop();
// The first error from any of them requests a stop with that error (so the
// coordinator's Join returns it) and ends the thread; stop_loop is then
// skipped.
//
// Ownership: the thread owns the functions, and holds the coordinator while
// it runs (started after the coordinator is gone, it does nothing). It is
// registered with the coordinator when created, so coord->Join() waits for
// it. Thread-safety: the functions run on the new
// thread only, one at a time; the factories are thread-safe.
#ifndef SLUICE_TRAIN_LOOPER_THREAD_H_
#define SLUICE_TRAIN_LOOPER_THREAD_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sluice/core/status.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/thread.h"

namespace sluice::train {

struct LooperThreadOptions {
  // nullopt: call run_loop back to back. Otherwise the period; must not be
  // negative.
  std::optional<std::chrono::nanoseconds> timer_interval;
  // The loop body (TF's target). Required.
  std::function<Status()> run_loop;
  // Run once before the first and after the last run_loop. Optional.
  std::function<Status()> start_loop;
  std::function<Status()> stop_loop;
  // The thread's name, for Join's straggler message.
  std::string name = "LooperThread";
};

// A registered, not yet started looper thread (TF's LooperThread(...)).
// InvalidArgument if `coord` is null, run_loop is empty or timer_interval is
// negative.
Result<std::shared_ptr<Thread>> NewLooperThread(std::shared_ptr<Coordinator> coord,
                                                LooperThreadOptions options);

// Creates, starts and returns a looper thread running `target` (TF's
// LooperThread.loop). Errors as NewLooperThread.
Result<std::shared_ptr<Thread>> StartLooperThread(
    std::shared_ptr<Coordinator> coord, std::optional<std::chrono::nanoseconds> timer_interval,
    std::function<Status()> target, std::string name = "LooperThread");

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_LOOPER_THREAD_H_
