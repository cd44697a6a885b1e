#include "core/block_cache.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <new>
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

// Whether mid-size blocks are cached (the cache's budget is not 0).
std::atomic<bool> g_mid_enabled{false};

// One thread's free mid-size blocks: an intrusive stack per size class (the
// first word of a free block points to the next).
class MidCache {
 public:
  static constexpr size_t kClasses = BlockCache::kMidMaxBytes / BlockCache::kMidGranule;

  ~MidCache() {
    Clear();
    destroyed_ = true;
  }

  // nullptr when the class is empty.
  void* Take(size_t size) {
    const size_t c = Class(size);
    Node* n = head_[c];
    if (n == nullptr) return nullptr;
    head_[c] = n->next;
    class_bytes_[c] -= size;
    bytes_ -= size;
    return n;
  }
  // false when full (the caller frees the block).
  bool Keep(void* block, size_t size) {
    const size_t c = Class(size);
    if (class_bytes_[c] + size > BlockCache::kMidClassBytes || bytes_ + size > BlockCache::kMidThreadBytes) {
      return false;
    }
    head_[c] = new (block) Node{head_[c]};
    class_bytes_[c] += size;
    bytes_ += size;
    return true;
  }
  void Clear() {
    for (size_t c = 0; c < kClasses; ++c) {
      while (Node* n = head_[c]) {
        head_[c] = n->next;
        std::free(n);
      }
      class_bytes_[c] = 0;
    }
    bytes_ = 0;
  }
  size_t bytes() const { return bytes_; }

  // Set once the thread's cache is gone (thread exit): blocks freed after
  // that (by other thread-locals' destructors) go straight to free().
  static thread_local bool destroyed_;

 private:
  struct Node {
    Node* next;
  };
  static size_t Class(size_t size) { return size / BlockCache::kMidGranule - 1; }

  Node* head_[kClasses] = {};
  size_t class_bytes_[kClasses] = {};
  size_t bytes_ = 0;
};

thread_local bool MidCache::destroyed_ = false;

MidCache* ThisThreadsMidCache() {
  if (MidCache::destroyed_) return nullptr;
  thread_local MidCache cache;
  return &cache;
}

bool IsMid(size_t size) { return size > BlockCache::kMidMinBytes && size <= BlockCache::kMidMaxBytes; }

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
  g_mid_enabled.store(state_->budget > 0, std::memory_order_relaxed);
}

size_t BlockCache::ClassSize(size_t bytes) {
  if (bytes > kMidMinBytes && bytes <= kMidMaxBytes) return (bytes + kMidGranule - 1) / kMidGranule * kMidGranule;
  if (bytes < kMinBytes) return bytes;
  return (bytes + kGranule - 1) / kGranule * kGranule;
}

void* BlockCache::Allocate(size_t bytes) {
  const size_t size = ClassSize(bytes);
  if (IsMid(size)) {
    if (g_mid_enabled.load(std::memory_order_relaxed)) {
      if (MidCache* mid = ThisThreadsMidCache()) {
        if (void* block = mid->Take(size)) return block;
      }
    }
    return std::malloc(size);
  }
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
  if (IsMid(size)) {
    if (g_mid_enabled.load(std::memory_order_relaxed)) {
      MidCache* mid = ThisThreadsMidCache();
      if (mid != nullptr && mid->Keep(block, size)) return;
    }
    std::free(block);
    return;
  }
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

size_t BlockCache::thread_cached_bytes() {
  MidCache* mid = ThisThreadsMidCache();
  return mid == nullptr ? 0 : mid->bytes();
}

void BlockCache::Trim() {
  if (MidCache* mid = ThisThreadsMidCache()) mid->Clear();
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
    g_mid_enabled.store(bytes > 0, std::memory_order_relaxed);
    out = state_->EvictLocked(bytes);
  }
  for (void* b : out) std::free(b);
}

}  // namespace sluice::internal
