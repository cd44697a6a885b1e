// The memory budget (Options.ram_budget): accounts wait for room unless the
// consumer needs their element now, a pipeline stays within the budget in
// tracked bytes, and a budget too small for one element per stage fails at
// the first elements instead of hanging.
#include "data/memory_budget.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>

#include "data/data_test_util.h"
#include "sluice/data/checkpoint.h"

namespace sluice::data {
namespace {

using testing::Must;

std::shared_ptr<MemoryBudget> BudgetOf(int64_t limit) {
  auto b = std::make_shared<MemoryBudget>();
  b->SetLimit(limit);
  return b;
}

const std::function<bool()> kCanWait = [] { return false; };
const std::function<bool()> kNeededNow = [] { return true; };

TEST(MemoryBudgetTest, ChargeWaitsForRoomUntilAnotherStageReleases) {
  auto budget = BudgetOf(1000);
  BudgetAccount a(budget, "A"), b(budget, "B");
  ASSERT_TRUE(a.Charge(300, kNeededNow).ok());
  ASSERT_TRUE(b.Charge(100, kNeededNow).ok());  // reserve 400: room up to 600
  ASSERT_TRUE(a.Charge(200, kCanWait).ok());  // 600
  auto waiting = std::async(std::launch::async, [&] { return b.Charge(100, kCanWait); });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  a.Release(300);
  EXPECT_TRUE(waiting.get().ok());
  MemoryStats s = budget->Snapshot();
  EXPECT_EQ(s.bytes, 400);
  EXPECT_EQ(s.peak_bytes, 600);
  EXPECT_EQ(s.reserve_bytes, 400);
  EXPECT_EQ(s.waits, 1);
}

TEST(MemoryBudgetTest, ChargeNeededNowNeverWaitsAndStaysWithinTheLimit) {
  auto budget = BudgetOf(1000);
  BudgetAccount a(budget, "A"), b(budget, "B");
  ASSERT_TRUE(a.Charge(500, kNeededNow).ok());  // reserve 500: a is full
  ASSERT_TRUE(b.Charge(400, kNeededNow).ok());
  EXPECT_EQ(budget->Snapshot().bytes, 900);
  EXPECT_LE(budget->Snapshot().peak_bytes, 1000);
}

TEST(MemoryBudgetTest, ChargeKeepsToHalfTheRoomUntilEveryStageHasCharged) {
  auto budget = BudgetOf(1000);
  BudgetAccount a(budget, "A");
  auto b = std::make_unique<BudgetAccount>(budget, "B");
  ASSERT_TRUE(a.Charge(100, kNeededNow).ok());  // room 900, half of it while B is unknown
  ASSERT_TRUE(a.Charge(100, kCanWait).ok());
  ASSERT_TRUE(a.Charge(100, kCanWait).ok());
  ASSERT_TRUE(a.Charge(100, kCanWait).ok());    // 400 <= 450
  auto waiting = std::async(std::launch::async, [&] { return a.Charge(100, kCanWait); });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  ASSERT_TRUE(b->Charge(100, kNeededNow).ok());  // known now: room 800, 500 + 100 fit
  EXPECT_TRUE(waiting.get().ok());
}

TEST(MemoryBudgetTest, CancelEndsAWaitingCharge) {
  auto budget = BudgetOf(100);
  BudgetAccount a(budget, "A");
  ASSERT_TRUE(a.Charge(40, kNeededNow).ok());
  auto waiting = std::async(std::launch::async, [&] { return a.Charge(40, kCanWait); });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  a.Cancel();
  EXPECT_EQ(waiting.get().code(), Code::kCancelled);
  EXPECT_EQ(budget->Snapshot().bytes, 40);
}

TEST(MemoryBudgetTest, LimitBelowOneElementPerStageIsResourceExhausted) {
  auto budget = BudgetOf(100);
  BudgetAccount a(budget, "A"), b(budget, "B");
  ASSERT_TRUE(a.Charge(60, kNeededNow).ok());
  Status s = b.Charge(60, kNeededNow);
  EXPECT_EQ(s.code(), Code::kResourceExhausted);
  EXPECT_NE(s.message().find("ram_budget of 100 bytes"), std::string::npos) << s;
  EXPECT_EQ(budget->Snapshot().bytes, 60);
}

TEST(MemoryBudgetTest, AccountReleasesWhatItHoldsWhenDestroyed) {
  auto budget = BudgetOf(0);
  {
    BudgetAccount a(budget, "A");
    ASSERT_TRUE(a.ChargeNoWait(123).ok());
    EXPECT_EQ(budget->Snapshot().bytes, 123);
  }
  EXPECT_EQ(budget->Snapshot().bytes, 0);
  EXPECT_EQ(budget->Snapshot().peak_bytes, 123);
}

// 0..n-1 as float32 vectors of `floats` values (value i everywhere).
DatasetPtr Vectors(int64_t n, int64_t floats) {
  MapFn fill = [floats](Element e) -> Result<Element> {
    Tensor t(DType::kFloat32, TensorShape{floats});
    for (float& v : t.flat<float>()) v = static_cast<float>(e[0].scalar<int64_t>());
    return Element{std::move(t)};
  };
  return Must(Map(testing::RangeOf(n), fill, ElementSpec{{DType::kFloat32}, {PartialShape({floats})}, {}},
                  MapOptions{.num_parallel_calls = 4}));
}

// prefetch(shuffle(parallel map)) batched, with the budget `ram_budget`.
DatasetPtr BudgetPipeline(std::optional<int64_t> ram_budget) {
  DatasetPtr ds = Must(Shuffle(Vectors(256, 4096), 64, 1, 2));  // 16 KiB elements
  ds = Must(Prefetch(Must(Batch(ds, 4)), 8));
  Options o;
  o.ram_budget = ram_budget;
  return Must(WithOptions(ds, o));
}

// Drains `it`; the sum of every value divided by the vector size.
double Drain(IteratorBase* it, int64_t floats) {
  double sum = 0;
  while (true) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || end) return sum / static_cast<double>(floats);
    for (float v : e[0].flat<float>()) sum += v;
  }
}

TEST(MemoryBudgetTest, PipelineStaysWithinTheBudgetInTrackedBytes) {
  constexpr int64_t kBudget = 256 << 10;
  auto it = BudgetPipeline(kBudget)->MakeIterator();
  EXPECT_EQ(Drain(it.get(), 4096), 255.0 * 256 / 2);  // every element, once
  MemoryStats s = IteratorMemory(*it);
  EXPECT_EQ(s.limit, kBudget);
  EXPECT_LE(s.peak_bytes, kBudget);
  EXPECT_GT(s.peak_bytes, kBudget / 4);
  EXPECT_GT(s.reserve_bytes, 0);
  EXPECT_EQ(s.bytes, 0);  // everything handed out
}

TEST(MemoryBudgetTest, PipelineWithoutBudgetCountsMoreThanTheBudgetedOne) {
  auto it = BudgetPipeline(std::nullopt)->MakeIterator();
  EXPECT_EQ(Drain(it.get(), 4096), 255.0 * 256 / 2);
  MemoryStats s = IteratorMemory(*it);
  EXPECT_EQ(s.limit, 0);
  EXPECT_GT(s.peak_bytes, 256 << 10);  // the shuffle buffer alone holds 1 MiB
  EXPECT_EQ(s.waits, 0);
}

TEST(MemoryBudgetTest, BudgetOfAFewBytesFailsAtTheFirstElementInsteadOfHanging) {
  auto it = BudgetPipeline(16)->MakeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s;
  EXPECT_TRUE(s.GetPayload("ram_budget").has_value());
}

TEST(MemoryBudgetTest, CacheThatOutgrowsTheBudgetIsResourceExhausted) {
  DatasetPtr ds = Must(Cache(Vectors(64, 4096)));  // 1 MiB in all
  Options o;
  o.ram_budget = 256 << 10;
  auto it = Must(WithOptions(ds, o))->MakeIterator();
  Status s;
  for (int i = 0; i < 64 && s.ok(); ++i) {
    Element e;
    bool end = false;
    s = it->GetNext(&e, &end);
  }
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s;
}

TEST(MemoryBudgetTest, AutotunePrefetchGrowsWithinTheBudget) {
  constexpr int64_t kBudget = 256 << 10;
  DatasetPtr ds = Must(Prefetch(Vectors(512, 4096), kAutotune));
  Options o;
  o.ram_budget = kBudget;
  auto it = Must(WithOptions(ds, o))->MakeIterator();
  Drain(it.get(), 4096);
  EXPECT_LE(IteratorMemory(*it).peak_bytes, kBudget);
  for (const StageStats& st : IteratorStats(*it)) {
    if (st.name == "Prefetch") {
      EXPECT_LE(st.buffer_size * (16 << 10), kBudget);
    }
  }
}

TEST(MemoryBudgetTest, RestoredBuffersAreChargedAndReleasedAsTheyEmpty) {
  auto make = [] {
    DatasetPtr ds = Must(Prefetch(Must(Shuffle(Vectors(32, 256), 16, 1, 2)), 4));
    Options o;
    o.ram_budget = 1 << 20;
    return Must(WithOptions(ds, o));
  };
  std::string bytes;
  {
    auto it = make()->MakeIterator();
    for (int i = 0; i < 5; ++i) {
      Element e;
      bool end = false;
      ASSERT_TRUE(it->GetNext(&e, &end).ok());
    }
    Result<std::string> saved = SaveIterator(*it);
    ASSERT_TRUE(saved.ok()) << saved.status();
    bytes = std::move(*saved);
  }
  auto it = make()->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*it, bytes).ok());
  EXPECT_GT(IteratorMemory(*it).bytes, 0);  // the restored shuffle buffer
  Drain(it.get(), 256);
  EXPECT_EQ(IteratorMemory(*it).bytes, 0);
}

}  // namespace
}  // namespace sluice::data
