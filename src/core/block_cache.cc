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

// Mid-size blocks go home: each is malloc'd with a kPrefix-byte prefix that
// names the MidHome of the thread that allocated it (or none), so that a
// block freed on another thread (a queue's consumer dropping what a producer
// made) goes back to its allocating thread, which allocates the next one,
// rather than piling up on the freeing thread while the allocating one
// mallocs anew (glibc: from an arena, under its lock, on every element).
//
// Written by hand: glibc has no such path for these sizes, and a
// replacement malloc (tcmalloc, mimalloc) would change the whole process.
//
// A MidHome outlives its thread while blocks that name it are out of
// malloc: `refs` counts the thread (1) and every such block; whoever drops
// the last deletes it. `remote` is a Treiber stack of blocks freed by other
// threads (pushed with a CAS, taken all at once by the owner with an
// exchange: no ABA); kClosed once the owner thread has ended, after which
// frees go straight to free().
struct MidHome;

struct MidNode {
  MidNode* next;
};

// The prefix before every mid-size block's usable bytes.
struct alignas(16) MidPrefix {
  MidHome* home;  // nullptr: no cache took it (off, or its thread had ended)
  size_t size;    // the class size (usable bytes)
};
constexpr size_t kPrefix = sizeof(MidPrefix);
static_assert(kPrefix == 16);

MidPrefix* PrefixOf(void* block) { return reinterpret_cast<MidPrefix*>(static_cast<char*>(block) - kPrefix); }

MidNode* const kClosed = reinterpret_cast<MidNode*>(uintptr_t{1});

// Bytes a thread's `remote` stack may hold: blocks sent home beyond it
// (to a thread that stopped allocating) go to free() instead.
constexpr size_t kMidRemoteBytes = size_t{4} << 20;

struct MidHome {
  std::atomic<MidNode*> remote{nullptr};
  std::atomic<size_t> remote_bytes{0};  // about what `remote` holds
  std::atomic<int64_t> refs{1};  // the thread's own

  void Unref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

// Gives a mid-size block (its usable pointer) back to malloc, and its
// reference on its home.
void FreeToMalloc(void* block) {
  MidPrefix* prefix = PrefixOf(block);
  MidHome* home = prefix->home;
  std::free(prefix);
  if (home != nullptr) home->Unref();
}

// One thread's free mid-size blocks: an intrusive stack per size class (the
// first word of a free block points to the next), fed by the thread's own
// frees and by the blocks other threads sent home.
class MidCache {
 public:
  static constexpr size_t kClasses = BlockCache::kMidMaxBytes / BlockCache::kMidGranule;

  MidCache() : home_(new MidHome) {}
  ~MidCache() {
    Clear();
    // Later frees of our blocks by other threads go to free() from now on.
    FreeList(TakeSent(kClosed));
    home_->Unref();
    destroyed_ = true;
  }

  // A block of class `size`, its prefix naming this thread.
  void* Allocate(size_t size) {
    if (void* block = Take(size)) return block;
    if (home_->remote.load(std::memory_order_relaxed) != nullptr && (TakeHome(), true)) {
      if (void* block = Take(size)) return block;
    }
    auto* prefix = static_cast<MidPrefix*>(std::malloc(kPrefix + size));
    if (prefix == nullptr) return nullptr;
    home_->refs.fetch_add(1, std::memory_order_relaxed);
    prefix->home = home_;
    prefix->size = size;
    return prefix + 1;
  }

  // Takes back one of our blocks (false when full: the caller frees it).
  bool Keep(void* block, size_t size) {
    const size_t c = Class(size);
    if (class_bytes_[c] + size > BlockCache::kMidClassBytes || bytes_ + size > BlockCache::kMidThreadBytes) {
      return false;
    }
    head_[c] = new (block) MidNode{head_[c]};
    class_bytes_[c] += size;
    bytes_ += size;
    return true;
  }

  // Gives every block kept here, and those sent home so far, to malloc.
  void Clear() {
    FreeList(TakeSent(nullptr));
    for (size_t c = 0; c < kClasses; ++c) {
      FreeList(head_[c]);
      head_[c] = nullptr;
      class_bytes_[c] = 0;
    }
    bytes_ = 0;
  }
  size_t bytes() const { return bytes_; }
  MidHome* home() const { return home_; }

  // Set once the thread's cache is gone (thread exit): blocks freed after
  // that (by other thread-locals' destructors) go straight to free().
  static thread_local bool destroyed_;

 private:
  static size_t Class(size_t size) { return size / BlockCache::kMidGranule - 1; }

  // nullptr when the class is empty.
  void* Take(size_t size) {
    const size_t c = Class(size);
    MidNode* n = head_[c];
    if (n == nullptr) return nullptr;
    head_[c] = n->next;
    class_bytes_[c] -= size;
    bytes_ -= size;
    return n;
  }

  static void FreeList(MidNode* n) {
    while (n != nullptr) {
      MidNode* next = n->next;
      FreeToMalloc(n);
      n = next;
    }
  }

  // Takes the stack of blocks other threads sent home.
  MidNode* TakeSent(MidNode* replacement) {
    MidNode* list = home_->remote.exchange(replacement, std::memory_order_acquire);
    size_t bytes = 0;
    for (MidNode* n = list; n != nullptr; n = n->next) bytes += PrefixOf(n)->size;
    home_->remote_bytes.fetch_sub(bytes, std::memory_order_relaxed);
    return list;
  }

  // Moves the blocks other threads sent home into the class stacks.
  void TakeHome() {
    MidNode* n = TakeSent(nullptr);
    while (n != nullptr) {
      MidNode* next = n->next;
      if (!Keep(n, PrefixOf(n)->size)) FreeToMalloc(n);
      n = next;
    }
  }

  MidHome* const home_;
  MidNode* head_[kClasses] = {};
  size_t class_bytes_[kClasses] = {};
  size_t bytes_ = 0;
};

thread_local bool MidCache::destroyed_ = false;

MidCache* ThisThreadsMidCache() {
  if (MidCache::destroyed_) return nullptr;
  thread_local MidCache cache;
  return &cache;
}

// Sends `block` (of class `size`) to its home thread's stack; false if
// that thread has ended or holds enough sent blocks already.
bool SendHome(MidHome* home, void* block, size_t size) {
  if (home->remote_bytes.load(std::memory_order_relaxed) >= kMidRemoteBytes) return false;
  home->remote_bytes.fetch_add(size, std::memory_order_relaxed);
  auto* node = static_cast<MidNode*>(block);
  MidNode* head = home->remote.load(std::memory_order_relaxed);
  do {
    if (head == kClosed) return false;
    node->next = head;
  } while (!home->remote.compare_exchange_weak(head, node, std::memory_order_release, std::memory_order_relaxed));
  return true;
}

bool IsMid(size_t size) { return size > BlockCache::kMidMinBytes && size <= BlockCache::kMidMaxBytes; }

}  // namespace

struct BlockCache::State {
  // Large blocks pass first through a few lock-free slots per size class,
  // and only then through `free` under mu. Why: a producer thread allocates
  // the tensors that a consumer thread frees (a queue's batches, a decoded
  // crop per example), and the mutex plus the class's vector were cache
  // lines that crossed cores twice per block; a slot is one line, one
  // exchange on each side (docs/perf/block-cache.md). A class takes the first
  // table entry whose size is 0 and keeps it for the life of the process
  // (a program allocates a few large sizes); a size that finds no entry
  // uses the mutex alone.
  //
  // The budget is split so that the slots need no shared counter: a class
  // gets slots only if all of them fit in budget / (2 * kFastClasses), so
  // the slots hold at most half the budget, and the blocks under mu at
  // most the other half.
  static constexpr int kFastClasses = 8;
  static constexpr int kFastSlots = 4;
  struct alignas(64) FastClass {
    std::atomic<size_t> size{0};  // 0: unclaimed
    std::atomic<void*> blocks[kFastSlots] = {};
  };
  FastClass fast[kFastClasses];
  // A copy of `budget` for the lock-free path (written under mu).
  std::atomic<size_t> budget_seen{0};

  Mutex mu;
  // Size class -> free blocks, the most recently freed last (reused first:
  // its pages are the likeliest to be in cache).
  std::unordered_map<size_t, std::vector<void*>> free SLUICE_GUARDED_BY(mu);
  size_t cached SLUICE_GUARDED_BY(mu) = 0;
  size_t budget SLUICE_GUARDED_BY(mu) = 0;

  // The table entry of `size`, claiming an unclaimed one when `claim`;
  // nullptr when none is (or can be) its.
  FastClass* FastClassOf(size_t size, bool claim) {
    for (FastClass& c : fast) {
      size_t have = c.size.load(std::memory_order_acquire);
      if (have == 0 && claim) {
        if (c.size.compare_exchange_strong(have, size, std::memory_order_acq_rel)) return &c;
        // `have` now holds the size another thread claimed it for.
      }
      if (have == size) return &c;
      if (have == 0) return nullptr;  // entries are claimed in order: no later one is ours
    }
    return nullptr;
  }

  // A block of `size` from the slots, or nullptr.
  void* TakeFast(size_t size) {
    FastClass* c = FastClassOf(size, /*claim=*/false);
    if (c == nullptr) return nullptr;
    // From the last slot: frees fill them from the first, so one thread's
    // frees come back newest first.
    for (int i = kFastSlots; i-- > 0;) {
      std::atomic<void*>& slot = c->blocks[i];
      if (slot.load(std::memory_order_relaxed) == nullptr) continue;
      // acquire: the freeing thread's last use of the block happens before ours.
      if (void* block = slot.exchange(nullptr, std::memory_order_acquire)) return block;
    }
    return nullptr;
  }

  // Puts `block` in an empty slot of its class if the class gets slots
  // (see above); false if not.
  bool PutFast(void* block, size_t size) {
    if (size * kFastSlots > budget_seen.load(std::memory_order_relaxed) / (2 * kFastClasses)) return false;
    FastClass* c = FastClassOf(size, /*claim=*/true);
    if (c == nullptr) return false;
    for (std::atomic<void*>& slot : c->blocks) {
      void* empty = nullptr;
      if (slot.load(std::memory_order_relaxed) == nullptr &&
          slot.compare_exchange_strong(empty, block, std::memory_order_release, std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  // Bytes in the slots (a snapshot).
  size_t FastBytes() const {
    size_t bytes = 0;
    for (const FastClass& c : fast) {
      const size_t size = c.size.load(std::memory_order_acquire);
      if (size == 0) break;
      for (const std::atomic<void*>& slot : c.blocks) {
        if (slot.load(std::memory_order_relaxed) != nullptr) bytes += size;
      }
    }
    return bytes;
  }

  // Empties the slots into `out`.
  void DrainFast(std::vector<void*>* out) {
    for (FastClass& c : fast) {
      if (c.size.load(std::memory_order_acquire) == 0) break;
      for (std::atomic<void*>& slot : c.blocks) {
        if (void* block = slot.exchange(nullptr, std::memory_order_acquire)) out->push_back(block);
      }
    }
  }

  // Moves blocks out until `cached <= limit`; returns them for freeing
  // outside the lock.
  std::vector<void*> EvictLocked(size_t limit) SLUICE_REQUIRES(mu) {
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
  state_->budget_seen.store(state_->budget, std::memory_order_relaxed);
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
      if (MidCache* mid = ThisThreadsMidCache()) return mid->Allocate(size);
    }
    auto* prefix = static_cast<MidPrefix*>(std::malloc(kPrefix + size));
    if (prefix == nullptr) return nullptr;
    prefix->home = nullptr;
    prefix->size = size;
    return prefix + 1;
  }
  if (size >= kMinBytes) {
    if (void* block = state_->TakeFast(size)) return block;
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
    MidHome* home = PrefixOf(block)->home;
    if (home != nullptr && g_mid_enabled.load(std::memory_order_relaxed)) {
      MidCache* mid = ThisThreadsMidCache();
      if (mid != nullptr && mid->home() == home) {
        if (mid->Keep(block, size)) return;
      } else if (SendHome(home, block, size)) {
        return;
      }
    }
    FreeToMalloc(block);
    return;
  }
  if (size >= kMinBytes) {
    if (state_->PutFast(block, size)) return;
    MutexLock lock(&state_->mu);
    if (state_->cached + size <= state_->budget - state_->budget / 2) {  // the other half: the slots'
      state_->free[size].push_back(block);
      state_->cached += size;
      return;
    }
  }
  std::free(block);
}

size_t BlockCache::cached_bytes() const {
  MutexLock lock(&state_->mu);
  return state_->cached + state_->FastBytes();
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
  state_->DrainFast(&out);
  for (void* b : out) std::free(b);
}

void BlockCache::SetBudgetForTesting(size_t bytes) {
  std::vector<void*> out;
  {
    MutexLock lock(&state_->mu);
    state_->budget = bytes;
    state_->budget_seen.store(bytes, std::memory_order_relaxed);
    g_mid_enabled.store(bytes > 0, std::memory_order_relaxed);
    out = state_->EvictLocked(bytes);
  }
  // The slots are emptied and their classes forgotten (no other thread uses
  // the cache now: see the header), so that each test starts from a fresh
  // table.
  state_->DrainFast(&out);
  for (State::FastClass& c : state_->fast) c.size.store(0, std::memory_order_release);
  for (void* b : out) std::free(b);
}

}  // namespace sluice::internal
