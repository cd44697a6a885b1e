#include "sluice/core/thread_pool.h"

#include <cassert>
#include <utility>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace sluice {

void SetCurrentThreadName(const std::string& name) {
#if defined(__linux__)
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
#else
  (void)name;
#endif
}

ThreadPool::ThreadPool(std::string name, int num_threads) {
  assert(num_threads >= 1);
  threads_.reserve(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) {
    threads_.emplace_back([this, name] {
      SetCurrentThreadName(name);
      WorkerLoop();
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::Schedule(std::function<void()> fn) {
  MutexLock lock(&mu_);
  work_.push_back(std::move(fn));
  cv_.Signal();
}

void ThreadPool::WorkerLoop() {
  while (true) {
    std::function<void()> fn;
    {
      MutexLock lock(&mu_);
      while (work_.empty() && !stopping_) cv_.Wait(&mu_);
      if (work_.empty()) return;  // stopping, and everything scheduled has run
      fn = std::move(work_.front());
      work_.pop_front();
    }
    fn();
  }
}

}  // namespace sluice
