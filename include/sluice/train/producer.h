// Producers: the C++ form of the tf.train tensors that yield a new value each
// time they are evaluated (docs/spec/tf-queues.md sections 9-12).
//
// In TensorFlow a batcher's input is a graph of tensors that the batcher's
// threads evaluate over and over; each evaluation reads the next record,
// dequeues the next slice index, steps an epoch counter. sluice has no
// graph, so such a tensor becomes a Producer: a callable that returns the
// next Element (one example; or, for an enqueue_many batcher, a batch of
// examples, every component with a leading dimension), or OutOfRange at the
// end of the input. Any other error stops the pipeline (through the
// batcher's QueueRunner and its Coordinator).
//
// Producers run on the threads of the QueueRunner that calls them, never
// when they are built: nothing runs before StartQueueRunners. The ones made
// here are thread-safe (several runner threads may call one producer at
// once) and own what they use.
//
// A producer takes no arguments, so a caller that must bound its waits (the
// Python binding answering Ctrl-C and timeout=) sets them for the calling
// thread with a ScopedProducerWait: the blocking producers here and in
// input_producers.h pass those WaitOptions to every queue wait they make on
// that thread. Runner threads set none, and their producers wake when a
// Coordinator stop closes the queues they wait on.
#ifndef SLUICE_TRAIN_PRODUCER_H_
#define SLUICE_TRAIN_PRODUCER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/io/file_system.h"
#include "sluice/io/reader_base.h"
#include "sluice/queue/queue.h"

namespace sluice::train {

// Returns the next element, or OutOfRange when the input is exhausted.
using Producer = std::function<Result<Element>()>;

// A filtering producer's answer when the example of this call was rejected
// (a keep_input that said no): not an error, a step with nothing to yield.
// The batchers' runner threads count it as one step that enqueued nothing,
// as TF runs a no-op enqueue for keep_input=false, and check their stop
// conditions before the next call; so a filter that rejects everything
// never holds up a Coordinator stop. Code kAborted with the payload
// kSkippedStepPayload (a caller that does not know it sees an error).
inline constexpr char kSkippedStepPayload[] = "sluice.train.skipped_step";
inline Status SkippedStep() {
  return Status(Code::kAborted, "the example was rejected by keep_input (a skipped step)")
      .WithPayload(kSkippedStepPayload, "");
}
inline bool IsSkippedStep(const Status& s) { return !s.ok() && s.GetPayload(kSkippedStepPayload).has_value(); }

// ---- Per-thread call context ---------------------------------------------------

// The WaitOptions of the blocking producers called on this thread while it
// lives (the innermost one when nested): their deadline, cancellation and
// interrupt check bound every queue wait those producers make, so one
// deadline covers a whole producer call. REQUIRES: `wait` outlives the
// scope, which is destroyed on the thread that made it, in LIFO order.
class ScopedProducerWait {
 public:
  explicit ScopedProducerWait(const queue::WaitOptions& wait);
  ~ScopedProducerWait();
  ScopedProducerWait(const ScopedProducerWait&) = delete;
  ScopedProducerWait& operator=(const ScopedProducerWait&) = delete;

 private:
  const queue::WaitOptions* previous_;
};

// The options of the innermost ScopedProducerWait of this thread, or default
// ones (no deadline, no cancellation: wait until woken).
const queue::WaitOptions& CurrentProducerWait();

// Where the record of one producer call came from, for the errors of the
// stages that decode its bytes (sluice/pipeline/producer_ops.h): a stage
// opens a RecordOriginScope around the call of its input; a ReaderProducer
// called inside it (on this thread) notes the key of the record it returns;
// a failure of the stage on that record is then Annotate()d with it.
// Scopes nest: the innermost one receives the note, and hands it to the
// enclosing one when it closes, unless that one already has one (so a
// stage over a stage over a reader knows the record too). Scopes must be
// destroyed on the thread that made them, in LIFO order. Not thread-safe (one per
// call); costs a thread-local swap, and a reference count per record read.
class RecordOriginScope {
 public:
  RecordOriginScope();
  ~RecordOriginScope();
  RecordOriginScope(const RecordOriginScope&) = delete;
  RecordOriginScope& operator=(const RecordOriginScope&) = delete;

  // Called by ReaderProducer: the record it returns has `key` (a string
  // scalar: TF's "<file>:<offset or line>", or the file name itself for
  // WholeFileReader/IdentityReader, `key_is_file`), read by `reader` (its
  // DisplayName). No-op when no scope is open on this thread.
  static void Note(const Tensor& key, bool key_is_file, const io::ReaderBase& reader);

  // `s` with the record noted in this scope: " (record <key> of <reader>)"
  // appended to the message and the payloads "file" (the file name) and
  // "key" (unless `s` already has them). `s` unchanged when it is OK or
  // nothing was noted.
  Status Annotate(const Status& s) const;

 private:
  RecordOriginScope* previous_;
  Tensor key_;  // invalid until noted
  bool key_is_file_ = false;
  const io::ReaderBase* reader_ = nullptr;
};

// tf.train.limit_epochs: a producer that yields `value` exactly `num_epochs`
// times, then fails with OutOfRange "Reached limit of <num_epochs>" (TF's
// count_up_to) on every later call. nullopt: unlimited (TF returns the
// tensor unchanged). Errors: InvalidArgument "num_epochs must be > 0 not N."
// for num_epochs <= 0. The counter is shared by every caller: across all
// threads, exactly num_epochs calls succeed.
Result<Producer> LimitEpochs(Element value, std::optional<int64_t> num_epochs);

// As above, for a producer: the first `num_epochs` calls are passed to
// `producer` (its errors pass through; a call that fails still counts), the
// later ones fail with OutOfRange "Reached limit of N". REQUIRES: producer is
// callable.
Result<Producer> LimitEpochs(Producer producer, std::optional<int64_t> num_epochs);

// tf.train.match_filenames_once: the files matching any of `patterns` (glob
// syntax of io::FileSystem::GetMatchingPaths), sorted bytewise across all
// patterns; a file matched by two patterns appears twice, as in TF.
// TensorFlow evaluates this when local variables are initialised, once,
// before the queue runners start; sluice evaluates it here, once. Errors: the
// file system's (e.g. a directory that cannot be read). `fs` null: the
// default (POSIX) file system.
Result<std::vector<std::string>> MatchFilenamesOnce(const std::vector<std::string>& patterns,
                                                    io::FileSystem* fs = nullptr);

// reader.read(filename_queue), evaluated per call: an Element of two string
// scalars {key, value} read by `reader`, which dequeues file names from
// `filename_queue` when it needs one. Blocks while the reader waits for a
// file name. OutOfRange when the filename queue is closed and drained (the
// end of the input, which ends the calling runner thread quietly); other
// errors as ReaderBase::Read (NotFound for a missing file, DataLoss for a
// corrupt record, ...). The value is moved into its tensor, not copied.
// Calls on one reader serialise (its lock is held for the whole read); give
// each reading thread its own reader, e.g. one producer per thread with
// BatchJoin, to read in parallel. The filename-queue waits use
// CurrentProducerWait() (DeadlineExceeded, Cancelled). Each record's key is
// noted for the RecordOriginScope open on this thread, if any. REQUIRES:
// reader and filename_queue are non-null.
Producer ReaderProducer(std::shared_ptr<io::ReaderBase> reader,
                        std::shared_ptr<queue::Queue> filename_queue);

// reader.read_up_to(filename_queue, num_records), for enqueue_many batchers:
// {keys, values}, string vectors of the same length 1..num_records, all from
// one file. Errors as ReaderBase::ReadUpTo. REQUIRES: num_records >= 1.
Producer ReaderUpToProducer(std::shared_ptr<io::ReaderBase> reader,
                            std::shared_ptr<queue::Queue> filename_queue, int64_t num_records);

// A producer that dequeues one element from `queue` per call (TF's
// queue.dequeue() used as a batcher input). OutOfRange once the queue is
// closed and drained; DeadlineExceeded/Cancelled from CurrentProducerWait().
Producer DequeueProducer(std::shared_ptr<queue::Queue> queue);

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_PRODUCER_H_
