// Observability: Queue::stats() snapshots and the process-wide registry of
// live queues behind AllQueueStats().
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"

namespace sluice::queue {
namespace {

Element Int(int64_t v) { return Element{Tensor::Scalar<int64_t>(v)}; }

QueueOptions Int64Options(int32_t capacity, std::string name) {
  QueueOptions o;
  o.capacity = capacity;
  o.dtypes = {DType::kInt64};
  o.shapes = {PartialShape(TensorShape{})};
  o.name = std::move(name);
  return o;
}

std::optional<QueueStats> Find(const std::vector<QueueStats>& all, uint64_t id) {
  for (const QueueStats& s : all) {
    if (s.id == id) return s;
  }
  return std::nullopt;
}

TEST(QueueStatsTest, SnapshotCountsElementsNotCalls) {
  auto q = *NewFIFOQueue(Int64Options(10, "stats_fifo"));
  ASSERT_TRUE(q->Enqueue(Int(1)).ok());
  Tensor batch(DType::kInt64, TensorShape{4});
  for (int i = 0; i < 4; ++i) batch.data<int64_t>()[i] = i;
  ASSERT_TRUE(q->EnqueueMany(Element{batch}).ok());
  ASSERT_TRUE(q->DequeueMany(3).ok());
  const QueueStats s = q->stats();
  EXPECT_EQ(s.name, "stats_fifo");
  EXPECT_EQ(s.type, "FIFOQueue");
  EXPECT_EQ(s.capacity, 10);
  EXPECT_EQ(s.size, 2);
  EXPECT_EQ(s.enqueued, 5);
  EXPECT_EQ(s.dequeued, 3);
  EXPECT_FALSE(s.closed);
  EXPECT_DOUBLE_EQ(s.fraction_full(), 0.2);
  ASSERT_TRUE(q->Close().ok());
  EXPECT_TRUE(q->stats().closed);
}

TEST(QueueStatsTest, IdsAreDistinctAndIncreasing) {
  auto a = *NewFIFOQueue(Int64Options(1, "a"));
  auto b = *NewFIFOQueue(Int64Options(1, "a"));
  EXPECT_NE(a->stats().id, 0u);
  EXPECT_LT(a->stats().id, b->stats().id);
}

TEST(QueueStatsTest, UnboundedQueueIsNeverFull) {
  auto q = *NewFIFOQueue(Int64Options(-1, "unbounded"));
  ASSERT_TRUE(q->Enqueue(Int(1)).ok());
  EXPECT_EQ(q->stats().capacity, Queue::kUnbounded);
  EXPECT_DOUBLE_EQ(q->stats().fraction_full(), 0.0);
}

TEST(QueueStatsTest, RandomShuffleQueueReportsFractionOverMin) {
  RandomShuffleQueueOptions o;
  o.capacity = 10;
  o.min_after_dequeue = 4;
  o.dtypes = {DType::kInt64};
  o.shapes = {PartialShape(TensorShape{})};
  o.seed = 7;
  auto q = *NewRandomShuffleQueue(std::move(o));
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(q->Enqueue(Int(i)).ok());
  const QueueStats s = q->stats();
  EXPECT_EQ(s.min_after_dequeue, 4);
  EXPECT_EQ(q->min_after_dequeue(), 4);
  EXPECT_DOUBLE_EQ(s.fraction_full(), 0.7);
  EXPECT_DOUBLE_EQ(s.fraction_over_min_full(), 0.5);  // (7 - 4) / (10 - 4)
}

TEST(QueueStatsTest, AllQueueStatsListsLiveQueuesInCreationOrder) {
  auto first = *NewFIFOQueue(Int64Options(4, "registry_first"));
  auto second = *NewPaddingFIFOQueue(Int64Options(4, "registry_second"));
  ASSERT_TRUE(second->Enqueue(Int(1)).ok());
  const uint64_t first_id = first->stats().id, second_id = second->stats().id;
  std::vector<QueueStats> all = AllQueueStats();
  auto pos = [&](uint64_t id) {
    return std::find_if(all.begin(), all.end(), [&](const QueueStats& s) { return s.id == id; }) - all.begin();
  };
  ASSERT_LT(pos(first_id), static_cast<long>(all.size()));
  ASSERT_LT(pos(second_id), static_cast<long>(all.size()));
  EXPECT_LT(pos(first_id), pos(second_id));
  EXPECT_EQ(Find(all, second_id)->name, "registry_second");
  EXPECT_EQ(Find(all, second_id)->type, "PaddingFIFOQueue");
  EXPECT_EQ(Find(all, second_id)->size, 1);

  first.reset();  // the registry holds no reference
  all = AllQueueStats();
  EXPECT_FALSE(Find(all, first_id).has_value());
  EXPECT_TRUE(Find(all, second_id).has_value());
}

TEST(QueueStatsTest, SharedQueueIsListedOnce) {
  QueueOptions o = Int64Options(3, "shared_stats");
  o.shared_name = "queue_stats_test_shared";
  auto a = *NewFIFOQueue(o);
  auto b = *NewFIFOQueue(o);
  ASSERT_EQ(a, b);
  const std::vector<QueueStats> all = AllQueueStats();
  EXPECT_EQ(std::count_if(all.begin(), all.end(), [&](const QueueStats& s) { return s.id == a->stats().id; }),
            1);
}

TEST(QueueStatsTest, RegistryForgetsManyDeadQueues) {
  // Creating and dropping many queues must not grow the snapshot.
  auto keep = *NewFIFOQueue(Int64Options(1, "survivor"));
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(NewFIFOQueue(Int64Options(1, "ephemeral")).ok());
  for (const QueueStats& s : AllQueueStats()) EXPECT_NE(s.name, "ephemeral");
  EXPECT_TRUE(Find(AllQueueStats(), keep->stats().id).has_value());
}

}  // namespace
}  // namespace sluice::queue
