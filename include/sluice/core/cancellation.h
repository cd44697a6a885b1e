// CancellationManager: lets one party cancel blocked operations of others,
// in TensorFlow's model (core/framework/cancellation.h).
//
// A blocking call registers a callback under a token; StartCancel() runs every
// registered callback once, outside the manager's lock, and refuses later
// registrations. A call that finds cancellation already started fails at once
// with Cancelled.
//
// Thread-safety: every method is thread-safe. Callbacks may take the caller's
// own locks, so never call DeregisterCallback while holding a lock that a
// callback takes: it waits for a callback that is running right now.
#ifndef SLUICE_CORE_CANCELLATION_H_
#define SLUICE_CORE_CANCELLATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "sluice/core/mutex.h"

namespace sluice {

class CancellationManager {
 public:
  using Token = int64_t;
  static constexpr Token kInvalidToken = -1;

  CancellationManager() = default;
  CancellationManager(const CancellationManager&) = delete;
  CancellationManager& operator=(const CancellationManager&) = delete;
  // REQUIRES: no callback registered any more.
  ~CancellationManager() = default;

  // A fresh token for RegisterCallback. Thread-safe.
  Token NewToken() SLUICE_EXCLUDES(mu_);
  // Registers `callback` under `token`. Returns false, registering nothing,
  // if cancellation has already started. Thread-safe; never blocks long.
  bool RegisterCallback(Token token, std::function<void()> callback) SLUICE_EXCLUDES(mu_);
  // Removes the callback. Returns false if cancellation has started; then
  // waits until that callback (if it is running) has returned, unless it is
  // this very thread that runs it. Thread-safe.
  bool DeregisterCallback(Token token) SLUICE_EXCLUDES(mu_);
  // Runs every registered callback once, on this thread, without holding the
  // manager's lock. Later calls do nothing. Thread-safe.
  void StartCancel() SLUICE_EXCLUDES(mu_);
  bool IsCancelled() const SLUICE_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  CondVar done_cv_;
  Token next_token_ SLUICE_GUARDED_BY(mu_) = 0;
  bool cancelling_ SLUICE_GUARDED_BY(mu_) = false;
  bool cancelled_ SLUICE_GUARDED_BY(mu_) = false;  // every callback has run
  std::thread::id cancelling_thread_ SLUICE_GUARDED_BY(mu_);
  std::map<Token, std::function<void()>> callbacks_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_CORE_CANCELLATION_H_
