#include "sluice/train/thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "train_test_util.h"

namespace sluice::train {
namespace {

using testing::Counter;
using testing::Notification;
using namespace std::chrono_literals;  // NOLINT

TEST(ThreadTest, StartRunsTheBodyOnceAndJoinWaitsForIt) {
  Counter runs;
  auto t = Thread::Create("worker", [&] { runs.Increment(); });
  EXPECT_FALSE(t->started());
  EXPECT_TRUE(t->Start());
  t->Join();
  EXPECT_EQ(runs.value(), 1);
  EXPECT_TRUE(t->started());
  EXPECT_TRUE(t->finished());
  EXPECT_FALSE(t->is_alive());
  EXPECT_EQ(t->name(), "worker");
}

TEST(ThreadTest, SecondStartReturnsFalse) {
  Counter runs;
  auto t = Thread::Create("worker", [&] { runs.Increment(); });
  EXPECT_TRUE(t->Start());
  EXPECT_FALSE(t->Start());
  t->Join();
  EXPECT_EQ(runs.value(), 1);
}

TEST(ThreadTest, UnstartedThreadIsNotAliveAndJoinsAtOnce) {
  auto t = Thread::Create("never", [] {});
  EXPECT_FALSE(t->is_alive());
  EXPECT_TRUE(t->JoinFor(0ns));
  t->Join();
  EXPECT_FALSE(t->finished());
}

TEST(ThreadTest, JoinForTimesOutWhileTheBodyRuns) {
  Notification release;
  auto t = Thread::Create("blocked", [&] { release.Wait(); });
  t->Start();
  EXPECT_FALSE(t->JoinFor(1ms));
  EXPECT_TRUE(t->is_alive());
  release.Notify();
  EXPECT_TRUE(t->JoinFor(testing::kSafety));
  EXPECT_FALSE(t->is_alive());
}

TEST(ThreadTest, ExitCallbacksRunAfterTheBodyOrAtOnceWhenFinished) {
  Notification release;
  std::atomic<bool> body_done{false};
  Counter callbacks;
  auto t = Thread::Create("worker", [&] {
    release.Wait();
    body_done = true;
  });
  t->AddExitCallback([&] {
    EXPECT_TRUE(body_done.load());
    callbacks.Increment();
  });
  t->Start();
  release.Notify();
  ASSERT_TRUE(callbacks.WaitForAtLeast(1));
  t->Join();
  t->AddExitCallback([&] { callbacks.Increment(); });  // runs here, at once
  EXPECT_EQ(callbacks.value(), 2);
}

TEST(ThreadTest, BodyCapturesAreReleasedBeforeTheThreadCountsAsFinished) {
  auto resource = std::make_shared<int>(7);
  std::weak_ptr<int> weak = resource;
  auto t = Thread::Create("owner", [r = std::move(resource)] { EXPECT_EQ(*r, 7); });
  t->Start();
  t->Join();
  EXPECT_TRUE(weak.expired());
}

TEST(ThreadTest, IsCurrentThreadOnlyInsideTheBody) {
  std::atomic<bool> inside{false};
  std::shared_ptr<Thread> t;
  Notification created;
  t = Thread::Create("self", [&] {
    created.Wait();
    inside = t->is_current_thread();
  });
  created.Notify();
  t->Start();
  t->Join();
  EXPECT_TRUE(inside.load());
  EXPECT_FALSE(t->is_current_thread());
}

TEST(ThreadTest, DroppingTheLastHandleOfARunningThreadLetsItFinish) {
  auto release = std::make_shared<Notification>();
  auto done = std::make_shared<Notification>();
  {
    auto t = Thread::Create("daemon", [release, done] {
      release->Wait();
      done->Notify();
    });
    t->Start();
  }  // detached, not joined: this does not block
  release->Notify();
  EXPECT_TRUE(done->Wait());
}

TEST(ThreadTest, ABodyMayDropItsOwnLastHandle) {
  auto done = std::make_shared<Notification>();
  auto holder = std::make_shared<std::shared_ptr<Thread>>();
  Notification started;
  *holder = Thread::Create("self-owned", [holder, done, &started] {
    started.Wait();
    holder->reset();  // the last handle: its destructor runs on this thread
    done->Notify();
  });
  std::shared_ptr<Thread> t = *holder;
  t->Start();
  t.reset();
  started.Notify();
  EXPECT_TRUE(done->Wait());
}

}  // namespace
}  // namespace sluice::train
