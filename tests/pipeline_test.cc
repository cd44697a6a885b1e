// Cross-layer tests: core tensors through queues driven by QueueRunners and
// stopped by a Coordinator, as a tf.train input pipeline runs. Each test
// checks how the pipeline ends (OutOfRange cascade, an error, an early stop)
// and that no thread is left behind.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/queue_runner.h"

namespace sluice {
namespace {

using queue::Queue;
using train::Coordinator;
using train::QueueRunner;
using train::QueueRunnerOptions;
using train::Thread;

constexpr auto kGrace = std::chrono::seconds(30);

std::shared_ptr<Queue> RecordsQueue(int32_t capacity) {
  queue::QueueOptions o;
  o.name = "records";
  o.capacity = capacity;
  o.dtypes = {DType::kInt64, DType::kFloat32};
  o.shapes = {PartialShape(std::vector<int64_t>{}), PartialShape{3}};
  Result<std::shared_ptr<Queue>> q = queue::NewFIFOQueue(std::move(o));
  EXPECT_TRUE(q.ok()) << q.status();
  return *q;
}

std::shared_ptr<Queue> BatchesQueue(int32_t capacity) {
  queue::QueueOptions o;
  o.name = "batches";
  o.capacity = capacity;
  o.dtypes = {DType::kInt64, DType::kFloat32};  // no shapes: batches may be short
  Result<std::shared_ptr<Queue>> q = queue::NewFIFOQueue(std::move(o));
  EXPECT_TRUE(q.ok()) << q.status();
  return *q;
}

Element Record(int64_t label) {
  Tensor v(DType::kFloat32, TensorShape{3});
  for (int i = 0; i < 3; ++i) v.data<float>()[i] = static_cast<float>(label * 3 + i);
  return Element{Tensor::Scalar<int64_t>(label), v};
}

// Producer `index` of `count`: labels index, index+count, ... below `total`
// (no limit when total < 0); then OutOfRange. With `fail_at` >= 0, returns
// DataLoss instead of producing that label.
std::function<Status()> Producer(std::shared_ptr<Queue> q, int index, int count, int64_t total,
                                 int64_t fail_at = -1) {
  auto next = std::make_shared<int64_t>(index);
  return [=]() -> Status {
    if (total >= 0 && *next >= total) return errors::OutOfRange("producer ", index, " done");
    if (*next == fail_at) return errors::DataLoss("corrupt record ", fail_at);
    const int64_t label = *next;
    *next += count;
    return q->Enqueue(Record(label));
  };
}

std::function<Status()> Batcher(std::shared_ptr<Queue> from, std::shared_ptr<Queue> to, int64_t n) {
  return [=]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(Element batch, from->DequeueUpTo(n));
    return to->Enqueue(std::move(batch));
  };
}

std::shared_ptr<QueueRunner> Runner(std::shared_ptr<Queue> q, std::vector<std::function<Status()>> ops) {
  QueueRunnerOptions o;
  o.queue = std::move(q);
  o.enqueue_ops = std::move(ops);
  Result<std::shared_ptr<QueueRunner>> r = QueueRunner::Create(std::move(o));
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

struct Pipeline {
  std::shared_ptr<Queue> records;
  std::shared_ptr<Queue> batches;
  std::shared_ptr<QueueRunner> producers;
  std::shared_ptr<QueueRunner> batchers;
  std::shared_ptr<Coordinator> coord = std::make_shared<Coordinator>();
  std::vector<std::shared_ptr<Thread>> threads;

  void Start() {
    for (auto* runner : {&producers, &batchers}) {
      std::vector<std::shared_ptr<Thread>> t = (*runner)->CreateThreads(coord, /*start=*/true);
      threads.insert(threads.end(), t.begin(), t.end());
    }
  }
  bool AllThreadsFinished() const {
    for (const auto& t : threads) {
      if (t->is_alive()) return false;
    }
    return true;
  }
};

Pipeline MakePipeline(int producers, int batchers, int64_t total, int64_t batch, int64_t fail_at = -1) {
  Pipeline p;
  p.records = RecordsQueue(8);
  p.batches = BatchesQueue(2);
  std::vector<std::function<Status()>> produce, batch_ops;
  for (int i = 0; i < producers; ++i) {
    produce.push_back(Producer(p.records, i, producers, total, i == 0 ? fail_at : -1));
  }
  for (int i = 0; i < batchers; ++i) batch_ops.push_back(Batcher(p.records, p.batches, batch));
  p.producers = Runner(p.records, std::move(produce));
  p.batchers = Runner(p.batches, std::move(batch_ops));
  return p;
}

TEST(PipelineTest, OutOfRangeCascadeDeliversEveryRecordOnceAndStopsCleanly) {
  constexpr int64_t kTotal = 5000;
  Pipeline p = MakePipeline(/*producers=*/3, /*batchers=*/2, kTotal, /*batch=*/7);
  p.Start();
  EXPECT_EQ(p.threads.size(), 3u + 2u + 2u);  // op threads + one close-on-stop thread per runner

  std::vector<int> seen(kTotal, 0);
  int64_t records = 0;
  Status end;
  while (!p.coord->should_stop()) {
    Result<Element> batch = p.batches->Dequeue();
    if (!batch.ok()) {
      end = batch.status();
      break;
    }
    const Tensor& labels = (*batch)[0];
    const Tensor& values = (*batch)[1];
    ASSERT_EQ(values.shape(), TensorShape({labels.num_elements(), 3}));
    ASSERT_LE(labels.num_elements(), 7);
    for (int64_t i = 0; i < labels.num_elements(); ++i) {
      const int64_t label = labels.flat<int64_t>()[i];
      ASSERT_GE(label, 0);
      ASSERT_LT(label, kTotal);
      ++seen[label];
      EXPECT_EQ(values.flat<float>()[i * 3 + 2], static_cast<float>(label * 3 + 2));
    }
    records += labels.num_elements();
  }
  EXPECT_EQ(end.code(), Code::kOutOfRange) << end;
  EXPECT_TRUE(p.coord->RequestStop(end).ok());  // OutOfRange: a clean stop
  EXPECT_TRUE(p.coord->Join(p.threads, kGrace).ok());
  EXPECT_TRUE(p.AllThreadsFinished());

  EXPECT_EQ(records, kTotal);
  for (int64_t i = 0; i < kTotal; ++i) ASSERT_EQ(seen[i], 1) << "label " << i;
  EXPECT_TRUE(p.records->is_closed());
  EXPECT_TRUE(p.batches->is_closed());
  EXPECT_EQ(p.records->stats().enqueued, kTotal);
  EXPECT_EQ(p.records->stats().dequeued, kTotal);
  EXPECT_TRUE(p.producers->exceptions_raised().empty());
  EXPECT_TRUE(p.batchers->exceptions_raised().empty());
}

TEST(PipelineTest, AProducerErrorStopsEveryThreadAndJoinReturnsIt) {
  // Producer 0 fails at label 300; the others would run for ever.
  Pipeline p = MakePipeline(/*producers=*/2, /*batchers=*/1, /*total=*/-1, /*batch=*/4, /*fail_at=*/300);
  p.Start();
  while (!p.coord->should_stop()) {
    Result<Element> batch = p.batches->Dequeue();
    if (!batch.ok()) {
      // The stop closed the queues under the consumer: Cancelled or OutOfRange.
      EXPECT_TRUE(errors::IsOutOfRange(batch.status()) || errors::IsCancelled(batch.status())) << batch.status();
      break;
    }
  }
  const Status joined = p.coord->Join(p.threads, kGrace);
  EXPECT_EQ(joined.code(), Code::kDataLoss) << joined;
  EXPECT_EQ(joined.message(), "corrupt record 300");
  EXPECT_TRUE(p.AllThreadsFinished());
  EXPECT_TRUE(p.records->is_closed());  // by the cancel op
  EXPECT_TRUE(p.batches->is_closed());
}

TEST(PipelineTest, AnEarlyStopUnblocksProducersWaitingOnFullQueues) {
  Pipeline p = MakePipeline(/*producers=*/4, /*batchers=*/2, /*total=*/-1, /*batch=*/3);
  p.Start();
  for (int i = 0; i < 20; ++i) {
    Result<Element> batch = p.batches->Dequeue();
    ASSERT_TRUE(batch.ok()) << batch.status();
  }
  // Both queues are full now or soon; every producer and batcher is blocked
  // in an enqueue. The stop must run the cancel ops and release them all.
  p.coord->RequestStop();
  EXPECT_TRUE(p.coord->Join(p.threads, kGrace).ok());
  EXPECT_TRUE(p.AllThreadsFinished());
  EXPECT_TRUE(p.producers->exceptions_raised().empty());
}

TEST(PipelineTest, DroppingTheRunnersJoinsTheirThreadsWithoutACoordinator) {
  std::shared_ptr<Queue> records = RecordsQueue(4);
  std::vector<std::function<Status()>> ops = {Producer(records, 0, 2, -1), Producer(records, 1, 2, -1)};
  std::shared_ptr<QueueRunner> runner = Runner(records, std::move(ops));
  std::vector<std::shared_ptr<Thread>> threads = runner->CreateThreads(nullptr, /*start=*/true);
  ASSERT_EQ(threads.size(), 2u);  // no coordinator: no close-on-stop thread
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(records->Dequeue().ok());
  runner.reset();  // the destructor stops the blocked producers and waits for their ops
  // The op bodies have returned; the Thread wrappers finish right after.
  for (const auto& t : threads) EXPECT_TRUE(t->JoinFor(kGrace));
}

TEST(PipelineTest, EnqueueManyBatchComesBackOutWithoutACopy) {
  std::shared_ptr<Queue> records = RecordsQueue(16);
  Tensor labels = Tensor::FromVector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7});
  Tensor values = Tensor::Zeros(DType::kFloat32, TensorShape{8, 3});
  ASSERT_TRUE(records->EnqueueMany(Element{labels, values}).ok());
  Result<Element> out = records->DequeueMany(8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(ValuesEqual((*out)[0], labels));
  // Adjacent slices of one buffer are stacked back without copying.
  EXPECT_TRUE((*out)[0].SharesBufferWith(labels));
  EXPECT_TRUE((*out)[1].SharesBufferWith(values));
}

}  // namespace
}  // namespace sluice
