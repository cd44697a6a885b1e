// Shutdown under full load: string_input_producer -> TFRecordReaders ->
// a batcher (batch, shuffle_batch, batch_join, dynamic_pad), with every
// queue full and every runner thread blocked behind a consumer that stopped
// consuming. The pipeline is then ended by Coordinator::RequestStop or by
// dropping the last references to its runners (the registry, the producer
// handle and the batcher handle, in a random order), and everything must
// finish within kShutdownBound with no thread left alive.
//
// Each repetition draws its pipeline from a seed printed on failure
// (SLUICE_STRESS_SEED replays it; SLUICE_STRESS_REPS sets the repetitions).
// A watchdog aborts with the seed if a shutdown hangs.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/io/readers.h"
#include "sluice/io/record_writer.h"
#include "sluice/queue/queue.h"
#include "sluice/train/batchers.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/input_producers.h"
#include "sluice/train/producer.h"
#include "sluice/train/queue_runner_registry.h"
#include "sluice/train/thread.h"

#if defined(__SANITIZE_THREAD__)
#define SLUICE_SHUTDOWN_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLUICE_SHUTDOWN_TEST_TSAN 1
#endif
#endif

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
using train::BatchQueue;
using train::Coordinator;
using train::Producer;
using train::ProducerQueue;
using train::QueueRunnerRegistry;
using train::Thread;

// How long a shutdown may take, from the stop or the last drop until every
// thread has finished.
constexpr auto kShutdownBound = std::chrono::seconds(1);
// Bound on filling the pipeline and on a hung shutdown (a failure either way).
constexpr auto kSafety = std::chrono::seconds(20);

#ifdef SLUICE_SHUTDOWN_TEST_TSAN
constexpr int kDefaultReps = 100;
#else
constexpr int kDefaultReps = 1000;
#endif

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : fallback;
}

// Aborts the process, printing what it was doing, when a phase outlives its
// deadline: a hung shutdown cannot be failed from the thread that hangs.
class Watchdog {
 public:
  Watchdog() : thread_([this] { Run(); }) {}
  ~Watchdog() {
    {
      MutexLock l(&mu_);
      quit_ = true;
      cv_.SignalAll();
    }
    thread_.join();
  }
  void Arm(std::string what) SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    what_ = std::move(what);
    deadline_ = Clock::now() + kSafety;
    cv_.SignalAll();
  }
  void Disarm() SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    deadline_.reset();
  }

 private:
  void Run() SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    while (!quit_) {
      if (!deadline_.has_value()) {
        cv_.Wait(&mu_);
      } else if (!cv_.WaitUntil(&mu_, *deadline_) && deadline_.has_value() && Clock::now() >= *deadline_) {
        std::fprintf(stderr, "shutdown_test: hung for %lld s in: %s\n",
                     static_cast<long long>(kSafety.count()), what_.c_str());
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  Mutex mu_;
  CondVar cv_;
  bool quit_ SLUICE_GUARDED_BY(mu_) = false;
  std::optional<Clock::time_point> deadline_ SLUICE_GUARDED_BY(mu_);
  std::string what_ SLUICE_GUARDED_BY(mu_);
  std::thread thread_;
};

enum class Kind { kBatch, kShuffleBatch, kBatchJoin, kDynamicPad };
enum class Ending { kRequestStop, kDrop };
// What holds the runners: dropped in a drawn order by Ending::kDrop.
enum class Holder { kRegistry, kProducer, kBatcher };

const char* Name(Kind k) {
  switch (k) {
    case Kind::kBatch:
      return "batch";
    case Kind::kShuffleBatch:
      return "shuffle_batch";
    case Kind::kBatchJoin:
      return "batch_join";
    case Kind::kDynamicPad:
      return "batch(dynamic_pad)";
  }
  return "?";
}
const char* Name(Holder h) {
  switch (h) {
    case Holder::kRegistry:
      return "registry";
    case Holder::kProducer:
      return "producer";
    case Holder::kBatcher:
      return "batcher";
  }
  return "?";
}

struct Scenario {
  uint64_t seed = 0;
  Kind kind = Kind::kBatch;
  Ending ending = Ending::kRequestStop;
  int threads = 1;                // runner threads of the batcher
  int32_t capacity = 1;           // batch queue, in examples
  int64_t batch_size = 1;
  int32_t filename_capacity = 1;  // filename queue
  int consumed = 0;               // batches taken before the consumer stops
  bool coordinator = true;        // kDrop: runners started with a coordinator
  std::array<Holder, 3> drop_order = {Holder::kRegistry, Holder::kProducer, Holder::kBatcher};

  static Scenario Draw(uint64_t seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    Scenario s;
    s.seed = seed;
    s.kind = static_cast<Kind>(pick(0, 3));
    s.ending = pick(0, 1) == 0 ? Ending::kRequestStop : Ending::kDrop;
    s.threads = pick(s.kind == Kind::kBatchJoin ? 2 : 1, 4);
    s.batch_size = pick(1, 4);
    s.capacity = pick(static_cast<int>(s.batch_size) + 1, 8);
    s.filename_capacity = pick(1, 3);
    s.consumed = pick(0, 2);
    s.coordinator = s.ending == Ending::kRequestStop || pick(0, 1) == 1;
    std::shuffle(s.drop_order.begin(), s.drop_order.end(), rng);
    return s;
  }

  std::string Describe() const {
    std::string d = StrCat("seed ", seed, ": ", Name(kind), " threads=", threads, " capacity=", capacity,
                           " batch_size=", batch_size, " filename_capacity=", filename_capacity,
                           " consumed=", consumed, ", then ");
    if (ending == Ending::kRequestStop) return d + "request_stop";
    d += StrCat("drop (", coordinator ? "with" : "without", " a coordinator):");
    for (Holder h : drop_order) d += StrCat(" ", Name(h));
    return d;
  }
};

// TFRecord files of records "f<file>r<record>" padded to varied lengths.
class Files {
 public:
  Files() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sluice_shutdown_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    dir_ = tmpl;
    for (int f = 0; f < 3; ++f) {
      paths_.push_back(StrCat(dir_, "/data-", f, ".tfrecord"));
      Result<std::unique_ptr<io::RecordWriter>> w = io::RecordWriter::Open(paths_.back());
      EXPECT_TRUE(w.ok()) << w.status();
      if (!w.ok()) continue;
      for (int r = 0; r < 20; ++r) {
        EXPECT_TRUE((*w)->Write(StrCat("f", f, "r", r, std::string(static_cast<size_t>(r % 7), '.'))).ok());
      }
      EXPECT_TRUE((*w)->Close().ok());
    }
  }
  ~Files() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::string dir_;
  std::vector<std::string> paths_;
};

// `p`, counting the elements it has returned.
Producer Counted(Producer p, std::shared_ptr<std::atomic<int64_t>> count) {
  return [p = std::move(p), count = std::move(count)]() -> Result<Element> {
    Result<Element> r = p();
    if (r.ok()) count->fetch_add(1, std::memory_order_relaxed);
    return r;
  };
}

// {key, value} -> {key, the value's bytes as a uint8 vector}: a component of
// varying length for the padding queue.
Producer ValueBytes(Producer p) {
  return [p = std::move(p)]() -> Result<Element> {
    SLUICE_ASSIGN_OR_RETURN(Element e, p());
    const std::string& value = e[1].flat<std::string>()[0];
    Tensor bytes(DType::kUInt8, TensorShape{static_cast<int64_t>(value.size())});
    std::copy(value.begin(), value.end(), bytes.data<uint8_t>());
    return Element{e[0], bytes};
  };
}

Result<Producer> NewReader(const std::shared_ptr<queue::Queue>& filenames) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<io::ReaderBase> reader, io::NewTFRecordReader());
  return train::ReaderProducer(std::move(reader), filenames);
}

// One pipeline, built into its own registry.
struct Pipeline {
  std::unique_ptr<QueueRunnerRegistry> registry = std::make_unique<QueueRunnerRegistry>();
  std::optional<ProducerQueue> filenames;
  std::optional<BatchQueue> batches;
  std::shared_ptr<Coordinator> coord;
  std::vector<std::shared_ptr<Thread>> threads;
  std::shared_ptr<std::atomic<int64_t>> produced = std::make_shared<std::atomic<int64_t>>(0);

  Status Build(const Scenario& s, const std::vector<std::string>& files) {
    train::ProducerOptions po;
    po.shuffle = (s.seed & 1) != 0;
    po.capacity = s.filename_capacity;
    po.registry = registry.get();
    SLUICE_ASSIGN_OR_RETURN(filenames, train::StringInputProducer(files, po));
    const PartialShape scalar(std::vector<int64_t>{});
    train::ShuffleBatchOptions bo;
    bo.batch_size = s.batch_size;
    bo.capacity = s.capacity;
    bo.num_threads = s.threads;
    bo.dtypes = {DType::kString, DType::kString};
    bo.shapes = {scalar, scalar};
    bo.registry = registry.get();
    switch (s.kind) {
      case Kind::kBatch: {
        SLUICE_ASSIGN_OR_RETURN(Producer reader, NewReader(filenames->queue));
        SLUICE_ASSIGN_OR_RETURN(batches, train::Batch(Counted(std::move(reader), produced), bo));
        break;
      }
      case Kind::kShuffleBatch: {
        SLUICE_ASSIGN_OR_RETURN(Producer reader, NewReader(filenames->queue));
        bo.min_after_dequeue = static_cast<int32_t>(s.capacity - s.batch_size);
        bo.seed = static_cast<int64_t>(s.seed % 1000);
        SLUICE_ASSIGN_OR_RETURN(batches, train::ShuffleBatch(Counted(std::move(reader), produced), bo));
        break;
      }
      case Kind::kBatchJoin: {
        std::vector<Producer> readers;
        for (int t = 0; t < s.threads; ++t) {
          SLUICE_ASSIGN_OR_RETURN(Producer reader, NewReader(filenames->queue));
          readers.push_back(Counted(std::move(reader), produced));
        }
        SLUICE_ASSIGN_OR_RETURN(batches, train::BatchJoin(std::move(readers), bo));
        break;
      }
      case Kind::kDynamicPad: {
        SLUICE_ASSIGN_OR_RETURN(Producer reader, NewReader(filenames->queue));
        bo.dtypes = {DType::kString, DType::kUInt8};
        bo.shapes = {scalar, PartialShape{-1}};
        bo.dynamic_pad = true;
        SLUICE_ASSIGN_OR_RETURN(batches, train::Batch(Counted(ValueBytes(std::move(reader)), produced), bo));
        break;
      }
    }
    return Status::OK();
  }

  void Start(bool with_coordinator) {
    if (with_coordinator) coord = std::make_shared<Coordinator>();
    threads = train::StartQueueRunners(coord, /*start=*/true, registry.get());
  }

  // Every queue full and every batcher thread holding an example it cannot
  // enqueue (the readers have produced one more per thread than fits).
  bool FullyBlocked(const Scenario& s) const {
    const int64_t expected = s.consumed * s.batch_size + s.capacity + s.threads;
    return batches->queue()->size() == s.capacity && filenames->queue->size() == s.filename_capacity &&
           produced->load(std::memory_order_relaxed) == expected;
  }

  void Drop(Holder h) {
    switch (h) {
      case Holder::kRegistry:
        registry.reset();
        break;
      case Holder::kProducer:
        filenames.reset();
        break;
      case Holder::kBatcher:
        batches.reset();
        break;
    }
  }

  // True once every thread has finished, waiting until `deadline`.
  bool JoinAllUntil(Clock::time_point deadline) const {
    for (const auto& t : threads) {
      if (!t->JoinUntil(deadline)) return false;
    }
    for (const auto& t : threads) {
      if (t->is_alive()) return false;
    }
    return true;
  }
};

std::string AliveThreads(const std::vector<std::shared_ptr<Thread>>& threads) {
  std::string names;
  for (const auto& t : threads) {
    if (t->is_alive()) names += " " + t->name();
  }
  return names;
}

// Waits, polling (a queue has no "became full" notification), until the
// pipeline is fully blocked. False after kSafety.
bool WaitUntilFullyBlocked(const Pipeline& p, const Scenario& s) {
  const auto deadline = Clock::now() + kSafety;
  while (!p.FullyBlocked(s)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

void RunOnce(const Scenario& s, const Files& files, Watchdog& watchdog) {
  watchdog.Arm(s.Describe());
  Pipeline p;
  ASSERT_TRUE(p.Build(s, files.paths()).ok());
  p.Start(s.coordinator);
  for (int i = 0; i < s.consumed; ++i) {
    Result<Element> batch = p.batches->Dequeue(queue::WaitOptions::Timeout(kSafety));
    ASSERT_TRUE(batch.ok()) << batch.status();
    ASSERT_EQ((*batch)[0].shape().dim(0), s.batch_size);
  }
  ASSERT_TRUE(WaitUntilFullyBlocked(p, s))
      << "never fully blocked: batch queue " << p.batches->queue()->size() << ", filename queue "
      << p.filenames->queue->size() << ", produced " << p.produced->load();

  const auto start = Clock::now();
  const auto deadline = start + kShutdownBound;
  if (s.ending == Ending::kRequestStop) {
    p.coord->RequestStop();
    const Status joined = p.coord->Join({}, kShutdownBound);
    EXPECT_TRUE(joined.ok()) << joined;
    EXPECT_TRUE(p.JoinAllUntil(deadline)) << "alive after the stop:" << AliveThreads(p.threads);
    // The stop cancelled the queues: the consumer drains what is left, then
    // gets OutOfRange, without blocking.
    for (;;) {
      Result<Element> batch = p.batches->Dequeue(queue::WaitOptions::Timeout(kShutdownBound));
      if (batch.ok()) continue;
      EXPECT_EQ(batch.status().code(), Code::kOutOfRange) << batch.status();
      break;
    }
  } else {
    for (Holder h : s.drop_order) p.Drop(h);
    EXPECT_TRUE(p.JoinAllUntil(deadline)) << "alive after the last drop:" << AliveThreads(p.threads);
    if (p.coord != nullptr) {
      // A runner destroyed while an op thread is blocked in an enqueue fails
      // that enqueue itself (its cancel op): not an error of the run.
      const Status joined = p.coord->Join({}, kShutdownBound);
      EXPECT_TRUE(joined.ok()) << joined;
    }
  }
  EXPECT_LE(Clock::now() - start, kShutdownBound);
  for (const auto& t : p.threads) EXPECT_FALSE(t->is_alive()) << t->name();
  watchdog.Disarm();
}

TEST(ShutdownTest, FullyBlockedPipelinesStopWithinASecondLeavingNoThread) {
  const int64_t reps = EnvInt("SLUICE_STRESS_REPS", kDefaultReps);
  const uint64_t base = static_cast<uint64_t>(EnvInt("SLUICE_STRESS_SEED", static_cast<int64_t>(std::random_device{}())));
  std::printf("shutdown_test: %lld repetitions from SLUICE_STRESS_SEED=%llu\n", static_cast<long long>(reps),
              static_cast<unsigned long long>(base));
  Files files;
  Watchdog watchdog;
  for (int64_t i = 0; i < reps; ++i) {
    const Scenario s = Scenario::Draw(base + static_cast<uint64_t>(i));
    SCOPED_TRACE(s.Describe() + " (replay: SLUICE_STRESS_SEED=" + std::to_string(s.seed) + " SLUICE_STRESS_REPS=1)");
    RunOnce(s, files, watchdog);
    if (::testing::Test::HasFailure()) break;
  }
}

}  // namespace
}  // namespace sluice
