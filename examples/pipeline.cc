// The main job: a two-stage input pipeline in the tf.train style, run on
// generated data, printing what it moved and how fast.
//
//   producers (QueueRunner, one thread per enqueue op: synthetic records,
//              a uint8 payload of --record-bytes and an int64 label)
//     -> "records" FIFOQueue (or RandomShuffleQueue with --shuffle)
//   batchers  (QueueRunner: dequeue_up_to(--batch) records, enqueue the batch)
//     -> "batches" FIFOQueue
//   consumer  (this thread: dequeue batches until OutOfRange)
//
// Shutdown is TensorFlow's OutOfRange cascade: each producer returns
// OutOfRange after its quota; the last one to finish closes "records"; the
// batchers drain it, get OutOfRange and close "batches"; the consumer gets
// OutOfRange, requests a clean stop of the Coordinator and joins every
// thread. The consumer checks that every label arrived exactly once and that
// every payload is intact; the exit status is 0 only if so.
//
//   pipeline [--producers N] [--batchers N] [--records N] [--record-bytes N]
//            [--batch N] [--capacity N] [--shuffle] [--quiet]
#include <algorithm>
#include <iterator>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/queue/queue.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/queue_runner.h"
#include "sluice/train/queue_runner_registry.h"

namespace {

using sluice::DType;
using sluice::Element;
using sluice::Result;
using sluice::Status;
using sluice::Tensor;
using sluice::TensorShape;

struct Flags {
  int producers = 2;
  int batchers = 1;
  int64_t records = 200000;  // in all, over every producer
  int64_t record_bytes = 4096;
  int64_t batch = 32;
  int32_t capacity = 1024;
  bool shuffle = false;
  bool quiet = false;
};

void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--producers N] [--batchers N] [--records N] [--record-bytes N]\n"
               "          [--batch N] [--capacity N] [--shuffle] [--quiet]\n"
               "Runs producers -> queue -> batchers -> queue -> consumer on generated records.\n",
               argv0);
}

// Parses "--name=value" and "--name value". Returns false on a bad flag.
bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return false;
    if (arg == "--shuffle") { f->shuffle = true; continue; }
    if (arg == "--quiet") { f->quiet = true; continue; }
    std::string value;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    static constexpr std::string_view kValued[] = {"--producers", "--batchers", "--records",
                                                   "--record-bytes", "--batch", "--capacity"};
    if (std::find(std::begin(kValued), std::end(kValued), arg) == std::end(kValued)) {
      std::fprintf(stderr, "unknown flag %s\n", arg.c_str());
      return false;
    }
    if (eq == std::string::npos) {
      if (i + 1 == argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        return false;
      }
      value = argv[++i];
    }
    char* end = nullptr;
    const long long n = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1) {
      std::fprintf(stderr, "%s: want a positive integer, got '%s'\n", arg.c_str(), value.c_str());
      return false;
    }
    if (arg == "--producers") f->producers = static_cast<int>(n);
    else if (arg == "--batchers") f->batchers = static_cast<int>(n);
    else if (arg == "--records") f->records = n;
    else if (arg == "--record-bytes") f->record_bytes = n;
    else if (arg == "--batch") f->batch = n;
    else f->capacity = static_cast<int32_t>(std::min<long long>(n, INT32_MAX));  // --capacity
  }
  return true;
}

// The payload of record `label`: byte i is (label + i) mod 251, so that a
// record that was torn, mixed up or zeroed fails the check.
uint8_t PayloadByte(int64_t label, int64_t i) { return static_cast<uint8_t>((label + i) % 251); }

Element MakeRecord(int64_t label, int64_t record_bytes) {
  Tensor payload(DType::kUInt8, TensorShape{record_bytes});
  uint8_t* p = payload.data<uint8_t>();
  // Each row of 251 bytes repeats: write the first one, then copy it.
  const int64_t period = std::min<int64_t>(record_bytes, 251);
  for (int64_t i = 0; i < period; ++i) p[i] = PayloadByte(label, i);
  for (int64_t i = period; i < record_bytes; i += period) {
    std::memcpy(p + i, p, static_cast<size_t>(std::min(period, record_bytes - i)));
  }
  return Element{payload, Tensor::Scalar<int64_t>(label)};
}

// An enqueue op: producer `index` of `count` makes the labels index,
// index + count, ... below `total`, one record per call, then OutOfRange.
std::function<Status()> ProducerOp(std::shared_ptr<sluice::queue::Queue> records, int index, int count,
                                   int64_t total, int64_t record_bytes) {
  auto next = std::make_shared<int64_t>(index);  // touched by this op's one thread only
  return [records, next, count, total, record_bytes]() -> Status {
    if (*next >= total) return sluice::errors::OutOfRange("producer done");
    Element record = MakeRecord(*next, record_bytes);
    *next += count;
    return records->Enqueue(std::move(record));
  };
}

// An enqueue op of the second stage: up to `batch` records out, one batch in.
// OutOfRange from the drained, closed "records" queue ends the thread.
std::function<Status()> BatcherOp(std::shared_ptr<sluice::queue::Queue> records,
                                  std::shared_ptr<sluice::queue::Queue> batches, int64_t batch) {
  return [records, batches, batch]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(Element b, records->DequeueUpTo(batch));
    return batches->Enqueue(std::move(b));
  };
}

struct Tally {
  int64_t records = 0;
  int64_t batches = 0;
  int64_t bytes = 0;
  int64_t bad_payloads = 0;
  int64_t duplicates = 0;
  int64_t out_of_range_labels = 0;
  std::vector<bool> seen;
};

void Check(const Element& batch, int64_t record_bytes, Tally* t) {
  const Tensor& payloads = batch[0];
  const Tensor& labels = batch[1];
  const int64_t n = labels.num_elements();
  t->batches += 1;
  t->records += n;
  t->bytes += static_cast<int64_t>(payloads.TotalBytes() + labels.TotalBytes());
  for (int64_t r = 0; r < n; ++r) {
    const int64_t label = labels.data<int64_t>()[r];
    if (label < 0 || label >= static_cast<int64_t>(t->seen.size())) {
      ++t->out_of_range_labels;
      continue;
    }
    if (t->seen[label]) ++t->duplicates;
    t->seen[label] = true;
    const uint8_t* p = payloads.data<uint8_t>() + r * record_bytes;
    // Spot-check the first, a middle and the last byte of every record.
    for (int64_t i : {int64_t{0}, record_bytes / 2, record_bytes - 1}) {
      if (p[i] != PayloadByte(label, i)) {
        ++t->bad_payloads;
        break;
      }
    }
  }
}

Result<std::shared_ptr<sluice::queue::Queue>> MakeRecordsQueue(const Flags& f) {
  sluice::queue::QueueOptions o;
  o.name = "records";
  o.capacity = f.capacity;
  o.dtypes = {DType::kUInt8, DType::kInt64};
  o.shapes = {sluice::PartialShape{f.record_bytes}, sluice::PartialShape(std::vector<int64_t>{})};
  if (!f.shuffle) return sluice::queue::NewFIFOQueue(std::move(o));
  sluice::queue::RandomShuffleQueueOptions r;
  static_cast<sluice::queue::QueueOptions&>(r) = std::move(o);
  r.min_after_dequeue = std::max<int32_t>(0, f.capacity / 2 - 1);
  r.seed = 42;
  return sluice::queue::NewRandomShuffleQueue(std::move(r));
}

int Run(const Flags& f) {
  namespace train = sluice::train;
  Result<std::shared_ptr<sluice::queue::Queue>> records_or = MakeRecordsQueue(f);
  if (!records_or.ok()) {
    std::fprintf(stderr, "%s\n", records_or.status().ToString().c_str());
    return 1;
  }
  std::shared_ptr<sluice::queue::Queue> records = *records_or;

  sluice::queue::QueueOptions bo;
  bo.name = "batches";
  bo.capacity = 16;
  bo.dtypes = {DType::kUInt8, DType::kInt64};  // no shapes: the last batch may be short
  Result<std::shared_ptr<sluice::queue::Queue>> batches_or = sluice::queue::NewFIFOQueue(std::move(bo));
  if (!batches_or.ok()) {
    std::fprintf(stderr, "%s\n", batches_or.status().ToString().c_str());
    return 1;
  }
  std::shared_ptr<sluice::queue::Queue> batches = *batches_or;

  // Stage 1 and stage 2 runners, registered as tf.train.add_queue_runner does.
  train::QueueRunnerRegistry registry;
  train::QueueRunnerOptions producers;
  producers.queue = records;
  for (int i = 0; i < f.producers; ++i) {
    producers.enqueue_ops.push_back(ProducerOp(records, i, f.producers, f.records, f.record_bytes));
  }
  train::QueueRunnerOptions batchers;
  batchers.queue = batches;
  for (int i = 0; i < f.batchers; ++i) batchers.enqueue_ops.push_back(BatcherOp(records, batches, f.batch));
  for (train::QueueRunnerOptions* o : {&producers, &batchers}) {
    Result<std::shared_ptr<train::QueueRunner>> runner = train::QueueRunner::Create(std::move(*o));
    if (!runner.ok()) {
      std::fprintf(stderr, "%s\n", runner.status().ToString().c_str());
      return 1;
    }
    train::AddQueueRunner(*runner, &registry);
  }

  if (!f.quiet) {
    std::printf("sluice pipeline: %d producer%s x %" PRId64 " B records -> %s(capacity %d) -> %d batcher%s "
                "(batch %" PRId64 ") -> FIFOQueue(capacity 16) -> consumer\n",
                f.producers, f.producers == 1 ? "" : "s", f.record_bytes, std::string(records->type_name()).c_str(),
                records->capacity(), f.batchers, f.batchers == 1 ? "" : "s", f.batch);
  }

  auto coord = std::make_shared<train::Coordinator>();
  Tally tally;
  tally.seen.assign(static_cast<size_t>(f.records), false);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<train::Thread>> threads = train::StartQueueRunners(coord, true, &registry);

  // The training loop of a TF program: while not coord.should_stop(): ...
  Status end;
  while (!coord->should_stop()) {
    Result<Element> batch = batches->Dequeue();
    if (!batch.ok()) {
      end = batch.status();
      break;
    }
    Check(*batch, f.record_bytes, &tally);
  }
  // OutOfRange is the coordinator's clean-stop code: this is a plain stop.
  coord->RequestStop(end).IgnoreError();
  const Status joined = coord->Join(threads, std::chrono::seconds(10));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const int64_t missing = f.records - static_cast<int64_t>(std::count(tally.seen.begin(), tally.seen.end(), true));
  const double mb = static_cast<double>(tally.bytes) / 1e6;
  std::printf("moved %" PRId64 " records in %" PRId64 " batches (%.1f MB) through 2 queues in %.3f s: "
              "%.0f records/s, %.1f MB/s\n",
              tally.records, tally.batches, mb, seconds, static_cast<double>(tally.records) / seconds,
              mb / seconds);
  std::printf("threads: %zu (%d producer%s, %d batcher%s, 2 close-on-stop); queues' counters: records %" PRId64
              " in / %" PRId64 " out, batches %" PRId64 " in / %" PRId64 " out\n",
              threads.size(), f.producers, f.producers == 1 ? "" : "s", f.batchers, f.batchers == 1 ? "" : "s",
              records->stats().enqueued, records->stats().dequeued,
              batches->stats().enqueued, batches->stats().dequeued);
  std::printf("end of input: %s; coordinator join: %s\n", end.ToString().c_str(), joined.ToString().c_str());

  const bool ok = joined.ok() && sluice::errors::IsOutOfRange(end) && missing == 0 && tally.duplicates == 0 &&
                  tally.bad_payloads == 0 && tally.out_of_range_labels == 0 && tally.records == f.records;
  if (ok) {
    std::printf("check: every one of the %" PRId64 " labels arrived exactly once, payloads intact: OK\n", f.records);
    return 0;
  }
  std::printf("check FAILED: %" PRId64 " missing, %" PRId64 " duplicated, %" PRId64 " bad payloads, %" PRId64
              " unknown labels\n",
              missing, tally.duplicates, tally.bad_payloads, tally.out_of_range_labels);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    Usage(argv[0]);
    return 2;
  }
  return Run(flags);
}
