// Per-stage statistics, Options merging, and AUTOTUNE (model.cc).
#include "data/model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <optional>
#include <thread>

#include "data/data_test_util.h"

namespace sluice::data {
namespace {

using testing::Must;
using testing::RangeOf;
using namespace std::chrono_literals;

MapFn SleepFor(std::chrono::microseconds d) {
  return [d](Element e) -> Result<Element> {
    std::this_thread::sleep_for(d);
    return e;
  };
}

MapFn Identity() {
  return [](Element e) -> Result<Element> { return e; };
}

std::optional<StageStats> Find(const std::vector<StageStats>& stats, const std::string& name) {
  for (const StageStats& s : stats) {
    if (s.name == name) return s;
  }
  return std::nullopt;
}

// Reads `it` for `d`, the consumer sleeping `per_element` per element;
// returns the largest parallelism of `stage` seen meanwhile.
int64_t Consume(IteratorBase& it, std::chrono::milliseconds d, std::chrono::microseconds per_element,
                const std::string& stage) {
  int64_t most = 0;
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    Element e;
    bool end = false;
    EXPECT_TRUE(it.GetNext(&e, &end).ok());
    if (end) break;
    if (per_element.count() > 0) std::this_thread::sleep_for(per_element);
    std::optional<StageStats> s = Find(IteratorStats(it), stage);
    if (s) most = std::max(most, s->parallelism);
  }
  return most;
}

TEST(StatsTest, CountsEqualTheElementsEachStageProduced) {
  DatasetPtr ds = Must(Map(RangeOf(100), Identity(), testing::Int64Scalar()));
  ds = Must(Map(ds, Identity(), testing::Int64Scalar(), MapOptions{.num_parallel_calls = 2}));
  ds = Must(Prefetch(Must(Batch(ds, 10)), 2));
  Options unfused;  // the map and the batch as stages of their own
  unfused.optimization.map_and_batch_fusion = false;
  ds = Must(WithOptions(ds, unfused));
  auto it = ds->MakeIterator();
  int64_t n = 0;
  while (true) {
    Element e;
    bool end = false;
    ASSERT_TRUE(it->GetNext(&e, &end).ok());
    if (end) break;
    ++n;
    for (const StageStats& s : IteratorStats(*it)) {
      EXPECT_LE(s.buffer_fill, s.buffer_size) << s.name;
    }
  }
  EXPECT_EQ(n, 10);
  std::vector<StageStats> stats = IteratorStats(*it);
  ASSERT_EQ(stats.size(), 5u);
  const char* names[] = {"Map", "ParallelMap", "Batch", "Prefetch", "Root"};
  const int64_t elements[] = {100, 100, 10, 10, 10};
  for (size_t i = 0; i < stats.size(); ++i) {
    EXPECT_EQ(stats[i].name, names[i]);
    EXPECT_EQ(stats[i].elements, elements[i]) << names[i];
  }
  EXPECT_EQ(stats[1].parallelism, 2);
  EXPECT_FALSE(stats[1].autotune);
  EXPECT_EQ(stats[2].bytes, 100 * 8);  // ten batches of ten int64
  EXPECT_EQ(stats[3].buffer_size, 2);
  EXPECT_GT(stats[1].busy_ns, 0);
  EXPECT_GT(stats[4].wait_ns, 0);
}

TEST(StatsTest, AnIteratorNotMadeByMakeIteratorHasNoStats) {
  IteratorContext ctx{std::make_shared<CancellationManager>(), nullptr};
  auto it = RangeOf(3)->MakeIteratorInternal(ctx);
  EXPECT_TRUE(IteratorStats(*it).empty());
}

TEST(OptionsTest, MergeKeepsBaseValuesAndLetsLaterSetValuesWin) {
  Options a;
  a.deterministic = false;
  a.autotune.cpu_budget = 3;
  Options b;
  b.autotune.cpu_budget = 5;
  b.autotune.enabled = false;
  Options m = MergeOptions(a, b);
  EXPECT_EQ(m.deterministic, false);
  EXPECT_EQ(m.autotune.cpu_budget, 5);
  EXPECT_EQ(m.autotune.enabled, false);
  EXPECT_FALSE(m.autotune.ram_budget.has_value());
}

TEST(OptionsTest, AnOuterWithOptionsOverridesAnInnerOne) {
  Options inner;
  inner.deterministic = false;
  inner.autotune.cpu_budget = 3;
  Options outer;
  outer.autotune.cpu_budget = 5;
  DatasetPtr ds = Must(WithOptions(RangeOf(4), inner));
  ds = Must(WithOptions(Must(Map(ds, Identity(), testing::Int64Scalar())), outer));
  auto it = ds->MakeIterator();
  Options o = IteratorOptions(*it);
  EXPECT_EQ(o.deterministic, false);
  EXPECT_EQ(o.autotune.cpu_budget, 5);
  EXPECT_EQ(testing::Ints(ds), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(OptionsTest, NegativeBudgetsAreInvalid) {
  Options o;
  o.autotune.ram_budget = -1;
  EXPECT_EQ(WithOptions(RangeOf(1), o).status().code(), Code::kInvalidArgument);
}

TEST(OptionsTest, DeterministicFalseAppliesWhereTheMapLeavesItUnset) {
  // Element 0 waits until element 1 has been handed out: only a map that
  // hands out what is ready can deliver element 1 first.
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = std::make_shared<std::shared_future<void>>(gate->get_future().share());
  MapFn fn = [opened](Element e) -> Result<Element> {
    if (e[0].scalar<int64_t>() == 0) opened->wait();
    return e;
  };
  Options o;
  o.deterministic = false;
  DatasetPtr ds = Must(WithOptions(
      Must(Map(RangeOf(2), fn, testing::Int64Scalar(), MapOptions{.num_parallel_calls = 2})), o));
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 1);
  gate->set_value();
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 0);
}

TEST(AutotuneTest, ParallelismConvergesToWhatASlowConsumerNeeds) {
  // Each call takes 4 ms (sleeping: no CPU), the consumer 1 ms per element:
  // by Little's law the map needs 4 calls in flight (5 with the tuner's
  // 1.25 margin), whatever the CPU budget.
  Options o;
  o.autotune.cpu_budget = 16;
  DatasetPtr ds = Must(Map(Must(Range(0, 1 << 30)), SleepFor(4ms), testing::Int64Scalar(),
                           MapOptions{.num_parallel_calls = kAutotune}));
  auto it = Must(WithOptions(ds, o))->MakeIterator();
  // Loose bounds: on a loaded machine sleeps overshoot. A slow machine (a
  // sanitizer build) gets more time to converge.
  std::optional<StageStats> s;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  do {
    Consume(*it, 500ms, 1000us, "ParallelMap");
    s = Find(IteratorStats(*it), "ParallelMap");
    ASSERT_TRUE(s.has_value());
  } while ((s->parallelism < 3 || s->parallelism > 10) && std::chrono::steady_clock::now() < deadline);
  EXPECT_TRUE(s->autotune);
  EXPECT_GE(s->parallelism, 3);
  EXPECT_LE(s->parallelism, 10);
}

TEST(AutotuneTest, ParallelismStartsAtTheBudgetAndNeverExceedsTwoCallsPerCore) {
  // A fast consumer of a map that waits (no CPU): the tuner wants as many
  // calls as it may.
  Options o;
  o.autotune.cpu_budget = 3;
  DatasetPtr ds = Must(Map(Must(Range(0, 1 << 30)), SleepFor(2ms), testing::Int64Scalar(),
                           MapOptions{.num_parallel_calls = kAutotune}));
  auto it = Must(WithOptions(ds, o))->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  // One call per core from the start (TF starts at its pool's size): the
  // first elements do not wait for the tuner.
  EXPECT_EQ(Find(IteratorStats(*it), "ParallelMap")->parallelism, 3);
  // Until the tuner reaches the cap (a slow machine gets more time).
  int64_t most = 0;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  do {
    most = std::max(most, Consume(*it, 200ms, 0us, "ParallelMap"));
  } while (Find(IteratorStats(*it), "ParallelMap")->parallelism < 6 && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(most, 6);
  EXPECT_EQ(Find(IteratorStats(*it), "ParallelMap")->parallelism, 6);
}

TEST(AutotuneTest, DisabledAutotuneRunsTheBudgetsParallelism) {
  Options o;
  o.autotune.enabled = false;
  o.autotune.cpu_budget = 3;
  DatasetPtr ds =
      Must(Map(RangeOf(50), Identity(), testing::Int64Scalar(), MapOptions{.num_parallel_calls = kAutotune}));
  auto it = Must(WithOptions(ds, o))->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(Find(IteratorStats(*it), "ParallelMap")->parallelism, 3);
}

TEST(AutotuneTest, TheTunerMovesParallelismBothWays) {
  // TuneOnce by hand on a model whose counters say: 1 ms of wall time and
  // 1 ms of CPU per element, root consuming 100 us per element, budget 4.
  auto model = std::make_shared<Model>();
  Options o;
  o.autotune.cpu_budget = 4;
  model->MergeOptions(o);
  std::shared_ptr<Node> node = model->AddNode("ParallelMap", true, 1);
  auto root = std::make_shared<Node>("Root", false, 1);
  model->SetRootNode(root);
  int64_t applied = 0;
  node->SetApply([&](int64_t p) {
    applied = p;
    Node::Set(node->parallelism, p);
  });
  auto feed = [&](int64_t elements, int64_t wall_ns, int64_t root_ns) {
    Node::Add(node->elements, elements);
    Node::Add(node->busy_ns, elements * wall_ns);
    Node::Add(node->cpu_ns, elements * wall_ns);
    Node::Add(root->elements, elements);
    Node::Add(root->busy_ns, elements * root_ns);
  };
  feed(100, 1'000'000, 100'000);
  model->TuneOnce();
  EXPECT_EQ(applied, 4);  // CPU-bound: the whole budget
  EXPECT_EQ(model->max_parallelism(), 8);
  feed(100, 1'000'000, 10'000'000);
  model->TuneOnce();
  // The consumer now takes ~5 ms per element (smoothed): one call in flight
  // keeps up with it.
  EXPECT_EQ(applied, 1);
  node->ClearApply();
}

TEST(AutotuneTest, APrefetchBufferGrowsOnUnderflowWithinTheRamBudget) {
  // Bursts: every 10th element takes 3 ms, so the buffer fills, then the
  // consumer finds it empty.
  MapFn bursty = [](Element e) -> Result<Element> {
    if (e[0].scalar<int64_t>() % 10 == 9) std::this_thread::sleep_for(3ms);
    return e;
  };
  Options o;
  o.autotune.ram_budget = 8 * 16;  // room for 16 more int64 elements
  DatasetPtr ds = Must(Prefetch(Must(Map(RangeOf(400), bursty, testing::Int64Scalar())), kAutotune));
  auto it = Must(WithOptions(ds, o))->MakeIterator();
  int64_t biggest = 0;
  while (true) {
    Element e;
    bool end = false;
    ASSERT_TRUE(it->GetNext(&e, &end).ok());
    if (end) break;
    std::this_thread::sleep_for(100us);
    std::optional<StageStats> s = Find(IteratorStats(*it), "Prefetch");
    biggest = std::max(biggest, s->buffer_size);
    EXPECT_LE(s->buffer_fill, s->buffer_size);
    EXPECT_LE(it->model()->reserved_bytes(), 8 * 16);
  }
  EXPECT_GT(biggest, 1);
  EXPECT_LE(biggest, 16);  // 1 -> 2 -> 4 -> 8 -> 16 reserves 15 more elements; 32 would not fit
}

// The cost of counting: a chain of five identity maps, per element and
// stage. Timing-sensitive: runs only with SLUICE_PERF_TESTS=1.
TEST(StatsTest, CountingCostsLittlePerElementAndStage) {
  if (std::getenv("SLUICE_PERF_TESTS") == nullptr) GTEST_SKIP() << "set SLUICE_PERF_TESTS=1";
  const int64_t n = 2'000'000;
  DatasetPtr ds = RangeOf(n);
  for (int i = 0; i < 5; ++i) ds = Must(Map(ds, Identity(), testing::Int64Scalar()));
  auto it = ds->MakeIterator();
  const auto start = std::chrono::steady_clock::now();
  Element e;
  bool end = false;
  while (it->GetNext(&e, &end).ok() && !end) {
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  const double per_stage = ns / n / 5;
  std::printf("identity map: %.1f ns per element per stage\n", per_stage);
  EXPECT_LT(per_stage, 100);
}

}  // namespace
}  // namespace sluice::data
