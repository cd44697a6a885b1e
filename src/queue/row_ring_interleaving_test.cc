// RowRing's interleavings, explored exhaustively: the ring instantiated
// with atomics that stop at every operation (ScheduledAtomics), and a
// scheduler that runs two or three logical threads one step at a time
// over every order of their atomic operations (a stateless search: each
// run replays a prefix of choices, then backtracks), checking the ring's
// invariants before every step and each scenario's outcome after every
// run. Executions are sequentially consistent: the memory orders
// themselves are TSan's and the stress tests' to check (row_ring_test.cc).
// By default a run preempts a thread that could go on at most 3 times (2
// with three threads), which keeps the tests short enough for every CI
// run; SLUICE_EXHAUSTIVE=1 lifts the bound: every interleaving (long).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "queue/row_ring.h"
#include "queue/row_ring_impl.h"
#include "queue_test_util.h"

namespace sluice::queue {
namespace {

using namespace ::sluice::queue::testing;  // NOLINT: test helpers

// Runs logical threads one at a time. A thread stops before each atomic
// operation (Point); the scheduler then picks which thread takes the next
// step. A thread that spins (SpinUntil) blocks until another thread writes.
class Scheduler {
 public:
  struct Choice {
    size_t chosen;
    size_t options;
  };

  explicit Scheduler(int preemption_bound) : bound_(preemption_bound) {}

  // Every interleaving of `bodies` (made fresh for each run by `make`):
  // `check` runs before every step, `verify` after every run. Returns the
  // number of runs.
  int64_t Explore(const std::function<std::vector<std::function<void()>>()>& make,
                  const std::function<void()>& check, const std::function<void()>& verify) {
    std::vector<Choice> plan;
    int64_t runs = 0;
    while (true) {
      check_ = check;
      RunOnce(make(), plan);
      verify();
      ++runs;
      plan = taken_;
      while (!plan.empty() && plan.back().chosen + 1 >= plan.back().options) plan.pop_back();
      if (plan.empty()) return runs;
      ++plan.back().chosen;
      if (::testing::Test::HasFailure()) return runs;
    }
  }

  // The calling logical thread's next step is an atomic operation.
  void Point() {
    std::unique_lock<std::mutex> lock(mu_);
    if (check_) check_();
    const int me = current_;
    ScheduleLocked(me);
    cv_.wait(lock, [&] { return current_ == me; });
  }
  // The calling thread waits for another thread's write (a spin-wait).
  void BlockUntilWrite() {
    std::unique_lock<std::mutex> lock(mu_);
    const int me = current_;
    state_[me] = State::kBlocked;
    ScheduleLocked(me);
    cv_.wait(lock, [&] { return current_ == me; });
  }
  // The calling thread wrote: threads waiting for a write may go on.
  void Wrote() {
    std::lock_guard<std::mutex> lock(mu_);
    for (State& s : state_) {
      if (s == State::kBlocked) s = State::kEnabled;
    }
  }

  static thread_local Scheduler* current;

 private:
  enum class State { kEnabled, kBlocked, kDone };

  void RunOnce(std::vector<std::function<void()>> bodies, const std::vector<Choice>& plan) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      state_.assign(bodies.size(), State::kEnabled);
      plan_ = plan;
      taken_.clear();
      preemptions_ = 0;
      current_ = -1;
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < bodies.size(); ++i) {
      threads.emplace_back([this, i, body = std::move(bodies[i])] {
        {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [&] { return current_ == static_cast<int>(i); });
        }
        current = this;
        body();
        current = nullptr;
        std::lock_guard<std::mutex> lock(mu_);
        state_[i] = State::kDone;
        ScheduleLocked(static_cast<int>(i));
      });
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      ScheduleLocked(-1);
      cv_.wait(lock, [&] { return std::all_of(state_.begin(), state_.end(), [](State s) { return s == State::kDone; }); });
    }
    for (std::thread& t : threads) t.join();
  }

  // Picks the thread that takes the next step: the plan's choice while it
  // lasts, then the first option (the running thread when it can go on).
  void ScheduleLocked(int running) {
    std::vector<int> enabled;
    if (running >= 0 && state_[running] == State::kEnabled) enabled.push_back(running);
    for (int i = 0; i < static_cast<int>(state_.size()); ++i) {
      if (i != running && state_[i] == State::kEnabled) enabled.push_back(i);
    }
    if (enabled.empty()) {
      if (std::any_of(state_.begin(), state_.end(), [](State s) { return s == State::kBlocked; })) {
        std::fprintf(stderr, "deadlock: every thread waits for a write\n");
        std::abort();
      }
      current_ = -1;
      cv_.notify_all();
      return;
    }
    const bool preemptible = running >= 0 && enabled.front() == running;
    size_t options = enabled.size();
    if (preemptible && bound_ >= 0 && preemptions_ >= bound_) options = 1;
    size_t pick = 0;
    if (options > 1) {
      const size_t d = taken_.size();
      pick = d < plan_.size() ? plan_[d].chosen : 0;
      taken_.push_back({pick, options});
    }
    if (preemptible && pick > 0) ++preemptions_;
    current_ = enabled[pick];
    cv_.notify_all();
  }

  const int bound_;  // preemptions per run; -1: none
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> check_;
  std::vector<State> state_;
  std::vector<Choice> plan_, taken_;
  int preemptions_ = 0;
  int current_ = -1;
};

thread_local Scheduler* Scheduler::current = nullptr;

// std::atomic's interface, each operation a step of the scheduler. Off the
// scheduler's threads (a scenario's setup and checks) it is a plain atomic.
template <class T>
class ScheduledAtomic {
 public:
  ScheduledAtomic() = default;
  ScheduledAtomic(T v) : v_(v) {}  // NOLINT: as std::atomic's

  T load(std::memory_order = std::memory_order_seq_cst) const {
    Step();
    return v_.load();
  }
  void store(T v, std::memory_order = std::memory_order_seq_cst) {
    Step();
    v_.store(v);
    Wrote();
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order, std::memory_order) {
    Step();
    const bool ok = v_.compare_exchange_strong(expected, desired);
    if (ok) Wrote();
    return ok;
  }
  T fetch_add(T n, std::memory_order = std::memory_order_seq_cst) {
    Step();
    const T old = v_.fetch_add(n);
    Wrote();
    return old;
  }
  T fetch_or(T n, std::memory_order = std::memory_order_seq_cst) {
    Step();
    const T old = v_.fetch_or(n);
    Wrote();
    return old;
  }
  // The value, not a step: for the invariant checks.
  T peek() const { return v_.load(); }

 private:
  static void Step() {
    if (Scheduler::current != nullptr) Scheduler::current->Point();
  }
  static void Wrote() {
    if (Scheduler::current != nullptr) Scheduler::current->Wrote();
  }
  std::atomic<T> v_{};
};

struct ScheduledAtomics {
  template <class T>
  using Atomic = ScheduledAtomic<T>;
  template <class Ready>
  static void SpinUntil(Ready ready) {
    while (!ready()) {
      if (Scheduler::current != nullptr) Scheduler::current->BlockUntilWrite();
    }
  }
  // Small slots keep a whole-lap push to a few steps.
  static constexpr int64_t kBatchRows = 4;
};

}  // namespace

using TestRing = BasicRowRing<ScheduledAtomics>;

template <>
class RowRingInspector<TestRing> {
 public:
  // The invariants that hold between any two atomic operations.
  static void Check(const TestRing& r) {
    constexpr uint64_t kF = TestRing::kFrozen;
    const uint64_t k = TestRing::kBatchRows;
    const uint64_t tail = r.tail_.peek(), head = r.head_.peek();
    // Freeze marks the tail first, Thaw clears the head first.
    ASSERT_TRUE(!(head & kF) || (tail & kF)) << "head frozen, tail not";
    const uint64_t h = head & ~kF, t = tail & ~kF;
    ASSERT_LE(h, t) << "a pop passed the tail";
    ASSERT_LE(t - h, static_cast<uint64_t>(r.capacity_)) << "more than capacity stored";
    ASSERT_LE(r.head_seen_.peek(), h) << "the producers' head is ahead of the head";
    for (uint64_t row = 0; row < r.rows_; ++row) {
      const uint64_t s = r.seq_[row].peek();
      if (s == row) continue;  // never published
      ASSERT_EQ((s - 1) & r.mask_, row) << "sequence word of row " << row;
      ASSERT_LT(s - 1, t) << "position " << s - 1 << " published beyond the tail";
    }
    for (uint64_t p = h; p < t; ++p) ASSERT_LE(r.seq_[p & r.mask_].peek(), p + 1);
    for (uint64_t i = 0; i < r.rows_ / k; ++i) {
      const auto& b = r.batches_[i];
      const uint64_t released = b.released.peek(), drained = b.drained.peek();
      // Rows of slot i below the head: the most that can be released.
      const uint64_t below = h / r.rows_ * k + std::min<uint64_t>(k, (h % r.rows_) - std::min(h % r.rows_, i * k));
      ASSERT_LE(released, below) << "slot " << i << " released rows not yet popped";
      ASSERT_TRUE(drained == released / k || (released % k == 0 && drained + 1 == released / k))
          << "slot " << i << ": drained " << drained << ", released " << released;
    }
  }
};

namespace {

constexpr int64_t kRows = TestRing::kBatchRows;
using Fast = TestRing::Fast;

bool Exhaustive() {
  const char* e = std::getenv("SLUICE_EXHAUSTIVE");
  return e != nullptr && e[0] == '1';
}
// Preemptions per run (-1: none) for two logical threads and for three.
int Bound(int threads = 2) {
  if (Exhaustive()) return -1;
  return threads == 2 ? 3 : 2;
}

// One scenario's ring and what its threads saw, made afresh for each run.
struct World {
  explicit World(int64_t capacity) : ring(&mu, capacity, {DType::kInt64}, {TensorShape{}}) {}

  // Elements pushed or popped while no scheduled thread runs.
  void Push(int64_t v) { ASSERT_EQ(ring.TryPush(Element{I64(v)}), Fast::kDone); }
  void Pop(int64_t expected) {
    Element e;
    ASSERT_EQ(ring.TryPop(&e), Fast::kDone);
    ASSERT_EQ(ScalarOf<int64_t>(e[0]), expected);
  }
  // What the lock holder finds left, in order.
  std::vector<int64_t> Drain() {
    MutexLock lock(&mu);
    std::vector<int64_t> out;
    ring.Freeze(mu);
    while (ring.Size(mu) > 0) out.push_back(ScalarOf<int64_t>(ring.Pop(mu)[0]));
    ring.Thaw(mu);
    return out;
  }

  Mutex mu;
  TestRing ring;
  std::vector<int64_t> popped[3];  // per thread, in order
  std::vector<int64_t> pushed[3];  // per thread, the pushes that succeeded
};

void RecordPop(World& w, int thread) {
  Element e;
  if (w.ring.TryPop(&e) == Fast::kDone) w.popped[thread].push_back(ScalarOf<int64_t>(e[0]));
}
void RecordPush(World& w, int thread, int64_t v) {
  if (w.ring.TryPush(Element{I64(v)}) == Fast::kDone) w.pushed[thread].push_back(v);
}
void RecordPopRows(World& w, int thread, int64_t n) {
  Element e;
  if (w.ring.TryPopRows(n, &e) == Fast::kDone) {
    EXPECT_EQ(e[0].shape().dim(0), n);
    for (int64_t v : Values<int64_t>(e[0])) w.popped[thread].push_back(v);
  }
}

// Runs `scenario` over every interleaving: `setup` fills a fresh World
// (unscheduled), `threads` are the logical threads' bodies, and after
// each run every value that went in came out once: popped by a thread or
// left in the ring, `in_order` in the order pushed.
int64_t Explore(int64_t capacity, int bound, const std::function<void(World&)>& setup,
                const std::vector<std::function<void(World&)>>& threads, std::vector<int64_t> prefilled,
                bool in_order) {
  std::unique_ptr<World> w;
  Scheduler scheduler(bound);
  auto make = [&] {
    w = std::make_unique<World>(capacity);
    setup(*w);
    std::vector<std::function<void()>> bodies;
    for (const auto& t : threads) bodies.push_back([&w, &t] { t(*w); });
    return bodies;
  };
  auto check = [&] { RowRingInspector<TestRing>::Check(w->ring); };
  auto verify = [&] {
    std::vector<int64_t> in = prefilled, out = w->Drain();
    for (const auto& p : w->pushed) in.insert(in.end(), p.begin(), p.end());
    std::vector<int64_t> all_out = out;
    for (const auto& p : w->popped) {
      all_out.insert(all_out.end(), p.begin(), p.end());
      EXPECT_TRUE(!in_order || std::is_sorted(p.begin(), p.end())) << "a thread's pops out of order";
    }
    EXPECT_TRUE(!in_order || std::is_sorted(out.begin(), out.end())) << "the rest out of order";
    std::sort(in.begin(), in.end());
    std::sort(all_out.begin(), all_out.end());
    EXPECT_EQ(all_out, in) << "lost or duplicated";
    w.reset();  // views and buffers go (LeakSanitizer checks they all do)
  };
  return scheduler.Explore(make, check, verify);
}

TEST(RowRingInterleavingTest, PushesRaceAPopOnAFreshRing) {
  const int64_t runs = Explore(
      4, Bound(), [](World&) {},
      {[](World& w) { RecordPush(w, 0, 1); RecordPush(w, 0, 2); },
       [](World& w) { RecordPop(w, 1); }},
      {}, true);
  EXPECT_GT(runs, 1);
}

TEST(RowRingInterleavingTest, TwoPushesRaceForTheTail) {
  Explore(
      4, Bound(), [](World&) {},
      {[](World& w) { RecordPush(w, 0, 10); }, [](World& w) { RecordPush(w, 1, 20); }}, {}, false);
}

TEST(RowRingInterleavingTest, APopAndARunOfRowsRaceForTheHead) {
  Explore(
      4, Bound(), [](World& w) { for (int64_t v : {0, 1, 2}) w.Push(v); },
      {[](World& w) { RecordPop(w, 0); }, [](World& w) { RecordPopRows(w, 1, 2); }}, {0, 1, 2}, true);
}

// A whole lap published by one word, read while it is being published.
TEST(RowRingInterleavingTest, AWholeLapPushRacesRunsAndSingles) {
  Explore(
      4, Bound(), [](World&) {},
      {[](World& w) {
         Element batch{Vec<int64_t>({0, 1, 2, 3})};
         if (w.ring.TryPushBatch(batch) == Fast::kDone) {
           for (int64_t v : {0, 1, 2, 3}) w.pushed[0].push_back(v);
         }
       },
       [](World& w) { RecordPopRows(w, 1, kRows); RecordPop(w, 1); }},
      {}, true);
}

// A lap taken whole (its buffers leave by move) while the next slot starts.
TEST(RowRingInterleavingTest, AWholeLapTakeRacesPushesIntoTheNextSlot) {
  Explore(
      5, Bound(),
      [](World& w) {
        Element batch{Vec<int64_t>({0, 1, 2, 3})};
        ASSERT_EQ(w.ring.TryPushBatch(batch), Fast::kDone);
      },
      {[](World& w) { RecordPopRows(w, 0, kRows); }, [](World& w) { RecordPush(w, 1, 4); RecordPush(w, 1, 5); }},
      {0, 1, 2, 3}, true);
}

// The lock holder freezes, pops, pushes and thaws while a lock-free push and
// pop run: calls that claimed a position before the freeze finish on their
// own, later ones see kBusy, and nothing is lost or reordered.
TEST(RowRingInterleavingTest, FreezeAndThawRaceLockFreeCalls) {
  Explore(
      4, Bound(), [](World& w) { w.Push(0); },
      {[](World& w) {
         MutexLock lock(&w.mu);
         w.ring.Freeze(w.mu);
         if (w.ring.Size(w.mu) > 0) w.popped[0].push_back(ScalarOf<int64_t>(w.ring.Pop(w.mu)[0]));
         if (w.ring.Size(w.mu) < 4) {
           w.ring.Push(w.mu, Element{I64(100)});
           w.pushed[0].push_back(100);
         }
         w.ring.Thaw(w.mu);
       },
       [](World& w) { RecordPush(w, 1, 1); RecordPop(w, 1); }},
      {0}, true);
}

// The lap wraps: the push that starts slot 0's second lap waits for the pop
// of its first lap's last row, which a third thread's pop may overtake.
TEST(RowRingInterleavingTest, ALapStartsOnlyOnceThePreviousLapIsDrained) {
  Explore(
      4, Bound(3),
      [](World& w) {
        for (int64_t v : {0, 1, 2, 3}) w.Push(v);
        for (int64_t v : {0, 1, 2}) w.Pop(v);
        for (int64_t v : {4, 5, 6}) w.Push(v);
      },
      {[](World& w) { RecordPop(w, 0); }, [](World& w) { RecordPop(w, 1); },
       [](World& w) { RecordPush(w, 2, 7); RecordPush(w, 2, 8); }},
      {3, 4, 5, 6}, true);
}

}  // namespace
}  // namespace sluice::queue
