// The tf.train shutdown cascade end to end (docs/spec/tf-queues.md section
// 12) over real TFRecord files: string_input_producer(num_epochs=E) ->
// TFRecordReader threads -> batch / shuffle_batch -> a consumer that counts
// every record. With N records and E epochs it must see each exactly E times,
// then OutOfRange; Coordinator::Join returns OK with no thread left. Also: a
// corrupt file's DataLoss stops everything and reaches Join, and the queue
// stats report what went through each stage.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "input_test_util.h"
#include "sluice/io/readers.h"
#include "sluice/io/record_writer.h"
#include "sluice/queue/queue.h"
#include "sluice/train/batchers.h"
#include "sluice/train/input_producers.h"

namespace sluice::train {
namespace {

using testing::Harness;
using testing::IsOk;
using testing::StatusIs;
using testing::TempDir;

// Record payloads "f<file>r<record>", one record count per file (an empty
// file is skipped by the readers).
std::vector<std::string> WriteFiles(const TempDir& dir, const std::vector<int>& records_per_file,
                                    std::vector<std::string>* payloads) {
  std::vector<std::string> files;
  for (size_t f = 0; f < records_per_file.size(); ++f) {
    files.push_back(dir.File(StrCat("data-", f, ".tfrecord")));
    Result<std::unique_ptr<io::RecordWriter>> w = io::RecordWriter::Open(files.back());
    EXPECT_TRUE(w.ok()) << w.status();
    for (int r = 0; r < records_per_file[f]; ++r) {
      payloads->push_back(StrCat("f", f, "r", r));
      EXPECT_TRUE(IsOk((*w)->Write(payloads->back())));
    }
    EXPECT_TRUE(IsOk((*w)->Close()));
  }
  return files;
}

struct Pipeline {
  ProducerQueue filenames;
  BatchQueue batches;
};

// One reader (and runner thread) per `threads`.
Result<Pipeline> Build(Harness& h, const std::vector<std::string>& files, int epochs, int threads,
                       int32_t capacity, bool shuffle, int64_t batch_size, bool allow_smaller) {
  ProducerOptions po;
  po.num_epochs = epochs;
  po.shuffle = shuffle;
  po.seed = 11;
  po.capacity = 2;  // fewer than the files: the producer blocks between them
  po.registry = h.registry();
  SLUICE_ASSIGN_OR_RETURN(ProducerQueue filenames, StringInputProducer(files, po));
  std::vector<Producer> readers;
  for (int t = 0; t < threads; ++t) {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<io::ReaderBase> reader, io::NewTFRecordReader());
    readers.push_back(ReaderProducer(std::move(reader), filenames.queue));
  }
  ShuffleBatchOptions bo;
  bo.batch_size = batch_size;
  bo.capacity = capacity;
  bo.dtypes = {DType::kString, DType::kString};
  bo.shapes = {testing::Scalar(), testing::Scalar()};
  bo.allow_smaller_final_batch = allow_smaller;
  bo.registry = h.registry();
  if (shuffle) {
    bo.min_after_dequeue = capacity / 2;
    bo.seed = 7;
    SLUICE_ASSIGN_OR_RETURN(BatchQueue batches, ShuffleBatchJoin(std::move(readers), bo));
    return Pipeline{std::move(filenames), std::move(batches)};
  }
  SLUICE_ASSIGN_OR_RETURN(BatchQueue batches, BatchJoin(std::move(readers), bo));
  return Pipeline{std::move(filenames), std::move(batches)};
}

// The training loop: dequeue until OutOfRange, counting values.
std::map<std::string, int> Consume(const BatchQueue& batches, int64_t* num_batches, int64_t* short_batches) {
  std::map<std::string, int> counts;
  for (;;) {
    Result<Element> b = batches.Dequeue(queue::WaitOptions::Timeout(testing::kSafety));
    if (!b.ok()) {
      EXPECT_TRUE(StatusIs(b.status(), Code::kOutOfRange)) << b.status();
      return counts;
    }
    ++*num_batches;
    const Tensor& keys = (*b)[0];
    const Tensor& values = (*b)[1];
    EXPECT_EQ(keys.shape(), values.shape());
    if (values.shape().dim(0) < batches.batch_size()) ++*short_batches;
    for (const std::string& v : values.flat<std::string>()) ++counts[v];
  }
}

class CascadeTest : public ::testing::TestWithParam<std::tuple<int, int32_t, bool>> {};

TEST_P(CascadeTest, EveryRecordExactlyEpochsTimes) {
  const auto [threads, capacity, shuffle] = GetParam();
  constexpr int kEpochs = 3;
  constexpr int64_t kBatch = 4;
  TempDir dir;
  std::vector<std::string> payloads;
  const std::vector<std::string> files = WriteFiles(dir, {5, 0, 7, 1, 4}, &payloads);  // N = 17
  Harness h;
  Result<Pipeline> p = Build(h, files, kEpochs, threads, capacity, shuffle, kBatch, /*allow_smaller=*/true);
  ASSERT_TRUE(p.ok()) << p.status();
  h.Start();
  int64_t num_batches = 0, short_batches = 0;
  const std::map<std::string, int> counts = Consume(p->batches, &num_batches, &short_batches);

  ASSERT_EQ(counts.size(), payloads.size());
  for (const std::string& payload : payloads) EXPECT_EQ(counts.at(payload), kEpochs) << payload;
  const int64_t total = static_cast<int64_t>(payloads.size()) * kEpochs;  // 51
  EXPECT_EQ(num_batches, (total + kBatch - 1) / kBatch);
  EXPECT_EQ(short_batches, 1);  // only the final one
  // The cascade closed both queues before the consumer saw OutOfRange.
  EXPECT_TRUE(p->filenames.queue->is_closed());
  EXPECT_TRUE(p->batches.queue()->is_closed());

  EXPECT_TRUE(IsOk(h.Stop()));
  EXPECT_TRUE(h.AllThreadsFinished());
  // One filename thread + its close-on-stop, `threads` readers + close-on-stop.
  EXPECT_EQ(h.threads().size(), static_cast<size_t>(threads + 3));
}

INSTANTIATE_TEST_SUITE_P(Grid, CascadeTest,
                         ::testing::Combine(::testing::Values(1, 2, 4), ::testing::Values(2, 64),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return StrCat("threads", std::get<0>(info.param), "_capacity", std::get<1>(info.param),
                                         std::get<2>(info.param) ? "_shuffled" : "_ordered");
                         });

TEST(CascadeTest, WithoutSmallerFinalBatchTheLeftoverIsDropped) {
  constexpr int kEpochs = 2;
  constexpr int64_t kBatch = 5;
  TempDir dir;
  std::vector<std::string> payloads;
  const std::vector<std::string> files = WriteFiles(dir, {3, 4}, &payloads);  // 7 x 2 = 14 = 2 x 5 + 4
  Harness h;
  Result<Pipeline> p = Build(h, files, kEpochs, 2, 8, false, kBatch, /*allow_smaller=*/false);
  ASSERT_TRUE(p.ok()) << p.status();
  h.Start();
  int64_t num_batches = 0, short_batches = 0;
  const std::map<std::string, int> counts = Consume(p->batches, &num_batches, &short_batches);
  EXPECT_EQ(num_batches, 2);
  EXPECT_EQ(short_batches, 0);
  int delivered = 0;
  for (const auto& [payload, n] : counts) {
    EXPECT_LE(n, kEpochs) << payload;
    delivered += n;
  }
  EXPECT_EQ(delivered, 10);
  EXPECT_EQ(p->batches.queue()->size(), 4);  // the leftover stays in the queue
  EXPECT_TRUE(IsOk(h.Stop()));
  EXPECT_TRUE(h.AllThreadsFinished());
}

TEST(CascadeTest, CorruptFileStopsEverythingAndJoinReturnsDataLoss) {
  TempDir dir;
  std::vector<std::string> payloads;
  std::vector<std::string> files = WriteFiles(dir, {4, 4}, &payloads);
  // Flip a payload byte of the second file's first record: its data CRC fails.
  Result<std::string> bytes = io::ReadFileToString(nullptr, files[1]);
  ASSERT_TRUE(bytes.ok());
  (*bytes)[12] ^= 0x01;
  ASSERT_TRUE(IsOk(io::WriteStringToFile(nullptr, files[1], *bytes)));
  Harness h;
  // Endless epochs: only the error can end this pipeline.
  ProducerOptions po;
  po.shuffle = false;
  po.registry = h.registry();
  Result<ProducerQueue> filenames = StringInputProducer(files, po);
  ASSERT_TRUE(filenames.ok());
  std::vector<Producer> readers;
  for (int t = 0; t < 2; ++t) readers.push_back(ReaderProducer(*io::NewTFRecordReader(), filenames->queue));
  BatchOptions bo;
  bo.batch_size = 3;
  bo.capacity = 4;
  bo.dtypes = {DType::kString, DType::kString};
  bo.shapes = {testing::Scalar(), testing::Scalar()};
  bo.registry = h.registry();
  Result<BatchQueue> batches = BatchJoin(std::move(readers), bo);
  ASSERT_TRUE(batches.ok());
  h.Start();
  int64_t num_batches = 0, short_batches = 0;
  Consume(*batches, &num_batches, &short_batches);  // ends with OutOfRange
  EXPECT_TRUE(StatusIs(h.Stop(), Code::kDataLoss, "corrupted record"));
  EXPECT_TRUE(h.AllThreadsFinished());
}

TEST(CascadeTest, EarlyStopUnblocksProducersOnFullQueues) {
  TempDir dir;
  std::vector<std::string> payloads;
  const std::vector<std::string> files = WriteFiles(dir, {6, 6}, &payloads);
  Harness h;
  Result<Pipeline> p = Build(h, files, /*epochs=*/100, 2, 2, false, 2, false);
  ASSERT_TRUE(p.ok()) << p.status();
  h.Start();
  ASSERT_TRUE(p->batches.Dequeue(queue::WaitOptions::Timeout(testing::kSafety)).ok());
  // The consumer quits with producers still running or blocked.
  EXPECT_TRUE(IsOk(h.Stop()));
  EXPECT_TRUE(h.AllThreadsFinished());
}

TEST(CascadeTest, QueueStatsReportEachStage) {
  constexpr int kEpochs = 2;
  TempDir dir;
  std::vector<std::string> payloads;
  const std::vector<std::string> files = WriteFiles(dir, {3, 2, 4}, &payloads);
  Harness h;
  Result<Pipeline> p = Build(h, files, kEpochs, 2, 16, false, 3, true);
  ASSERT_TRUE(p.ok()) << p.status();
  h.Start();
  int64_t num_batches = 0, short_batches = 0;
  Consume(p->batches, &num_batches, &short_batches);
  ASSERT_TRUE(IsOk(h.Stop()));

  const uint64_t filename_id = p->filenames.queue->stats().id, batch_id = p->batches.queue()->stats().id;
  std::optional<queue::QueueStats> fq, bq;
  for (const queue::QueueStats& s : queue::AllQueueStats()) {
    if (s.id == filename_id) fq = s;
    if (s.id == batch_id) bq = s;
  }
  ASSERT_TRUE(fq.has_value() && bq.has_value());
  EXPECT_EQ(fq->name, p->filenames.queue->name());
  EXPECT_EQ(fq->name.rfind("input_producer", 0), 0u);
  EXPECT_EQ(fq->capacity, 2);
  EXPECT_EQ(fq->enqueued, 3 * kEpochs);
  EXPECT_EQ(fq->dequeued, 3 * kEpochs);
  EXPECT_EQ(fq->size, 0);
  EXPECT_TRUE(fq->closed);
  EXPECT_EQ(bq->name.rfind("batch_join", 0), 0u);
  EXPECT_EQ(bq->name.substr(bq->name.size() - 11), "/fifo_queue");
  EXPECT_EQ(bq->capacity, 16);
  EXPECT_EQ(bq->enqueued, 9 * kEpochs);
  EXPECT_EQ(bq->dequeued, 9 * kEpochs);
  EXPECT_TRUE(bq->closed);
}

}  // namespace
}  // namespace sluice::train
