// Helpers for the input-pipeline tests (producers, batchers, the cascade): a
// harness that owns a private runner registry and a coordinator, counting
// producers, and element builders.
#ifndef SLUICE_SRC_TRAIN_INPUT_TEST_UTIL_H_
#define SLUICE_SRC_TRAIN_INPUT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/producer.h"
#include "sluice/train/queue_runner_registry.h"
#include "train_test_util.h"

namespace sluice::train::testing {

// A private registry (so tests do not see each other's runners) and a
// coordinator. Stop() ends the run as a training loop does: request a stop,
// then join every thread started.
class Harness {
 public:
  Harness() : coord_(std::make_shared<Coordinator>()) {}
  ~Harness() {
    if (!threads_.empty() && !coord_->joined()) Stop().IgnoreError();
  }

  QueueRunnerRegistry* registry() { return &registry_; }
  const std::shared_ptr<Coordinator>& coord() const { return coord_; }
  const std::vector<std::shared_ptr<Thread>>& threads() const { return threads_; }

  void Start() { threads_ = StartQueueRunners(coord_, /*start=*/true, &registry_); }

  // RequestStop, then Join (the threads are registered with the coordinator).
  [[nodiscard]] Status Stop() {
    coord_->RequestStop();
    return coord_->Join({}, kSafety);
  }

  // True when every thread started by Start() has finished.
  bool AllThreadsFinished() const {
    for (const auto& t : threads_) {
      if (!t->finished()) return false;
    }
    return true;
  }

 private:
  QueueRunnerRegistry registry_;
  std::shared_ptr<Coordinator> coord_;
  std::vector<std::shared_ptr<Thread>> threads_;
};

// Yields {int64 i} for i = 0 .. n-1 (shared across threads: each value once),
// then OutOfRange. `calls` counts every call, including the final ones.
struct CountingProducer {
  int64_t n;
  std::shared_ptr<std::atomic<int64_t>> next = std::make_shared<std::atomic<int64_t>>(0);
  std::shared_ptr<std::atomic<int64_t>> calls = std::make_shared<std::atomic<int64_t>>(0);

  Producer producer() const {
    return [n = n, next = next, calls = calls]() -> Result<Element> {
      calls->fetch_add(1);
      const int64_t i = next->fetch_add(1);
      if (i >= n) return errors::OutOfRange("counting producer done");
      return Int64Element(i);
    };
  }
};

inline std::vector<int64_t> Int64Values(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t x : t.flat<int64_t>()) v.push_back(x);
  return v;
}

// A fresh directory under the system's temp directory, removed with its
// contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sluice_train_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline PartialShape Scalar() { return PartialShape(TensorShape{}); }

}  // namespace sluice::train::testing

#endif  // SLUICE_SRC_TRAIN_INPUT_TEST_UTIL_H_
