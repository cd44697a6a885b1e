// Mutex, MutexLock and CondVar, annotated for clang's thread-safety analysis
// (the pattern of google/benchmark's src/mutex.h), so that every GUARDED_BY
// field is checked at compile time.
//
// On glibc the mutex is an adaptive pthread mutex: under contention it spins
// briefly before sleeping in the kernel. The locks in this library are held
// for a few dozen nanoseconds (a queue moving an element), so a short spin
// usually wins the lock without two system calls; std::mutex always sleeps.
//
// Thread-safety: Mutex and CondVar are thread-safe by definition; MutexLock is
// a scoped guard used by one thread.
#ifndef SLUICE_CORE_MUTEX_H_
#define SLUICE_CORE_MUTEX_H_

#include <pthread.h>

#include <cerrno>
#include <chrono>
#include <ctime>

#include "sluice/core/thread_annotations.h"

namespace sluice {

class SLUICE_CAPABILITY("mutex") Mutex {
 public:
  Mutex() {
#if defined(PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP)
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&mu_, &attr);
    pthread_mutexattr_destroy(&attr);
#else
    pthread_mutex_init(&mu_, nullptr);
#endif
  }
  ~Mutex() { pthread_mutex_destroy(&mu_); }
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() SLUICE_ACQUIRE() { pthread_mutex_lock(&mu_); }
  void Unlock() SLUICE_RELEASE() { pthread_mutex_unlock(&mu_); }
  bool TryLock() SLUICE_TRY_ACQUIRE(true) { return pthread_mutex_trylock(&mu_) == 0; }
  // Tells the analysis that the calling thread holds the lock. Only a
  // documentation aid: it does not check at run time.
  void AssertHeld() const SLUICE_ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  pthread_mutex_t mu_;
};

class SLUICE_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) SLUICE_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() SLUICE_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable used with a Mutex the caller holds. Deadlines are on
// std::chrono::steady_clock (CLOCK_MONOTONIC), immune to wall-clock changes.
class CondVar {
 public:
  CondVar() {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cv_, &attr);
    pthread_condattr_destroy(&attr);
  }
  ~CondVar() { pthread_cond_destroy(&cv_); }
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // REQUIRES: `mu` is held. Releases it while waiting; holds it on return.
  // May return spuriously: callers loop on their predicate.
  void Wait(Mutex* mu) SLUICE_REQUIRES(mu) { pthread_cond_wait(&cv_, &mu->mu_); }
  // As Wait, until `deadline`. Returns false if the deadline passed.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline) SLUICE_REQUIRES(mu) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
    if (ns <= 0) return false;
    timespec ts;
    ts.tv_sec = static_cast<time_t>(ns / 1000000000);
    ts.tv_nsec = static_cast<long>(ns % 1000000000);
    return pthread_cond_timedwait(&cv_, &mu->mu_, &ts) != ETIMEDOUT;
  }
  // As WaitUntil, `timeout` from now.
  template <class Rep, class Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout) SLUICE_REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() +
                             std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout));
  }
  void Signal() { pthread_cond_signal(&cv_); }
  void SignalAll() { pthread_cond_broadcast(&cv_); }

 private:
  pthread_cond_t cv_;
};

}  // namespace sluice

#endif  // SLUICE_CORE_MUTEX_H_
