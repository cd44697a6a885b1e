// The tf.data engine: a DatasetBase is an immutable description of a
// sequence of elements (a source, or a transformation of other datasets); an
// IteratorBase walks one pass over it.
//
//   DatasetPtr ds = Batch(Map(TFRecordDataset({"a.tfrecord"}), parse), 64);
//   std::unique_ptr<IteratorBase> it = ds->MakeIterator();
//   Element e; bool end = false;
//   while (it->GetNext(&e, &end).ok() && !end) { ... }
//
// Ownership: datasets are shared (DatasetPtr = shared_ptr<const DatasetBase>;
// they must be made by make_shared: iterators hold shared_from_this());
// a transformation keeps its inputs alive, and an iterator keeps its dataset
// alive. Datasets are immutable, so any thread may make iterators of the same
// dataset at once (thread-safe), apart from counters a dataset documents
// (shuffle's epoch), which are atomic.
//
// Iterators: GetNext reports the end of the sequence apart from errors, as
// tf.data does: a clean end is OK with *end_of_sequence true; an error is the
// element's own (the caller may call GetNext again, and gets the next
// element or the same failure); a stray OutOfRange from an inner iterator is
// turned into Internal at the root. An iterator is used by one thread at a
// time. Iterators that run threads (parallel map, prefetch, parallel
// interleave) start them on the first GetNext; all iterators made from one
// MakeIterator() call share a CancellationManager (IteratorContext), and
// destroying the root iterator cancels it first, so every worker blocked
// anywhere in the tree wakes at once, and then joins every thread. Every
// buffer is bounded.
#ifndef SLUICE_DATA_DATASET_H_
#define SLUICE_DATA_DATASET_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/cancellation.h"
#include "sluice/core/dtype.h"
#include "sluice/core/element.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"

namespace sluice::data {

// tf.data's cardinality values (tf.data.INFINITE_CARDINALITY, UNKNOWN_CARDINALITY).
inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;
// tf.data.AUTOTUNE: a parallel map's num_parallel_calls and a prefetch's
// buffer_size are tuned while iterating (model.cc; Options.autotune); a
// cycle_length or num_parallel_reads becomes the number of cores.
inline constexpr int64_t kAutotune = -1;

// The number of cores (at least 1): AUTOTUNE's cycle_length, and the default
// CPU budget.
int64_t AutotuneParallelism();

// The performance model of one iterator tree (src/data/model.h).
class Model;

// The signature of every element: component i has dtypes[i] and a shape
// compatible with shapes[i]. dtype kInvalid means "not known before the
// element is made" (a Python map function's result). names is empty or has
// one entry per component (the keys of a dict element). A value type.
struct ElementSpec {
  std::vector<DType> dtypes;
  std::vector<PartialShape> shapes;
  std::vector<std::string> names;

  size_t size() const { return dtypes.size(); }
  std::string DebugString() const;
};

// Shared by every iterator of one tree (one MakeIterator() call).
struct IteratorContext {
  std::shared_ptr<CancellationManager> cancellation;
  // Elements ignore_errors skipped anywhere in the tree (null: not counted).
  std::shared_ptr<std::atomic<int64_t>> skipped_errors;
  // A probe pass, which reads an element to learn its signature (a Python
  // map function's tracing): it takes no pass number (NextPass), a source
  // whose reads consume something shared (FromQueue) returns a zero element
  // of its signature instead, so the probe takes nothing from the real
  // passes, and buffering stages pass it through (datasets.h, "Probe
  // passes"), so it reads about one element per stage.
  bool probe = false;
  // Statistics, merged Options and AUTOTUNE of the tree; null in an
  // IteratorContext made by hand (no statistics, no tuning).
  std::shared_ptr<Model> model = nullptr;
  // An iterator made only to be saved (concatenate's second input before it
  // starts): it takes no pass number, as a probe, but its stages are the
  // real pass's, so its state restores into one.
  bool uncounted = false;
};

class RecordSource;

// Where an element came from: the file a reader read it from and its record
// index in that file (0-based; a line for TextLineDataset). A value type,
// cheap to copy (the name is shared).
//
// Errors carry it: a reader's own errors name the file and record; an
// iterator knows the origin of the element it returned last
// (IteratorBase::origin()), and Map, Filter, Repeat, Take, Skip and a
// sequential Interleave (a reader over file names) pass it on, so a
// map or filter function that fails on an element read from a file fails
// with " (file \"<name>\", record <n>)" appended to its message and the
// "file" and "record" payloads, as a reader's error has them. Other
// transformations (batch, shuffle, parallel interleave, prefetch, ...) do not pass
// an origin on: after them a failure names the element's position only.
struct ElementOrigin {
  std::shared_ptr<const std::string> file;
  int64_t record = 0;
  // Checkpoints: the record's first byte (uncompressed), and a handle that
  // can read it again (src/data/record_source.h). Readers set `source` only
  // on an element that is exactly the record they read; a transformation
  // that changes elements (Map) passes its input's origin on without it.
  uint64_t offset = 0;
  std::shared_ptr<const RecordSource> source;

  // file "<name>", record <n>
  std::string DebugString() const {
    return "file \"" + (file ? *file : std::string()) + "\", record " + std::to_string(record);
  }
};

class IteratorStateWriter;
class IteratorStateReader;

class IteratorBase {
 public:
  IteratorBase() = default;
  IteratorBase(const IteratorBase&) = delete;
  IteratorBase& operator=(const IteratorBase&) = delete;
  // Iterators with threads cancel and join them here.
  virtual ~IteratorBase() = default;

  // The next element into *out, or *end_of_sequence = true at the end (OK).
  // Errors: the element's (a reader's DataLoss naming file and record, a
  // map function's failure), Cancelled once the tree is being destroyed.
  // May block until an input or a worker delivers. Not thread-safe: one
  // caller at a time.
  [[nodiscard]] virtual Status GetNext(Element* out, bool* end_of_sequence) = 0;

  // The number of elements ignore_errors has skipped anywhere in this tree so
  // far (on the root iterator MakeIterator returns; 0 on inner iterators).
  // Thread-safe.
  virtual int64_t skipped_errors() const { return 0; }
  // The origin of the element the last OK GetNext returned, or nullptr
  // where unknown (see ElementOrigin). Valid until the next GetNext.
  virtual const ElementOrigin* origin() const { return nullptr; }

  // The tree's model: set on the root iterator that MakeIterator returns,
  // null on inner ones.
  virtual std::shared_ptr<Model> model() const { return nullptr; }

  // Checkpoints (sluice/data/checkpoint.h). Save writes this iterator's
  // position, and its inputs' under w->Child("input") (or another child
  // name), so that Restore on a fresh iterator of the same dataset, before
  // its first GetNext, continues with exactly the elements this one would
  // have returned next. An iterator with worker threads waits for the work
  // in flight and saves its results. Default: Unimplemented.
  [[nodiscard]] virtual Status Save(IteratorStateWriter* w);
  [[nodiscard]] virtual Status Restore(IteratorStateReader* r);
};

class DatasetBase : public std::enable_shared_from_this<DatasetBase> {
 public:
  explicit DatasetBase(ElementSpec spec) : spec_(std::move(spec)) {}
  DatasetBase(const DatasetBase&) = delete;
  DatasetBase& operator=(const DatasetBase&) = delete;
  virtual ~DatasetBase() = default;

  const ElementSpec& element_spec() const { return spec_; }
  // A count, kInfiniteCardinality or kUnknownCardinality (TF's rules).
  virtual int64_t cardinality() const = 0;
  // "Batch", "Map", ... for messages.
  virtual std::string DebugName() const = 0;

  // A new pass over the dataset, with its own IteratorContext. Thread-safe.
  std::unique_ptr<IteratorBase> MakeIterator() const;
  // As MakeIterator, for a probe pass (IteratorContext::probe): one that
  // reads an element only to learn its signature.
  std::unique_ptr<IteratorBase> MakeProbeIterator() const;
  // An iterator inside the tree of `ctx` (used by transformations).
  virtual std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const = 0;

 private:
  const ElementSpec spec_;
};

using DatasetPtr = std::shared_ptr<const DatasetBase>;

}  // namespace sluice::data

#endif  // SLUICE_DATA_DATASET_H_
