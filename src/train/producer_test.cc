// Producers: LimitEpochs (count_up_to), MatchFilenamesOnce, and the reader
// and dequeue producers.
#include "sluice/train/producer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "input_test_util.h"
#include "sluice/io/file_system.h"
#include "sluice/io/readers.h"
#include "sluice/queue/queue.h"

namespace sluice::train {
namespace {

using testing::Int64Element;
using testing::Int64Of;
using testing::IsOk;
using testing::StatusIs;
using testing::TempDir;

TEST(LimitEpochsTest, YieldsValueExactlyNumEpochsTimes) {
  Result<Producer> p = LimitEpochs(Int64Element(7), 3);
  ASSERT_TRUE(p.ok()) << p.status();
  for (int i = 0; i < 3; ++i) {
    Result<Element> e = (*p)();
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(Int64Of(*e), 7);
  }
  EXPECT_TRUE(StatusIs((*p)().status(), Code::kOutOfRange, "Reached limit of 3"));
  EXPECT_TRUE(StatusIs((*p)().status(), Code::kOutOfRange, "Reached limit of 3"));
}

TEST(LimitEpochsTest, NoLimitIsUnlimited) {
  Result<Producer> p = LimitEpochs(Int64Element(1), std::nullopt);
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE((*p)().ok());
}

TEST(LimitEpochsTest, NonPositiveNumEpochsIsInvalid) {
  EXPECT_TRUE(StatusIs(LimitEpochs(Int64Element(1), 0).status(), Code::kInvalidArgument,
                       "num_epochs must be > 0 not 0."));
  EXPECT_TRUE(StatusIs(LimitEpochs(Int64Element(1), -2).status(), Code::kInvalidArgument,
                       "num_epochs must be > 0 not -2."));
}

TEST(LimitEpochsTest, WrappedProducerErrorsPassThroughAndCount) {
  int calls = 0;
  Result<Producer> p = LimitEpochs(Producer([&calls]() -> Result<Element> {
                                     if (++calls == 1) return errors::DataLoss("bad");
                                     return Int64Element(calls);
                                   }),
                                   2);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(StatusIs((*p)().status(), Code::kDataLoss, "bad"));
  EXPECT_TRUE((*p)().ok());
  EXPECT_TRUE(StatusIs((*p)().status(), Code::kOutOfRange, "Reached limit of 2"));
  EXPECT_EQ(calls, 2);
}

TEST(LimitEpochsTest, ExactlyNumEpochsCallsSucceedAcrossThreads) {
  constexpr int kLimit = 1000;
  Result<Producer> p = LimitEpochs(Int64Element(0), kLimit);
  ASSERT_TRUE(p.ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kLimit; ++i) {
        if ((*p)().ok()) ok.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kLimit);
}

TEST(MatchFilenamesOnceTest, SortsAcrossPatternsAndKeepsDuplicates) {
  TempDir dir;
  for (const char* name : {"b.rec", "a.rec", "c.txt"}) {
    ASSERT_TRUE(IsOk(io::WriteStringToFile(nullptr, dir.File(name), "x")));
  }
  Result<std::vector<std::string>> files =
      MatchFilenamesOnce({dir.File("*.txt"), dir.File("*.rec"), dir.File("a.*")});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, (std::vector<std::string>{dir.File("a.rec"), dir.File("a.rec"), dir.File("b.rec"),
                                              dir.File("c.txt")}));
  Result<std::vector<std::string>> none = MatchFilenamesOnce({dir.File("*.none")});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

std::shared_ptr<queue::Queue> StringQueue(const std::vector<std::string>& items) {
  queue::QueueOptions o;
  o.dtypes = {DType::kString};
  o.shapes = {PartialShape(TensorShape{})};
  auto q = *queue::NewFIFOQueue(std::move(o));
  for (const std::string& s : items) EXPECT_TRUE(q->Enqueue(Element{Tensor::String(s)}).ok());
  EXPECT_TRUE(q->Close().ok());
  return q;
}

TEST(ReaderProducerTest, ReadsKeyValueUntilFilenameQueueIsDrained) {
  auto q = StringQueue({"one", "two"});
  std::shared_ptr<io::ReaderBase> reader = *io::NewIdentityReader();
  Producer p = ReaderProducer(reader, q);
  for (const char* want : {"one", "two"}) {
    Result<Element> e = p();
    ASSERT_TRUE(e.ok()) << e.status();
    ASSERT_EQ(e->size(), 2u);
    EXPECT_EQ((*e)[0].scalar<std::string>(), want);
    EXPECT_EQ((*e)[1].scalar<std::string>(), want);
  }
  EXPECT_TRUE(StatusIs(p().status(), Code::kOutOfRange, "is closed and has insufficient elements"));
}

TEST(ReaderProducerTest, UpToGivesVectorsFromOneWorkUnit) {
  TempDir dir;
  ASSERT_TRUE(IsOk(io::WriteStringToFile(nullptr, dir.File("lines"), "a\nb\nc\n")));
  auto q = StringQueue({dir.File("lines")});
  std::shared_ptr<io::ReaderBase> reader = *io::NewTextLineReader();
  Producer p = ReaderUpToProducer(reader, q, 2);
  Result<Element> first = p();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)[1].shape(), TensorShape{2});
  EXPECT_EQ((*first)[1].flat<std::string>()[1], "b");
  Result<Element> second = p();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)[1].shape(), TensorShape{1});
  EXPECT_EQ((*second)[1].flat<std::string>()[0], "c");
  EXPECT_TRUE(StatusIs(p().status(), Code::kOutOfRange));
}

TEST(DequeueProducerTest, DequeuesUntilClosedAndDrained) {
  auto q = testing::NewInt64Queue(4);
  ASSERT_TRUE(q->Enqueue(Int64Element(5)).ok());
  ASSERT_TRUE(q->Close().ok());
  Producer p = DequeueProducer(q);
  EXPECT_EQ(Int64Of(*p()), 5);
  EXPECT_TRUE(StatusIs(p().status(), Code::kOutOfRange));
}

TEST(DequeueProducerTest, WaitsWithTheScopedProducerWaitOfTheCallingThread) {
  auto q = testing::NewInt64Queue(4);
  Producer p = DequeueProducer(q);
  {
    const queue::WaitOptions wait = queue::WaitOptions::Timeout(std::chrono::milliseconds(10));
    ScopedProducerWait scope(wait);
    EXPECT_TRUE(StatusIs(p().status(), Code::kDeadlineExceeded, "Timed out waiting for notification"));
  }
  EXPECT_FALSE(CurrentProducerWait().deadline.has_value());
  ASSERT_TRUE(q->Enqueue(Int64Element(3)).ok());
  EXPECT_EQ(Int64Of(*p()), 3);
}

TEST(ScopedProducerWaitTest, NestsAndRestoresTheOuterOptions) {
  const queue::WaitOptions outer = queue::WaitOptions::Timeout(std::chrono::seconds(100));
  const queue::WaitOptions inner = queue::WaitOptions::Timeout(std::chrono::seconds(1));
  ScopedProducerWait a(outer);
  {
    ScopedProducerWait b(inner);
    EXPECT_EQ(&CurrentProducerWait(), &inner);
    std::thread other([] { EXPECT_FALSE(CurrentProducerWait().deadline.has_value()); });  // per thread
    other.join();
  }
  EXPECT_EQ(&CurrentProducerWait(), &outer);
}

TEST(ReaderProducerTest, FilenameQueueWaitAnswersTheInterruptCheck) {
  queue::QueueOptions o;
  o.capacity = 2;
  o.dtypes = {DType::kString};
  o.shapes = {PartialShape(TensorShape{})};
  std::shared_ptr<queue::Queue> q = *queue::NewFIFOQueue(std::move(o));  // open and empty
  std::shared_ptr<io::ReaderBase> reader = *io::NewIdentityReader();
  for (Producer p : {ReaderProducer(reader, q), ReaderUpToProducer(reader, q, 3)}) {
    std::atomic<int> checks{0};
    queue::WaitOptions wait;
    wait.interrupt_check = [&checks]() -> Status {
      return ++checks < 3 ? Status() : errors::Cancelled("interrupted");
    };
    wait.interrupt_check_interval = std::chrono::milliseconds(1);
    ScopedProducerWait scope(wait);
    EXPECT_TRUE(StatusIs(p().status(), Code::kCancelled, "interrupted"));
    EXPECT_EQ(checks.load(), 3);
  }
}

TEST(RecordOriginScopeTest, ReaderProducerNotesTheKeyOfItsRecord) {
  auto q = StringQueue({"/data/a.jpg"});
  std::shared_ptr<io::ReaderBase> reader = *io::NewIdentityReader();
  Producer p = ReaderProducer(reader, q);
  RecordOriginScope scope;
  EXPECT_EQ(scope.Annotate(errors::InvalidArgument("bad")), errors::InvalidArgument("bad"));  // nothing noted
  ASSERT_TRUE(p().ok());
  Status s = scope.Annotate(errors::InvalidArgument("bad").WithPayload("keep", "me"));
  EXPECT_TRUE(StatusIs(s, Code::kInvalidArgument, "bad (record /data/a.jpg of IdentityReader 'IdentityReader')"));
  EXPECT_EQ(s.GetPayload("file"), "/data/a.jpg");
  EXPECT_EQ(s.GetPayload("key"), "/data/a.jpg");
  EXPECT_EQ(s.GetPayload("keep"), "me");
  EXPECT_TRUE(scope.Annotate(Status()).ok());
}

TEST(RecordOriginScopeTest, InnerScopeHandsItsRecordToTheOuterOneOnlyIfItHasNone) {
  std::shared_ptr<io::ReaderBase> reader = *io::NewIdentityReader();
  Producer first = ReaderProducer(reader, StringQueue({"first"}));
  Producer second = ReaderProducer(reader, StringQueue({"second"}));
  RecordOriginScope outer;
  {
    RecordOriginScope inner;
    ASSERT_TRUE(first().ok());
  }
  EXPECT_EQ(outer.Annotate(errors::Internal("x")).GetPayload("key"), "first");
  {
    RecordOriginScope inner;
    ASSERT_TRUE(second().ok());
    EXPECT_EQ(inner.Annotate(errors::Internal("x")).GetPayload("key"), "second");
  }
  EXPECT_EQ(outer.Annotate(errors::Internal("x")).GetPayload("key"), "first");
}

}  // namespace
}  // namespace sluice::train
