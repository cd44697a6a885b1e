// ReaderBase: TensorFlow's queue-fed readers (tf.compat.v1.ReaderBase and
// core/framework/reader_base.h), written out in docs/spec/tf-queues.md
// §11.1.
//
// A reader turns work units (strings, normally file names) taken from a
// filename queue into records (key, value). Read() dequeues a work unit when
// none is in progress, opens it (OnWorkStartedLocked), then asks the
// concrete reader for the next record; an exhausted unit is finished and the
// next one dequeued, so empty files are skipped transparently. A unit that
// fails to open (NotFound for a missing file) fails that read and is
// consumed: the next read dequeues the next unit.
//
// Thread-safety: every public method is thread-safe. Each reader has one
// mutex, held for a whole Read()/ReadUpTo() -- including while it blocks on
// the filename queue -- so calls on the same reader serialise (and
// num_records_produced() waits behind a blocked read, as in TensorFlow). Use
// several readers to read in parallel; readers blocked on different queues
// do not block each other. The queue is borrowed for the call only; a reader
// must not be destroyed while a call on it is in progress. No user
// code runs under the reader's lock except the queue's WaitOptions
// interrupt_check (run by the queue on its own thread).
#ifndef SLUICE_IO_READER_BASE_H_
#define SLUICE_IO_READER_BASE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/queue/queue.h"

namespace sluice::io {

class ReaderBase {
 public:
  struct Record {
    std::string key;
    std::string value;
  };
  struct Records {
    std::vector<std::string> keys;
    std::vector<std::string> values;
  };

  virtual ~ReaderBase() = default;
  ReaderBase(const ReaderBase&) = delete;
  ReaderBase& operator=(const ReaderBase&) = delete;

  // One record. Blocks while it needs a work unit and `queue` is empty; what
  // wakes it is the queue's: an element, Close (OutOfRange "... is closed
  // and has insufficient elements ..."), the wait's deadline
  // (DeadlineExceeded) or cancellation (Cancelled) -- propagated unchanged.
  // Errors: InvalidArgument when `queue` does not hold one string per
  // element ("Expected single component queue", "Expected queue with single
  // string component", "Expected to dequeue a one-element string tensor");
  // the error of opening a work unit (then skipped); read errors such as
  // DataLoss (the unit stays current: the next call retries where it
  // failed, unless the reader skips errors).
  [[nodiscard]] Result<Record> Read(queue::Queue& queue, const queue::WaitOptions& wait = {}) SLUICE_EXCLUDES(mu_);

  // 1..num_records records, all from one work unit: returns early when the
  // unit ends after at least one record. Empty units are skipped. Errors as
  // Read (OutOfRange only when no record was produced in this call);
  // InvalidArgument for num_records < 0; num_records == 0 returns nothing.
  // As in TensorFlow, records read before an error in the same call are
  // counted but not returned.
  [[nodiscard]] Result<Records> ReadUpTo(queue::Queue& queue, int64_t num_records,
                                         const queue::WaitOptions& wait = {}) SLUICE_EXCLUDES(mu_);

  int64_t num_records_produced() SLUICE_EXCLUDES(mu_);
  int64_t num_work_units_completed() SLUICE_EXCLUDES(mu_);

  // Counters to zero, the current work unit dropped (not re-queued).
  [[nodiscard]] Status Reset() SLUICE_EXCLUDES(mu_);

  // The reader's state as bytes. Unimplemented "Reader SerializeState" for
  // readers that do not support it (all but IdentityReader and
  // WholeFileReader).
  [[nodiscard]] Result<std::string> SerializeState() SLUICE_EXCLUDES(mu_);
  // Restores SerializeState()'s bytes. Errors: Unimplemented "Reader
  // RestoreState"; InvalidArgument "Could not parse state for <Type>
  // '<name>'" for bytes that are not a valid state (truncated, extended,
  // garbage, any flipped bit); InvalidArgument for negative counters or
  // work_started > work_finished. Any failure resets the reader.
  [[nodiscard]] Status RestoreState(std::string_view state) SLUICE_EXCLUDES(mu_);

  // "TFRecordReader", "TextLineReader", ...
  const std::string& type_name() const { return type_name_; }
  const std::string& name() const { return name_; }
  // "<Type> '<name>'", as messages print a reader.
  std::string DisplayName() const;
  // TensorFlow's supports_serialize.
  virtual bool supports_serialize() const { return false; }

 protected:
  // `name` empty: the type name.
  ReaderBase(std::string type_name, std::string name);

  // The hooks, each called with mu_ held.
  //
  // Produces the next record of current_work(): sets *produced (and fills
  // key/value), or sets *at_end when the unit is exhausted, or returns an
  // error (and sets neither).
  virtual Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) SLUICE_REQUIRES(mu_) = 0;
  // 1..n records of current_work() (or *at_end, or an error); the default
  // reads one with ReadLocked.
  virtual Status ReadUpToLocked(int64_t n, std::vector<std::string>* keys, std::vector<std::string>* values,
                                int64_t* num_read, bool* at_end) SLUICE_REQUIRES(mu_);
  // Opens current_work(). An error skips the unit.
  virtual Status OnWorkStartedLocked() SLUICE_REQUIRES(mu_) { return Status::OK(); }
  // Closes current_work().
  virtual Status OnWorkFinishedLocked() SLUICE_REQUIRES(mu_) { return Status::OK(); }
  // Overriders reset their own state, then call ReaderBase::ResetLocked().
  virtual Status ResetLocked() SLUICE_REQUIRES(mu_);
  virtual Status SerializeStateLocked(std::string* state) SLUICE_REQUIRES(mu_);
  virtual Status RestoreStateLocked(std::string_view state) SLUICE_REQUIRES(mu_);

  // For serializable readers: the base state (counters and current work)
  // in the format documented in reader_base.cc, and back.
  std::string SaveBaseStateLocked() const SLUICE_REQUIRES(mu_);
  Status RestoreBaseStateLocked(std::string_view state) SLUICE_REQUIRES(mu_);

  const std::string& current_work() const SLUICE_REQUIRES(mu_) { return work_; }

  mutable Mutex mu_;

 private:
  bool work_in_progress() const SLUICE_REQUIRES(mu_) { return work_finished_ < work_started_; }
  // Dequeues and opens the next work unit.
  Status StartNextWorkLocked(queue::Queue& queue, const queue::WaitOptions& wait) SLUICE_REQUIRES(mu_);
  Status FinishWorkLocked() SLUICE_REQUIRES(mu_);

  // Constant after construction.
  const std::string type_name_;
  const std::string name_;

  // Protected by mu_.
  int64_t work_started_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t work_finished_ SLUICE_GUARDED_BY(mu_) = 0;
  int64_t num_records_produced_ SLUICE_GUARDED_BY(mu_) = 0;
  std::string work_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice::io

#endif  // SLUICE_IO_READER_BASE_H_
