#include "sluice/train/queue_runner_registry.h"

#include <cassert>
#include <utility>

namespace sluice::train {

namespace {
thread_local QueueRunnerRegistry* current_registry = nullptr;
}  // namespace

QueueRunnerRegistry& QueueRunnerRegistry::Default() {
  static QueueRunnerRegistry* const registry = new QueueRunnerRegistry();  // never destroyed
  return *registry;
}

QueueRunnerRegistry& QueueRunnerRegistry::Current() {
  return current_registry != nullptr ? *current_registry : Default();
}

ScopedQueueRunnerRegistry::ScopedQueueRunnerRegistry(QueueRunnerRegistry* registry)
    : previous_(current_registry) {
  assert(registry != nullptr);
  current_registry = registry;
}

ScopedQueueRunnerRegistry::~ScopedQueueRunnerRegistry() { current_registry = previous_; }

void QueueRunnerRegistry::Add(std::shared_ptr<QueueRunner> runner) {
  assert(runner != nullptr);
  MutexLock lock(&mu_);
  runners_.push_back(std::move(runner));
}

std::vector<std::shared_ptr<QueueRunner>> QueueRunnerRegistry::runners() const {
  MutexLock lock(&mu_);
  return runners_;
}

void QueueRunnerRegistry::Clear() {
  std::vector<std::shared_ptr<QueueRunner>> dropped;
  MutexLock lock(&mu_);
  dropped.swap(runners_);
}

void AddQueueRunner(std::shared_ptr<QueueRunner> runner, QueueRunnerRegistry* registry) {
  (registry != nullptr ? registry : &QueueRunnerRegistry::Current())->Add(std::move(runner));
}

std::vector<std::shared_ptr<Thread>> StartQueueRunners(std::shared_ptr<Coordinator> coord,
                                                       bool start, QueueRunnerRegistry* registry) {
  QueueRunnerRegistry& r = registry != nullptr ? *registry : QueueRunnerRegistry::Current();
  std::vector<std::shared_ptr<Thread>> threads;
  for (const auto& runner : r.runners()) {
    if (runner->has_run() && !runner->running()) continue;  // its run ended: never restarted
    for (auto& t : runner->CreateThreads(coord, start)) threads.push_back(std::move(t));
  }
  return threads;
}

}  // namespace sluice::train
