#include "sluice/train/looper_thread.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sluice/core/mutex.h"
#include "train_test_util.h"

namespace sluice::train {
namespace {

using testing::Counter;
using testing::IsOk;
using testing::StatusIs;
using namespace std::chrono_literals;  // NOLINT

// Records the order of start/run/stop calls.
class CallLog {
 public:
  void Add(std::string s) SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    calls_.push_back(std::move(s));
  }
  std::vector<std::string> calls() const SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return calls_;
  }

 private:
  mutable Mutex mu_;
  std::vector<std::string> calls_ SLUICE_GUARDED_BY(mu_);
};

TEST(LooperThreadTest, RunsTheTargetBackToBackUntilTheCoordinatorStops) {
  auto coord = std::make_shared<Coordinator>();
  auto calls = std::make_shared<Counter>();
  auto t = StartLooperThread(coord, std::nullopt, [coord, calls] {
    if (calls->Increment() == 5) coord->RequestStop();
    return Status::OK();
  });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(IsOk(coord->Join()));  // registered when created
  EXPECT_EQ(calls->value(), 5);
  EXPECT_FALSE((*t)->is_alive());
}

TEST(LooperThreadTest, TimerLoopRunsUntilTheCoordinatorStops) {
  auto coord = std::make_shared<Coordinator>();
  auto calls = std::make_shared<Counter>();
  auto t = StartLooperThread(coord, 1ms, [coord, calls] {
    if (calls->Increment() == 3) coord->RequestStop();
    return Status::OK();
  });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(IsOk(coord->Join()));
  EXPECT_EQ(calls->value(), 3);
}

TEST(LooperThreadTest, TimerWaitIsWokenAtOnceByTheStop) {
  auto coord = std::make_shared<Coordinator>();
  auto calls = std::make_shared<Counter>();
  auto t = StartLooperThread(coord, 1h, [calls] {
    calls->Increment();
    return Status::OK();
  });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(calls->WaitForAtLeast(1));  // the first call is immediate
  coord->RequestStop();
  EXPECT_TRUE(IsOk(coord->Join({}, testing::kSafety)));
  EXPECT_EQ(calls->value(), 1);
}

TEST(LooperThreadTest, AnErrorFromTheTargetStopsTheCoordinatorWithIt) {
  auto coord = std::make_shared<Coordinator>();
  auto t = StartLooperThread(coord, std::nullopt, [] { return errors::DataLoss("bad summary"); });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(coord->WaitForStop(testing::kSafety));
  EXPECT_TRUE(StatusIs(coord->Join(), Code::kDataLoss, "bad summary"));
}

TEST(LooperThreadTest, StartAndStopLoopRunOnceAroundTheLoop) {
  auto coord = std::make_shared<Coordinator>();
  auto log = std::make_shared<CallLog>();
  LooperThreadOptions options;
  options.start_loop = [log] {
    log->Add("start");
    return Status::OK();
  };
  options.run_loop = [log, coord] {
    log->Add("run");
    coord->RequestStop();
    return Status::OK();
  };
  options.stop_loop = [log] {
    log->Add("stop");
    return Status::OK();
  };
  auto t = NewLooperThread(coord, std::move(options));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE((*t)->started());
  (*t)->Start();
  EXPECT_TRUE(IsOk(coord->Join()));
  EXPECT_EQ(log->calls(), (std::vector<std::string>{"start", "run", "stop"}));
}

TEST(LooperThreadTest, StopLoopIsSkippedAfterAnError) {
  auto coord = std::make_shared<Coordinator>();
  auto log = std::make_shared<CallLog>();
  LooperThreadOptions options;
  options.run_loop = [log] {
    log->Add("run");
    return errors::Internal("failed");
  };
  options.stop_loop = [log] {
    log->Add("stop");
    return Status::OK();
  };
  auto t = NewLooperThread(coord, std::move(options));
  ASSERT_TRUE(t.ok()) << t.status();
  (*t)->Start();
  EXPECT_TRUE(StatusIs(coord->Join(), Code::kInternal, "failed"));
  EXPECT_EQ(log->calls(), (std::vector<std::string>{"run"}));
}

TEST(LooperThreadTest, AnErrorFromStartLoopSkipsTheLoop) {
  auto coord = std::make_shared<Coordinator>();
  auto calls = std::make_shared<Counter>();
  LooperThreadOptions options;
  options.start_loop = [] { return errors::FailedPrecondition("not initialised"); };
  options.run_loop = [calls] {
    calls->Increment();
    return Status::OK();
  };
  auto t = NewLooperThread(coord, std::move(options));
  ASSERT_TRUE(t.ok()) << t.status();
  (*t)->Start();
  EXPECT_TRUE(StatusIs(coord->Join(), Code::kFailedPrecondition, "not initialised"));
  EXPECT_EQ(calls->value(), 0);
}

TEST(LooperThreadTest, RejectsBadArguments) {
  auto ok = [] { return Status::OK(); };
  EXPECT_TRUE(StatusIs(StartLooperThread(nullptr, std::nullopt, ok).status(),
                       Code::kInvalidArgument, "coord must be a Coordinator"));
  auto coord = std::make_shared<Coordinator>();
  EXPECT_TRUE(StatusIs(StartLooperThread(coord, std::nullopt, nullptr).status(),
                       Code::kInvalidArgument));
  EXPECT_TRUE(StatusIs(StartLooperThread(coord, -1ms, ok).status(), Code::kInvalidArgument));
}

TEST(LooperThreadTest, ThreadIsNamed) {
  auto coord = std::make_shared<Coordinator>();
  coord->RequestStop();
  auto t = StartLooperThread(coord, std::nullopt, [] { return Status::OK(); }, "summaries");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->name(), "summaries");
  EXPECT_TRUE(IsOk(coord->Join()));
}

}  // namespace
}  // namespace sluice::train
