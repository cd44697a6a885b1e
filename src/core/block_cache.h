// BlockCache: keeps the memory of freed large tensor buffers for the next
// tensor of the same size class, instead of giving it back to malloc.
//
// Why: a pipeline allocates a few large tensors of the same sizes over and
// over (a 600 KB decoded crop per example, a 19 MB batch per step). glibc
// serves blocks that large with mmap, or trims them off the heap top when
// they are freed, so every new tensor's pages are faulted in and zeroed by
// the kernel again (docs/perf/block-cache.md). Blocks freed on the consumer
// thread and reused on a producer thread make it worse for malloc (another
// arena). A
// process-wide cache of our own blocks fixes it without changing malloc's
// settings for the rest of the process (what mallopt would do).
//
// Blocks of kMinBytes and more are rounded up to a size class (a multiple of
// kGranule) and cached on free, newest first, up to a byte budget
// (SLUICE_BLOCK_CACHE_MB, default 256; 0 turns the cache off); beyond it
// they go back to malloc. Half of the budget is for lock-free slots, a few
// for each of the first few classes whose slots all fit in a sixteenth of
// the budget (one exchange to take or give a block); the other half for
// blocks kept under a mutex. Off under AddressSanitizer, so that a use
// after free of a tensor stays detectable.
//
// Mid-size blocks (over kMidMinBytes, up to kMidMaxBytes: a 4 KiB queue
// element, a small batch) are beyond glibc's per-thread cache (1032 bytes),
// so malloc serves them from an arena under its lock. They are rounded up
// to kMidGranule and cached per thread: each block remembers the thread
// that allocated it (a 16-byte prefix), and a free gives it back to that
// thread's cache, at once when freed there, else through a lock-free stack
// that the owner empties when its cache runs dry. An allocation takes the
// owner's most recently returned block of its class. A thread keeps at
// most kMidClassBytes per size class and kMidThreadBytes in all (beyond,
// free()); blocks that outlive their thread go to free(). So a producer
// that builds a tensor, enqueues a copy and drops it reuses one block in
// cache, and the tensors a producer enqueues by reference, which a consumer
// frees after dequeue_many (a shuffle_batch queue), come back to the
// producer instead of piling up on the consumer while the producer mallocs
// new ones (docs/perf/block-cache.md). Off with the cache (budget 0) and
// under AddressSanitizer.
//
// Thread-safety: thread-safe (large blocks: a lock-free slot, else one
// mutex, taken once per large allocation or free; the mid-size caches are
// per thread, and a block freed on another thread goes home with one
// compare-and-swap).
#ifndef SLUICE_CORE_BLOCK_CACHE_H_
#define SLUICE_CORE_BLOCK_CACHE_H_

#include <cstddef>

namespace sluice::internal {

class BlockCache {
 public:
  static constexpr size_t kMinBytes = size_t{256} << 10;
  static constexpr size_t kGranule = size_t{64} << 10;
  static constexpr size_t kMidMinBytes = 1024;
  static constexpr size_t kMidMaxBytes = size_t{64} << 10;
  static constexpr size_t kMidGranule = 512;
  static constexpr size_t kMidClassBytes = size_t{128} << 10;
  static constexpr size_t kMidThreadBytes = size_t{1} << 20;

  // The process's cache.
  static BlockCache& Get();

  // A block of at least `bytes` (malloc'd, or reused from the cache); its
  // usable size is ClassSize(bytes). Returns nullptr when malloc fails.
  void* Allocate(size_t bytes);
  // Takes back a block that Allocate(bytes) returned.
  void Free(void* block, size_t bytes);

  // The size of the blocks that Allocate(bytes) returns.
  static size_t ClassSize(size_t bytes);

  // Bytes held for reuse (large blocks, all threads), and the budget.
  size_t cached_bytes() const;
  // Bytes the calling thread holds in its mid-size cache.
  static size_t thread_cached_bytes();
  size_t budget_bytes() const;
  // Gives every cached block back to malloc (the calling thread's mid-size
  // blocks too).
  void Trim();
  // For tests: replaces the budget (0: off), trimming what no longer fits,
  // and forgets which size classes have lock-free slots. REQUIRES: no
  // other thread uses the cache meanwhile.
  void SetBudgetForTesting(size_t bytes);

 private:
  BlockCache();
  struct State;
  State* state_;  // never freed: tensors may be released during static destruction
};

}  // namespace sluice::internal

#endif  // SLUICE_CORE_BLOCK_CACHE_H_
