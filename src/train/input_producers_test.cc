// tf.train input producers: epochs, per-epoch shuffling, seeds, OutOfRange
// after num_epochs, shared queues, and TF's ValueErrors.
#include "sluice/train/input_producers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <utility>
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

// Every int32 a RangeInputProducer(limit) gives over `epochs` epochs under
// the seed pair `seeds`.
std::vector<int32_t> RangeRun(int32_t limit, SeedPair seeds, int epochs) {
  Harness h;
  ProducerOptions o;
  o.num_epochs = epochs;
  o.seed = seeds.seed;
  o.seed2 = seeds.seed2;
  o.capacity = 7;  // smaller than most epochs: the enqueue blocks part-way
  o.registry = h.registry();
  Result<ProducerQueue> p = RangeInputProducer(limit, o);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  h.Start();
  std::vector<int32_t> got;
  for (;;) {
    Result<Element> e = p->queue->Dequeue(queue::WaitOptions::Timeout(testing::kSafety));
    if (!e.ok()) {
      EXPECT_TRUE(StatusIs(e.status(), Code::kOutOfRange)) << e.status();
      break;
    }
    got.push_back((*e)[0].scalar<int32_t>());
  }
  EXPECT_TRUE(IsOk(h.Stop()));
  return got;
}

// The orders below are TensorFlow 2.21's
// tf.compat.v1.train.range_input_producer(limit, num_epochs, seed=s) (no
// graph seed), read from a Session.
TEST(RangeInputProducerTest, SeededOrderIsTensorFlowsEpochAfterEpoch) {
  EXPECT_EQ(RangeRun(10, TfSeedPair(7), 3),
            (std::vector<int32_t>{7, 2, 0, 9, 8, 4, 5, 1, 6, 3, 3, 7, 9, 5, 8,
                                  4, 2, 0, 6, 1, 7, 3, 2, 0, 9, 4, 1, 8, 5, 6}));
  EXPECT_EQ(RangeRun(2, TfSeedPair(5), 6), (std::vector<int32_t>{1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0}));
  EXPECT_EQ(RangeRun(1, TfSeedPair(5), 3), (std::vector<int32_t>{0, 0, 0}));
}

TEST(RangeInputProducerTest, SeededOrderOfALargeRangeIsTensorFlows) {
  // 1000 rows draw 250 Philox blocks per epoch: later epochs check the skip.
  const std::vector<int32_t> got = RangeRun(1000, TfSeedPair(123), 3);
  ASSERT_EQ(got.size(), 3000u);
  const std::vector<std::vector<int32_t>> want{{136, 885, 43, 698, 762, 290, 813, 692},
                                               {917, 719, 677, 871, 176, 33, 614, 691},
                                               {948, 952, 834, 425, 604, 689, 716, 876}};
  for (size_t e = 0; e < want.size(); ++e) {
    EXPECT_EQ(std::vector<int32_t>(got.begin() + 1000 * e, got.begin() + 1000 * e + 8), want[e]) << "epoch " << e;
  }
}

TEST(StringInputProducerTest, SeededOrderIsTensorFlows) {
  Harness h;
  ProducerOptions o;
  o.num_epochs = 3;
  const SeedPair seeds = TfSeedPair(42);
  o.seed = seeds.seed;
  o.seed2 = seeds.seed2;
  o.registry = h.registry();
  Result<ProducerQueue> p = StringInputProducer(Names(5), o);
  ASSERT_TRUE(p.ok()) << p.status();
  h.Start();
  EXPECT_EQ(DrainStrings(*p->queue),
            (std::vector<std::string>{"file2", "file1", "file3", "file4", "file0", "file1", "file0", "file2",
                                      "file4", "file3", "file0", "file3", "file4", "file2", "file1"}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(InputProducerTest, SeededOrderOfRowsUnderAGraphSeedIsTensorFlows) {
  // tf.compat.v1.set_random_seed(9); input_producer(rows, seed=3).
  Tensor rows(DType::kFloat32, TensorShape{4, 2});
  for (int i = 0; i < 8; ++i) rows.data<float>()[i] = static_cast<float>(i);
  Harness h;
  InputProducerOptions o;
  o.num_epochs = 2;
  const SeedPair seeds = TfSeedPair(3, 9);
  o.seed = seeds.seed;
  o.seed2 = seeds.seed2;
  o.registry = h.registry();
  Result<ProducerQueue> p = InputProducer(rows, o);
  ASSERT_TRUE(p.ok()) << p.status();
  h.Start();
  Result<Element> all = p->queue->DequeueMany(8, queue::WaitOptions::Timeout(testing::kSafety));
  ASSERT_TRUE(all.ok()) << all.status();
  const float* v = (*all)[0].data<float>();
  EXPECT_EQ(std::vector<float>(v, v + 16),
            (std::vector<float>{4, 5, 0, 1, 6, 7, 2, 3, 2, 3, 6, 7, 0, 1, 4, 5}));
  EXPECT_TRUE(IsOk(h.Stop()));
}

TEST(RangeInputProducerTest, UnseededShuffleDiffersFromRunToRun) {
  // (0, 0) seeds from a non-deterministic source; two runs agreeing on one
  // order of 20 rows would happen once in 20! runs.
  const std::vector<int32_t> a = RangeRun(20, SeedPair{}, 1);
  ASSERT_EQ(a.size(), 20u);
  EXPECT_NE(RangeRun(20, SeedPair{}, 1), a);
}

TEST(TfSeedPairTest, FollowsRandomSeedGetSeed) {
  auto pair = [](SeedPair p) { return std::make_pair(p.seed, p.seed2); };
  EXPECT_EQ(pair(TfSeedPair(5)), std::make_pair(int64_t{87654321}, int64_t{5}));
  EXPECT_EQ(pair(TfSeedPair(-1)), std::make_pair(int64_t{87654321}, int64_t{2147483646}));
  EXPECT_EQ(pair(TfSeedPair(2147483647)), std::make_pair(int64_t{87654321}, int64_t{0}));
  EXPECT_EQ(pair(TfSeedPair(2147483648, 9)), std::make_pair(int64_t{9}, int64_t{1}));
  EXPECT_EQ(pair(TfSeedPair(0, -2)), std::make_pair(int64_t{2147483645}, int64_t{0}));
  // (0, 0) means "non-deterministic" to the ops, so TF turns it into (0, M).
  EXPECT_EQ(pair(TfSeedPair(0, 0)), std::make_pair(int64_t{0}, int64_t{2147483647}));
  EXPECT_EQ(pair(TfSeedPair(2147483647, 2147483647)), std::make_pair(int64_t{0}, int64_t{2147483647}));
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
