// shuffle_batch's queue with mid-size examples: P producer threads enqueue
// new [bytes] uint8 tensors one at a time into a RandomShuffleQueue
// (capacity 1024, min_after_dequeue 256); one consumer takes dequeue_many(64)
// and drops each batch, which frees the examples on the consumer's thread.
// What it measures is the path of an example's memory from the thread that
// made it to the thread that frees it (core/block_cache.h: mid-size blocks
// go back to the thread that allocated them).
//
//   shuffle_batch/<bytes>/<P>x1/cache:   sluice's block cache (the default)
//   shuffle_batch/<bytes>/<P>x1/malloc:  the cache off (SLUICE_BLOCK_CACHE_MB=0
//                                        has the same effect): glibc alone
//
// Not part of bench/run.sh's targets (no peer has this queue); run it with
//   build-bench/bench/shuffle_batch_benchmark
// items_per_second counts examples.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/block_cache.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"

namespace {

constexpr int64_t kExamples = 200000;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "shuffle_batch_benchmark: %s\n", what.c_str());
  std::exit(1);
}

void BM_ShuffleBatch(benchmark::State& state, int64_t bytes, int producers, bool cache) {
  auto& block_cache = sluice::internal::BlockCache::Get();
  const size_t saved = block_cache.budget_bytes();
  block_cache.SetBudgetForTesting(cache ? saved : 0);
  for (auto _ : state) {
    sluice::queue::RandomShuffleQueueOptions o;
    o.capacity = 1024;
    o.min_after_dequeue = 256;
    o.seed = 1;
    o.seed2 = 2;
    o.dtypes = {sluice::DType::kUInt8};
    o.shapes = {sluice::PartialShape{bytes}};
    auto made = sluice::queue::NewRandomShuffleQueue(o);
    if (!made.ok()) Die(made.status().ToString());
    std::shared_ptr<sluice::queue::Queue> q = *made;
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        for (int64_t i = p; i < kExamples; i += producers) {
          sluice::Tensor t(sluice::DType::kUInt8, sluice::TensorShape{bytes});
          std::memset(t.raw_data(), static_cast<int>(i & 0xff), static_cast<size_t>(bytes));
          if (!q->Enqueue(sluice::Element{std::move(t)}).ok()) Die("Enqueue");
        }
      });
    }
    std::thread closer([&] {
      for (std::thread& t : threads) t.join();
      if (!q->Close().ok()) Die("Close");
    });
    int64_t taken = 0;
    while (taken < kExamples) {
      auto batch = q->DequeueMany(64);
      if (!batch.ok()) Die("DequeueMany: " + batch.status().ToString());
      benchmark::DoNotOptimize(static_cast<const uint8_t*>((*batch)[0].raw_data())[0]);
      taken += 64;
    }
    closer.join();
  }
  block_cache.Trim();
  block_cache.SetBudgetForTesting(saved);
  state.SetItemsProcessed(state.iterations() * kExamples);
}

}  // namespace

int main(int argc, char** argv) {
  static_assert(kExamples % 64 == 0);
  for (int64_t bytes : {4096, 16384}) {
    for (int producers : {1, 2, 4}) {
      for (bool cache : {true, false}) {
        const std::string name = "shuffle_batch/" + std::to_string(bytes) + "/" + std::to_string(producers) + "x1/" +
                                 (cache ? "cache" : "malloc");
        benchmark::RegisterBenchmark(name.c_str(), BM_ShuffleBatch, bytes, producers, cache)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(3);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
