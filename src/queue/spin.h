// Spin-wait helpers shared by the queue layer's lock-free paths (private).
// Thread-safety: plain functions; SpinUntil calls `ready` on the caller's
// thread only.
#ifndef SLUICE_QUEUE_SPIN_H_
#define SLUICE_QUEUE_SPIN_H_

#include <thread>

namespace sluice::queue {

// Tells the CPU that this thread is spinning (x86 `pause`, arm `yield`).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Waits for another thread's step that never blocks (a claimed ring row
// being written, say): spins a little, then yields, since that thread may
// have been preempted.
template <class Ready>
void SpinUntil(Ready ready) {
  for (int i = 0; !ready(); ++i) {
    if (i < 128) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_SPIN_H_
