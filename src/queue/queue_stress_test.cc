// Stress tests: producers and consumers hammer one queue with every enqueue
// and dequeue form while deadlines expire, CancellationManagers are cancelled
// and interrupt checks fail at random, and the queue is closed (gracefully,
// or with cancel_pending_enqueues at a random point, or by racing closes).
//
// Every element carries a unique id (producer * kStride + sequence). At the
// end an exact accounting proves that nothing accepted was lost or
// duplicated:
//   - every id of a successful enqueue comes out exactly once;
//   - no id of a failed single enqueue comes out;
//   - of a failed enqueue_many, exactly a prefix comes out (the slices
//     admitted before it failed);
//   - no id comes out twice, and none that was never enqueued;
//   - a failed dequeue returns nothing (held elements are restored);
//   - stats() agree with the accounting.
// FIFO and padding queues also keep each producer's order as seen by each
// consumer; priority batches come out sorted; padded batches are checked.
//
// Size: SLUICE_STRESS_SCALE (percent, default 100; 10 under ThreadSanitizer)
// scales the number of operations.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "queue_test_util.h"
#include "sluice/queue/queue.h"

#if defined(__SANITIZE_THREAD__)
#define SLUICE_STRESS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLUICE_STRESS_TSAN 1
#endif
#endif

namespace sluice::queue {
namespace {

using namespace testing;  // NOLINT: test helpers

constexpr int64_t kStride = 1'000'000;
constexpr int kProducers = 3;
constexpr int kConsumers = 3;
// Batches may exceed the capacity of the FIFO-like queues (partial progress
// on both sides), but not of the PriorityQueue, whose dequeue_many waits for
// n stored elements and would otherwise block every later dequeuer.
constexpr int kMaxBatch = 6;
int32_t Capacity(Kind kind) { return kind == Kind::kPriority ? kMaxBatch : 4; }

int ScalePercent() {
  if (const char* env = std::getenv("SLUICE_STRESS_SCALE")) return std::max(1, std::atoi(env));
#ifdef SLUICE_STRESS_TSAN
  return 10;
#else
  return 100;
#endif
}
int OpsPerProducer() { return std::max(20, 3000 * ScalePercent() / 100); }

enum class CloseMode {
  kGraceful,        // Close() after every producer is done
  kCancelAtRandom,  // Close(true) after a random number of producer operations
  kRacingCloses,    // Close(false) and Close(true) from two threads at random points
};

struct StressParam {
  Kind kind;
  CloseMode mode;
};

std::string ParamName(const ::testing::TestParamInfo<StressParam>& info) {
  const char* mode = info.param.mode == CloseMode::kGraceful         ? "Graceful"
                     : info.param.mode == CloseMode::kCancelAtRandom ? "CancelAtRandom"
                                                                     : "RacingCloses";
  return KindName(info.param.kind) + mode;
}

// ---------------------------------------------------------------------------
// Element layout per queue type.
//   FIFO, RandomShuffle: (id int64 []).
//   PaddingFIFO: (id int64 [], payload int32 [?]) with PayloadLen(id) copies
//     of PayloadValue(id), so padding (zeros) can be told apart.
//   Priority: (priority int64 [] random 0..9, id int64 []).

int64_t PayloadLen(int64_t id) { return id % 3; }
int32_t PayloadValue(int64_t id) { return static_cast<int32_t>(id % 1000) + 1; }

Result<std::shared_ptr<Queue>> NewStressQueue(Kind kind) {
  switch (kind) {
    case Kind::kFIFO:
      return NewFIFOQueue(Opts(Capacity(kind), {DType::kInt64}, {ScalarShape()}));
    case Kind::kRandomShuffle:
      return NewRandomShuffleQueue(RsqOpts(Capacity(kind), 2, {DType::kInt64}, {ScalarShape()}));
    case Kind::kPaddingFIFO:
      return NewPaddingFIFOQueue(
          Opts(Capacity(kind), {DType::kInt64, DType::kInt32}, {ScalarShape(), PartialShape{-1}}));
    case Kind::kPriority:
      return NewPriorityQueue(Opts(Capacity(kind), {DType::kInt64}, {ScalarShape()}));
  }
  return errors::Internal("bad kind");
}

Element MakeBatch(Kind kind, const std::vector<int64_t>& ids, std::mt19937& rng) {
  const int64_t n = static_cast<int64_t>(ids.size());
  switch (kind) {
    case Kind::kPaddingFIFO: {
      // A batch has one payload length: the longest; shorter ids are padded
      // here by the producer, and the queue slices them back to that length.
      // To keep per-id payloads exact, batches of padding queues use ids of
      // one length class only (see Producer).
      const int64_t len = n == 0 ? 0 : PayloadLen(ids[0]);
      Tensor payload(DType::kInt32, {n, len});
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < len; ++j) payload.data<int32_t>()[i * len + j] = PayloadValue(ids[i]);
      }
      return Element{Vec<int64_t>(ids), payload};
    }
    case Kind::kPriority: {
      std::vector<int64_t> priorities(ids.size());
      for (auto& p : priorities) p = static_cast<int64_t>(rng() % 10);
      return Element{Vec<int64_t>(priorities), Vec<int64_t>(ids)};
    }
    default:
      return Element{Vec<int64_t>(ids)};
  }
}

Element MakeOne(Kind kind, int64_t id, std::mt19937& rng) {
  switch (kind) {
    case Kind::kPaddingFIFO:
      return Element{I64(id), Filled<int32_t>({PayloadLen(id)}, PayloadValue(id))};
    case Kind::kPriority:
      return Element{I64(static_cast<int64_t>(rng() % 10)), I64(id)};
    default:
      return Element{I64(id)};
  }
}

// Appends the ids of a dequeued element (batched: a dequeue_many/up_to
// result) to `ids`; returns a description of anything malformed, or "".
std::string Extract(Kind kind, const Element& e, bool batched, std::vector<int64_t>* ids) {
  const size_t id_index = kind == Kind::kPriority ? 1 : 0;
  const size_t expected_components = kind == Kind::kFIFO || kind == Kind::kRandomShuffle ? 1 : 2;
  if (e.size() != expected_components) return "wrong component count";
  const Tensor& id_t = e[id_index];
  if (id_t.dtype() != DType::kInt64) return "id dtype";
  if (id_t.rank() != (batched ? 1 : 0)) return "id rank";
  const auto got = Values<int64_t>(id_t);
  const int64_t n = static_cast<int64_t>(got.size());
  if (kind == Kind::kPriority) {
    const auto p = Values<int64_t>(e[0]);
    if (static_cast<int64_t>(p.size()) != n) return "priority count";
    if (!std::is_sorted(p.begin(), p.end())) return "priority batch not sorted";
  }
  if (kind == Kind::kPaddingFIFO) {
    const Tensor& payload = e[1];
    if (payload.dtype() != DType::kInt32) return "payload dtype";
    if (!batched) {
      if (payload.rank() != 1 || payload.shape().dim(0) != PayloadLen(got[0])) return "payload len";
      for (int32_t v : Values<int32_t>(payload)) {
        if (v != PayloadValue(got[0])) return "payload value";
      }
    } else {
      int64_t max_len = 0;
      for (int64_t id : got) max_len = std::max(max_len, PayloadLen(id));
      if (payload.rank() != 2 || payload.shape().dim(0) != n || payload.shape().dim(1) != max_len) {
        return "padded shape " + payload.shape().DebugString();
      }
      const auto v = Values<int32_t>(payload);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < max_len; ++j) {
          const int32_t want = j < PayloadLen(got[i]) ? PayloadValue(got[i]) : 0;
          if (v[i * max_len + j] != want) return "padded value";
        }
      }
    }
  }
  ids->insert(ids->end(), got.begin(), got.end());
  return "";
}

// ---------------------------------------------------------------------------
// Random waits.

// Where a worker publishes the CancellationManager of its current call, so
// that the canceller thread can cancel it.
struct CancelSlot {
  std::mutex mu;
  std::shared_ptr<CancellationManager> cm;
};

// Builds the WaitOptions of one call: usually the safety deadline only;
// sometimes a short deadline, a published CancellationManager, or an
// interrupt check that fails at random. Sets *interruptible when the call may
// fail for one of those reasons.
class RandomWait {
 public:
  RandomWait(std::mt19937* rng, CancelSlot* slot) : rng_(rng), slot_(slot) {}
  ~RandomWait() { Unpublish(); }

  WaitOptions Next(bool* interruptible) {
    Unpublish();
    WaitOptions o = Safe();
    *interruptible = true;
    const unsigned r = (*rng_)() % 100;
    if (r < 15) {
      o.deadline = WaitOptions::Clock::now() + std::chrono::microseconds((*rng_)() % 100);
    } else if (r < 30) {
      auto cm = std::make_shared<CancellationManager>();
      {
        std::lock_guard<std::mutex> l(slot_->mu);
        slot_->cm = cm;
      }
      cm_ = cm;
      o.cancellation = cm.get();
    } else if (r < 35) {
      auto draws = std::make_shared<std::atomic<unsigned>>((*rng_)());
      o.interrupt_check = [draws] {
        // A cheap shared generator: fails about one check in three.
        const unsigned x = draws->fetch_add(0x9E3779B9u) * 2654435761u;
        return (x >> 16) % 3 == 0 ? errors::Aborted("interrupted") : Status();
      };
      o.interrupt_check_interval = std::chrono::milliseconds(1);
    } else {
      *interruptible = false;
    }
    return o;
  }

  void Unpublish() {
    if (!cm_) return;
    std::lock_guard<std::mutex> l(slot_->mu);
    if (slot_->cm == cm_) slot_->cm.reset();
    cm_.reset();
  }

 private:
  std::mt19937* rng_;
  CancelSlot* slot_;
  std::shared_ptr<CancellationManager> cm_;
};

// ---------------------------------------------------------------------------
// The run.

struct EnqueueRecord {
  std::vector<int64_t> ids;
  bool many = false;
  bool interruptible = false;
  Status status;
};

struct ConsumerLog {
  std::vector<int64_t> ids;         // in delivery order
  std::vector<std::string> errors;  // protocol violations seen by this consumer
};

class QueueStressTest : public ::testing::TestWithParam<StressParam> {
 protected:
  Kind kind() const { return GetParam().kind; }
  CloseMode mode() const { return GetParam().mode; }

  void Producer(int p, uint32_t seed, std::vector<EnqueueRecord>* log) {
    std::mt19937 rng(seed);
    RandomWait waits(&rng, &slots_[p]);
    int64_t seq = 0;
    const int ops = OpsPerProducer();
    for (int op = 0; op < ops && !queue_->is_closed(); ++op) {
      Pace(rng);
      EnqueueRecord rec;
      rec.many = rng() % 2 == 0;
      if (rec.many) {
        const int n = static_cast<int>(rng() % (kMaxBatch + 1));  // 0 included
        for (int i = 0; i < n; ++i) {
          int64_t id = p * kStride + seq++;
          // Padding queues: one payload length per batch (see MakeBatch).
          if (kind() == Kind::kPaddingFIFO && i > 0) {
            while (PayloadLen(id) != PayloadLen(rec.ids[0])) id = p * kStride + seq++;
          }
          rec.ids.push_back(id);
        }
      } else {
        rec.ids.push_back(p * kStride + seq++);
      }
      const WaitOptions w = waits.Next(&rec.interruptible);
      rec.status = rec.many ? queue_->EnqueueMany(MakeBatch(kind(), rec.ids, rng), w)
                            : queue_->Enqueue(MakeOne(kind(), rec.ids[0], rng), w);
      waits.Unpublish();
      log->push_back(std::move(rec));
      producer_ops_.fetch_add(1);
    }
  }

  void Consumer(int c, uint32_t seed, ConsumerLog* log) {
    std::mt19937 rng(seed);
    RandomWait waits(&rng, &slots_[kProducers + c]);
    bool many_allowed = true;
    std::map<int64_t, int64_t> last_seq;  // per producer, for order checks
    while (true) {
      Pace(rng);
      const unsigned form = rng() % 3;  // 0 dequeue, 1 dequeue_many, 2 dequeue_up_to
      const bool use_many = form == 1 && many_allowed;
      const int64_t n = 1 + static_cast<int64_t>(rng() % kMaxBatch);
      bool interruptible = false;
      const WaitOptions w = waits.Next(&interruptible);
      Result<Element> r = form == 0     ? queue_->Dequeue(w)
                          : use_many    ? queue_->DequeueMany(n, w)
                                        : queue_->DequeueUpTo(n, w);
      waits.Unpublish();
      if (r.ok()) {
        std::vector<int64_t> got;
        const std::string bad = Extract(kind(), *r, form != 0, &got);
        if (!bad.empty()) log->errors.push_back("malformed element: " + bad);
        if (form != 0 && (got.empty() || static_cast<int64_t>(got.size()) > n ||
                          (use_many && static_cast<int64_t>(got.size()) != n))) {
          log->errors.push_back("batch of " + std::to_string(got.size()) + " for n=" +
                                std::to_string(n));
        }
        for (int64_t id : got) {
          if (KeepsOrderPerProducer()) {
            auto [it, inserted] = last_seq.emplace(id / kStride, id % kStride);
            if (!inserted) {
              if (id % kStride <= it->second) {
                log->errors.push_back("producer order broken at id " + std::to_string(id));
              }
              it->second = id % kStride;
            }
          }
          log->ids.push_back(id);
        }
        continue;
      }
      const Code code = r.status().code();
      if (code == Code::kOutOfRange) {
        if (!queue_->is_closed()) log->errors.push_back("OutOfRange on an open queue");
        if (use_many) {
          many_allowed = false;  // a short remainder may be left for up_to
          continue;
        }
        return;  // closed and empty
      }
      if (interruptible && (code == Code::kCancelled || code == Code::kDeadlineExceeded ||
                            code == Code::kAborted)) {
        ++dequeue_failures_[static_cast<int>(code)];
        continue;
      }
      log->errors.push_back("unexpected dequeue status " + r.status().ToString());
      return;
    }
  }

  // Now and then a worker pauses, so that the other side fills or drains the
  // queue and calls block (where deadlines, cancellations and interrupts can
  // hit them). Load shaping only: correctness never depends on it.
  static void Pace(std::mt19937& rng) {
    if (rng() % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 1500));
  }

  bool KeepsOrderPerProducer() const {
    return kind() == Kind::kFIFO || kind() == Kind::kPaddingFIFO;
  }

  void Canceller(uint32_t seed) {
    std::mt19937 rng(seed);
    while (!stop_.load()) {
      CancelSlot& slot = slots_[rng() % slots_.size()];
      std::shared_ptr<CancellationManager> cm;
      {
        std::lock_guard<std::mutex> l(slot.mu);
        cm = slot.cm;
      }
      if (cm) cm->StartCancel();
      // Pacing only: correctness never depends on this pause.
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 30));
    }
  }

  // Waits until `target` producer operations are done (or all producers
  // finished), then closes.
  Status CloseAfter(int64_t target, bool cancel_pending) {
    while (producer_ops_.load() < target && !producers_done_.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return queue_->Close(cancel_pending, Safe());
  }

  void Run() {
    ASSERT_OK_AND_ASSIGN(queue_, NewStressQueue(kind()));
    const int ops = OpsPerProducer();
    std::mt19937 rng(static_cast<uint32_t>(static_cast<int>(kind()) * 10 + static_cast<int>(mode())));
    slots_ = std::vector<CancelSlot>(kProducers + kConsumers);

    std::vector<std::vector<EnqueueRecord>> produced(kProducers);
    std::vector<ConsumerLog> consumed(kConsumers);
    std::vector<std::thread> producers, consumers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([this, p, s = rng(), &produced] { Producer(p, s, &produced[p]); });
    }
    for (int c = 0; c < kConsumers; ++c) {
      consumers.emplace_back([this, c, s = rng(), &consumed] { Consumer(c, s, &consumed[c]); });
    }
    std::thread canceller([this, s = rng()] { Canceller(s); });

    const int64_t total_ops = static_cast<int64_t>(ops) * kProducers;
    std::vector<std::future<Status>> closers;
    std::vector<bool> closer_cancels;
    if (mode() == CloseMode::kCancelAtRandom) {
      const int64_t at = static_cast<int64_t>(rng() % total_ops);
      closers.push_back(Async([this, at] { return CloseAfter(at, true); }));
      closer_cancels.push_back(true);
    } else if (mode() == CloseMode::kRacingCloses) {
      const int64_t a = static_cast<int64_t>(rng() % total_ops);
      const int64_t b = static_cast<int64_t>(rng() % total_ops);
      closers.push_back(Async([this, a] { return CloseAfter(a, false); }));
      closers.push_back(Async([this, b] { return CloseAfter(b, true); }));
      closer_cancels = {false, true};
    }

    for (auto& t : producers) t.join();
    producers_done_.store(true);
    if (mode() == CloseMode::kGraceful) {
      EXPECT_OK(queue_->Close(false, Safe()));
    }
    for (size_t i = 0; i < closers.size(); ++i) {
      EXPECT_TRUE(Finishes(closers[i]));
      const Status s = closers[i].get();
      if (closer_cancels[i]) {
        EXPECT_OK(s);  // a cancelling close never fails
      } else if (!s.ok()) {
        // Lost the race: already closed, or cancelled by the cancelling close.
        EXPECT_EQ(s.code(), Code::kCancelled) << s;
      }
    }
    if (!queue_->is_closed()) {
      EXPECT_OK(queue_->Close(true, Safe()));
    }
    for (auto& t : consumers) t.join();
    stop_.store(true);
    canceller.join();

    // Drain whatever the consumers left (they stop at the first OutOfRange).
    std::vector<int64_t> drained;
    while (true) {
      auto r = queue_->DequeueUpTo(100, Safe());
      if (!r.ok()) {
        EXPECT_TRUE(StatusIs(r, Code::kOutOfRange));
        break;
      }
      const std::string bad = Extract(kind(), *r, true, &drained);
      EXPECT_EQ(bad, "");
    }
    EXPECT_TRUE(drained.empty()) << drained.size() << " elements left after consumers saw OutOfRange";
    EXPECT_EQ(queue_->size(), 0);

    Account(produced, consumed, drained);
  }

  void Account(const std::vector<std::vector<EnqueueRecord>>& produced,
               const std::vector<ConsumerLog>& consumed, const std::vector<int64_t>& drained) {
    std::map<int64_t, int> seen;
    int64_t delivered = 0;
    for (const ConsumerLog& log : consumed) {
      for (const std::string& e : log.errors) ADD_FAILURE() << e;
      for (int64_t id : log.ids) ++seen[id], ++delivered;
    }
    for (int64_t id : drained) ++seen[id], ++delivered;

    auto count = [&seen](int64_t id) {
      auto it = seen.find(id);
      return it == seen.end() ? 0 : it->second;
    };
    std::map<int64_t, bool> attempted;
    int64_t admitted = 0, ok_ops = 0, failed_ops = 0;
    for (const auto& log : produced) {
      for (const EnqueueRecord& rec : log) {
        for (int64_t id : rec.ids) attempted[id] = true;
        const Code code = rec.status.code();
        if (rec.status.ok()) {
          ++ok_ops;
          for (int64_t id : rec.ids) {
            EXPECT_EQ(count(id), 1) << "id " << id << " of a successful enqueue";
          }
          admitted += static_cast<int64_t>(rec.ids.size());
          continue;
        }
        ++failed_ops;
        const bool closed_failure = code == Code::kCancelled && mode() != CloseMode::kGraceful;
        EXPECT_TRUE(closed_failure || (rec.interruptible && (code == Code::kCancelled ||
                                                             code == Code::kDeadlineExceeded ||
                                                             code == Code::kAborted)))
            << "unexpected enqueue status " << rec.status;
        // What came out must be a prefix of the batch (empty for a single).
        size_t prefix = 0;
        while (prefix < rec.ids.size() && count(rec.ids[prefix]) == 1) ++prefix;
        for (size_t i = prefix; i < rec.ids.size(); ++i) {
          EXPECT_EQ(count(rec.ids[i]), 0)
              << "id " << rec.ids[i] << " of a failed enqueue delivered after a gap";
        }
        if (!rec.many) {
          EXPECT_EQ(prefix, 0u) << "a failed single enqueue was delivered";
        }
        admitted += static_cast<int64_t>(prefix);
      }
    }
    for (const auto& [id, times] : seen) {
      EXPECT_EQ(times, 1) << "id " << id << " delivered " << times << " times";
      EXPECT_TRUE(attempted.count(id)) << "id " << id << " was never enqueued";
    }
    EXPECT_EQ(delivered, admitted);
    const QueueStats stats = queue_->stats();
    EXPECT_EQ(stats.enqueued, admitted);
    EXPECT_EQ(stats.dequeued, delivered);
    EXPECT_GT(ok_ops, 0);
    RecordProperty("delivered", static_cast<int>(delivered));
    RecordProperty("failed_enqueues", static_cast<int>(failed_ops));
    RecordProperty("dequeues_cancelled", dequeue_failures_[static_cast<int>(Code::kCancelled)].load());
    RecordProperty("dequeues_timed_out",
                   dequeue_failures_[static_cast<int>(Code::kDeadlineExceeded)].load());
    RecordProperty("dequeues_interrupted", dequeue_failures_[static_cast<int>(Code::kAborted)].load());
  }

  std::shared_ptr<Queue> queue_;
  std::vector<CancelSlot> slots_;
  std::atomic<int64_t> producer_ops_{0};
  std::atomic<bool> producers_done_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int> dequeue_failures_[17] = {};
};

TEST_P(QueueStressTest, NoAcceptedElementIsLostOrDuplicated) { Run(); }

std::vector<StressParam> AllParams() {
  std::vector<StressParam> v;
  for (Kind k : {Kind::kFIFO, Kind::kRandomShuffle, Kind::kPaddingFIFO, Kind::kPriority}) {
    for (CloseMode m : {CloseMode::kGraceful, CloseMode::kCancelAtRandom, CloseMode::kRacingCloses}) {
      v.push_back({k, m});
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllQueues, QueueStressTest, ::testing::ValuesIn(AllParams()), ParamName);

// Many threads on one queue: enqueue_many batches larger than the capacity
// against dequeue_many batches larger than the capacity (partial progress on
// both sides), with no interruptions; FIFO order is total here, so the
// concatenated output of the one consumer is exactly the input.
TEST(QueueStressTest, BatchesLargerThanCapacityFlowThroughInOrder) {
  ASSERT_OK_AND_ASSIGN(auto q, NewFIFOQueue(Opts(3, {DType::kInt64}, {ScalarShape()})));
  const int64_t total = 50LL * ScalePercent();
  auto producer = Async([&] {
    for (int64_t start = 0; start < total; start += 7) {
      Status s = q->EnqueueMany(Element{Vec<int64_t>(Iota(start, std::min(total, start + 7)))}, Safe());
      if (!s.ok()) return s;
    }
    return q->Close(false, Safe());
  });
  std::vector<int64_t> out;
  while (true) {
    auto r = q->DequeueUpTo(5, Safe());
    if (!r.ok()) {
      EXPECT_TRUE(StatusIs(r, Code::kOutOfRange));
      break;
    }
    auto v = Values<int64_t>((*r)[0]);
    out.insert(out.end(), v.begin(), v.end());
  }
  ASSERT_TRUE(Finishes(producer));
  EXPECT_OK(producer.get());
  EXPECT_EQ(out, Iota(0, total));
}

}  // namespace
}  // namespace sluice::queue
