// ThreadPool: a fixed set of worker threads running scheduled closures in
// FIFO order.
//
// Thread-safety: Schedule() may be called from any thread, including from a
// closure running on the pool. The destructor runs every closure already
// scheduled, then joins the workers; it must not be called from a worker.
#ifndef SLUICE_CORE_THREAD_POOL_H_
#define SLUICE_CORE_THREAD_POOL_H_

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "sluice/core/mutex.h"

namespace sluice {

class ThreadPool {
 public:
  // REQUIRES: num_threads >= 1. `name` labels the threads (Linux: visible in
  // top -H, truncated to 15 characters).
  ThreadPool(std::string name, int num_threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() SLUICE_EXCLUDES(mu_);

  // Runs `fn` on a worker thread. Never blocks. Thread-safe.
  void Schedule(std::function<void()> fn) SLUICE_EXCLUDES(mu_);
  int num_threads() const { return static_cast<int>(threads_.size()); }

 private:
  void WorkerLoop() SLUICE_EXCLUDES(mu_);

  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> work_ SLUICE_GUARDED_BY(mu_);
  bool stopping_ SLUICE_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // constant after construction
};

// Sets the calling thread's name (best effort; Linux only).
void SetCurrentThreadName(const std::string& name);

}  // namespace sluice

#endif  // SLUICE_CORE_THREAD_POOL_H_
