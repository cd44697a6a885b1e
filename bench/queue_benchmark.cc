// Throughput of sluice's FIFOQueue against three peers, in one run:
//   mutex_deque         std::mutex + condition_variable + std::deque
//   tbb_bounded         tbb::concurrent_bounded_queue
//   moodycamel_bounded  moodycamel::BlockingConcurrentQueue + a semaphore of
//                       free slots
// (see peer_queues.h). Every queue is bounded to kCapacity elements.
//
// queue/<payload>/<mode>/<P>x<C>/<impl>
//   P producer and C consumer threads, started before the timed region of
//   every iteration and released together at its start, move a fixed
//   number of elements (kItems64 or kItems4K) through one fresh queue;
//   wall time from the release to the last thread's last operation (manual
//   time; the threads' exits are not timed); items/s is elements moved per
//   second; cpu_ns_per_item is the process's CPU time (all threads, user +
//   system, from the release until every thread has exited) per element,
//   switches_per_item its context switches (voluntary + involuntary) per
//   element.
//   payload 64B:  peers move a 64-byte struct by value (copied in, copied
//                 out). FIFOQueue moves an Element holding a uint8 Tensor of
//                 shape [64] that shares one of the producer's pre-made
//                 tensors (a reference-count increment, no allocation);
//                 FIFOQueue_newtensor allocates a new [64] tensor for every
//                 element instead (what an Element costs when its data is new).
//   payload 4KiB: every element is a new 4 KiB buffer, allocated by the
//                 producer, freed by the consumer: peers move a
//                 std::unique_ptr<std::byte[]> (one new[] of 4096 bytes);
//                 FIFOQueue moves an Element holding a new uint8 Tensor of
//                 shape [4096] (one aligned_alloc of header + 4096 bytes).
//                 FIFOQueue_shared shares pre-made [4096] tensors instead
//                 (no allocation: the queue alone).
//   The producer writes a sequence number into the first 8 bytes of each
//   element; the consumer reads it; the sum is checked where every element
//   is new (all but FIFOQueue 64B, whose tensors are shared).
//   mode single:  Enqueue / Dequeue one element per call.
//   mode many64:  EnqueueMany / DequeueMany of 64 elements per call. sluice:
//                 one [64, bytes] tensor per batch (new for 4KiB and for
//                 _newtensor; shared pre-made batches for FIFOQueue 64B);
//                 peers: 64 elements built in an array and pushed with the
//                 queue's bulk call (TBB has none: a loop of push / pop).
//
// deqcost/<payload>/<single|many64>/<prefill>[_kept|_unread]/<impl>
//   One thread, no contention: the queue is filled with kCapacity elements
//   (untimed; prefill_single: by Enqueue of one new tensor each;
//   prefill_many: by EnqueueMany of new [64, bytes] batches), then the time
//   to take them all out with Dequeue or DequeueMany(64) is measured (manual
//   time). By default the consumer reads each element's sequence number (a
//   word at the start of each row) and drops what it dequeued at once, so
//   the time includes the release and the consumer's first touch of each
//   row. _kept: what was dequeued is kept and dropped after the timed
//   region. _unread: dropped at once without reading it: the calls and the
//   release alone, the dequeue's own cost. Compares the cost per element of
//   dequeue_many(64) with that of a single dequeue.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "peer_queues.h"

#ifndef SLUICE_BENCH_PEERS_ONLY
#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"
#endif

namespace sluice_bench {
namespace {

constexpr size_t kCapacity = 1024;
constexpr size_t kBatch = 64;
constexpr int64_t kItems64 = 1 << 16;  // elements per iteration, 64-byte payload
constexpr int64_t kItems4K = 1 << 14;  // elements per iteration, 4 KiB payload
constexpr double kMinTime = 0.25;      // seconds per throughput benchmark
constexpr int64_t kDeqCostIterations64 = 4000;  // deqcost: refills of 1024 elements
constexpr int64_t kDeqCostIterations4K = 500;

enum class Payload { k64B, k4KiB };
constexpr size_t PayloadBytes(Payload p) { return p == Payload::k64B ? 64 : 4096; }

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "queue_benchmark: %s\n", what.c_str());
  std::abort();
}

// ----------------------------------------------------------------- peers ---

struct Item64 {
  uint64_t words[8];
};
static_assert(sizeof(Item64) == 64);
using Item4K = std::unique_ptr<std::byte[]>;

inline Item64 MakeItem(uint64_t seq, Item64*) {
  Item64 item{};
  item.words[0] = seq;
  return item;
}
inline uint64_t ReadItem(const Item64& item) { return item.words[0]; }

inline Item4K MakeItem(uint64_t seq, Item4K*) {
  Item4K item(new std::byte[4096]);
  std::memcpy(item.get(), &seq, sizeof(seq));
  return item;
}
inline uint64_t ReadItem(const Item4K& item) {
  uint64_t seq;
  std::memcpy(&seq, item.get(), sizeof(seq));
  return seq;
}

// Adapts a peer queue of Items to the benchmark's interface: Push(seq),
// Pop() -> seq, PushMany(first_seq, n), PopMany(n) -> sum of seqs.
template <template <class> class Q, class Item>
class PeerAdapter {
 public:
  static constexpr bool kChecksum = true;
  explicit PeerAdapter(size_t capacity) : q_(capacity) {}

  struct ProducerState {
    ProducerState(PeerAdapter& a, int /*index*/) : s(a.q_) {}
    typename Q<Item>::ProducerState s;
    Item batch[kBatch];
  };
  struct ConsumerState {
    explicit ConsumerState(PeerAdapter& a) : s(a.q_) {}
    typename Q<Item>::ConsumerState s;
    Item batch[kBatch];
    bool keep = false;        // keep what is dequeued in `kept` (deqcost)
    bool read = true;         // read each element's sequence number (deqcost _unread: no)
    std::vector<Item> kept;
  };

  void Push(ProducerState& p, uint64_t seq) { q_.Push(p.s, MakeItem(seq, static_cast<Item*>(nullptr))); }
  uint64_t Pop(ConsumerState& c) {
    Item item = q_.Pop(c.s);
    const uint64_t seq = c.read ? ReadItem(item) : 0;
    if (c.keep) c.kept.push_back(std::move(item));
    return seq;
  }
  void PushMany(ProducerState& p, uint64_t first, size_t n) {
    for (size_t i = 0; i < n; ++i) p.batch[i] = MakeItem(first + i, static_cast<Item*>(nullptr));
    q_.PushMany(p.s, p.batch, n);
  }
  uint64_t PopMany(ConsumerState& c, size_t n) {
    q_.PopMany(c.s, c.batch, n);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      if (c.read) sum += ReadItem(c.batch[i]);
      if (c.keep) c.kept.push_back(std::move(c.batch[i]));
      c.batch[i] = Item{};  // the consumer is done with it (frees a 4 KiB buffer)
    }
    return sum;
  }

 private:
  Q<Item> q_;
};

#ifndef SLUICE_BENCH_PEERS_ONLY
// ---------------------------------------------------------------- sluice ---

// kShared: elements share tensors the producer made before the run (64B
// payload's FIFOQueue); otherwise every element (or batch) is a new tensor.
template <Payload kPayload, bool kShared>
class SluiceAdapter {
 public:
  static constexpr bool kChecksum = !kShared;
  static constexpr int64_t kBytes = PayloadBytes(kPayload);
  static constexpr size_t kPool = 256;      // pre-made single tensors per producer
  static constexpr size_t kBatchPool = 4;   // pre-made batch tensors per producer

  explicit SluiceAdapter(size_t capacity) {
    sluice::queue::QueueOptions options;
    options.capacity = static_cast<int32_t>(capacity);
    options.dtypes = {sluice::DType::kUInt8};
    options.shapes = {sluice::PartialShape{kBytes}};
    auto q = sluice::queue::NewFIFOQueue(std::move(options));
    if (!q.ok()) Die("NewFIFOQueue: " + q.status().ToString());
    q_ = std::move(q).value();
  }

  struct ProducerState {
    ProducerState(SluiceAdapter&, int index) {
      if constexpr (kShared) {
        for (size_t i = 0; i < kPool; ++i) {
          sluice::Tensor t(sluice::DType::kUInt8, sluice::TensorShape{kBytes});
          std::memset(t.raw_data(), 0, kBytes);
          const uint64_t v = index * kPool + i;
          std::memcpy(t.raw_data(), &v, sizeof(v));
          pool.push_back(std::move(t));
        }
        for (size_t i = 0; i < kBatchPool; ++i) {
          sluice::Tensor t(sluice::DType::kUInt8, sluice::TensorShape{static_cast<int64_t>(kBatch), kBytes});
          std::memset(t.raw_data(), 0, kBatch * kBytes);
          batch_pool.push_back(std::move(t));
        }
      }
    }
    std::vector<sluice::Tensor> pool, batch_pool;
  };
  struct ConsumerState {
    explicit ConsumerState(SluiceAdapter&) {}
    bool keep = false;  // keep what is dequeued in `kept` (deqcost)
    bool read = true;   // read each element's sequence number (deqcost _unread: no)
    std::vector<sluice::Element> kept;
  };

  void Push(ProducerState& p, uint64_t seq) {
    sluice::Element e;
    if constexpr (kShared) {
      e.push_back(p.pool[seq % kPool]);
    } else {
      sluice::Tensor t(sluice::DType::kUInt8, sluice::TensorShape{kBytes});
      std::memcpy(t.raw_data(), &seq, sizeof(seq));
      e.push_back(std::move(t));
    }
    Check(q_->Enqueue(std::move(e)), "Enqueue");
  }

  uint64_t Pop(ConsumerState& c) {
    auto r = q_->Dequeue();
    if (!r.ok()) Die("Dequeue: " + r.status().ToString());
    uint64_t seq = 0;
    if (c.read) std::memcpy(&seq, (*r)[0].raw_data(), sizeof(seq));
    if (c.keep) c.kept.push_back(std::move(r).value());
    return seq;
  }

  void PushMany(ProducerState& p, uint64_t first, size_t n) {
    sluice::Element e;
    if constexpr (kShared) {
      e.push_back(p.batch_pool[(first / kBatch) % kBatchPool]);
    } else {
      sluice::Tensor t(sluice::DType::kUInt8, sluice::TensorShape{static_cast<int64_t>(n), kBytes});
      auto* rows = static_cast<std::byte*>(t.raw_data());
      for (size_t i = 0; i < n; ++i) {
        const uint64_t seq = first + i;
        std::memcpy(rows + i * kBytes, &seq, sizeof(seq));
      }
      e.push_back(std::move(t));
    }
    Check(q_->EnqueueMany(std::move(e)), "EnqueueMany");
  }

  uint64_t PopMany(ConsumerState& c, size_t n) {
    auto r = q_->DequeueMany(static_cast<int64_t>(n));
    if (!r.ok()) Die("DequeueMany: " + r.status().ToString());
    const auto* rows = static_cast<const std::byte*>((*r)[0].raw_data());
    uint64_t sum = 0;
    for (size_t i = 0; c.read && i < n; ++i) {
      uint64_t seq;
      std::memcpy(&seq, rows + i * kBytes, sizeof(seq));
      sum += seq;
    }
    if (c.keep) c.kept.push_back(std::move(r).value());
    return sum;
  }

 private:
  static void Check(const sluice::Status& s, const char* what) {
    if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
  }
  std::shared_ptr<sluice::queue::Queue> q_;
};
#endif  // SLUICE_BENCH_PEERS_ONLY

// ------------------------------------------------------------ harnesses ---

// CPU time of the whole process (every thread), in seconds.
double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Context switches of the whole process so far (voluntary + involuntary).
int64_t ProcessContextSwitches() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return static_cast<int64_t>(r.ru_nvcsw) + static_cast<int64_t>(r.ru_nivcsw);
}

template <class A>
void BM_Throughput(benchmark::State& state, int64_t items, int producers, int consumers, bool many) {
  const int64_t per_producer = items / producers;
  const int64_t per_consumer = items / consumers;
  const uint64_t expected = static_cast<uint64_t>(items) * static_cast<uint64_t>(items - 1) / 2;
  double cpu_seconds = 0;  // all threads, from the release to the last join
  int64_t switches = 0;    // context switches, all threads, the same span

  for (auto _ : state) {
    auto q = std::make_unique<A>(kCapacity);
    std::vector<std::unique_ptr<typename A::ProducerState>> ps;
    for (int p = 0; p < producers; ++p) ps.push_back(std::make_unique<typename A::ProducerState>(*q, p));
    std::atomic<uint64_t> sum{0};
    // The threads are started before the timed region and released
    // together at its start (creating them costs every queue the same), and
    // wait for the start by yielding, not in a futex (woken from one, they
    // all landed on the waker's CPU). The timed region ends at the last
    // thread's last operation (manual time), not once the threads have
    // exited. A worker makes no system call in the timed region
    // (steady_clock reads the vDSO): system calls moved threads between
    // CPUs. See docs/perf/bench-method.md.
    std::latch ready(producers + consumers);
    std::atomic<bool> go{false};
    std::vector<std::chrono::steady_clock::time_point> done(producers + consumers);
    std::vector<std::thread> threads;
    threads.reserve(producers + consumers);

    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        auto& st = *ps[p];
        const uint64_t first = static_cast<uint64_t>(p) * per_producer;
        ready.count_down();
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        if (many) {
          for (int64_t i = 0; i < per_producer; i += kBatch) q->PushMany(st, first + i, kBatch);
        } else {
          for (int64_t i = 0; i < per_producer; ++i) q->Push(st, first + i);
        }
        done[p] = std::chrono::steady_clock::now();
      });
    }
    for (int c = 0; c < consumers; ++c) {
      threads.emplace_back([&, c] {
        typename A::ConsumerState st(*q);
        uint64_t local = 0;
        ready.count_down();
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        if (many) {
          for (int64_t i = 0; i < per_consumer; i += kBatch) local += q->PopMany(st, kBatch);
        } else {
          for (int64_t i = 0; i < per_consumer; ++i) local += q->Pop(st);
        }
        sum.fetch_add(local, std::memory_order_relaxed);
        done[producers + c] = std::chrono::steady_clock::now();
      });
    }
    ready.wait();
    const double cpu0 = ProcessCpuSeconds();
    const int64_t switches0 = ProcessContextSwitches();
    const auto start = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    cpu_seconds += ProcessCpuSeconds() - cpu0;
    switches += ProcessContextSwitches() - switches0;
    state.SetIterationTime(std::chrono::duration<double>(*std::max_element(done.begin(), done.end()) - start).count());
    if (A::kChecksum && sum.load() != expected) {
      state.SkipWithError("checksum mismatch: elements lost, duplicated or corrupted");
    }
  }
  state.SetItemsProcessed(state.iterations() * items);
  // CPU time (user + system, every thread) per element: what the queue costs
  // the machine, spinning included; less disturbed than wall time by other
  // processes on a shared machine.
  const double total = static_cast<double>(state.iterations() * items);
  state.counters["cpu_ns_per_item"] = benchmark::Counter(cpu_seconds * 1e9 / total);
  state.counters["switches_per_item"] = benchmark::Counter(static_cast<double>(switches) / total);
}

// What the deqcost consumer does with each element it dequeues: kReadDrop
// reads its sequence number (a word of each row) and drops it at once (the
// call, the release of what it returned, and the consumer's first touch of
// the data); kReadKeep reads it and keeps it until after the timed region;
// kUnreadDrop drops it unread (the call and the release alone).
enum class Consumer { kReadDrop, kReadKeep, kUnreadDrop };
const char* ConsumerSuffix(Consumer c) {
  return c == Consumer::kReadKeep ? "_kept" : c == Consumer::kUnreadDrop ? "_unread" : "";
}

// many: dequeue with DequeueMany(64); prefill_many: fill with EnqueueMany(64).
template <class A>
void BM_DequeueCost(benchmark::State& state, bool many, bool prefill_many, Consumer consumer) {
  A q(kCapacity);
  typename A::ProducerState ps(q, 0);
  typename A::ConsumerState cs(q);
  cs.keep = consumer == Consumer::kReadKeep;
  cs.read = consumer != Consumer::kUnreadDrop;
  cs.kept.reserve(kCapacity);
  uint64_t sum = 0;
  for (auto _ : state) {
    if (prefill_many) {
      for (size_t i = 0; i < kCapacity; i += kBatch) q.PushMany(ps, i, kBatch);
    } else {
      for (size_t i = 0; i < kCapacity; ++i) q.Push(ps, i);
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (many) {
      for (size_t i = 0; i < kCapacity; i += kBatch) sum += q.PopMany(cs, kBatch);
    } else {
      for (size_t i = 0; i < kCapacity; ++i) sum += q.Pop(cs);
    }
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    cs.kept.clear();
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kCapacity));
}

// ---------------------------------------------------------- registration ---

const char* PayloadName(Payload p) { return p == Payload::k64B ? "64B" : "4KiB"; }

template <class A>
void RegisterThroughput(Payload payload, const std::string& impl) {
  const int64_t items = payload == Payload::k64B ? kItems64 : kItems4K;
  for (int many = 0; many <= 1; ++many) {
    for (int threads : {1, 2, 4}) {
      const std::string name = std::string("queue/") + PayloadName(payload) + "/" + (many ? "many64" : "single") +
                               "/" + std::to_string(threads) + "x" + std::to_string(threads) + "/" + impl;
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
        BM_Throughput<A>(s, items, threads, threads, many != 0);
      })
          ->MinTime(kMinTime)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

template <class A>
void RegisterDequeueCost(Payload payload, const std::string& impl) {
  for (int many = 0; many <= 1; ++many) {
    for (int prefill_many = 0; prefill_many <= 1; ++prefill_many) {
      for (Consumer consumer : {Consumer::kReadDrop, Consumer::kReadKeep, Consumer::kUnreadDrop}) {
        const std::string name = std::string("deqcost/") + PayloadName(payload) + "/" +
                                 (many ? "many64" : "single") + "/" +
                                 (prefill_many ? "prefill_many" : "prefill_single") + ConsumerSuffix(consumer) +
                                 "/" + impl;
        // A fixed count: the untimed refill of 1024 elements costs more than
        // the timed part, so MinTime would run for many seconds.
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
          BM_DequeueCost<A>(s, many != 0, prefill_many != 0, consumer);
        })
            ->Iterations(payload == Payload::k64B ? kDeqCostIterations64 : kDeqCostIterations4K)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

template <Payload kPayload, class Item>
void RegisterPayload() {
#ifndef SLUICE_BENCH_PEERS_ONLY
  if constexpr (kPayload == Payload::k64B) {
    RegisterThroughput<SluiceAdapter<kPayload, /*kShared=*/true>>(kPayload, "FIFOQueue");
    RegisterThroughput<SluiceAdapter<kPayload, /*kShared=*/false>>(kPayload, "FIFOQueue_newtensor");
  } else {
    RegisterThroughput<SluiceAdapter<kPayload, /*kShared=*/false>>(kPayload, "FIFOQueue");
    RegisterThroughput<SluiceAdapter<kPayload, /*kShared=*/true>>(kPayload, "FIFOQueue_shared");
  }
#endif
  RegisterThroughput<PeerAdapter<MutexQueue, Item>>(kPayload, "mutex_deque");
  RegisterThroughput<PeerAdapter<TbbQueue, Item>>(kPayload, "tbb_bounded");
  RegisterThroughput<PeerAdapter<MoodycamelQueue, Item>>(kPayload, "moodycamel_bounded");

#ifndef SLUICE_BENCH_PEERS_ONLY
  RegisterDequeueCost<SluiceAdapter<kPayload, false>>(kPayload, "FIFOQueue");
#endif
  RegisterDequeueCost<PeerAdapter<MutexQueue, Item>>(kPayload, "mutex_deque");
}

}  // namespace
}  // namespace sluice_bench

int main(int argc, char** argv) {
  using namespace sluice_bench;
  // glibc gives the top of the heap back to the kernel once 128 KiB are free
  // there, and the next allocations fault the pages in again
  // (docs/perf/bench-method.md). With 4 KiB payloads that churn
  // follows how full each queue runs, not what the queue costs, so by default
  // every queue runs with trimming off and a fixed mmap threshold.
  // SLUICE_BENCH_MALLOC=default keeps glibc's defaults.
  const char* malloc_mode = std::getenv("SLUICE_BENCH_MALLOC");
  const bool tuned = malloc_mode == nullptr || std::string(malloc_mode) != "default";
#if defined(__GLIBC__)
  if (tuned) {
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  }
  benchmark::AddCustomContext("malloc", tuned ? "glibc, M_TRIM_THRESHOLD=1GiB M_MMAP_THRESHOLD=32MiB"
                                              : "glibc defaults");
#else
  benchmark::AddCustomContext("malloc", "not glibc: defaults");
#endif
  RegisterPayload<Payload::k64B, Item64>();
  RegisterPayload<Payload::k4KiB, Item4K>();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
