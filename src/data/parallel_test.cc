// Parallel map, prefetch, parallel interleave: order, errors, and
// cancellation of blocked workers when the iterator is destroyed.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>

#include "data/data_test_util.h"
#include "sluice/core/mutex.h"

namespace sluice::data {
namespace {

using testing::Ints;
using testing::Must;
using testing::RangeOf;
using V = std::vector<int64_t>;

TEST(ParallelMapTest, DeterministicKeepsTheInputOrder) {
  DatasetPtr ds = Must(Map(RangeOf(200), testing::Times(2), testing::Int64Scalar(), MapOptions{.num_parallel_calls = 4}));
  V want;
  for (int64_t i = 0; i < 200; ++i) want.push_back(2 * i);
  EXPECT_EQ(Ints(ds), want);
  EXPECT_EQ(ds->cardinality(), 200);
}

TEST(ParallelMapTest, NonDeterministicHandsOutReadyElementsFirst) {
  // Element 0 waits until element 1 has been handed out: only a map that
  // hands out what is ready can finish.
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = std::make_shared<std::shared_future<void>>(gate->get_future().share());
  MapFn fn = [opened](Element e) -> Result<Element> {
    if (!e.empty() && e[0].scalar<int64_t>() == 0) opened->wait();
    return e;
  };
  DatasetPtr ds = Must(Map(RangeOf(2), fn, testing::Int64Scalar(),
                           MapOptions{.num_parallel_calls = 2, .deterministic = false}));
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 1);
  gate->set_value();
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 0);
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_TRUE(end);
}

TEST(ParallelMapTest, AnErrorArrivesAtItsElementAndLaterElementsFollow) {
  MapFn fn = [](Element e) -> Result<Element> {
    if (e[0].scalar<int64_t>() == 3) return errors::InvalidArgument("bad element 3");
    return e;
  };
  auto it = Must(Map(RangeOf(6), fn, testing::Int64Scalar(), MapOptions{.num_parallel_calls = 3}))->MakeIterator();
  Element e;
  bool end = false;
  for (int64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(it->GetNext(&e, &end).ok());
    EXPECT_EQ(e[0].scalar<int64_t>(), i);
  }
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad element 3");
  EXPECT_EQ(s.GetPayload("element"), "3");
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 4);
}

TEST(ParallelMapTest, InputErrorsInsideChunksKeepTheirPlace) {
  // Cheap calls make the workers take chunks of many elements; an input
  // error (every 10th element) must still arrive at its own position.
  MapFn fail_tens = [](Element e) -> Result<Element> {
    if (e[0].scalar<int64_t>() % 10 == 9) return errors::DataLoss("bad ", e[0].scalar<int64_t>());
    return e;
  };
  DatasetPtr input = Must(Map(RangeOf(300), fail_tens, testing::Int64Scalar()));
  auto it = Must(Map(input, testing::Times(1), testing::Int64Scalar(), MapOptions{.num_parallel_calls = 2}))
                ->MakeIterator();
  for (int64_t i = 0; i < 300; ++i) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    ASSERT_FALSE(end);
    if (i % 10 == 9) {
      ASSERT_EQ(s.code(), Code::kDataLoss);
      EXPECT_EQ(s.message(), "bad " + std::to_string(i));
    } else {
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_EQ(e[0].scalar<int64_t>(), i);
    }
  }
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_TRUE(end);
}

TEST(ParallelMapTest, AutotuneRunsAndKeepsOrder) {
  DatasetPtr ds = Must(Map(RangeOf(50), testing::Times(1), testing::Int64Scalar(),
                           MapOptions{.num_parallel_calls = kAutotune}));
  EXPECT_EQ(Ints(ds), Ints(RangeOf(50)));
}

TEST(PrefetchTest, PassesElementsAndErrorsInOrder) {
  MapFn fn = [](Element e) -> Result<Element> {
    if (e[0].scalar<int64_t>() == 2) return errors::DataLoss("bad 2");
    return e;
  };
  auto it = Must(Prefetch(Must(Map(RangeOf(4), fn, testing::Int64Scalar())), 2))->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(it->GetNext(&e, &end).code(), Code::kDataLoss);
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 3);
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_TRUE(end);
  EXPECT_EQ(Must(Prefetch(RangeOf(4), kAutotune))->cardinality(), 4);
}

TEST(PrefetchTest, BufferIsBounded) {
  auto produced = std::make_shared<std::atomic<int64_t>>(0);
  MapFn count = [produced](Element e) -> Result<Element> {
    produced->fetch_add(1);
    return e;
  };
  DatasetPtr ds = Must(Prefetch(Must(Map(Must(Repeat(RangeOf(1))), count, testing::Int64Scalar())), 3));
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  // One taken, three buffered, one being pushed: never more than that.
  for (int i = 0; i < 200 && produced->load() < 5; ++i) std::this_thread::yield();
  EXPECT_LE(produced->load(), 5);
}

// An infinite input keeps every worker blocked on a full buffer: the
// iterator's destructor must wake the prefetch thread and the map workers of
// both maps, and join them.
TEST(CancellationTest, DestroyingTheIteratorJoinsBlockedWorkers) {
  DatasetPtr ds = Must(Prefetch(Must(Map(Must(Repeat(RangeOf(3))), testing::Times(1), testing::Int64Scalar(),
                                         MapOptions{.num_parallel_calls = 3})),
                                2));
  ds = Must(Map(ds, testing::Times(1), testing::Int64Scalar(), MapOptions{.num_parallel_calls = 2}));
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(it->GetNext(&e, &end).ok());
  it.reset();  // would hang if a blocked worker were not woken
  SUCCEED();
}

TEST(ParallelInterleaveTest, KeepsTheSequentialOrder) {
  InterleaveFn fn = [](Element e) -> Result<DatasetPtr> {
    const int64_t x = e[0].scalar<int64_t>();
    return Range(x * 10, x * 10 + x);
  };
  InterleaveOptions seq{.cycle_length = 3, .block_length = 2, .num_parallel_calls = std::nullopt};
  InterleaveOptions par = seq;
  par.num_parallel_calls = 3;
  V want = Ints(Must(Interleave(Must(Range(1, 7)), fn, testing::Int64Scalar(), seq)));
  EXPECT_EQ(Ints(Must(Interleave(Must(Range(1, 7)), fn, testing::Int64Scalar(), par))), want);
  EXPECT_EQ(want.size(), 21u);
}

}  // namespace
}  // namespace sluice::data
