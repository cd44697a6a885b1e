// Deadlines from timeouts, saturating instead of overflowing: a timeout of
// nanoseconds::max() (or any span past the clock's range) means "never".
#ifndef SLUICE_SRC_TRAIN_DEADLINE_H_
#define SLUICE_SRC_TRAIN_DEADLINE_H_

#include <chrono>

namespace sluice::train::internal {

inline std::chrono::steady_clock::time_point DeadlineAfter(std::chrono::nanoseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  if (timeout <= std::chrono::nanoseconds::zero()) return now;
  if (timeout >= Clock::time_point::max() - now) return Clock::time_point::max();
  return now + std::chrono::duration_cast<Clock::duration>(timeout);
}

}  // namespace sluice::train::internal

#endif  // SLUICE_SRC_TRAIN_DEADLINE_H_
