// FromQueue and DatasetQueueRunner: tf.data and the TF1 queues feeding each
// other, with the epoch-end cascade and Coordinator stops.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "data/data_test_util.h"
#include "sluice/train/coordinator.h"

namespace sluice::data {
namespace {

using testing::Ints;
using testing::Must;
using V = std::vector<int64_t>;

std::shared_ptr<queue::Queue> Int64Queue(int32_t capacity) {
  queue::QueueOptions o;
  o.capacity = capacity;
  o.dtypes = {DType::kInt64};
  o.shapes = {PartialShape({})};
  auto q = queue::NewFIFOQueue(o);
  EXPECT_TRUE(q.ok()) << q.status();
  return *q;
}

TEST(FromQueueTest, DequeuesUntilTheQueueIsClosedAndEmpty) {
  auto q = Int64Queue(10);
  for (int64_t i = 0; i < 3; ++i) ASSERT_TRUE(q->Enqueue(Element{Tensor::Scalar<int64_t>(i)}).ok());
  ASSERT_TRUE(q->Close().ok());
  DatasetPtr ds = Must(FromQueue(q));
  EXPECT_EQ(ds->element_spec().dtypes, std::vector<DType>{DType::kInt64});
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  EXPECT_EQ(Ints(ds), (V{0, 1, 2}));
}

TEST(FromQueueTest, WaitsForAProducerThread) {
  auto q = Int64Queue(2);
  std::thread producer([q] {
    for (int64_t i = 0; i < 20; ++i) ASSERT_TRUE(q->Enqueue(Element{Tensor::Scalar<int64_t>(i)}).ok());
    ASSERT_TRUE(q->Close().ok());
  });
  std::vector<int64_t> got = Ints(Must(Map(Must(FromQueue(q)), testing::Times(3), testing::Int64Scalar())));
  producer.join();
  ASSERT_EQ(got.size(), 20u);
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], 3 * i);
}

TEST(FromQueueTest, DestroyingTheIteratorWakesADequeueBlockedInAPrefetchThread) {
  auto q = Int64Queue(2);
  ASSERT_TRUE(q->Enqueue(Element{Tensor::Scalar<int64_t>(7)}).ok());
  auto it = Must(Prefetch(Must(FromQueue(q)), 2))->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());  // the prefetch thread runs, then blocks on the empty queue
  EXPECT_EQ(e[0].scalar<int64_t>(), 7);
  it.reset();  // cancels the tree: the Dequeue returns and the thread joins
  EXPECT_FALSE(q->is_closed());
}

TEST(FromQueueTest, AProbePassDequeuesNothingAndSeesZeros) {
  auto q = Int64Queue(2);
  ASSERT_TRUE(q->Enqueue(Element{Tensor::Scalar<int64_t>(5)}).ok());
  auto it = Must(Map(Must(FromQueue(q)), testing::Times(2), testing::Int64Scalar()))->MakeProbeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_FALSE(end);
  EXPECT_EQ(e[0].scalar<int64_t>(), 0);
  EXPECT_EQ(q->size(), 1);
}

TEST(FromQueueTest, ANullQueueIsInvalidArgument) { EXPECT_EQ(FromQueue(nullptr).status().code(), Code::kInvalidArgument); }

TEST(DatasetQueueRunnerTest, EnqueuesEveryElementInOrderThenClosesTheQueue) {
  auto q = Int64Queue(3);
  auto runner = *DatasetQueueRunner(testing::RangeOf(25), q);
  auto coord = std::make_shared<train::Coordinator>();
  auto threads = runner->CreateThreads(coord, /*start=*/true);
  ASSERT_FALSE(threads.empty());
  V got;
  while (true) {
    Result<Element> e = q->Dequeue();
    if (errors::IsOutOfRange(e.status())) break;
    ASSERT_TRUE(e.ok()) << e.status();
    got.push_back((*e)[0].scalar<int64_t>());
  }
  V want(25);
  for (int64_t i = 0; i < 25; ++i) want[static_cast<size_t>(i)] = i;
  EXPECT_EQ(got, want);
  coord->RequestStop();  // the consumer saw the end (TF's pattern)
  EXPECT_TRUE(coord->Join().ok());
  EXPECT_TRUE(runner->input_exhausted());
}

TEST(DatasetQueueRunnerTest, SeveralThreadsLoseAndRepeatNoElement) {
  auto q = Int64Queue(4);
  auto runner = *DatasetQueueRunner(Must(Map(testing::RangeOf(200), testing::Times(1), testing::Int64Scalar(),
                                             MapOptions{.num_parallel_calls = 2})),
                                    q, /*num_threads=*/3);
  auto coord = std::make_shared<train::Coordinator>();
  runner->CreateThreads(coord, true);
  // Through FromQueue: the bridge both ways, ending when the runner closes q.
  V got = Ints(Must(FromQueue(q)));
  std::sort(got.begin(), got.end());
  V want(200);
  for (int64_t i = 0; i < 200; ++i) want[static_cast<size_t>(i)] = i;
  EXPECT_EQ(got, want);
  coord->RequestStop();
  EXPECT_TRUE(coord->Join().ok());
}

TEST(DatasetQueueRunnerTest, ADatasetErrorStopsTheCoordinatorWithIt) {
  MapFn fail_at_3 = [](Element e) -> Result<Element> {
    if (e[0].scalar<int64_t>() == 3) return errors::DataLoss("corrupt element");
    return e;
  };
  auto q = Int64Queue(100);
  auto runner = *DatasetQueueRunner(Must(Map(testing::RangeOf(10), fail_at_3, testing::Int64Scalar())), q);
  auto coord = std::make_shared<train::Coordinator>();
  runner->CreateThreads(coord, true);
  EXPECT_TRUE(coord->WaitForStop(std::chrono::seconds(30)));
  EXPECT_EQ(coord->Join().code(), Code::kDataLoss);
  EXPECT_EQ(q->size(), 3);
}

TEST(DatasetQueueRunnerTest, ACoordinatorStopWakesAThreadBlockedInTheDataset) {
  // The runner's dataset reads a queue nobody fills: its GetNext blocks
  // until the stop's cancel op cancels the iterator.
  auto source = Int64Queue(2);
  auto q = Int64Queue(2);
  auto runner = *DatasetQueueRunner(Must(FromQueue(source)), q);
  auto coord = std::make_shared<train::Coordinator>();
  runner->CreateThreads(coord, true);
  coord->RequestStop();
  EXPECT_TRUE(coord->Join({}, std::chrono::seconds(30)).ok());
  EXPECT_FALSE(runner->running());
  EXPECT_TRUE(q->is_closed());
}

TEST(DatasetQueueRunnerTest, ACoordinatorStopWakesAThreadBlockedOnAFullQueue) {
  auto q = Int64Queue(1);
  auto runner = *DatasetQueueRunner(Must(Repeat(testing::RangeOf(3))), q);
  auto coord = std::make_shared<train::Coordinator>();
  runner->CreateThreads(coord, true);
  ASSERT_TRUE(q->Dequeue().ok());  // the runner is running; it refills q and blocks
  coord->RequestStop();
  EXPECT_TRUE(coord->Join({}, std::chrono::seconds(30)).ok());
  EXPECT_FALSE(runner->running());
}

TEST(DatasetQueueRunnerTest, BadArgumentsAreInvalidArgument) {
  auto q = Int64Queue(1);
  EXPECT_EQ(DatasetQueueRunner(nullptr, q).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(DatasetQueueRunner(testing::RangeOf(1), nullptr).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(DatasetQueueRunner(testing::RangeOf(1), q, 0).status().code(), Code::kInvalidArgument);
  DatasetPtr pairs = Must(Zip({testing::RangeOf(1), testing::RangeOf(1)}));
  EXPECT_EQ(DatasetQueueRunner(pairs, q).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(DatasetQueueRunner(Must(Range(0, 1, 1, DType::kFloat32)), q).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::data
