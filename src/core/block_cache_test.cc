#include "block_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "sluice/core/mutex.h"
#include "sluice/core/tensor.h"

namespace sluice {
namespace {

using internal::BlockCache;

constexpr int64_t kLarge = 600 * 1024;  // bytes of a uint8 tensor the cache keeps

// Each test starts from an empty cache with a known budget and leaves the
// process's default budget behind.
class BlockCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = BlockCache::Get().budget_bytes();
    BlockCache::Get().Trim();
    BlockCache::Get().SetBudgetForTesting(size_t{64} << 20);
  }
  void TearDown() override {
    BlockCache::Get().Trim();
    BlockCache::Get().SetBudgetForTesting(saved_);
  }
  size_t saved_ = 0;
};

TEST_F(BlockCacheTest, FreedLargeTensorMemoryIsReusedBySameSizeTensor) {
  const void* first;
  {
    Tensor t(DType::kUInt8, TensorShape({kLarge}));
    first = t.raw_data();
  }
  EXPECT_GT(BlockCache::Get().cached_bytes(), static_cast<size_t>(kLarge));
  Tensor again(DType::kUInt8, TensorShape({kLarge}));
  EXPECT_EQ(again.raw_data(), first);
  EXPECT_EQ(BlockCache::Get().cached_bytes(), 0u);
}

TEST_F(BlockCacheTest, SizesInOneClassShareBlocksAndOthersDoNot) {
  const void* first;
  {
    Tensor t(DType::kUInt8, TensorShape({kLarge}));
    first = t.raw_data();
  }
  {
    // A few bytes more: the same 64 KiB class.
    Tensor near(DType::kUInt8, TensorShape({kLarge + 100}));
    EXPECT_EQ(near.raw_data(), first);
  }
  Tensor bigger(DType::kUInt8, TensorShape({kLarge + 200 * 1024}));
  EXPECT_NE(bigger.raw_data(), first);
  EXPECT_GT(BlockCache::Get().cached_bytes(), 0u);  // the first block waits in its class
}

TEST_F(BlockCacheTest, SmallTensorsBypassTheCache) {
  { Tensor t(DType::kFloat32, TensorShape({64})); }  // 256 bytes: glibc's own per-thread cache serves these
  EXPECT_EQ(BlockCache::Get().cached_bytes(), 0u);
  EXPECT_EQ(BlockCache::thread_cached_bytes(), 0u);
}

TEST_F(BlockCacheTest, MidSizeTensorMemoryIsReusedOnItsThread) {
  const void* first;
  {
    Tensor t(DType::kUInt8, TensorShape({4096}));
    first = t.raw_data();
  }
  EXPECT_EQ(BlockCache::Get().cached_bytes(), 0u);  // not in the process-wide cache
  EXPECT_GT(BlockCache::thread_cached_bytes(), 4096u);
  {
    Tensor again(DType::kUInt8, TensorShape({4000}));  // the same 512-byte class
    EXPECT_EQ(again.raw_data(), first);
    EXPECT_EQ(BlockCache::thread_cached_bytes(), 0u);
  }
}

TEST_F(BlockCacheTest, MidSizeBlockFreedOnAnotherThreadGoesBackToItsThread) {
  Tensor moved(DType::kUInt8, TensorShape({4096}));
  const void* block = moved.raw_data();
  std::thread([t = std::move(moved)]() mutable {
    t = Tensor();
    EXPECT_EQ(BlockCache::thread_cached_bytes(), 0u);  // not kept by the freeing thread
  }).join();
  Tensor again(DType::kUInt8, TensorShape({4096}));
  EXPECT_EQ(again.raw_data(), block);
}

TEST_F(BlockCacheTest, MidSizeBlocksOutliveTheThreadThatMadeThem) {
  // Made on a thread that ends before they are freed (here, and on a third
  // thread): they go to free(), and the values stay intact until then.
  std::vector<Tensor> made;
  std::thread([&made] {
    for (int i = 0; i < 64; ++i) {
      Tensor t(DType::kUInt8, TensorShape({3000}));
      std::memset(t.raw_data(), i, 3000);
      made.push_back(std::move(t));
    }
    made.pop_back();  // one freed at home before the thread ends
  }).join();
  for (size_t i = 0; i < made.size(); ++i) {
    EXPECT_EQ(static_cast<const uint8_t*>(made[i].raw_data())[2999], i);
  }
  std::thread([&made] {
    for (size_t i = 0; i < made.size(); i += 2) made[i] = Tensor();
  }).join();
  made.clear();
  EXPECT_EQ(BlockCache::thread_cached_bytes(), 0u);
}

TEST_F(BlockCacheTest, MidSizeBlocksCrossingThreadsUnderLoadAreNeitherLostNorShared) {
  // Producers make tensors stamped with their id, consumers check and drop
  // them: each block goes back to its producer, which must never hand out a
  // block that is still in use.
  constexpr int kThreads = 3, kEach = 20000;
  std::vector<std::thread> threads;
  Mutex mu;
  std::vector<Tensor> pipe;  // SLUICE_GUARDED_BY(mu)
  std::atomic<int> producing{kThreads};
  std::atomic<int64_t> bad{0}, seen{0};
  for (int p = 0; p < kThreads; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) {
        Tensor t(DType::kInt32, TensorShape({512 + 64 * (i % 4)}));
        int32_t* v = t.data<int32_t>();
        for (int64_t k = 0; k < t.num_elements(); ++k) v[k] = p * kEach + i;
        MutexLock lock(&mu);
        pipe.push_back(std::move(t));
      }
      producing.fetch_sub(1);
    });
  }
  for (int c = 0; c < kThreads; ++c) {
    threads.emplace_back([&] {
      while (true) {
        Tensor t;
        {
          MutexLock lock(&mu);
          if (!pipe.empty()) {
            t = std::move(pipe.back());
            pipe.pop_back();
          }
        }
        if (!t.buffer()) {
          if (producing.load() == 0) {
            MutexLock lock(&mu);
            if (pipe.empty()) return;
          }
          std::this_thread::yield();
          continue;
        }
        const int32_t* v = t.data<int32_t>();
        for (int64_t k = 1; k < t.num_elements(); ++k) {
          if (v[k] != v[0]) {
            bad.fetch_add(1);
            break;
          }
        }
        seen.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(seen.load(), int64_t{kThreads} * kEach);
}

TEST_F(BlockCacheTest, MidSizeCacheIsBoundedPerClassAndPerThread) {
  {
    std::vector<Tensor> many;
    for (int i = 0; i < 100; ++i) many.emplace_back(DType::kUInt8, TensorShape({8000}));
  }
  EXPECT_LE(BlockCache::thread_cached_bytes(), BlockCache::kMidClassBytes);
  EXPECT_GT(BlockCache::thread_cached_bytes(), BlockCache::kMidClassBytes / 2);
  {
    std::vector<Tensor> many;
    for (int64_t bytes = 2048; bytes <= 60 * 1024; bytes += 2048) {
      for (int i = 0; i < 8; ++i) many.emplace_back(DType::kUInt8, TensorShape({bytes}));
    }
  }
  EXPECT_LE(BlockCache::thread_cached_bytes(), BlockCache::kMidThreadBytes);
  BlockCache::Get().Trim();
  EXPECT_EQ(BlockCache::thread_cached_bytes(), 0u);
}

TEST_F(BlockCacheTest, BudgetZeroTurnsTheMidSizeCacheOff) {
  BlockCache::Get().SetBudgetForTesting(0);
  { Tensor t(DType::kUInt8, TensorShape({4096})); }
  EXPECT_EQ(BlockCache::thread_cached_bytes(), 0u);
}

TEST_F(BlockCacheTest, BudgetBoundsWhatIsKept) {
  // Room for one 640 KiB block: half the budget, since blocks this large
  // get no lock-free slots (4 of them would pass a sixteenth of it).
  BlockCache::Get().SetBudgetForTesting(size_t{2} << 20);
  {
    std::vector<Tensor> many;
    for (int i = 0; i < 10; ++i) many.emplace_back(DType::kUInt8, TensorShape({kLarge}));
  }
  EXPECT_LE(BlockCache::Get().cached_bytes(), size_t{2} << 20);
  EXPECT_GT(BlockCache::Get().cached_bytes(), 0u);
  BlockCache::Get().SetBudgetForTesting(0);  // shrinking the budget gives blocks back
  EXPECT_EQ(BlockCache::Get().cached_bytes(), 0u);
  { Tensor t(DType::kUInt8, TensorShape({kLarge})); }
  EXPECT_EQ(BlockCache::Get().cached_bytes(), 0u);  // off: nothing kept
}

// Half the budget for the lock-free slots, half for the blocks under the
// mutex: 256 KiB blocks under a 16 MiB budget get their class's 4 slots
// (1 MiB, a sixteenth of the budget), and 32 more blocks (8 MiB) are kept.
TEST_F(BlockCacheTest, TheSlotsAndTheLockedBlocksShareTheBudget) {
  BlockCache& cache = BlockCache::Get();
  cache.SetBudgetForTesting(size_t{16} << 20);
  constexpr size_t kBlock = BlockCache::kMinBytes;
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(cache.Allocate(kBlock));
  for (void* b : blocks) cache.Free(b, kBlock);
  EXPECT_EQ(cache.cached_bytes(), 4 * kBlock + (size_t{8} << 20));
}

TEST_F(BlockCacheTest, TrimGivesEverythingBack) {
  { Tensor t(DType::kUInt8, TensorShape({kLarge})); }
  ASSERT_GT(BlockCache::Get().cached_bytes(), 0u);
  BlockCache::Get().Trim();
  EXPECT_EQ(BlockCache::Get().cached_bytes(), 0u);
}

TEST_F(BlockCacheTest, StringTensorsOfReusedBlocksStartEmpty) {
  const int64_t n = kLarge / static_cast<int64_t>(sizeof(std::string));
  {
    Tensor t(DType::kString, TensorShape({n}));
    t.flat<std::string>()[0] = std::string(100, 'x');
  }
  Tensor again(DType::kString, TensorShape({n}));
  EXPECT_TRUE(again.flat<std::string>()[0].empty());
  EXPECT_TRUE(again.flat<std::string>()[n - 1].empty());
}

// Large blocks freed on one thread (a consumer) serve the next allocations
// of their size on another (a producer), newest first.
TEST_F(BlockCacheTest, LargeBlocksFreedOnOneThreadServeAnotherNewestFirst) {
  const void* older = nullptr;
  const void* newer = nullptr;
  std::thread consumer([&] {
    Tensor a(DType::kUInt8, TensorShape({kLarge}));
    Tensor b(DType::kUInt8, TensorShape({kLarge}));
    older = a.raw_data();
    newer = b.raw_data();
    a = Tensor();  // freed first
  });  // b freed last, at the thread's end
  consumer.join();
  EXPECT_GE(BlockCache::Get().cached_bytes(), 2 * static_cast<size_t>(kLarge));
  Tensor first(DType::kUInt8, TensorShape({kLarge}));
  Tensor second(DType::kUInt8, TensorShape({kLarge}));
  EXPECT_EQ(first.raw_data(), newer);
  EXPECT_EQ(second.raw_data(), older);
  EXPECT_EQ(BlockCache::Get().cached_bytes(), 0u);
}

// More size classes than the lock-free slots have entries for, and more
// blocks of one class than it has slots: every block is still kept and
// reused.
TEST_F(BlockCacheTest, EveryClassAndEveryBlockIsKeptBeyondTheLockFreeSlots) {
  BlockCache::Get().SetBudgetForTesting(size_t{256} << 20);  // the default
  constexpr int kClasses = 10;  // 54 MiB in all: within either half of the budget
  constexpr int kPerClass = 6;
  auto bytes_of = [](int c) { return kLarge + c * 64 * 1024; };  // one 64 KiB class apart
  std::vector<const void*> made;
  {
    std::vector<Tensor> all;
    for (int c = 0; c < kClasses; ++c) {
      for (int i = 0; i < kPerClass; ++i) all.emplace_back(DType::kUInt8, TensorShape({bytes_of(c)}));
    }
    for (const Tensor& t : all) made.push_back(t.raw_data());
  }
  EXPECT_GE(BlockCache::Get().cached_bytes(), static_cast<size_t>(kClasses * kPerClass * kLarge));
  std::vector<Tensor> again;
  for (int c = 0; c < kClasses; ++c) {
    for (int i = 0; i < kPerClass; ++i) {
      again.emplace_back(DType::kUInt8, TensorShape({bytes_of(c)}));
      EXPECT_NE(std::find(made.begin(), made.end(), again.back().raw_data()), made.end())
          << "class " << c << ", block " << i << ": a new block";
    }
  }
  EXPECT_EQ(BlockCache::Get().cached_bytes(), 0u);
}

// Blocks move between threads (allocated on one, freed on another): every
// tensor keeps its own contents while it lives.
TEST_F(BlockCacheTest, ConcurrentAllocateAndFreeKeepTensorsApart) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  std::atomic<int> corrupt{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &corrupt] {
      std::vector<std::pair<Tensor, unsigned char>> held;  // tensor, the byte it was filled with
      for (int r = 0; r < kRounds; ++r) {
        const int64_t bytes = kLarge + (r % 3) * 70 * 1024;
        Tensor x(DType::kUInt8, TensorShape({bytes}));
        const auto fill = static_cast<unsigned char>(t * 61 + r);
        std::memset(x.raw_data(), fill, static_cast<size_t>(bytes));
        held.emplace_back(x, fill);
        if (held.size() > 3) held.erase(held.begin());
        for (const auto& [h, f] : held) {
          const auto* p = static_cast<const unsigned char*>(h.raw_data());
          const int64_t n = h.shape().num_elements();
          for (int64_t i = 0; i < n; i += 4096) {
            if (p[i] != f) corrupt.fetch_add(1);
          }
          if (p[n - 1] != f) corrupt.fetch_add(1);
        }
        std::this_thread::yield();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(corrupt.load(), 0);
  EXPECT_LE(BlockCache::Get().cached_bytes(), size_t{64} << 20);
}

}  // namespace
}  // namespace sluice
