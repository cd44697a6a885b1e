#include "sluice/train/thread.h"

#include <cassert>
#include <utility>
#include <vector>

#include "core/fork.h"
#include "sluice/core/mutex.h"
#include "sluice/core/thread_pool.h"
#include "train/deadline.h"

namespace sluice::train {

// What the handle and the running OS thread share.
struct Thread::State {
  Mutex mu;
  CondVar finished_cv;  // signalled when `finished` becomes true
  // Protected by mu:
  std::function<void()> body SLUICE_GUARDED_BY(mu);  // taken by the OS thread
  bool started SLUICE_GUARDED_BY(mu) = false;
  bool finished SLUICE_GUARDED_BY(mu) = false;
  // The fork generation Start() ran in: in a fork() child the OS thread does
  // not exist, so the thread counts as finished there.
  uint64_t generation SLUICE_GUARDED_BY(mu) = 0;
  std::thread thread SLUICE_GUARDED_BY(mu);

  // True if the OS thread ran or runs in this process and has not finished.
  bool AliveLocked() const SLUICE_REQUIRES(mu) {
    return started && !finished && generation == sluice::internal::ForkGeneration();
  }
  std::vector<std::function<void()>> exit_callbacks SLUICE_GUARDED_BY(mu);
};

std::shared_ptr<Thread> Thread::Create(std::string name, std::function<void()> body) {
  assert(body && "Thread needs a body");
  return std::shared_ptr<Thread>(new Thread(std::move(name), std::move(body)));
}

Thread::Thread(std::string name, std::function<void()> body)
    : name_(std::move(name)), state_(std::make_shared<State>()) {
  MutexLock lock(&state_->mu);
  state_->body = std::move(body);
}

Thread::~Thread() {
  std::thread thread;
  bool finished;
  bool forked;
  {
    MutexLock lock(&state_->mu);
    thread = std::move(state_->thread);
    finished = state_->finished;
    forked = state_->generation != sluice::internal::ForkGeneration();
  }
  if (!thread.joinable()) return;
  if (forked) {  // the parent's thread: neither joinable nor detachable here
    new std::thread(std::move(thread));  // NOLINT: leaked on purpose
    return;
  }
  if (finished && thread.get_id() != std::this_thread::get_id()) {
    thread.join();  // only its exit callbacks may still be running
  } else {
    thread.detach();  // a daemon now: it owns all it touches
  }
}

bool Thread::Start() {
  MutexLock lock(&state_->mu);
  if (state_->started) return false;
  // The new thread takes the body under `mu`, so it waits for this function
  // to finish recording it (and `thread` is set before the body runs).
  // The OS thread touches only `state`, which it co-owns.
  state_->thread = std::thread([state = state_, name = name_] {
    SetCurrentThreadName(name);
    std::function<void()> body;
    {
      MutexLock lock(&state->mu);
      body = std::move(state->body);
    }
    body();
    body = nullptr;  // release what the body captured before counting as finished
    std::vector<std::function<void()>> callbacks;
    {
      MutexLock lock(&state->mu);
      state->finished = true;
      callbacks.swap(state->exit_callbacks);
      state->finished_cv.SignalAll();
    }
    for (auto& callback : callbacks) callback();
  });
  state_->started = true;  // after the constructor, which may throw
  state_->generation = sluice::internal::ForkGeneration();
  return true;
}

void Thread::Join() {
  assert(!is_current_thread() && "a thread cannot join itself");
  MutexLock lock(&state_->mu);
  while (state_->AliveLocked()) state_->finished_cv.Wait(&state_->mu);
}

bool Thread::JoinUntil(Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) {
    Join();
    return true;
  }
  MutexLock lock(&state_->mu);
  while (state_->AliveLocked()) {
    if (!state_->finished_cv.WaitUntil(&state_->mu, deadline)) break;
  }
  return !state_->AliveLocked();
}

bool Thread::JoinFor(std::chrono::nanoseconds timeout) {
  return JoinUntil(internal::DeadlineAfter(timeout));
}

void Thread::AddExitCallback(std::function<void()> callback) {
  {
    MutexLock lock(&state_->mu);
    if (!state_->finished) {
      state_->exit_callbacks.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

bool Thread::is_alive() const {
  MutexLock lock(&state_->mu);
  return state_->AliveLocked();
}

bool Thread::started() const {
  MutexLock lock(&state_->mu);
  return state_->started;
}

bool Thread::finished() const {
  MutexLock lock(&state_->mu);
  return state_->finished;
}

bool Thread::is_current_thread() const {
  MutexLock lock(&state_->mu);
  return state_->thread.get_id() == std::this_thread::get_id();
}

}  // namespace sluice::train
