#include "sluice/core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <latch>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace sluice {
namespace {

TEST(ThreadPoolTest, ReportsItsSize) {
  ThreadPool pool("test", 3);
  EXPECT_EQ(pool.num_threads(), 3);
}

TEST(ThreadPoolTest, RunsEveryScheduledClosure) {
  std::atomic<int> count{0};
  {
    ThreadPool pool("test", 4);
    for (int i = 0; i < 1000; ++i) pool.Schedule([&] { count.fetch_add(1); });
  }  // the destructor drains the queue before joining
  EXPECT_EQ(count.load(), 1000);
}

TEST(ThreadPoolTest, DestructorRunsWorkScheduledBehindABlockedClosure) {
  // The only worker is held until every closure is scheduled, so all of them
  // are still queued when the destructor starts; none may be dropped.
  std::atomic<int> count{0};
  auto gate = std::make_shared<std::latch>(1);
  {
    ThreadPool pool("test", 1);
    pool.Schedule([gate] { gate->wait(); });
    for (int i = 0; i < 100; ++i) pool.Schedule([&] { count.fetch_add(1); });
    gate->count_down();
  }
  EXPECT_EQ(count.load(), 100);
}

TEST(ThreadPoolTest, OneWorkerRunsClosuresInFifoOrder) {
  std::vector<int> order;  // touched only by the single worker, read after join
  {
    ThreadPool pool("fifo", 1);
    for (int i = 0; i < 50; ++i) pool.Schedule([&order, i] { order.push_back(i); });
  }
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

TEST(ThreadPoolTest, ClosuresMayScheduleMoreWorkEvenDuringShutdown) {
  std::atomic<int> count{0};
  std::function<void(int)> link;  // declared first: outlives the pool
  {
    ThreadPool pool("chain", 2);
    // Each link schedules the next; the destructor keeps draining.
    link = [&](int remaining) {
      count.fetch_add(1);
      if (remaining > 0) pool.Schedule([&link, remaining] { link(remaining - 1); });
    };
    pool.Schedule([&link] { link(99); });
  }
  EXPECT_EQ(count.load(), 100);
}

TEST(ThreadPoolTest, WorkersRunConcurrently) {
  // Four closures that each wait for all four: completes only if the pool
  // runs them on four threads at once.
  constexpr int kThreads = 4;
  std::latch all_running(kThreads);
  std::set<std::thread::id> ids;
  Mutex mu;
  {
    ThreadPool pool("wide", kThreads);
    for (int i = 0; i < kThreads; ++i) {
      pool.Schedule([&] {
        all_running.arrive_and_wait();
        MutexLock lock(&mu);
        ids.insert(std::this_thread::get_id());
      });
    }
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
}

#if defined(__linux__)
std::string CurrentThreadName() {
  char buf[32] = {};
  pthread_getname_np(pthread_self(), buf, sizeof(buf));
  return buf;
}

TEST(ThreadPoolTest, NamesItsThreadsTruncatedToFifteenCharacters) {
  std::string seen;
  {
    ThreadPool pool("a_rather_long_pool_name", 1);
    pool.Schedule([&] { seen = CurrentThreadName(); });
  }
  EXPECT_EQ(seen, "a_rather_long_p");
}

TEST(ThreadPoolTest, SetCurrentThreadNameNamesTheCaller) {
  std::string seen;
  std::thread th([&] {
    SetCurrentThreadName("worker-7");
    seen = CurrentThreadName();
  });
  th.join();
  EXPECT_EQ(seen, "worker-7");
}
#endif

TEST(ThreadPoolTest, ManyProducersScheduleConcurrently) {
  std::atomic<int64_t> sum{0};
  {
    ThreadPool pool("sum", 2);
    std::vector<std::thread> producers;
    for (int p = 0; p < 4; ++p) {
      producers.emplace_back([&pool, &sum, p] {
        for (int i = 0; i < 250; ++i) pool.Schedule([&sum, p, i] { sum.fetch_add(p * 1000 + i); });
      });
    }
    for (auto& th : producers) th.join();
  }
  // sum over p of (p*1000*250 + 0+...+249)
  EXPECT_EQ(sum.load(), (0 + 1 + 2 + 3) * 1000 * 250 + 4 * (249 * 250 / 2));
}

}  // namespace
}  // namespace sluice
