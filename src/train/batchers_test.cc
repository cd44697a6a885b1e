// tf.train batchers: shapes, enqueue_many, dynamic_pad, the final smaller
// batch, shuffle_batch's min_after_dequeue, maybe_batch's keep_input, the
// _join forms, errors reaching the coordinator, and TF's ValueErrors.
#include "sluice/train/batchers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "input_test_util.h"

namespace sluice::train {
namespace {

using testing::CountingProducer;
using testing::Harness;
using testing::Int64Element;
using testing::Int64Values;
using testing::IsOk;
using testing::Notification;
using testing::Scalar;
using testing::StatusIs;

queue::WaitOptions Safe() { return queue::WaitOptions::Timeout(testing::kSafety); }

BatchOptions Int64Batch(Harness& h, int64_t batch_size) {
  BatchOptions o;
  o.batch_size = batch_size;
  o.dtypes = {DType::kInt64};
  o.shapes = {Scalar()};
  o.registry = h.registry();
  return o;
}

// Dequeues batches until OutOfRange; returns their int64 component 0.
std::vector<std::vector<int64_t>> DrainBatches(const BatchQueue& b) {
  std::vector<std::vector<int64_t>> out;
  for (;;) {
    Result<Element> e = b.Dequeue(Safe());
    if (!e.ok()) {
      EXPECT_TRUE(StatusIs(e.status(), Code::kOutOfRange)) << e.status();
      return out;
    }
    out.push_back(Int64Values((*e)[0]));
  }
}

TEST(BatchTest, FullBatchesInOrderThenLeftoverDropped) {
  Harness h;
  CountingProducer input{10};
  Result<BatchQueue> b = Batch(input.producer(), Int64Batch(h, 4));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->queue()->name().rfind("batch", 0), 0u);
  EXPECT_EQ(b->queue()->type_name(), "FIFOQueue");
  EXPECT_EQ(input.calls->load(), 0);  // nothing runs before StartQueueRunners
  h.Start();
  EXPECT_EQ(DrainBatches(*b), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_TRUE(IsOk(h.Stop()));
  EXPECT_TRUE(h.AllThreadsFinished());
}

TEST(BatchTest, AllowSmallerFinalBatchDeliversTheRest) {
  Harness h;
  CountingProducer input{10};
  BatchOptions o = Int64Batch(h, 4);
  o.allow_smaller_final_batch = true;
  Result<BatchQueue> b = Batch(input.producer(), o);
  ASSERT_TRUE(b.ok());
  h.Start();
  EXPECT_EQ(DrainBatches(*b), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(BatchTest, ComponentsGetALeadingBatchDimension) {
  Harness h;
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  Producer p = [next]() -> Result<Element> {
    const int64_t i = next->fetch_add(1);
    if (i >= 6) return errors::OutOfRange("done");
    Tensor f(DType::kFloat32, TensorShape{2, 3});
    for (int k = 0; k < 6; ++k) f.data<float>()[k] = static_cast<float>(i * 10 + k);
    return Element{Tensor::Scalar<int64_t>(i), f};
  };
  BatchOptions o = Int64Batch(h, 3);
  o.dtypes = {DType::kInt64, DType::kFloat32};
  o.shapes = {Scalar(), PartialShape(TensorShape{2, 3})};
  o.num_threads = 2;
  Result<BatchQueue> b = Batch(p, o);
  ASSERT_TRUE(b.ok()) << b.status();
  h.Start();
  std::set<int64_t> labels;
  for (int k = 0; k < 2; ++k) {
    Result<Element> e = b->Dequeue(Safe());
    ASSERT_TRUE(e.ok()) << e.status();
    ASSERT_EQ((*e)[0].shape(), TensorShape{3});
    ASSERT_EQ((*e)[1].shape(), (TensorShape{3, 2, 3}));
    for (int r = 0; r < 3; ++r) {
      const int64_t label = (*e)[0].data<int64_t>()[r];
      labels.insert(label);
      EXPECT_EQ((*e)[1].data<float>()[r * 6 + 5], static_cast<float>(label * 10 + 5));  // rows aligned
    }
  }
  EXPECT_EQ(labels, (std::set<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(StatusIs(b->Dequeue(Safe()).status(), Code::kOutOfRange));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(BatchTest, EnqueueManyTakesBatchesOfExamples) {
  Harness h;
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  Producer p = [next]() -> Result<Element> {  // 3 chunks of 3 examples
    const int64_t c = next->fetch_add(1);
    if (c >= 3) return errors::OutOfRange("done");
    return Element{Tensor::FromVector(std::vector<int64_t>{3 * c, 3 * c + 1, 3 * c + 2})};
  };
  BatchOptions o = Int64Batch(h, 4);
  o.enqueue_many = true;
  o.allow_smaller_final_batch = true;
  Result<BatchQueue> b = Batch(p, o);
  ASSERT_TRUE(b.ok());
  h.Start();
  EXPECT_EQ(DrainBatches(*b), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8}}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(BatchTest, DynamicPadPadsEachBatchToItsLongestExample) {
  Harness h;
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  Producer p = [next]() -> Result<Element> {  // lengths 1, 3, 2, 1
    const int64_t i = next->fetch_add(1);
    static constexpr int64_t kLen[] = {1, 3, 2, 1};
    if (i >= 4) return errors::OutOfRange("done");
    Tensor v(DType::kInt32, TensorShape{kLen[i]});
    for (int64_t k = 0; k < kLen[i]; ++k) v.data<int32_t>()[k] = static_cast<int32_t>(i + 1);
    return Element{v};
  };
  BatchOptions o;
  o.batch_size = 2;
  o.dtypes = {DType::kInt32};
  o.shapes = {PartialShape(std::vector<int64_t>{-1})};
  o.dynamic_pad = true;
  o.registry = h.registry();
  Result<BatchQueue> b = Batch(p, o);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->queue()->type_name(), "PaddingFIFOQueue");
  h.Start();
  Result<Element> first = b->Dequeue(Safe());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ((*first)[0].shape(), (TensorShape{2, 3}));
  EXPECT_EQ(std::vector<int32_t>((*first)[0].data<int32_t>(), (*first)[0].data<int32_t>() + 6),
            (std::vector<int32_t>{1, 0, 0, 2, 2, 2}));
  Result<Element> second = b->Dequeue(Safe());
  ASSERT_TRUE(second.ok());
  ASSERT_EQ((*second)[0].shape(), (TensorShape{2, 2}));
  EXPECT_EQ(std::vector<int32_t>((*second)[0].data<int32_t>(), (*second)[0].data<int32_t>() + 4),
            (std::vector<int32_t>{3, 3, 4, 0}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(BatchJoinTest, EachProducerKeepsItsOrder) {
  Harness h;
  std::vector<Producer> producers;
  for (int64_t k = 0; k < 3; ++k) {
    auto next = std::make_shared<int64_t>(0);  // one thread per producer
    producers.push_back([k, next]() -> Result<Element> {
      if (*next >= 5) return errors::OutOfRange("done");
      return Int64Element(k * 100 + (*next)++);
    });
  }
  BatchOptions o = Int64Batch(h, 2);
  o.capacity = 3;
  o.allow_smaller_final_batch = true;
  Result<BatchQueue> b = BatchJoin(std::move(producers), o);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->runner()->num_enqueue_ops(), 3u);
  h.Start();
  std::map<int64_t, std::vector<int64_t>> per_producer;
  for (const auto& batch : DrainBatches(*b)) {
    for (int64_t v : batch) per_producer[v / 100].push_back(v % 100);
  }
  ASSERT_EQ(per_producer.size(), 3u);
  for (const auto& [k, seq] : per_producer) EXPECT_EQ(seq, (std::vector<int64_t>{0, 1, 2, 3, 4})) << k;
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(ShuffleBatchTest, WhileOpenEveryBatchLeavesMinAfterDequeue) {
  constexpr int kMin = 5, kBatch = 3, kTotal = 20;
  Notification reached, gate;  // outlive the harness, whose threads use them
  Harness h;
  auto next = std::make_shared<int64_t>(0);
  Producer p = [&, next]() -> Result<Element> {
    const int64_t i = (*next)++;
    if (i >= kTotal) return errors::OutOfRange("done");
    if (i == kMin + kBatch - 1) {  // the examples before this one are all enqueued
      reached.Notify();
      gate.Wait();
    }
    return Int64Element(i);
  };
  ShuffleBatchOptions o;
  o.batch_size = kBatch;
  o.capacity = 10;
  o.min_after_dequeue = kMin;
  o.seed = 3;
  o.dtypes = {DType::kInt64};
  o.shapes = {Scalar()};
  o.allow_smaller_final_batch = true;
  o.registry = h.registry();
  Result<BatchQueue> b = ShuffleBatch(p, o);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->queue()->type_name(), "RandomShuffleQueue");
  h.Start();
  ASSERT_TRUE(reached.Wait());
  EXPECT_EQ(b->queue()->size(), kMin + kBatch - 1);
  // One short of min + batch: the dequeue must wait (a negative check).
  EXPECT_TRUE(StatusIs(b->Dequeue(queue::WaitOptions::Timeout(std::chrono::milliseconds(20))).status(),
                       Code::kDeadlineExceeded));
  gate.Notify();
  std::vector<int64_t> all;
  for (const auto& batch : DrainBatches(*b)) all.insert(all.end(), batch.begin(), batch.end());
  std::vector<int64_t> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> want(kTotal);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(sorted, want);  // every example exactly once
  EXPECT_NE(all, want);     // and shuffled
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(ShuffleBatchTest, CapacityMustExceedMinAfterDequeue) {
  QueueRunnerRegistry registry;
  ShuffleBatchOptions o;
  o.batch_size = 2;
  o.capacity = 10;
  o.min_after_dequeue = 10;
  o.dtypes = {DType::kInt64};
  o.shapes = {Scalar()};
  o.registry = &registry;
  EXPECT_TRUE(StatusIs(ShuffleBatch(CountingProducer{1}.producer(), o).status(), Code::kInvalidArgument,
                       "capacity 10 must be bigger than min_after_dequeue 10."));
  o.min_after_dequeue = 2;
  o.dynamic_pad = true;
  EXPECT_TRUE(StatusIs(ShuffleBatch(CountingProducer{1}.producer(), o).status(), Code::kInvalidArgument,
                       "dynamic_pad"));
  EXPECT_TRUE(registry.runners().empty());
}

TEST(MaybeBatchTest, KeepInputPredicateFiltersExamples) {
  Harness h;
  BatchOptions o = Int64Batch(h, 3);
  o.allow_smaller_final_batch = true;
  Result<BatchQueue> b = MaybeBatch(
      CountingProducer{10}.producer(), [](const Element& e) { return e[0].scalar<int64_t>() % 2 == 0; }, o);
  ASSERT_TRUE(b.ok());
  h.Start();
  EXPECT_EQ(DrainBatches(*b), (std::vector<std::vector<int64_t>>{{0, 2, 4}, {6, 8}}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(MaybeBatchTest, ConstantFalseEnqueuesNothing) {
  Harness h;
  BatchOptions o = Int64Batch(h, 2);
  o.allow_smaller_final_batch = true;
  CountingProducer input{5};
  Result<BatchQueue> b = MaybeBatch(input.producer(), false, o);
  ASSERT_TRUE(b.ok());
  h.Start();
  EXPECT_TRUE(DrainBatches(*b).empty());
  EXPECT_EQ(b->queue()->stats().enqueued, 0);
  EXPECT_GE(input.calls->load(), 6);  // every example was produced, then dropped
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(MaybeBatchTest, EnqueueManyFiltersPerExample) {
  Harness h;
  auto done = std::make_shared<std::atomic<bool>>(false);
  Producer p = [done]() -> Result<Element> {
    if (done->exchange(true)) return errors::OutOfRange("done");
    return Element{Tensor::FromVector(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6})};
  };
  BatchOptions o = Int64Batch(h, 10);
  o.enqueue_many = true;
  o.allow_smaller_final_batch = true;
  Result<BatchQueue> b = MaybeBatchJoin({p}, [](const Element& e) { return e[0].scalar<int64_t>() > 3; }, o);
  ASSERT_TRUE(b.ok());
  h.Start();
  EXPECT_EQ(DrainBatches(*b), (std::vector<std::vector<int64_t>>{{4, 5, 6}}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

// A filtering producer's rejection (SkippedStep(), producer.h) is a step
// that enqueues nothing, after which the thread checks for a stop before
// its next call.

TEST(MaybeBatchTest, SkippedStepEnqueuesNothingAndTheThreadGoesOn) {
  Harness h;
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  Producer p = [next]() -> Result<Element> {
    const int64_t i = next->fetch_add(1);
    if (i >= 10) return errors::OutOfRange("done");
    if (i % 2 == 1) return SkippedStep();
    return Int64Element(i);
  };
  Result<BatchQueue> b = Batch(p, Int64Batch(h, 5));
  ASSERT_TRUE(b.ok());
  h.Start();
  EXPECT_EQ(DrainBatches(*b), (std::vector<std::vector<int64_t>>{{0, 2, 4, 6, 8}}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(MaybeBatchTest, ProducerThatOnlySkipsStillStopsOnRequest) {
  Harness h;
  auto calls = std::make_shared<std::atomic<int64_t>>(0);
  Producer p = [calls]() -> Result<Element> {
    calls->fetch_add(1);
    return SkippedStep();
  };
  Result<BatchQueue> b = Batch(p, Int64Batch(h, 2));
  ASSERT_TRUE(b.ok());
  h.Start();
  while (calls->load() < 100) std::this_thread::yield();
  EXPECT_TRUE(IsOk(h.Stop()));  // no error reaches the coordinator
  EXPECT_TRUE(h.AllThreadsFinished());
  EXPECT_EQ(b->queue()->stats().enqueued, 0);
}

TEST(MaybeShuffleBatchJoinTest, FiltersAndDrainsEverything) {
  Harness h;
  ShuffleBatchOptions o;
  o.batch_size = 4;
  o.capacity = 8;
  o.min_after_dequeue = 2;
  o.dtypes = {DType::kInt64};
  o.shapes = {Scalar()};
  o.allow_smaller_final_batch = true;
  o.registry = h.registry();
  CountingProducer input{30};  // shared by both threads: each value once
  Result<BatchQueue> b = MaybeShuffleBatchJoin(
      {input.producer(), input.producer()}, [](const Element& e) { return e[0].scalar<int64_t>() % 3 == 0; }, o);
  ASSERT_TRUE(b.ok()) << b.status();
  h.Start();
  std::multiset<int64_t> seen;
  for (const auto& batch : DrainBatches(*b)) seen.insert(batch.begin(), batch.end());
  EXPECT_EQ(seen, (std::multiset<int64_t>{0, 3, 6, 9, 12, 15, 18, 21, 24, 27}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(BatchTest, ProducerErrorStopsEverythingAndReachesJoin) {
  Harness h;
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  Producer p = [next]() -> Result<Element> {
    const int64_t i = next->fetch_add(1);
    if (i == 5) return errors::InvalidArgument("bad example ", i);
    return Int64Element(i);  // endless otherwise: only the error ends it
  };
  BatchOptions o = Int64Batch(h, 4);
  o.num_threads = 2;
  o.capacity = 4;
  Result<BatchQueue> b = Batch(p, o);
  ASSERT_TRUE(b.ok());
  h.Start();
  // The consumer drains, then gets OutOfRange from the cancelled queue.
  for (;;) {
    Result<Element> e = b->Dequeue(Safe());
    if (!e.ok()) {
      EXPECT_TRUE(StatusIs(e.status(), Code::kOutOfRange)) << e.status();
      break;
    }
  }
  EXPECT_TRUE(h.coord()->should_stop());
  EXPECT_TRUE(StatusIs(h.Stop(), Code::kInvalidArgument, "bad example 5"));
  EXPECT_TRUE(h.AllThreadsFinished());
}

TEST(BatchTest, WrongShapeExampleIsAnError) {
  Harness h;
  Producer p = []() -> Result<Element> { return Element{Tensor::FromVector(std::vector<int64_t>{1, 2})}; };
  Result<BatchQueue> b = Batch(p, Int64Batch(h, 2));
  ASSERT_TRUE(b.ok());
  h.Start();
  EXPECT_TRUE(StatusIs(b->Dequeue(Safe()).status(), Code::kOutOfRange));
  EXPECT_TRUE(StatusIs(h.Stop(), Code::kInvalidArgument));
}

TEST(BatchTest, ValueErrors) {
  QueueRunnerRegistry registry;
  const Producer p = CountingProducer{1}.producer();
  BatchOptions good;
  good.batch_size = 2;
  good.dtypes = {DType::kInt64};
  good.shapes = {Scalar()};
  good.registry = &registry;

  BatchOptions o = good;
  o.dtypes.clear();
  o.shapes.clear();
  EXPECT_TRUE(StatusIs(Batch(p, o).status(), Code::kInvalidArgument, "Expected at least one tensor in batch()."));
  o = good;
  o.batch_size = 0;
  EXPECT_TRUE(StatusIs(Batch(p, o).status(), Code::kInvalidArgument, "batch_size"));
  o = good;
  o.num_threads = 0;
  EXPECT_TRUE(StatusIs(Batch(p, o).status(), Code::kInvalidArgument, "num_threads"));
  o = good;
  o.capacity = 0;
  EXPECT_TRUE(StatusIs(Batch(p, o).status(), Code::kInvalidArgument, "capacity"));
  o = good;
  o.shapes = {};
  EXPECT_TRUE(StatusIs(Batch(p, o).status(), Code::kInvalidArgument, "shapes"));
  o = good;
  o.shapes = {PartialShape(std::vector<int64_t>{-1})};
  EXPECT_TRUE(StatusIs(Batch(p, o).status(), Code::kInvalidArgument, "fully defined"));
  o.shapes = {PartialShape::UnknownRank()};
  o.dynamic_pad = true;
  EXPECT_TRUE(StatusIs(Batch(p, o).status(), Code::kInvalidArgument, "Cannot infer Tensor's rank"));
  EXPECT_TRUE(StatusIs(BatchJoin({}, good).status(), Code::kInvalidArgument,
                       "Expected at least one set of tensors"));
  EXPECT_TRUE(StatusIs(Batch(Producer(), good).status(), Code::kInvalidArgument, "empty"));
  EXPECT_TRUE(registry.runners().empty());
}

}  // namespace
}  // namespace sluice::train
