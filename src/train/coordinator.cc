#include "sluice/train/coordinator.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include "sluice/core/mutex.h"
#include "train/deadline.h"

namespace sluice::train {

struct Coordinator::Impl {
  explicit Impl(std::vector<Code> codes) : clean_stop_codes(std::move(codes)) {}

  bool IsClean(const Status& status) const {
    return status.ok() || std::find(clean_stop_codes.begin(), clean_stop_codes.end(),
                                    status.code()) != clean_stop_codes.end();
  }

  bool AnyAliveLocked(const std::vector<std::shared_ptr<Thread>>& threads) SLUICE_REQUIRES(mu) {
    mu.AssertHeld();
    return std::any_of(threads.begin(), threads.end(),
                       [](const std::shared_ptr<Thread>& t) { return t->is_alive(); });
  }

  // Constant after construction.
  const std::vector<Code> clean_stop_codes;

  // Lock order: mu before any Thread's lock (Join asks threads is_alive()
  // under mu; a thread's exit callback takes mu holding no lock) and before a
  // CancellationManager's (WaitForStop asks IsCancelled() under mu; the
  // manager runs callbacks holding no lock).
  Mutex mu;
  // Signalled on a stop request, when a thread that Join waits for ends, and
  // when a WaitForStop is cancelled.
  CondVar cv;
  // Protected by mu:
  bool stop_requested SLUICE_GUARDED_BY(mu) = false;
  bool joined SLUICE_GUARDED_BY(mu) = false;
  Status error SLUICE_GUARDED_BY(mu);  // the first recorded error; OK if none
  std::vector<std::shared_ptr<Thread>> registered SLUICE_GUARDED_BY(mu);
};

Coordinator::Coordinator(std::vector<Code> clean_stop_codes)
    : impl_(std::make_shared<Impl>(std::move(clean_stop_codes))) {}

// Registered threads are dropped here, outside any lock; those still running
// go on as daemons.
Coordinator::~Coordinator() = default;

bool Coordinator::should_stop() const {
  MutexLock lock(&impl_->mu);
  return impl_->stop_requested;
}

void Coordinator::RequestStop() {
  MutexLock lock(&impl_->mu);
  impl_->stop_requested = true;
  impl_->cv.SignalAll();
}

Status Coordinator::RequestStop(const Status& status) {
  const bool clean = impl_->IsClean(status);
  MutexLock lock(&impl_->mu);
  if (impl_->joined && !clean) return status;  // nobody would see it recorded
  if (!impl_->stop_requested) {
    if (!clean && impl_->error.ok()) impl_->error = status;
    impl_->stop_requested = true;
    impl_->cv.SignalAll();
  }
  return Status::OK();
}

void Coordinator::ClearStop() {
  MutexLock lock(&impl_->mu);
  impl_->stop_requested = false;
  impl_->joined = false;
  impl_->error = Status::OK();
}

bool Coordinator::WaitForStop(std::optional<std::chrono::nanoseconds> timeout,
                              CancellationManager* cancellation) const {
  const Thread::Clock::time_point deadline =
      timeout ? internal::DeadlineAfter(*timeout) : Thread::Clock::time_point::max();
  // A cancellation wakes every waiter (taking mu, so that a waiter that saw
  // its manager not cancelled yet is already waiting); each one checks
  // whether its own manager is the one cancelled.
  CancellationManager::Token token = CancellationManager::kInvalidToken;
  if (cancellation != nullptr) {
    token = cancellation->NewToken();
    const bool registered = cancellation->RegisterCallback(token, [impl = impl_] {
      MutexLock lock(&impl->mu);
      impl->cv.SignalAll();
    });
    if (!registered) return should_stop();  // already cancelled
  }
  bool stopped;
  {
    MutexLock lock(&impl_->mu);
    while (!impl_->stop_requested) {
      if (cancellation != nullptr && cancellation->IsCancelled()) break;
      if (deadline == Thread::Clock::time_point::max()) {
        impl_->cv.Wait(&impl_->mu);
      } else if (!impl_->cv.WaitUntil(&impl_->mu, deadline)) {
        break;
      }
    }
    stopped = impl_->stop_requested;
  }
  if (cancellation != nullptr) cancellation->DeregisterCallback(token);
  return stopped;
}

void Coordinator::RegisterThread(std::shared_ptr<Thread> thread) {
  assert(thread != nullptr);
  MutexLock lock(&impl_->mu);
  auto& registered = impl_->registered;
  if (std::find(registered.begin(), registered.end(), thread) == registered.end()) {
    registered.push_back(std::move(thread));
  }
}

Status Coordinator::Join(std::vector<std::shared_ptr<Thread>> threads,
                         std::chrono::nanoseconds stop_grace_period, bool ignore_live_threads) {
  // Declared first, so that the handles are dropped after the lock is
  // released (a Thread's destructor may wait for its exit callback, which
  // takes mu).
  std::vector<std::shared_ptr<Thread>> all;
  std::vector<std::shared_ptr<Thread>> forgotten;
  {
    MutexLock lock(&impl_->mu);
    all = impl_->registered;
  }
  for (auto& t : threads) {
    if (t != nullptr && std::find(all.begin(), all.end(), t) == all.end()) {
      all.push_back(std::move(t));
    }
  }
  // A thread joining the coordinator does not wait for itself.
  std::erase_if(all, [](const std::shared_ptr<Thread>& t) { return t->is_current_thread(); });

  // 1. Until every thread has ended or a stop is requested. Each thread's end
  // wakes this wait; the callback may outlive the coordinator, hence weak.
  for (const auto& t : all) {
    t->AddExitCallback([weak = std::weak_ptr<Impl>(impl_)] {
      if (std::shared_ptr<Impl> impl = weak.lock()) {
        MutexLock lock(&impl->mu);
        impl->cv.SignalAll();
      }
    });
  }
  {
    MutexLock lock(&impl_->mu);
    while (!impl_->stop_requested && impl_->AnyAliveLocked(all)) impl_->cv.Wait(&impl_->mu);
  }

  // 2. The grace period, for threads still winding down.
  const Thread::Clock::time_point deadline = internal::DeadlineAfter(stop_grace_period);
  for (const auto& t : all) t->JoinUntil(deadline);
  std::string stragglers;
  for (const auto& t : all) {
    if (!t->is_alive()) continue;
    if (!stragglers.empty()) stragglers += ' ';
    stragglers += t->name();
  }

  // 3. The verdict.
  MutexLock lock(&impl_->mu);
  impl_->joined = true;
  forgotten.swap(impl_->registered);
  if (!impl_->error.ok()) return impl_->error;
  if (!stragglers.empty() && !ignore_live_threads) {
    return errors::DeadlineExceeded(kThreadsStillRunning, stragglers)
        .WithPayload(std::string(kStragglersPayload), stragglers);
  }
  return Status::OK();
}

bool Coordinator::joined() const {
  MutexLock lock(&impl_->mu);
  return impl_->joined;
}

Status Coordinator::requested_status() const {
  MutexLock lock(&impl_->mu);
  return impl_->error;
}

const std::vector<Code>& Coordinator::clean_stop_codes() const { return impl_->clean_stop_codes; }

Status Coordinator::StopOnError(const std::function<Status()>& fn) {
  const Status status = fn();
  if (status.ok()) return Status::OK();
  return RequestStop(status);
}

}  // namespace sluice::train
