// The waits of a consumer thread inside GetNext (a parallel map's or a
// prefetch's), bounded by the thread's interrupt check: the Python binding
// sets one on the main thread (train::ScopedProducerWait, as for the TF1
// producers), so Ctrl-C ends a blocked next() at once. The wait is abandoned
// before anything is taken, so the element stays for the next GetNext.
#ifndef SLUICE_SRC_DATA_INTERRUPTIBLE_WAIT_H_
#define SLUICE_SRC_DATA_INTERRUPTIBLE_WAIT_H_

#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/train/producer.h"

namespace sluice::data {

// cv->Wait(mu), but where this thread has an interrupt check
// (train::CurrentProducerWait().interrupt_check), wakes every
// interrupt_check_interval and runs it with mu released; its non-OK status
// (the caller returns it) ends the wait. OK: woken or timed out (the caller
// re-checks its condition, as after any wait). REQUIRES: mu is held.
inline Status InterruptibleWait(CondVar* cv, Mutex* mu) SLUICE_REQUIRES(mu) {
  const queue::WaitOptions& wait = train::CurrentProducerWait();
  if (!wait.interrupt_check) {
    cv->Wait(mu);
    return Status();
  }
  if (cv->WaitFor(mu, wait.interrupt_check_interval)) return Status();
  mu->Unlock();  // the check takes the GIL: never under a lock of ours
  Status s = wait.interrupt_check();
  mu->Lock();
  return s;
}

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_INTERRUPTIBLE_WAIT_H_
