#include "sluice/train/looper_thread.h"

#include <utility>

namespace sluice::train {
namespace {

// The loop proper; an error ends it at once (stop_loop skipped).
Status RunLooper(Coordinator& coord, LooperThreadOptions& options) {
  if (options.start_loop) SLUICE_RETURN_IF_ERROR(options.start_loop());
  if (!options.timer_interval) {
    while (!coord.should_stop()) SLUICE_RETURN_IF_ERROR(options.run_loop());
  } else {
    const auto interval =
        std::chrono::duration_cast<Thread::Clock::duration>(*options.timer_interval);
    Thread::Clock::time_point next = Thread::Clock::now();
    while (!coord.WaitForStop(next - Thread::Clock::now())) {
      next += interval;
      SLUICE_RETURN_IF_ERROR(options.run_loop());
    }
  }
  if (options.stop_loop) SLUICE_RETURN_IF_ERROR(options.stop_loop());
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<Thread>> NewLooperThread(std::shared_ptr<Coordinator> coord,
                                                LooperThreadOptions options) {
  if (coord == nullptr) return errors::InvalidArgument("coord must be a Coordinator");
  if (!options.run_loop) return errors::InvalidArgument("LooperThread needs a run_loop (target)");
  if (options.timer_interval && *options.timer_interval < std::chrono::nanoseconds::zero()) {
    return errors::InvalidArgument("timer_interval must not be negative");
  }
  std::string name = options.name;
  // The thread holds the coordinator only while it runs, so that a
  // registered thread never started does not keep alive the coordinator
  // that holds it; one started after the coordinator is gone does nothing.
  auto thread = Thread::Create(std::move(name), [weak_coord = std::weak_ptr<Coordinator>(coord),
                                                 options = std::move(options)]() mutable {
    const std::shared_ptr<Coordinator> coord = weak_coord.lock();
    if (coord == nullptr) return;
    // After Join nobody would see the error; TF's thread would die raising it.
    coord->StopOnError([&] { return RunLooper(*coord, options); }).IgnoreError();
  });
  coord->RegisterThread(thread);
  return thread;
}

Result<std::shared_ptr<Thread>> StartLooperThread(
    std::shared_ptr<Coordinator> coord, std::optional<std::chrono::nanoseconds> timer_interval,
    std::function<Status()> target, std::string name) {
  LooperThreadOptions options;
  options.timer_interval = timer_interval;
  options.run_loop = std::move(target);
  options.name = std::move(name);
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<Thread> thread,
                          NewLooperThread(std::move(coord), std::move(options)));
  thread->Start();
  return thread;
}

}  // namespace sluice::train
