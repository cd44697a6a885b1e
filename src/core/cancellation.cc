#include "sluice/core/cancellation.h"

#include <utility>

namespace sluice {

CancellationManager::Token CancellationManager::NewToken() {
  MutexLock lock(&mu_);
  return next_token_++;
}

bool CancellationManager::RegisterCallback(Token token, std::function<void()> callback) {
  MutexLock lock(&mu_);
  if (cancelling_) return false;
  callbacks_.emplace(token, std::move(callback));
  return true;
}

bool CancellationManager::DeregisterCallback(Token token) {
  MutexLock lock(&mu_);
  if (!cancelling_) {
    callbacks_.erase(token);
    return true;
  }
  // Cancellation is running the callbacks: wait until it is done, so that the
  // caller may free what its callback uses. The cancelling thread itself must
  // not wait for itself.
  if (cancelling_thread_ != std::this_thread::get_id()) {
    while (!cancelled_) done_cv_.Wait(&mu_);
  }
  return false;
}

void CancellationManager::StartCancel() {
  std::map<Token, std::function<void()>> callbacks;
  {
    MutexLock lock(&mu_);
    if (cancelling_) return;
    cancelling_ = true;
    cancelling_thread_ = std::this_thread::get_id();
    callbacks.swap(callbacks_);
  }
  for (auto& [token, callback] : callbacks) callback();
  MutexLock lock(&mu_);
  cancelled_ = true;
  done_cv_.SignalAll();
}

bool CancellationManager::IsCancelled() const {
  MutexLock lock(&mu_);
  return cancelling_;
}

}  // namespace sluice
