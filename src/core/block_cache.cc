#include "core/block_cache.h"

#include <cstdlib>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

#include "sluice/core/mutex.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLUICE_BLOCK_CACHE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLUICE_BLOCK_CACHE_ASAN 1
#endif
#endif

namespace sluice::internal {
namespace {

size_t BudgetFromEnvironment() {
#if defined(SLUICE_BLOCK_CACHE_ASAN)
  return 0;
#else
  constexpr size_t kDefaultMb = 256;
  const char* v = std::getenv("SLUICE_BLOCK_CACHE_MB");
  if (v == nullptr || *v == '\0') return kDefaultMb << 20;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0') return kDefaultMb << 20;  // not a number: the default
  return static_cast<size_t>(mb) << 20;
#endif
}

}  // namespace

struct BlockCache::State {
  Mutex mu;
  // Size class -> free blocks, the most recently freed last (reused first:
  // its pages are the likeliest to be in cache).
  std::unordered_map<size_t, std::vector<void*>> free GUARDED_BY(mu);
  size_t cached GUARDED_BY(mu) = 0;
  size_t budget GUARDED_BY(mu) = 0;

  // Moves blocks out until `cached <= limit`; returns them for freeing
  // outside the lock.
  std::vector<void*> EvictLocked(size_t limit) REQUIRES(mu) {
    std::vector<void*> out;
    for (auto it = free.begin(); it != free.end() && cached > limit;) {
      while (!it->second.empty() && cached > limit) {
        out.push_back(it->second.front());  // the oldest of the class
        it->second.erase(it->second.begin());
        cached -= it->first;
      }
      it = it->second.empty() ? free.erase(it) : std::next(it);
    }
    return out;
  }
};

BlockCache& BlockCache::Get() {
  static BlockCache* cache = new BlockCache();  // never destroyed (see state_)
  return *cache;
}

BlockCache::BlockCache() : state_(new State) {
  MutexLock lock(&state_->mu);
  state_->budget = BudgetFromEnvironment();
}

size_t BlockCache::ClassSize(size_t bytes) {
  if (bytes < kMinBytes) return bytes;
  return (bytes + kGranule - 1) / kGranule * kGranule;
}

void* BlockCache::Allocate(size_t bytes) {
  const size_t size = ClassSize(bytes);
  if (size >= kMinBytes) {
    MutexLock lock(&state_->mu);
    auto it = state_->free.find(size);
    if (it != state_->free.end() && !it->second.empty()) {
      void* block = it->second.back();
      it->second.pop_back();
      state_->cached -= size;
      return block;
    }
  }
  return std::malloc(size);
}

void BlockCache::Free(void* block, size_t bytes) {
  const size_t size = ClassSize(bytes);
  if (size >= kMinBytes) {
    MutexLock lock(&state_->mu);
    if (state_->cached + size <= state_->budget) {
      state_->free[size].push_back(block);
      state_->cached += size;
      return;
    }
  }
  std::free(block);
}

size_t BlockCache::cached_bytes() const {
  MutexLock lock(&state_->mu);
  return state_->cached;
}

size_t BlockCache::budget_bytes() const {
  MutexLock lock(&state_->mu);
  return state_->budget;
}

void BlockCache::Trim() {
  std::vector<void*> out;
  {
    MutexLock lock(&state_->mu);
    out = state_->EvictLocked(0);
  }
  for (void* b : out) std::free(b);
}

void BlockCache::SetBudgetForTesting(size_t bytes) {
  std::vector<void*> out;
  {
    MutexLock lock(&state_->mu);
    state_->budget = bytes;
    out = state_->EvictLocked(bytes);
  }
  for (void* b : out) std::free(b);
}

}  // namespace sluice::internal
