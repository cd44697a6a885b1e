#include "core/fork.h"

#include <pthread.h>

#include <atomic>

namespace sluice::internal {
namespace {

std::atomic<uint64_t> generation{0};

void ChildAfterFork() { generation.fetch_add(1, std::memory_order_relaxed); }

// Registered when the library loads, before any thread it starts can fork.
const bool registered = [] { return pthread_atfork(nullptr, nullptr, &ChildAfterFork) == 0; }();

}  // namespace

uint64_t ForkGeneration() {
  (void)registered;
  return generation.load(std::memory_order_relaxed);
}

}  // namespace sluice::internal
