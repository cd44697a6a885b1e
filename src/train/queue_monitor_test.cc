// QueueMonitor: series, rates and history from samples taken at given times,
// and the sampling thread.
#include "sluice/train/queue_monitor.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "input_test_util.h"

namespace sluice::train {
namespace {

using namespace std::chrono_literals;  // NOLINT: test
using testing::Counter;
using testing::IsOk;
using testing::StatusIs;

// A fake process: the stats the next sample will see.
struct FakeQueues {
  Mutex mu;
  std::vector<queue::QueueStats> stats SLUICE_GUARDED_BY(mu);

  std::function<std::vector<queue::QueueStats>()> source() {
    return [this] {
      MutexLock lock(&mu);
      return stats;
    };
  }
  void Set(std::vector<queue::QueueStats> s) {
    MutexLock lock(&mu);
    stats = std::move(s);
  }
};

queue::QueueStats Stats(uint64_t id, std::string name, int32_t size, int64_t enq, int64_t deq) {
  queue::QueueStats s;
  s.id = id;
  s.name = std::move(name);
  s.type = "FIFOQueue";
  s.capacity = 10;
  s.size = size;
  s.enqueued = enq;
  s.dequeued = deq;
  return s;
}

TEST(QueueMonitorTest, RatesAndFillFromTimedSamples) {
  FakeQueues fake;
  QueueMonitorOptions o;
  o.source = fake.source();
  o.history = 3;
  auto m = *QueueMonitor::Create(o);
  const auto t0 = QueueMonitor::Clock::time_point{};
  fake.Set({Stats(1, "files", 2, 0, 0), Stats(2, "batch", 0, 0, 0)});
  m->SampleAt(t0);
  fake.Set({Stats(1, "files", 4, 10, 6), Stats(2, "batch", 10, 100, 90)});
  m->SampleAt(t0 + 2s);
  std::vector<QueueSeries> s = m->Series();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "files");
  EXPECT_EQ(s[1].name, "batch");
  EXPECT_DOUBLE_EQ(s[0].enqueue_rate(), 5.0);  // 10 in 2 s
  EXPECT_DOUBLE_EQ(s[0].dequeue_rate(), 3.0);
  EXPECT_DOUBLE_EQ(s[1].enqueue_rate(), 50.0);
  EXPECT_DOUBLE_EQ(s[1].points.back().fraction_full, 1.0);
  EXPECT_DOUBLE_EQ(s[0].mean_fraction_full(), 0.3);  // (0.2 + 0.4) / 2

  // History keeps the last 3 points; a queue that is gone drops out.
  fake.Set({Stats(2, "batch", 5, 110, 105)});
  m->SampleAt(t0 + 3s);
  fake.Set({Stats(2, "batch", 5, 130, 125)});
  m->SampleAt(t0 + 4s);
  s = m->Series();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].points.size(), 3u);
  EXPECT_EQ(s[0].points.front().time, t0 + 2s);
  EXPECT_DOUBLE_EQ(s[0].enqueue_rate(), 15.0);  // (130 - 100) / 2 s
  EXPECT_NE(m->Report().find("batch"), std::string::npos);
}

TEST(QueueMonitorTest, OnePointHasNoRate) {
  FakeQueues fake;
  fake.Set({Stats(1, "q", 1, 5, 5)});
  QueueMonitorOptions o;
  o.source = fake.source();
  auto m = *QueueMonitor::Create(o);
  m->SampleAt(QueueMonitor::Clock::time_point{});
  ASSERT_EQ(m->Series().size(), 1u);
  EXPECT_DOUBLE_EQ(m->Series()[0].enqueue_rate(), 0.0);
}

TEST(QueueMonitorTest, SeesRealQueues) {
  auto q = testing::NewInt64Queue(4, "monitor_real_queue");
  auto m = *QueueMonitor::Create();
  ASSERT_TRUE(q->Enqueue(testing::Int64Element(1)).ok());
  m->Sample();
  bool found = false;
  for (const QueueSeries& s : m->Series()) {
    if (s.id != q->stats().id) continue;
    found = true;
    EXPECT_EQ(s.name, "monitor_real_queue");
    EXPECT_EQ(s.points.back().size, 1);
    EXPECT_DOUBLE_EQ(s.points.back().fraction_full, 0.25);
  }
  EXPECT_TRUE(found);
}

TEST(QueueMonitorTest, ThreadSamplesUntilStopped) {
  Counter samples;
  QueueMonitorOptions o;
  o.interval = 1ms;
  o.source = [&samples] {
    samples.Increment();
    return std::vector<queue::QueueStats>{Stats(1, "q", 0, 0, 0)};
  };
  auto m = *QueueMonitor::Create(o);
  ASSERT_TRUE(IsOk(m->Start()));
  EXPECT_TRUE(StatusIs(m->Start(), Code::kFailedPrecondition));
  ASSERT_TRUE(samples.WaitForAtLeast(3));
  m->Stop();
  const int after_stop = samples.value();
  EXPECT_EQ(m->Series().at(0).points.size(), static_cast<size_t>(std::min(after_stop, 60)));
  m->Stop();  // idempotent
  EXPECT_EQ(samples.value(), after_stop);
}

TEST(QueueMonitorTest, InvalidOptions) {
  QueueMonitorOptions o;
  o.interval = 0s;
  EXPECT_TRUE(StatusIs(QueueMonitor::Create(o).status(), Code::kInvalidArgument, "interval"));
  o = {};
  o.history = 1;
  EXPECT_TRUE(StatusIs(QueueMonitor::Create(o).status(), Code::kInvalidArgument, "history"));
}

}  // namespace
}  // namespace sluice::train
