// A consumer's GetNext blocked in a parallel map, a prefetch or FromQueue
// ends with its thread's interrupt check (how Python's Ctrl-C reaches it),
// and the element it waited for is the next GetNext's.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "data/data_test_util.h"
#include "sluice/train/producer.h"

namespace sluice::data {
namespace {

using testing::Must;

// WaitOptions whose check fails with Cancelled ("interrupted") once `armed`.
queue::WaitOptions InterruptWhen(const std::atomic<bool>* armed, std::atomic<int>* checks) {
  queue::WaitOptions wait;
  wait.interrupt_check_interval = std::chrono::milliseconds(1);
  wait.interrupt_check = [armed, checks]() -> Status {
    ++*checks;
    return armed->load() ? errors::Cancelled("interrupted") : Status();
  };
  return wait;
}

// A map function that blocks until Release().
class Gate {
 public:
  MapFn Fn() {
    return [this](Element e) -> Result<Element> {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return open_; });
      return e;
    };
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

Status GetNextUnder(const queue::WaitOptions& wait, IteratorBase* it, Element* e, bool* end) {
  train::ScopedProducerWait scope(wait);
  return it->GetNext(e, end);
}

TEST(InterruptibleWaitTest, AParallelMapConsumerStopsWaitingAndKeepsItsElement) {
  Gate gate;
  auto it = Must(Map(testing::RangeOf(3), gate.Fn(), testing::Int64Scalar(), MapOptions{.num_parallel_calls = 2}))
                ->MakeIterator();
  std::atomic<bool> armed{true};
  std::atomic<int> checks{0};
  Element e;
  bool end = false;
  EXPECT_EQ(GetNextUnder(InterruptWhen(&armed, &checks), it.get(), &e, &end).code(), Code::kCancelled);
  EXPECT_GE(checks.load(), 1);
  gate.Release();
  for (int64_t want = 0; want < 3; ++want) {
    ASSERT_TRUE(it->GetNext(&e, &end).ok());
    ASSERT_FALSE(end);
    EXPECT_EQ(e[0].scalar<int64_t>(), want);  // nothing skipped
  }
}

TEST(InterruptibleWaitTest, APrefetchConsumerStopsWaitingAndKeepsItsElement) {
  Gate gate;
  auto it = Must(Prefetch(Must(Map(testing::RangeOf(2), gate.Fn(), testing::Int64Scalar())), 1))->MakeIterator();
  std::atomic<bool> armed{true};
  std::atomic<int> checks{0};
  Element e;
  bool end = false;
  EXPECT_EQ(GetNextUnder(InterruptWhen(&armed, &checks), it.get(), &e, &end).code(), Code::kCancelled);
  gate.Release();
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 0);
}

TEST(InterruptibleWaitTest, AFromQueueConsumerStopsWaitingAndKeepsTheQueuesElement) {
  queue::QueueOptions o;
  o.capacity = 2;
  o.dtypes = {DType::kInt64};
  o.shapes = {PartialShape({})};
  std::shared_ptr<queue::Queue> q = *queue::NewFIFOQueue(o);
  auto it = Must(FromQueue(q))->MakeIterator();
  std::atomic<bool> armed{true};
  std::atomic<int> checks{0};
  Element e;
  bool end = false;
  EXPECT_EQ(GetNextUnder(InterruptWhen(&armed, &checks), it.get(), &e, &end).code(), Code::kCancelled);
  ASSERT_TRUE(q->Enqueue(Element{Tensor::Scalar<int64_t>(7)}).ok());
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 7);
}

TEST(InterruptibleWaitTest, AnOkCheckKeepsWaiting) {
  Gate gate;
  auto it = Must(Map(testing::RangeOf(1), gate.Fn(), testing::Int64Scalar(), MapOptions{.num_parallel_calls = 1}))
                ->MakeIterator();
  std::atomic<bool> armed{false};
  std::atomic<int> checks{0};
  queue::WaitOptions wait = InterruptWhen(&armed, &checks);
  wait.interrupt_check = [&]() -> Status {
    if (++checks == 5) gate.Release();  // the wait goes on through OK checks until the element comes
    return Status();
  };
  Element e;
  bool end = false;
  ASSERT_TRUE(GetNextUnder(wait, it.get(), &e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 0);
  EXPECT_GE(checks.load(), 5);
}

}  // namespace
}  // namespace sluice::data
