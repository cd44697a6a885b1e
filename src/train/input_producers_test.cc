// tf.train input producers: epochs, per-epoch shuffling, seeds, OutOfRange
// after num_epochs, shared queues, and TF's ValueErrors.
#include "sluice/train/input_producers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "input_test_util.h"

namespace sluice::train {
namespace {

using testing::Harness;
using testing::IsOk;
using testing::StatusIs;

std::vector<std::string> Names(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(StrCat("file", i));
  return v;
}

// Dequeues string scalars until OutOfRange.
std::vector<std::string> DrainStrings(queue::Queue& q) {
  std::vector<std::string> out;
  for (;;) {
    Result<Element> e = q.Dequeue(queue::WaitOptions::Timeout(testing::kSafety));
    if (!e.ok()) {
      EXPECT_TRUE(StatusIs(e.status(), Code::kOutOfRange)) << e.status();
      return out;
    }
    out.push_back((*e)[0].scalar<std::string>());
  }
}

// Splits `all` into epochs of `n` and checks each is a permutation of `want`.
void ExpectEpochs(const std::vector<std::string>& all, const std::vector<std::string>& want, int epochs) {
  ASSERT_EQ(all.size(), want.size() * epochs);
  std::vector<std::string> sorted_want = want;
  std::sort(sorted_want.begin(), sorted_want.end());
  for (int e = 0; e < epochs; ++e) {
    std::vector<std::string> epoch(all.begin() + e * want.size(), all.begin() + (e + 1) * want.size());
    std::sort(epoch.begin(), epoch.end());
    EXPECT_EQ(epoch, sorted_want) << "epoch " << e;
  }
}

TEST(StringInputProducerTest, UnshuffledEpochsInOrderThenOutOfRange) {
  Harness h;
  ProducerOptions o;
  o.num_epochs = 3;
  o.shuffle = false;
  o.capacity = 4;  // smaller than an epoch: the enqueue blocks part-way
  o.registry = h.registry();
  Result<ProducerQueue> p = StringInputProducer(Names(5), o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(h.registry()->runners().size(), 1u);
  EXPECT_EQ(p->runner->num_enqueue_ops(), 1u);
  EXPECT_EQ(p->queue->size(), 0);  // nothing runs before the runners start
  h.Start();
  const std::vector<std::string> all = DrainStrings(*p->queue);
  std::vector<std::string> want;
  for (int e = 0; e < 3; ++e) {
    for (const std::string& s : Names(5)) want.push_back(s);
  }
  EXPECT_EQ(all, want);
  EXPECT_TRUE(p->queue->is_closed());
  EXPECT_TRUE(IsOk(h.Stop()));
  EXPECT_TRUE(h.AllThreadsFinished());
}

std::vector<std::string> ShuffledRun(int64_t seed, int epochs) {
  Harness h;
  ProducerOptions o;
  o.num_epochs = epochs;
  o.seed = seed;
  o.registry = h.registry();
  Result<ProducerQueue> p = StringInputProducer(Names(20), o);
  EXPECT_TRUE(p.ok()) << p.status();
  h.Start();
  std::vector<std::string> all = DrainStrings(*p->queue);
  EXPECT_TRUE(IsOk(h.Stop()));
  return all;
}

TEST(StringInputProducerTest, ShuffleReshufflesEveryEpochAndIsReproducible) {
  const std::vector<std::string> a = ShuffledRun(42, 3);
  ExpectEpochs(a, Names(20), 3);
  // Each epoch is its own permutation (20! orders: equal ones would mean the
  // shuffle does not advance), and none is the identity.
  const std::vector<std::string> e0(a.begin(), a.begin() + 20), e1(a.begin() + 20, a.begin() + 40);
  EXPECT_NE(e0, e1);
  EXPECT_NE(e0, Names(20));
  EXPECT_EQ(ShuffledRun(42, 3), a);  // same seed, same sequence
  EXPECT_NE(ShuffledRun(43, 3), a);
}

TEST(StringInputProducerTest, UnlimitedEpochsRunUntilStopped) {
  Harness h;
  ProducerOptions o;
  o.shuffle = false;
  o.capacity = 2;
  o.registry = h.registry();
  Result<ProducerQueue> p = StringInputProducer({"x", "y"}, o);
  ASSERT_TRUE(p.ok());
  h.Start();
  for (int i = 0; i < 50; ++i) {
    Result<Element> e = p->queue->Dequeue(queue::WaitOptions::Timeout(testing::kSafety));
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ((*e)[0].scalar<std::string>(), i % 2 == 0 ? "x" : "y");
  }
  // The producer is blocked on the full queue; the stop cancels it.
  EXPECT_TRUE(IsOk(h.Stop()));
  EXPECT_TRUE(h.AllThreadsFinished());
}

TEST(StringInputProducerTest, ValueErrors) {
  QueueRunnerRegistry registry;
  ProducerOptions o;
  o.registry = &registry;
  EXPECT_TRUE(StatusIs(StringInputProducer({}, o).status(), Code::kInvalidArgument,
                       "string_input_producer requires a non-null input tensor"));
  o.num_epochs = 0;
  EXPECT_TRUE(StatusIs(StringInputProducer({"a"}, o).status(), Code::kInvalidArgument,
                       "num_epochs must be > 0 not 0."));
  o.num_epochs = std::nullopt;
  o.capacity = 0;
  EXPECT_TRUE(StatusIs(StringInputProducer({"a"}, o).status(), Code::kInvalidArgument, "capacity"));
  EXPECT_TRUE(registry.runners().empty());
}

TEST(StringInputProducerTest, QueueNamesAreUniqueScopes) {
  QueueRunnerRegistry registry;
  ProducerOptions o;
  o.registry = &registry;
  o.name = "producer_names_test";
  Result<ProducerQueue> a = StringInputProducer({"a"}, o);
  Result<ProducerQueue> b = StringInputProducer({"a"}, o);
  ASSERT_TRUE(a.ok() && b.ok());
  // Scopes are unique in the process, like TF's name scopes in a graph: the
  // first "producer_names_test", then "producer_names_test_1", ... (the test
  // may run more than once in one process, so only the pattern is checked).
  const std::string& an = a->queue->name();
  const std::string& bn = b->queue->name();
  EXPECT_NE(an, bn);
  for (const std::string& n : {an, bn}) {
    EXPECT_EQ(n.rfind("producer_names_test", 0), 0u) << n;
    EXPECT_EQ(n.substr(n.size() - 11), "/fifo_queue") << n;
  }
  if (an == "producer_names_test/fifo_queue") {
    EXPECT_EQ(bn, "producer_names_test_1/fifo_queue");
  }
  EXPECT_EQ(a->queue->capacity(), 32);  // TF's default
}

TEST(StringInputProducerTest, SharedNameSharesTheQueue) {
  QueueRunnerRegistry registry;
  ProducerOptions o;
  o.registry = &registry;
  o.shared_name = "input_producers_test_shared";
  Result<ProducerQueue> a = StringInputProducer({"a"}, o);
  Result<ProducerQueue> b = StringInputProducer({"b"}, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->queue, b->queue);
  o.capacity = 5;  // incompatible
  EXPECT_TRUE(StatusIs(StringInputProducer({"c"}, o).status(), Code::kInvalidArgument, "capacity"));
}

TEST(RangeInputProducerTest, ProducesZeroToLimitPerEpoch) {
  Harness h;
  ProducerOptions o;
  o.num_epochs = 2;
  o.seed = 1;
  o.registry = h.registry();
  Result<ProducerQueue> p = RangeInputProducer(10, o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->queue->dtypes(), std::vector<DType>{DType::kInt32});
  h.Start();
  std::vector<int32_t> got;
  for (;;) {
    Result<Element> e = p->queue->Dequeue(queue::WaitOptions::Timeout(testing::kSafety));
    if (!e.ok()) {
      EXPECT_TRUE(StatusIs(e.status(), Code::kOutOfRange));
      break;
    }
    got.push_back((*e)[0].scalar<int32_t>());
  }
  ASSERT_EQ(got.size(), 20u);
  for (int e = 0; e < 2; ++e) {
    std::vector<int32_t> epoch(got.begin() + e * 10, got.begin() + (e + 1) * 10);
    std::sort(epoch.begin(), epoch.end());
    std::vector<int32_t> want(10);
    std::iota(want.begin(), want.end(), 0);
    EXPECT_EQ(epoch, want);
  }
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(InputProducerTest, ProducesRowsAndChecksElementShape) {
  Tensor rows(DType::kFloat32, TensorShape{3, 2});
  for (int i = 0; i < 6; ++i) rows.data<float>()[i] = static_cast<float>(i);
  Harness h;
  InputProducerOptions o;
  o.num_epochs = 1;
  o.shuffle = false;
  o.element_shape = PartialShape(std::vector<int64_t>{-1});
  o.registry = h.registry();
  Result<ProducerQueue> p = InputProducer(rows, o);
  ASSERT_TRUE(p.ok()) << p.status();
  h.Start();
  Result<Element> all = p->queue->DequeueMany(3, queue::WaitOptions::Timeout(testing::kSafety));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(ValuesEqual((*all)[0], rows));
  EXPECT_TRUE(StatusIs(p->queue->Dequeue(queue::WaitOptions::Timeout(testing::kSafety)).status(),
                       Code::kOutOfRange));
  EXPECT_TRUE(IsOk(h.Stop()));

  QueueRunnerRegistry registry;
  InputProducerOptions bad;
  bad.registry = &registry;
  bad.element_shape = PartialShape(std::vector<int64_t>{3});
  EXPECT_TRUE(StatusIs(InputProducer(rows, bad).status(), Code::kInvalidArgument, "are not compatible"));
  EXPECT_TRUE(StatusIs(InputProducer(Tensor::Scalar<float>(1), {}).status(), Code::kInvalidArgument,
                       "rank >= 1"));
  EXPECT_TRUE(StatusIs(InputProducer(Tensor(DType::kFloat32, TensorShape{0, 2}), {}).status(),
                       Code::kInvalidArgument, "non-empty"));
}

TEST(SliceInputProducerTest, SlicesStayAlignedAndEachRowComesOncePerEpoch) {
  const std::vector<int64_t> labels_v{10, 11, 12, 13};
  Tensor labels = Tensor::FromVector(labels_v);
  Tensor features(DType::kInt32, TensorShape{4, 2});
  for (int i = 0; i < 8; ++i) features.data<int32_t>()[i] = (i / 2) * 100 + i % 2;
  Harness h;
  ProducerOptions o;
  o.num_epochs = 2;
  o.seed = 5;
  o.registry = h.registry();
  Result<Producer> p = SliceInputProducer({labels, features}, o);
  ASSERT_TRUE(p.ok()) << p.status();
  h.Start();
  std::multiset<int64_t> seen;
  for (;;) {
    Result<Element> e = (*p)();
    if (!e.ok()) {
      EXPECT_TRUE(StatusIs(e.status(), Code::kOutOfRange));
      break;
    }
    const int64_t label = (*e)[0].scalar<int64_t>();
    const Tensor& f = (*e)[1];
    ASSERT_EQ(f.shape(), TensorShape{2});
    EXPECT_EQ(f.data<int32_t>()[0], (label - 10) * 100);  // same row of both tensors
    EXPECT_TRUE(f.SharesBufferWith(features));           // a view, not a copy
    seen.insert(label);
  }
  EXPECT_EQ(seen, (std::multiset<int64_t>{10, 10, 11, 11, 12, 12, 13, 13}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(SliceInputProducerTest, ShorterTensorFailsAtGatherTime) {
  Harness h;
  ProducerOptions o;
  o.shuffle = false;
  o.num_epochs = 1;
  o.registry = h.registry();
  Result<Producer> p = SliceInputProducer(
      {Tensor::FromVector(std::vector<int64_t>{1, 2}), Tensor::FromVector(std::vector<int64_t>{1})}, o);
  ASSERT_TRUE(p.ok());
  h.Start();
  EXPECT_TRUE((*p)().ok());
  EXPECT_TRUE(StatusIs((*p)().status(), Code::kInvalidArgument, "indices[0] = 1 is not in [0, 1)"));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(SliceInputProducerTest, ValueErrors) {
  QueueRunnerRegistry registry;
  ProducerOptions o;
  o.registry = &registry;
  EXPECT_TRUE(StatusIs(SliceInputProducer({}, o).status(), Code::kInvalidArgument,
                       "Expected at least one tensor in slice_input_producer()."));
  EXPECT_TRUE(StatusIs(SliceInputProducer({Tensor::Scalar<int64_t>(1)}, o).status(),
                       Code::kInvalidArgument, "rank >= 1"));
}

}  // namespace
}  // namespace sluice::train
