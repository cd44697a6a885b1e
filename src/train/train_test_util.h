// Helpers for the train tests: exact status assertions, a one-shot
// Notification to order threads without sleeps, and int64 queue elements.
//
// Every wait that should end carries a safety bound (kSafety), so a broken
// coordinator fails a test instead of hanging the binary; the happy path never
// gets near it.
#ifndef SLUICE_SRC_TRAIN_TRAIN_TEST_UTIL_H_
#define SLUICE_SRC_TRAIN_TRAIN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"

namespace sluice::train::testing {

using namespace std::chrono_literals;  // NOLINT: test helpers

inline constexpr std::chrono::seconds kSafety{30};

// `s` has exactly `code` and its message contains `fragment`.
inline ::testing::AssertionResult StatusIs(const Status& s, Code code,
                                           std::string_view fragment = {}) {
  if (s.code() == code && s.message().find(fragment) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected " << CodeName(code) << " containing \"" << fragment << "\", got " << s;
}
inline ::testing::AssertionResult IsOk(const Status& s) { return StatusIs(s, Code::kOk); }

// A one-shot event: Notify() once, then every waiter returns.
class Notification {
 public:
  void Notify() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    notified_ = true;
    cv_.SignalAll();
  }
  bool HasBeenNotified() const SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return notified_;
  }
  // Returns false only if kSafety passed (a failure).
  bool Wait() const SLUICE_EXCLUDES(mu_) {
    const auto deadline = std::chrono::steady_clock::now() + kSafety;
    MutexLock lock(&mu_);
    while (!notified_) {
      if (!cv_.WaitUntil(&mu_, deadline)) return notified_;
    }
    return true;
  }

 private:
  mutable Mutex mu_;
  mutable CondVar cv_;
  bool notified_ SLUICE_GUARDED_BY(mu_) = false;
};

// A counter whose value can be waited for.
class Counter {
 public:
  int Increment() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++value_;
    cv_.SignalAll();
    return value_;
  }
  int value() const SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return value_;
  }
  // Waits until value() >= n; false only if kSafety passed (a failure).
  bool WaitForAtLeast(int n) const SLUICE_EXCLUDES(mu_) {
    const auto deadline = std::chrono::steady_clock::now() + kSafety;
    MutexLock lock(&mu_);
    while (value_ < n) {
      if (!cv_.WaitUntil(&mu_, deadline)) return value_ >= n;
    }
    return true;
  }

 private:
  mutable Mutex mu_;
  mutable CondVar cv_;
  int value_ SLUICE_GUARDED_BY(mu_) = 0;
};

inline Element Int64Element(int64_t v) { return Element{Tensor::Scalar<int64_t>(v)}; }
inline int64_t Int64Of(const Element& e) { return e[0].scalar<int64_t>(); }

// An unbounded (capacity < 0) or bounded FIFOQueue of int64 scalars.
inline std::shared_ptr<queue::Queue> NewInt64Queue(int32_t capacity,
                                                   std::string name = "fifo_queue") {
  queue::QueueOptions options;
  options.capacity = capacity;
  options.dtypes = {DType::kInt64};
  options.shapes = {PartialShape(std::vector<int64_t>{})};
  options.name = std::move(name);
  Result<std::shared_ptr<queue::Queue>> q = queue::NewFIFOQueue(std::move(options));
  EXPECT_TRUE(q.ok()) << q.status();
  return q.ok() ? *q : nullptr;
}

}  // namespace sluice::train::testing

#endif  // SLUICE_SRC_TRAIN_TRAIN_TEST_UTIL_H_
