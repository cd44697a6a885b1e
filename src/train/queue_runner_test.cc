// Cases from TensorFlow's training/queue_runner_test.py and the shutdown
// cascade of docs/spec/tf-queues.md section 12, without sleeps.
#include "sluice/train/queue_runner.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sluice/train/queue_runner_registry.h"
#include "train_test_util.h"

namespace sluice::train {
namespace {

using queue::Queue;
using queue::WaitOptions;
using testing::Counter;
using testing::Int64Element;
using testing::Int64Of;
using testing::IsOk;
using testing::NewInt64Queue;
using testing::Notification;
using testing::StatusIs;
using Op = std::function<Status()>;
using namespace std::chrono_literals;  // NOLINT

// Enqueues base, base+1, ..., base+k-1, then fails with OutOfRange (TF's
// count_up_to). One thread per op.
Op CountUpTo(std::shared_ptr<Queue> q, int k, int64_t base = 0) {
  auto next = std::make_shared<std::atomic<int>>(0);
  return [q = std::move(q), next, k, base]() -> Status {
    const int i = next->fetch_add(1);
    if (i >= k) return errors::OutOfRange("Reached limit of ", k);
    return q->Enqueue(Int64Element(base + i), WaitOptions::Timeout(testing::kSafety));
  };
}

// Enqueues for ever, counting attempts (so a test can tell when the queue is
// full and the op blocked).
Op EnqueueForever(std::shared_ptr<Queue> q, std::shared_ptr<Counter> attempts) {
  return [q = std::move(q), attempts = std::move(attempts)]() -> Status {
    attempts->Increment();
    return q->Enqueue(Int64Element(1), WaitOptions::Timeout(testing::kSafety));
  };
}

// A close op that counts its calls, then closes `q` as the default does.
Op CountingClose(std::shared_ptr<Queue> q, std::shared_ptr<Counter> closes) {
  return [q = std::move(q), closes = std::move(closes)] {
    closes->Increment();
    return q->Close(false);
  };
}

std::shared_ptr<QueueRunner> NewRunner(QueueRunnerOptions options) {
  Result<std::shared_ptr<QueueRunner>> r = QueueRunner::Create(std::move(options));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : nullptr;
}

void JoinAll(const std::vector<std::shared_ptr<Thread>>& threads) {
  for (const auto& t : threads) ASSERT_TRUE(t->JoinFor(testing::kSafety)) << t->name();
}

// Dequeues until OutOfRange; the values, in order.
std::vector<int64_t> DrainUntilClosed(Queue& q) {
  std::vector<int64_t> values;
  while (true) {
    Result<Element> e = q.Dequeue(WaitOptions::Timeout(testing::kSafety));
    if (!e.ok()) {
      EXPECT_TRUE(
          StatusIs(e.status(), Code::kOutOfRange, "is closed and has insufficient elements"));
      return values;
    }
    values.push_back(Int64Of(*e));
  }
}

std::multiset<int64_t> Sorted(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

TEST(QueueRunnerTest, ThreadsFillTheQueueAndTheLastOneClosesItOnce) {
  auto q = NewInt64Queue(-1);
  auto closes = std::make_shared<Counter>();
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 5, 0), CountUpTo(q, 5, 100), CountUpTo(q, 5, 200)};
  options.close_op = CountingClose(q, closes);
  auto qr = NewRunner(std::move(options));
  auto threads = qr->CreateThreads(nullptr, /*start=*/true);
  ASSERT_EQ(threads.size(), 3u);  // no coordinator: no close-on-stop thread
  JoinAll(threads);
  EXPECT_EQ(closes->value(), 1);
  EXPECT_TRUE(q->is_closed());
  EXPECT_TRUE(qr->exceptions_raised().empty());
  EXPECT_EQ(Sorted(DrainUntilClosed(*q)),
            (std::multiset<int64_t>{0, 1, 2, 3, 4, 100, 101, 102, 103, 104,  //
                                    200, 201, 202, 203, 204}));
}

TEST(QueueRunnerTest, FillsABoundedQueueWhileAConsumerDrainsIt) {
  auto q = NewInt64Queue(2);
  auto closes = std::make_shared<Counter>();
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 20, 0), CountUpTo(q, 20, 100), CountUpTo(q, 20, 200)};
  options.close_op = CountingClose(q, closes);
  auto qr = NewRunner(std::move(options));
  auto coord = std::make_shared<Coordinator>();
  auto threads = qr->CreateThreads(coord, /*start=*/true);
  ASSERT_EQ(threads.size(), 4u);  // three op threads and the close-on-stop one
  const std::vector<int64_t> values = DrainUntilClosed(*q);
  EXPECT_EQ(values.size(), 60u);
  EXPECT_EQ(Sorted(values).count(219), 1u);
  // Each producer's values arrive in its order.
  for (int64_t base : {0, 100, 200}) {
    std::vector<int64_t> mine;
    std::copy_if(values.begin(), values.end(), std::back_inserter(mine),
                 [base](int64_t v) { return v >= base && v < base + 100; });
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
  }
  coord->RequestStop();
  EXPECT_TRUE(IsOk(coord->Join(threads)));
  EXPECT_EQ(closes->value(), 1);
}

TEST(QueueRunnerTest, AnOpErrorStopsTheCoordinatorAndJoinReturnsIt) {
  auto q = NewInt64Queue(4);
  auto steps = std::make_shared<std::atomic<int>>(0);
  auto attempts = std::make_shared<Counter>();
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {
      [steps]() -> Status {
        if (steps->fetch_add(1) == 2) return errors::DataLoss("corrupted record at offset 7");
        return Status::OK();
      },
      EnqueueForever(q, attempts)};
  auto qr = NewRunner(std::move(options));
  auto coord = std::make_shared<Coordinator>();
  auto threads = qr->CreateThreads(coord, /*start=*/true);
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_TRUE(StatusIs(coord->Join(), Code::kDataLoss, "corrupted record at offset 7"));
  for (const auto& t : threads) EXPECT_FALSE(t->is_alive()) << t->name();
  EXPECT_TRUE(q->is_closed());  // by the close-on-stop thread's cancel op
  EXPECT_TRUE(qr->exceptions_raised().empty());
}

TEST(QueueRunnerTest, RequestStopCancelsProducersBlockedOnAFullQueue) {
  auto q = NewInt64Queue(2);
  auto attempts = std::make_shared<Counter>();
  auto closes = std::make_shared<Counter>();
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {EnqueueForever(q, attempts), EnqueueForever(q, attempts)};
  options.close_op = CountingClose(q, closes);
  auto qr = NewRunner(std::move(options));
  auto coord = std::make_shared<Coordinator>();
  auto threads = qr->CreateThreads(coord, /*start=*/true);
  // Two enqueues fill the queue; two more attempts mean both threads block.
  ASSERT_TRUE(attempts->WaitForAtLeast(4));
  coord->RequestStop();
  // The cancel op fails the blocked enqueues with Cancelled, which the
  // coordinator ignores: it was already stopping.
  EXPECT_TRUE(IsOk(coord->Join({}, testing::kSafety)));
  for (const auto& t : threads) EXPECT_FALSE(t->is_alive()) << t->name();
  EXPECT_TRUE(q->is_closed());
  EXPECT_EQ(closes->value(), 0);  // only a "queue closed" end runs the close op
  EXPECT_EQ(q->size(), 2);
}

TEST(QueueRunnerTest, CreateThreadsReturnsNothingWhileItsThreadsRun) {
  auto q = NewInt64Queue(-1);
  auto release = std::make_shared<Notification>();
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {[release]() -> Status {
    release->Wait();
    return errors::OutOfRange("done");
  }};
  options.close_op = [] { return Status::OK(); };  // keep the queue open
  auto qr = NewRunner(std::move(options));
  auto first = qr->CreateThreads(nullptr, /*start=*/true);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(qr->CreateThreads(nullptr, true).empty());
  release->Notify();
  JoinAll(first);
  auto second = qr->CreateThreads(nullptr, /*start=*/true);
  EXPECT_EQ(second.size(), 1u);
  JoinAll(second);
}

TEST(QueueRunnerTest, ThreadsCreatedButNotStartedCountAsRunning) {
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 1), CountUpTo(q, 1)};
  auto qr = NewRunner(std::move(options));
  auto threads = qr->CreateThreads();  // start = false
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_FALSE(threads[0]->started());
  EXPECT_TRUE(qr->CreateThreads().empty());
  for (const auto& t : threads) t->Start();
  JoinAll(threads);
  EXPECT_EQ(q->size(), 2);
  EXPECT_TRUE(q->is_closed());
  EXPECT_EQ(qr->CreateThreads().size(), 2u);
}

TEST(QueueRunnerTest, WithoutACoordinatorErrorsGoToExceptionsRaised) {
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {[] { return errors::InvalidArgument("bad op"); },
                         [] { return errors::NotFound("missing file"); }};
  auto qr = NewRunner(std::move(options));
  auto threads = qr->CreateThreads(nullptr, /*start=*/true);
  JoinAll(threads);
  std::vector<Status> raised = qr->exceptions_raised();
  ASSERT_EQ(raised.size(), 2u);
  std::sort(raised.begin(), raised.end(),
            [](const Status& a, const Status& b) { return a.code() < b.code(); });
  EXPECT_TRUE(StatusIs(raised[0], Code::kInvalidArgument, "bad op"));
  EXPECT_TRUE(StatusIs(raised[1], Code::kNotFound, "missing file"));
  EXPECT_FALSE(q->is_closed());  // an error does not close the queue
  // A new set of threads starts with no exceptions.
  auto again = qr->CreateThreads();
  EXPECT_EQ(again.size(), 2u);
  EXPECT_TRUE(qr->exceptions_raised().empty());
}

TEST(QueueRunnerTest, AnErrorAfterTheCoordinatorIsJoinedGoesToExceptionsRaised) {
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {[] { return errors::DataLoss("late"); }};
  auto qr = NewRunner(std::move(options));
  auto coord = std::make_shared<Coordinator>();
  EXPECT_TRUE(IsOk(coord->Join()));  // nothing to wait for; now joined
  auto threads = qr->CreateThreads(coord, /*start=*/true);
  ASSERT_EQ(threads.size(), 2u);
  JoinAll({threads[0]});
  EXPECT_FALSE(coord->should_stop());  // returned to the thread, not recorded
  std::vector<Status> raised = qr->exceptions_raised();
  ASSERT_EQ(raised.size(), 1u);
  EXPECT_TRUE(StatusIs(raised[0], Code::kDataLoss, "late"));
  coord->RequestStop();
  JoinAll(threads);
}

TEST(QueueRunnerTest, CustomQueueClosedCodesEndThreadsQuietly) {
  auto q = NewInt64Queue(-1);
  auto closes = std::make_shared<Counter>();
  auto steps = std::make_shared<std::atomic<int>>(0);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {[q, steps]() -> Status {
    if (steps->fetch_add(1) == 3) return errors::Cancelled("upstream queue cancelled");
    return q->Enqueue(Int64Element(7));
  }};
  options.close_op = CountingClose(q, closes);
  options.queue_closed_codes = {Code::kOutOfRange, Code::kCancelled};
  auto qr = NewRunner(std::move(options));
  auto coord = std::make_shared<Coordinator>();
  auto threads = qr->CreateThreads(coord, /*start=*/true);
  JoinAll({threads[0]});
  EXPECT_EQ(closes->value(), 1);
  EXPECT_FALSE(coord->should_stop());
  EXPECT_EQ(q->size(), 3);
  coord->RequestStop();
  EXPECT_TRUE(IsOk(coord->Join()));
}

TEST(QueueRunnerTest, TheQueueClosesOnlyAfterTheLastOpThreadEnds) {
  auto q = NewInt64Queue(-1);
  auto closes = std::make_shared<Counter>();
  auto release = std::make_shared<Notification>();
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {[] { return errors::OutOfRange("first done"); },
                         [release]() -> Status {
                           release->Wait();
                           return errors::OutOfRange("second done");
                         }};
  options.close_op = CountingClose(q, closes);
  auto qr = NewRunner(std::move(options));
  auto threads = qr->CreateThreads(nullptr, /*start=*/true);
  JoinAll({threads[0]});
  EXPECT_EQ(closes->value(), 0);
  EXPECT_FALSE(q->is_closed());
  release->Notify();
  JoinAll(threads);
  EXPECT_EQ(closes->value(), 1);
  EXPECT_TRUE(q->is_closed());
}

TEST(QueueRunnerTest, ThreadNamesFollowTensorFlow) {
  auto q = NewInt64Queue(-1, "input_queue");
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 1), CountUpTo(q, 1)};
  auto qr = NewRunner(options);
  EXPECT_EQ(qr->name(), "input_queue");
  auto coord = std::make_shared<Coordinator>();
  auto threads = qr->CreateThreads(coord);
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0]->name(), "QueueRunnerThread-input_queue-enqueue");
  EXPECT_EQ(threads[1]->name(), "QueueRunnerThread-input_queue-enqueue_1");
  EXPECT_EQ(threads[2]->name(), "QueueRunnerThread-input_queue-close_on_stop");

  options.enqueue_op_names = {"read", "read"};
  auto named = NewRunner(options);
  auto named_threads = named->CreateThreads();
  ASSERT_EQ(named_threads.size(), 2u);
  EXPECT_EQ(named_threads[1]->name(), "QueueRunnerThread-input_queue-read");
}

TEST(QueueRunnerTest, CreateRejectsBadOptions) {
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions no_ops;
  no_ops.queue = q;
  EXPECT_TRUE(StatusIs(QueueRunner::Create(no_ops).status(), Code::kInvalidArgument,
                       "Must provide queue and enqueue_ops."));
  QueueRunnerOptions no_queue;
  no_queue.enqueue_ops = {[] { return Status::OK(); }};
  EXPECT_TRUE(StatusIs(QueueRunner::Create(no_queue).status(), Code::kInvalidArgument,
                       "Must provide queue and enqueue_ops."));
  QueueRunnerOptions empty_op = no_ops;
  empty_op.enqueue_ops = {nullptr};
  EXPECT_TRUE(StatusIs(QueueRunner::Create(empty_op).status(), Code::kInvalidArgument));
  QueueRunnerOptions bad_names = no_queue;
  bad_names.queue = q;
  bad_names.enqueue_op_names = {"a", "b"};
  EXPECT_TRUE(StatusIs(QueueRunner::Create(bad_names).status(), Code::kInvalidArgument));
  QueueRunnerOptions no_codes = no_queue;
  no_codes.queue = q;
  no_codes.queue_closed_codes = {};
  EXPECT_TRUE(StatusIs(QueueRunner::Create(no_codes).status(), Code::kInvalidArgument));
}

TEST(QueueRunnerTest, DestructorStopsAndJoinsProducersBlockedOnAFullQueue) {
  auto q = NewInt64Queue(1);
  auto attempts = std::make_shared<Counter>();
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {EnqueueForever(q, attempts), EnqueueForever(q, attempts)};
  auto qr = NewRunner(std::move(options));
  auto threads = qr->CreateThreads(nullptr, /*start=*/true);
  ASSERT_TRUE(attempts->WaitForAtLeast(3));  // one enqueued, two blocked
  qr.reset();
  const int attempts_after = attempts->value();
  EXPECT_TRUE(q->is_closed());  // the cancel op unblocked them
  JoinAll(threads);
  EXPECT_EQ(attempts->value(), attempts_after);  // no op ran after the destructor
}

TEST(QueueRunnerTest, DestructorWakesTheCloseOnStopThread) {
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 2)};
  auto qr = NewRunner(std::move(options));
  auto coord = std::make_shared<Coordinator>();
  auto threads = qr->CreateThreads(coord, /*start=*/true);
  ASSERT_EQ(threads.size(), 2u);
  JoinAll({threads[0]});
  EXPECT_TRUE(threads[1]->is_alive());  // waits for a stop that never comes
  qr.reset();
  JoinAll(threads);
  EXPECT_FALSE(coord->should_stop());
  EXPECT_TRUE(IsOk(coord->Join()));
}

TEST(QueueRunnerTest, ThreadsStartedAfterTheRunnerIsGoneDoNothing) {
  auto q = NewInt64Queue(-1);
  auto attempts = std::make_shared<Counter>();
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {EnqueueForever(q, attempts)};
  auto qr = NewRunner(std::move(options));
  auto threads = qr->CreateThreads();
  qr.reset();
  for (const auto& t : threads) t->Start();
  JoinAll(threads);
  EXPECT_EQ(attempts->value(), 0);
}

TEST(QueueRunnerTest, ShutdownCascadeFromFilenamesToBatches) {
  // A producer runner fills `filenames` with ten values and closes it; two
  // reader threads move each value (times 10) into a small `examples` queue
  // until `filenames` is closed and drained; the last one closes `examples`;
  // the consumer drains it, then stops the coordinator.
  auto filenames = NewInt64Queue(32, "filenames");
  auto examples = NewInt64Queue(3, "examples");
  QueueRunnerOptions producer;
  producer.queue = filenames;
  producer.enqueue_ops = {CountUpTo(filenames, 10)};
  Op read = [filenames, examples]() -> Status {
    Result<Element> name = filenames->Dequeue(WaitOptions::Timeout(testing::kSafety));
    if (!name.ok()) return name.status();  // OutOfRange once drained
    return examples->Enqueue(Int64Element(Int64Of(*name) * 10),
                             WaitOptions::Timeout(testing::kSafety));
  };
  QueueRunnerOptions reader;
  reader.queue = examples;
  reader.enqueue_ops = {read, read};

  QueueRunnerRegistry registry;
  AddQueueRunner(NewRunner(std::move(producer)), &registry);
  AddQueueRunner(NewRunner(std::move(reader)), &registry);
  auto coord = std::make_shared<Coordinator>();
  auto threads = StartQueueRunners(coord, /*start=*/true, &registry);
  ASSERT_EQ(threads.size(), 5u);  // 1 + 1 and 2 + 1

  const std::vector<int64_t> values = DrainUntilClosed(*examples);
  EXPECT_EQ(Sorted(values), (std::multiset<int64_t>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}));
  coord->RequestStop();
  EXPECT_TRUE(IsOk(coord->Join(threads)));
  for (const auto& t : threads) EXPECT_FALSE(t->is_alive()) << t->name();
}

TEST(QueueRunnerTest, RealErrorInTheCascadeReachesJoin) {
  auto filenames = NewInt64Queue(32, "filenames");
  auto examples = NewInt64Queue(3, "examples");
  QueueRunnerOptions producer;
  producer.queue = filenames;
  producer.enqueue_ops = {CountUpTo(filenames, 10)};
  Op read = [filenames, examples]() -> Status {
    Result<Element> name = filenames->Dequeue(WaitOptions::Timeout(testing::kSafety));
    if (!name.ok()) return name.status();
    if (Int64Of(*name) == 4) return errors::DataLoss("corrupt file 4");
    return examples->Enqueue(Int64Element(Int64Of(*name)), WaitOptions::Timeout(testing::kSafety));
  };
  QueueRunnerOptions reader;
  reader.queue = examples;
  reader.enqueue_ops = {read};
  QueueRunnerRegistry registry;
  AddQueueRunner(NewRunner(std::move(producer)), &registry);
  AddQueueRunner(NewRunner(std::move(reader)), &registry);
  auto coord = std::make_shared<Coordinator>();
  auto threads = StartQueueRunners(coord, /*start=*/true, &registry);
  // The cancel ops close every queue, so the consumer ends with OutOfRange.
  DrainUntilClosed(*examples);
  EXPECT_TRUE(StatusIs(coord->Join(threads), Code::kDataLoss, "corrupt file 4"));
}

class DefaultRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { QueueRunnerRegistry::Default().Clear(); }
  void TearDown() override { QueueRunnerRegistry::Default().Clear(); }
};

TEST_F(DefaultRegistryTest, StartQueueRunnersUsesTheDefaultRegistry) {
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 3), CountUpTo(q, 3, 10)};
  AddQueueRunner(NewRunner(std::move(options)));
  ASSERT_EQ(QueueRunnerRegistry::Default().runners().size(), 1u);
  auto coord = std::make_shared<Coordinator>();
  auto threads = StartQueueRunners(coord);  // start = true
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(Sorted(DrainUntilClosed(*q)), (std::multiset<int64_t>{0, 1, 2, 10, 11, 12}));
  coord->RequestStop();
  EXPECT_TRUE(IsOk(coord->Join()));
}

TEST_F(DefaultRegistryTest, ClearForgetsTheRunners) {
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 1)};
  AddQueueRunner(NewRunner(std::move(options)));
  QueueRunnerRegistry::Default().Clear();
  EXPECT_TRUE(QueueRunnerRegistry::Default().runners().empty());
  EXPECT_TRUE(StartQueueRunners().empty());
}

TEST_F(DefaultRegistryTest, AScopedRegistryIsCurrentOnItsThreadOnly) {
  QueueRunnerRegistry outer, inner;
  EXPECT_EQ(&QueueRunnerRegistry::Current(), &QueueRunnerRegistry::Default());
  {
    ScopedQueueRunnerRegistry scope_outer(&outer);
    EXPECT_EQ(&QueueRunnerRegistry::Current(), &outer);
    {
      ScopedQueueRunnerRegistry scope_inner(&inner);
      EXPECT_EQ(&QueueRunnerRegistry::Current(), &inner);
      auto q = NewInt64Queue(-1);
      QueueRunnerOptions options;
      options.queue = q;
      options.enqueue_ops = {CountUpTo(q, 1)};
      AddQueueRunner(NewRunner(std::move(options)));  // into `inner`
      const QueueRunnerRegistry* seen_elsewhere = nullptr;
      std::thread([&] { seen_elsewhere = &QueueRunnerRegistry::Current(); }).join();
      EXPECT_EQ(seen_elsewhere, &QueueRunnerRegistry::Default());
    }
    EXPECT_EQ(&QueueRunnerRegistry::Current(), &outer);
  }
  EXPECT_EQ(&QueueRunnerRegistry::Current(), &QueueRunnerRegistry::Default());
  EXPECT_EQ(inner.runners().size(), 1u);
  EXPECT_TRUE(outer.runners().empty());
  EXPECT_TRUE(QueueRunnerRegistry::Default().runners().empty());
}

TEST(QueueRunnerTest, TheRunnerSaysWhetherItRanAndWhyItsThreadsEnded) {
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 2)};
  auto runner = NewRunner(std::move(options));
  EXPECT_FALSE(runner->has_run());
  EXPECT_FALSE(runner->running());
  auto coord = std::make_shared<Coordinator>();
  auto threads = runner->CreateThreads(coord, /*start=*/false);
  EXPECT_TRUE(runner->has_run());
  EXPECT_TRUE(runner->running());  // created, not started
  for (const auto& t : threads) t->Start();
  EXPECT_EQ(DrainUntilClosed(*q).size(), 2u);
  coord->RequestStop();
  EXPECT_TRUE(IsOk(coord->Join(threads)));
  EXPECT_FALSE(runner->running());
  EXPECT_TRUE(runner->input_exhausted());

  auto full = NewInt64Queue(1);
  QueueRunnerOptions forever;
  forever.queue = full;
  forever.enqueue_ops = {EnqueueForever(full, std::make_shared<Counter>())};
  auto stopped = NewRunner(std::move(forever));
  auto coord2 = std::make_shared<Coordinator>();
  auto threads2 = stopped->CreateThreads(coord2, /*start=*/true);
  coord2->RequestStop();
  EXPECT_TRUE(IsOk(coord2->Join(threads2)));
  EXPECT_FALSE(stopped->running());
  EXPECT_FALSE(stopped->input_exhausted());  // stopped, not exhausted
}

TEST(QueueRunnerTest, StartQueueRunnersNeverRestartsARunnerWhoseThreadsEnded) {
  QueueRunnerRegistry registry;
  auto q = NewInt64Queue(-1);
  QueueRunnerOptions options;
  options.queue = q;
  options.enqueue_ops = {CountUpTo(q, 3)};
  AddQueueRunner(NewRunner(std::move(options)), &registry);
  auto coord = std::make_shared<Coordinator>();
  auto threads = StartQueueRunners(coord, /*start=*/true, &registry);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(DrainUntilClosed(*q).size(), 3u);
  coord->RequestStop();
  EXPECT_TRUE(IsOk(coord->Join(threads)));

  // A second start (a new coordinator, as a second phase of a program) finds
  // the runner's run over: its queue is closed, and it is not started again.
  auto coord2 = std::make_shared<Coordinator>();
  EXPECT_TRUE(StartQueueRunners(coord2, /*start=*/true, &registry).empty());
  EXPECT_TRUE(q->is_closed());
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLUICE_TEST_TSAN 1
#endif
#endif

TEST(QueueRunnerTest, AForkChildDropsTheParentsRunnersWithoutWaitingForThem) {
#ifdef SLUICE_TEST_TSAN
  GTEST_SKIP() << "fork() of a multithreaded process under ThreadSanitizer";
#else
  auto full = NewInt64Queue(1);
  QueueRunnerOptions options;
  options.queue = full;
  options.enqueue_ops = {EnqueueForever(full, std::make_shared<Counter>())};
  auto runner = NewRunner(std::move(options));
  auto coord = std::make_shared<Coordinator>();
  auto threads = runner->CreateThreads(coord, /*start=*/true);
  while (full->size() < 1) std::this_thread::sleep_for(1ms);  // the op thread is blocked on the full queue

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child: the parent's threads do not exist here.
    int code = 0;
    for (const auto& t : threads) {
      if (t->is_alive()) code = 1;
      if (!t->JoinFor(1s)) code = 2;
    }
    if (runner->running()) code = 3;
    runner.reset();  // must neither wait nor run the cancel op
    _exit(code);
  }
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(runner->running());  // the parent's threads still run
  coord->RequestStop();
  EXPECT_TRUE(IsOk(coord->Join(threads)));
#endif
}

}  // namespace
}  // namespace sluice::train
