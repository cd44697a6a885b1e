// Cases from TensorFlow's training/coordinator_test.py, rewritten for
// Status-returning calls and without sleeps.
#include "sluice/train/coordinator.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "train_test_util.h"

namespace sluice::train {
namespace {

using testing::Counter;
using testing::IsOk;
using testing::Notification;
using testing::StatusIs;
using namespace std::chrono_literals;  // NOLINT

// A started thread that waits for the coordinator to stop, then counts.
std::shared_ptr<Thread> StartStopWaiter(Coordinator& coord, Counter& stopped, std::string name) {
  auto t = Thread::Create(std::move(name), [&coord, &stopped] {
    if (coord.WaitForStop(testing::kSafety)) stopped.Increment();
  });
  t->Start();
  return t;
}

TEST(CoordinatorTest, StopFlagAndWaitForStop) {
  Coordinator coord;
  EXPECT_FALSE(coord.should_stop());
  EXPECT_FALSE(coord.WaitForStop(1ms));
  EXPECT_FALSE(coord.WaitForStop(0ns));
  coord.RequestStop();
  EXPECT_TRUE(coord.should_stop());
  EXPECT_TRUE(coord.WaitForStop(1ms));
  EXPECT_TRUE(coord.WaitForStop());
}

TEST(CoordinatorTest, WaitForStopIsWokenByRequestStopFromAnotherThread) {
  Coordinator coord;
  Notification about_to_wait;
  std::thread stopper([&] {
    about_to_wait.Wait();
    coord.RequestStop();
  });
  about_to_wait.Notify();
  EXPECT_TRUE(coord.WaitForStop());  // no timeout: only the stop ends it
  stopper.join();
}

TEST(CoordinatorTest, WaitForStopReturnsFalseWhenCancelled) {
  Coordinator coord;
  CancellationManager cm;
  Notification about_to_wait;
  std::thread canceller([&] {
    about_to_wait.Wait();
    cm.StartCancel();
  });
  about_to_wait.Notify();
  EXPECT_FALSE(coord.WaitForStop(std::nullopt, &cm));
  canceller.join();
  EXPECT_FALSE(coord.WaitForStop(std::nullopt, &cm));  // already cancelled
  coord.RequestStop();
  EXPECT_TRUE(coord.WaitForStop(std::nullopt, &cm));
}

TEST(CoordinatorTest, JoinWaitsForRegisteredThreadsAfterStop) {
  Coordinator coord;
  Counter stopped;
  for (int i = 0; i < 3; ++i) coord.RegisterThread(StartStopWaiter(coord, stopped, "waiter"));
  coord.RequestStop();
  EXPECT_TRUE(IsOk(coord.Join()));
  EXPECT_EQ(stopped.value(), 3);
  EXPECT_TRUE(coord.joined());
}

TEST(CoordinatorTest, JoinJoinsRegisteredAndGivenThreads) {
  Coordinator coord;
  Counter stopped;
  auto registered = StartStopWaiter(coord, stopped, "registered");
  coord.RegisterThread(registered);
  coord.RegisterThread(registered);  // idempotent
  auto given = StartStopWaiter(coord, stopped, "given");
  coord.RequestStop();
  EXPECT_TRUE(IsOk(coord.Join({given, registered})));
  EXPECT_EQ(stopped.value(), 2);
  EXPECT_FALSE(registered->is_alive());
  EXPECT_FALSE(given->is_alive());
}

TEST(CoordinatorTest, JoinReturnsOnceThreadsFinishWithoutAStop) {
  Coordinator coord;
  Notification release;
  auto worker = Thread::Create("worker", [&] { release.Wait(); });
  worker->Start();
  coord.RegisterThread(worker);
  Status joined;
  std::thread joiner([&] { joined = coord.Join(); });
  release.Notify();  // the worker's end wakes the join
  joiner.join();
  EXPECT_TRUE(IsOk(joined));
  EXPECT_FALSE(coord.should_stop());
  EXPECT_TRUE(coord.joined());
}

TEST(CoordinatorTest, JoinReturnsTheReportedError) {
  auto coord = std::make_shared<Coordinator>();
  Counter stopped;
  coord->RegisterThread(StartStopWaiter(*coord, stopped, "waiter"));
  auto failing = Thread::Create("failing", [coord] {
    EXPECT_TRUE(IsOk(coord->RequestStop(errors::DataLoss("corrupt record"))));
  });
  failing->Start();
  coord->RegisterThread(failing);
  EXPECT_TRUE(StatusIs(coord->Join(), Code::kDataLoss, "corrupt record"));
  EXPECT_EQ(stopped.value(), 1);
  EXPECT_TRUE(StatusIs(coord->requested_status(), Code::kDataLoss));
}

TEST(CoordinatorTest, OnlyTheFirstErrorIsKept) {
  Coordinator coord;
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::InvalidArgument("first"))));
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::DataLoss("second"))));
  EXPECT_TRUE(StatusIs(coord.requested_status(), Code::kInvalidArgument, "first"));
  EXPECT_TRUE(StatusIs(coord.Join(), Code::kInvalidArgument, "first"));
}

TEST(CoordinatorTest, AnErrorReportedAfterAPlainStopIsDropped) {
  Coordinator coord;
  coord.RequestStop();
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::Cancelled("Enqueue operation was cancelled"))));
  EXPECT_TRUE(IsOk(coord.requested_status()));
  EXPECT_TRUE(IsOk(coord.Join()));
}

TEST(CoordinatorTest, OutOfRangeIsACleanStopByDefault) {
  Coordinator coord;
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::OutOfRange("end of input"))));
  EXPECT_TRUE(coord.should_stop());
  EXPECT_TRUE(IsOk(coord.requested_status()));
  EXPECT_TRUE(IsOk(coord.Join()));
}

TEST(CoordinatorTest, CleanStopCodesAreConfigurable) {
  Coordinator coord({Code::kCancelled});
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::Cancelled("cancelled"))));
  EXPECT_TRUE(IsOk(coord.requested_status()));
  coord.ClearStop();
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::OutOfRange("end"))));  // not clean here
  EXPECT_TRUE(StatusIs(coord.Join(), Code::kOutOfRange, "end"));
}

TEST(CoordinatorTest, JoinWithAStragglerNamesItAfterTheGracePeriod) {
  Coordinator coord;
  Notification release;
  auto straggler = Thread::Create("straggler", [&] { release.Wait(); });  // ignores the stop
  straggler->Start();
  coord.RegisterThread(straggler);
  Counter stopped;
  coord.RegisterThread(StartStopWaiter(coord, stopped, "polite"));
  coord.RequestStop();
  const Status status = coord.Join({}, 10ms);
  EXPECT_TRUE(StatusIs(status, Code::kDeadlineExceeded,
                       "Coordinator stopped with threads still running: straggler"));
  EXPECT_EQ(status.message().find("polite"), std::string::npos);
  EXPECT_EQ(status.GetPayload(Coordinator::kStragglersPayload), "straggler");
  EXPECT_EQ(stopped.value(), 1);
  release.Notify();
  straggler->Join();
}

TEST(CoordinatorTest, JoinNamesEveryStragglerSeparatedBySpaces) {
  Coordinator coord;
  Notification release;
  std::vector<std::shared_ptr<Thread>> threads;
  for (const char* name : {"s1", "s2"}) {
    threads.push_back(Thread::Create(name, [&] { release.Wait(); }));
    threads.back()->Start();
  }
  coord.RequestStop();
  EXPECT_TRUE(StatusIs(coord.Join(threads, 1ms), Code::kDeadlineExceeded,
                       "threads still running: s1 s2"));
  release.Notify();
  for (auto& t : threads) t->Join();
}

TEST(CoordinatorTest, IgnoreLiveThreadsReturnsOkWithStragglers) {
  Coordinator coord;
  Notification release;
  auto straggler = Thread::Create("straggler", [&] { release.Wait(); });
  straggler->Start();
  coord.RequestStop();
  EXPECT_TRUE(IsOk(coord.Join({straggler}, 1ms, /*ignore_live_threads=*/true)));
  EXPECT_TRUE(coord.joined());
  release.Notify();
  straggler->Join();
}

TEST(CoordinatorTest, TheRecordedErrorTakesPrecedenceOverStragglers) {
  Coordinator coord;
  Notification release;
  auto straggler = Thread::Create("straggler", [&] { release.Wait(); });
  straggler->Start();
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::NotFound("no such file"))));
  EXPECT_TRUE(StatusIs(coord.Join({straggler}, 1ms), Code::kNotFound, "no such file"));
  release.Notify();
  straggler->Join();
}

TEST(CoordinatorTest, JoinForgetsTheRegisteredThreads) {
  Coordinator coord;
  Notification release;
  auto straggler = Thread::Create("straggler", [&] { release.Wait(); });
  straggler->Start();
  coord.RegisterThread(straggler);
  coord.RequestStop();
  EXPECT_TRUE(StatusIs(coord.Join({}, 1ms), Code::kDeadlineExceeded, "straggler"));
  coord.ClearStop();
  coord.RequestStop();
  EXPECT_TRUE(IsOk(coord.Join({}, 1ms)));  // the straggler is no longer registered
  release.Notify();
  straggler->Join();
}

TEST(CoordinatorTest, ClearStopClearsTheFlagTheErrorAndJoined) {
  Coordinator coord;
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::DataLoss("bad"))));
  EXPECT_TRUE(StatusIs(coord.Join(), Code::kDataLoss));
  coord.ClearStop();
  EXPECT_FALSE(coord.should_stop());
  EXPECT_FALSE(coord.joined());
  EXPECT_TRUE(IsOk(coord.requested_status()));
  coord.RequestStop();
  EXPECT_TRUE(IsOk(coord.Join()));
}

TEST(CoordinatorTest, RequestStopAfterJoinReturnsTheErrorToTheCaller) {
  Coordinator coord;
  coord.RequestStop();
  EXPECT_TRUE(IsOk(coord.Join()));
  EXPECT_TRUE(
      StatusIs(coord.RequestStop(errors::DataLoss("too late")), Code::kDataLoss, "too late"));
  EXPECT_TRUE(IsOk(coord.requested_status()));                        // not recorded
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::OutOfRange("clean"))));  // clean: fine
  coord.RequestStop();                                                // no error: fine
  coord.ClearStop();
  EXPECT_TRUE(IsOk(coord.RequestStop(errors::DataLoss("recorded again"))));
  EXPECT_TRUE(StatusIs(coord.Join(), Code::kDataLoss, "recorded again"));
}

TEST(CoordinatorTest, StopOnErrorReportsTheErrorAndSwallowsIt) {
  Coordinator coord;
  EXPECT_TRUE(IsOk(coord.StopOnError([] { return Status::OK(); })));
  EXPECT_FALSE(coord.should_stop());
  EXPECT_TRUE(IsOk(coord.StopOnError([] { return errors::Internal("boom"); })));
  EXPECT_TRUE(coord.should_stop());
  EXPECT_TRUE(StatusIs(coord.Join(), Code::kInternal, "boom"));
  // After the join the error comes back to the caller.
  EXPECT_TRUE(StatusIs(coord.StopOnError([] { return errors::Internal("late"); }),
                       Code::kInternal, "late"));
}

TEST(CoordinatorTest, StopOnErrorWithACleanCodeStops) {
  Coordinator coord;
  EXPECT_TRUE(IsOk(coord.StopOnError([] { return errors::OutOfRange("done"); })));
  EXPECT_TRUE(coord.should_stop());
  EXPECT_TRUE(IsOk(coord.Join()));
}

TEST(CoordinatorTest, AJoinedThreadMayOutliveTheCoordinator) {
  Notification release;
  auto worker = Thread::Create("worker", [&] { release.Wait(); });
  worker->Start();
  {
    Coordinator coord;
    coord.RequestStop();
    EXPECT_TRUE(StatusIs(coord.Join({worker}, 0ns), Code::kDeadlineExceeded, "worker"));
  }
  release.Notify();  // its exit callback finds the coordinator gone
  worker->Join();
}

}  // namespace
}  // namespace sluice::train
