// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable
// wrapped with clang thread-safety annotations, so that every GUARDED_BY field
// is checked at compile time (the pattern of google/benchmark's src/mutex.h).
//
// Thread-safety: Mutex and CondVar are thread-safe by definition; MutexLock is
// a scoped guard used by one thread.
#ifndef SLUICE_CORE_MUTEX_H_
#define SLUICE_CORE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "sluice/core/thread_annotations.h"

namespace sluice {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis that the calling thread holds the lock. Only a
  // documentation aid: it does not check at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable bound to a Mutex the caller holds.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // REQUIRES: `mu` is held. Releases it while waiting; holds it on return.
  // May return spuriously: callers loop on their predicate.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->native(), std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, until `deadline`. Returns false if the deadline passed.
  template <class Clock, class Duration>
  bool WaitUntil(Mutex* mu, const std::chrono::time_point<Clock, Duration>& deadline)
      REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->native(), std::adopt_lock);
    const bool ok = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return ok;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace sluice

#endif  // SLUICE_CORE_MUTEX_H_
