#include "sluice/core/cancellation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>
#include <vector>

namespace sluice {
namespace {

// A one-shot gate: Wait() blocks until Open(). Synchronisation for tests,
// without sleeps.
class Gate {
 public:
  void Open() {
    MutexLock lock(&mu_);
    open_ = true;
    cv_.SignalAll();
  }
  void Wait() {
    MutexLock lock(&mu_);
    while (!open_) cv_.Wait(&mu_);
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool open_ SLUICE_GUARDED_BY(mu_) = false;
};

TEST(CancellationTest, TokensAreDistinct) {
  CancellationManager cm;
  std::set<CancellationManager::Token> tokens;
  for (int i = 0; i < 100; ++i) {
    CancellationManager::Token t = cm.NewToken();
    EXPECT_NE(t, CancellationManager::kInvalidToken);
    tokens.insert(t);
  }
  EXPECT_EQ(tokens.size(), 100u);
}

TEST(CancellationTest, StartCancelRunsEachCallbackOnce) {
  CancellationManager cm;
  int a = 0, b = 0;
  EXPECT_FALSE(cm.IsCancelled());
  EXPECT_TRUE(cm.RegisterCallback(cm.NewToken(), [&] { ++a; }));
  EXPECT_TRUE(cm.RegisterCallback(cm.NewToken(), [&] { ++b; }));
  cm.StartCancel();
  EXPECT_TRUE(cm.IsCancelled());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  cm.StartCancel();  // later calls do nothing
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
}

TEST(CancellationTest, CallbacksRunOnTheCancellingThread) {
  CancellationManager cm;
  std::thread::id ran_on;
  ASSERT_TRUE(cm.RegisterCallback(cm.NewToken(), [&] { ran_on = std::this_thread::get_id(); }));
  std::thread canceller([&] { cm.StartCancel(); });
  const std::thread::id canceller_id = canceller.get_id();
  canceller.join();
  EXPECT_EQ(ran_on, canceller_id);
}

TEST(CancellationTest, RegisterAfterCancelFailsAndNeverRuns) {
  CancellationManager cm;
  cm.StartCancel();
  bool ran = false;
  EXPECT_FALSE(cm.RegisterCallback(cm.NewToken(), [&] { ran = true; }));
  cm.StartCancel();
  EXPECT_FALSE(ran);
}

TEST(CancellationTest, DeregisteredCallbackDoesNotRun) {
  CancellationManager cm;
  bool ran = false;
  const auto token = cm.NewToken();
  ASSERT_TRUE(cm.RegisterCallback(token, [&] { ran = true; }));
  EXPECT_TRUE(cm.DeregisterCallback(token));
  cm.StartCancel();
  EXPECT_FALSE(ran);
}

TEST(CancellationTest, DeregisterOfAnUnknownTokenBeforeCancelSucceeds) {
  CancellationManager cm;
  EXPECT_TRUE(cm.DeregisterCallback(cm.NewToken()));
}

TEST(CancellationTest, DeregisterAfterCancelReturnsFalse) {
  CancellationManager cm;
  const auto token = cm.NewToken();
  int runs = 0;
  ASSERT_TRUE(cm.RegisterCallback(token, [&] { ++runs; }));
  cm.StartCancel();
  EXPECT_FALSE(cm.DeregisterCallback(token));
  EXPECT_EQ(runs, 1);
}

TEST(CancellationTest, CallbacksRunWithoutTheManagersLock) {
  // A callback may call back into the manager (IsCancelled, Register,
  // Deregister) without deadlocking.
  CancellationManager cm;
  bool saw_cancelled = false;
  bool registered_late = true;
  const auto self_token = cm.NewToken();
  bool self_deregister_result = true;
  ASSERT_TRUE(cm.RegisterCallback(self_token, [&] {
    saw_cancelled = cm.IsCancelled();
    registered_late = cm.RegisterCallback(cm.NewToken(), [] {});
    self_deregister_result = cm.DeregisterCallback(self_token);  // must not wait for itself
  }));
  cm.StartCancel();
  EXPECT_TRUE(saw_cancelled);
  EXPECT_FALSE(registered_late);
  EXPECT_FALSE(self_deregister_result);
}

TEST(CancellationTest, DeregisterWaitsForARunningCallback) {
  CancellationManager cm;
  const auto token = cm.NewToken();
  Gate callback_started;
  Gate release_callback;
  std::atomic<bool> callback_finished{false};
  ASSERT_TRUE(cm.RegisterCallback(token, [&] {
    callback_started.Open();
    release_callback.Wait();
    callback_finished.store(true);
  }));

  std::thread canceller([&] { cm.StartCancel(); });
  callback_started.Wait();

  // The callback is running now. Deregister must not return before it has.
  std::promise<bool> saw_finished;
  std::thread deregisterer([&] {
    const bool result = cm.DeregisterCallback(token);
    EXPECT_FALSE(result);
    saw_finished.set_value(callback_finished.load());
  });
  std::future<bool> done = saw_finished.get_future();
  // Whatever the interleaving, Deregister has not returned: the callback is
  // still held at the gate.
  EXPECT_EQ(done.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  release_callback.Open();
  EXPECT_TRUE(done.get());
  deregisterer.join();
  canceller.join();
}

TEST(CancellationTest, ConcurrentRegistrationAndCancelRunEveryAcceptedCallbackOnce) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  CancellationManager cm;
  std::atomic<int> accepted{0};
  std::atomic<int> ran{0};
  std::vector<std::thread> threads;
  Gate go;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      go.Wait();
      for (int i = 0; i < kPerThread; ++i) {
        if (cm.RegisterCallback(cm.NewToken(), [&] { ran.fetch_add(1); })) accepted.fetch_add(1);
      }
    });
  }
  std::thread canceller([&] {
    go.Wait();
    cm.StartCancel();
  });
  go.Open();
  for (auto& th : threads) th.join();
  canceller.join();
  EXPECT_TRUE(cm.IsCancelled());
  EXPECT_EQ(ran.load(), accepted.load());
}

TEST(CancellationTest, ConcurrentStartCancelRunsCallbacksOnce) {
  CancellationManager cm;
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(cm.RegisterCallback(cm.NewToken(), [&] { ran.fetch_add(1); }));
  std::vector<std::thread> cancellers;
  for (int i = 0; i < 4; ++i) cancellers.emplace_back([&] { cm.StartCancel(); });
  for (auto& th : cancellers) th.join();
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace sluice
