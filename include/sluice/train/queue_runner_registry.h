// The queue runners of a program, started together (TF's QUEUE_RUNNERS graph
// collection, tf.train.add_queue_runner and tf.train.start_queue_runners).
//
// The input builders (producers, batchers) add the runners they create to a
// registry; the training program then starts them all with one call. A
// registry is a thread-safe list; Default() is the process-wide one, which
// the functions below use unless given another. Tests call Clear().
//
// Ownership: a registry holds its runners (std::shared_ptr) until Clear() or
// its destruction; dropping the last reference to a runner stops and joins
// its threads (see QueueRunner). The default registry is never destroyed, so
// its runners' threads live until the process exits, like TF's daemon
// threads.
#ifndef SLUICE_TRAIN_QUEUE_RUNNER_REGISTRY_H_
#define SLUICE_TRAIN_QUEUE_RUNNER_REGISTRY_H_

#include <memory>
#include <vector>

#include "sluice/core/mutex.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/queue_runner.h"
#include "sluice/train/thread.h"

namespace sluice::train {

class QueueRunnerRegistry {
 public:
  QueueRunnerRegistry() = default;
  QueueRunnerRegistry(const QueueRunnerRegistry&) = delete;
  QueueRunnerRegistry& operator=(const QueueRunnerRegistry&) = delete;
  // Drops the runners; see QueueRunner's destructor.
  ~QueueRunnerRegistry() = default;

  // The process-wide registry (TF's QUEUE_RUNNERS collection). Never
  // destroyed. Thread-safe.
  static QueueRunnerRegistry& Default();
  // The innermost registry made current on this thread by a live
  // ScopedQueueRunnerRegistry, else Default().
  static QueueRunnerRegistry& Current();

  // Appends `runner` (a runner added twice is started once: its second
  // CreateThreads returns nothing). REQUIRES: runner != nullptr. Thread-safe.
  void Add(std::shared_ptr<QueueRunner> runner) SLUICE_EXCLUDES(mu_);
  // A snapshot, in the order added. Thread-safe.
  std::vector<std::shared_ptr<QueueRunner>> runners() const SLUICE_EXCLUDES(mu_);
  // Forgets every runner (dropped outside the lock; a runner whose last
  // reference this was is stopped and joined, which may block). Thread-safe.
  void Clear() SLUICE_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::vector<std::shared_ptr<QueueRunner>> runners_ SLUICE_GUARDED_BY(mu_);
};

// Makes `registry` QueueRunnerRegistry::Current() on the constructing thread
// for its lifetime (nested scopes stack). Not thread-safe: create and destroy
// it on the same thread, innermost first. REQUIRES: registry outlives it.
class ScopedQueueRunnerRegistry {
 public:
  explicit ScopedQueueRunnerRegistry(QueueRunnerRegistry* registry);
  ~ScopedQueueRunnerRegistry();
  ScopedQueueRunnerRegistry(const ScopedQueueRunnerRegistry&) = delete;
  ScopedQueueRunnerRegistry& operator=(const ScopedQueueRunnerRegistry&) = delete;

 private:
  QueueRunnerRegistry* const previous_;
};

// Adds `runner` to `registry` (null: Current()).
void AddQueueRunner(std::shared_ptr<QueueRunner> runner, QueueRunnerRegistry* registry = nullptr);

// Calls CreateThreads(coord, start) on every runner of `registry` (null:
// Current()), in order, and returns all the threads made. A runner whose
// threads already ran and ended is skipped (see the file comment); one still
// running adds none. Note the default `start = true`, as in TF
// (CreateThreads defaults to false). Never blocks.
std::vector<std::shared_ptr<Thread>> StartQueueRunners(std::shared_ptr<Coordinator> coord = nullptr,
                                                       bool start = true,
                                                       QueueRunnerRegistry* registry = nullptr);

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_QUEUE_RUNNER_REGISTRY_H_
