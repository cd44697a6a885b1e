// Factories of tf.data's sources and transformations (dataset.h), with
// TensorFlow's names, arguments, defaults and semantics. Each returns a new
// immutable dataset; arguments are checked here (InvalidArgument, with TF's
// wording where TF's tests match on it), not when iterating.
//
// Functions given to Map/Filter/Interleave are called on worker threads
// (several at once when num_parallel_calls > 1), so they must be
// thread-safe; they never run under a lock of this library.
#ifndef SLUICE_DATA_DATASETS_H_
#define SLUICE_DATA_DATASETS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sluice/data/dataset.h"
#include "sluice/queue/queue.h"
#include "sluice/train/queue_runner.h"

namespace sluice::data {

// A map function: one element in, one element out (any signature), or the
// element's error.
using MapFn = std::function<Result<Element>(Element)>;
// Which element a function is called for: the pass over the map's input
// (0, 1, ... in the order iterators of the dataset are made: each epoch under
// Repeat is a new pass) and the element's position in that pass. A function
// that draws random numbers from (seed, epoch, index) gives the same output
// whatever the parallelism and thread timing.
struct ElementIndex {
  uint64_t epoch = 0;
  uint64_t index = 0;
};
using IndexedMapFn = std::function<Result<Element>(Element, ElementIndex)>;
// A predicate: true keeps the element. The function must return a bool.
using PredicateFn = std::function<Result<bool>(const Element&)>;
// An interleave function: the dataset an input element opens.
using InterleaveFn = std::function<Result<DatasetPtr>(Element)>;

// ---- Sources -------------------------------------------------------------------

// tf.data.Dataset.range(start, stop, step): int64 scalars (or `dtype`, an
// integer or float type). InvalidArgument for step 0.
Result<DatasetPtr> Range(int64_t start, int64_t stop, int64_t step = 1, DType dtype = DType::kInt64);
// One element, the tensors given. `names` as ElementSpec::names.
Result<DatasetPtr> FromTensors(Element components, std::vector<std::string> names = {});
// The slices along the first dimension of every component. InvalidArgument
// for a scalar component or first dimensions that differ.
Result<DatasetPtr> FromTensorSlices(Element components, std::vector<std::string> names = {});

// The records of TFRecord files, in file order, one string scalar each.
// compression_type "", "ZLIB" or "GZIP"; buffer_size in bytes (0: the
// default); num_parallel_reads > 1 (or kAutotune) reads that many files at
// once, interleaving their records one by one (TF's order). Errors carry
// the "file", "record" and "offset" payloads.
struct RecordDatasetOptions {
  std::string compression_type;
  int64_t buffer_size = 0;
  std::optional<int64_t> num_parallel_reads;
};
Result<DatasetPtr> TFRecordDataset(std::vector<std::string> filenames, RecordDatasetOptions options = {});
// Lines of text files (io::LineIterator's rules).
Result<DatasetPtr> TextLineDataset(std::vector<std::string> filenames, RecordDatasetOptions options = {});
// Fixed-size records after header_bytes, ignoring footer_bytes at the end.
// An uncompressed file whose body is not whole records is InvalidArgument
// (TF's message); in a compressed one a trailing partial record is dropped.
struct FixedLengthOptions {
  int64_t record_bytes = 0;
  int64_t header_bytes = 0;
  int64_t footer_bytes = 0;
};
Result<DatasetPtr> FixedLengthRecordDataset(std::vector<std::string> filenames, FixedLengthOptions fixed,
                                            RecordDatasetOptions options = {});

// ---- Transformations ------------------------------------------------------------

struct MapOptions {
  // nullopt: sequential, on the caller's thread. kAutotune or >= 1: that many
  // worker threads, with up to twice as many chunks in flight; a chunk is
  // one element for a slow function, up to 32 for a fast one (whatever
  // takes about 50 us), so that cheap functions are not dominated by
  // thread hand-offs.
  std::optional<int64_t> num_parallel_calls;
  // false: a parallel map hands out whichever element is ready first.
  bool deterministic = true;
};
// `fn` of each element; `out_spec` is its output signature (dtype kInvalid
// where unknown). An OutOfRange returned by fn becomes InvalidArgument
// ("Function invocation produced OutOfRangeError: ..."), as TF does, so a
// map never ends a sequence early. A failure carries the element's
// position in the pass as the "element" payload.
Result<DatasetPtr> Map(DatasetPtr input, MapFn fn, ElementSpec out_spec, MapOptions options = {});
// As Map, the function told which element it maps.
Result<DatasetPtr> MapWithIndex(DatasetPtr input, IndexedMapFn fn, ElementSpec out_spec, MapOptions options = {});
Result<DatasetPtr> Filter(DatasetPtr input, PredicateFn predicate);

// Stacks batch_size consecutive elements (Tensor::Stack: zero-copy when they
// are adjacent slices of one buffer). InvalidArgument for batch_size < 1; per
// batch, for components whose shapes differ (TF's message).
Result<DatasetPtr> Batch(DatasetPtr input, int64_t batch_size, bool drop_remainder = false);
// As Batch, padding each component to padded_shapes (unknown dims: the
// batch's largest) with padding_values (scalars; empty: 0 / ""). Empty
// padded_shapes: pad every dim to the batch's largest.
Result<DatasetPtr> PaddedBatch(DatasetPtr input, int64_t batch_size, std::vector<PartialShape> padded_shapes = {},
                               Element padding_values = {}, bool drop_remainder = false);
// Splits each element along its first dimension.
Result<DatasetPtr> Unbatch(DatasetPtr input);

// A buffer of buffer_size elements sampled uniformly, with TensorFlow's
// algorithm and Philox stream: (seed, seed2) as TF's random_seed.get_seed
// gives them (e.g. (87654321, seed) for an op seed without a global one)
// give TF's orders; both 0: nondeterministic. reshuffle_each_iteration: each
// iterator (each epoch under Repeat) draws another order, from seeds the
// dataset's generator derives (TF's RandomSeedGenerator); otherwise every
// iterator repeats the first order. buffer_size kAutotune: a very large
// buffer (TF: unbounded).
Result<DatasetPtr> Shuffle(DatasetPtr input, int64_t buffer_size, int64_t seed = 0, int64_t seed2 = 0,
                           bool reshuffle_each_iteration = true);
// A background thread keeps up to buffer_size elements ready (kAutotune:
// AutotuneParallelism(); 0: no thread).
Result<DatasetPtr> Prefetch(DatasetPtr input, int64_t buffer_size);

// count -1: for ever.
Result<DatasetPtr> Repeat(DatasetPtr input, int64_t count = -1);
// count -1: all.
Result<DatasetPtr> Take(DatasetPtr input, int64_t count);
// count -1: all (an empty dataset).
Result<DatasetPtr> Skip(DatasetPtr input, int64_t count);
// Every num_shards-th element from index. InvalidArgument unless
// 0 <= index < num_shards.
Result<DatasetPtr> Shard(DatasetPtr input, int64_t num_shards, int64_t index);
// Elements of all inputs joined component-wise; ends with the shortest.
Result<DatasetPtr> Zip(std::vector<DatasetPtr> inputs);
// input then other. InvalidArgument for different dtypes or arity.
Result<DatasetPtr> Concatenate(DatasetPtr input, DatasetPtr other);
// (int64 index from start, element...).
Result<DatasetPtr> Enumerate(DatasetPtr input, int64_t start = 0);

struct InterleaveOptions {
  int64_t cycle_length = kAutotune;
  int64_t block_length = 1;
  // nullopt: sequential. Otherwise each open input dataset is read ahead by
  // its own thread (up to block_length elements), in TF's deterministic
  // order.
  std::optional<int64_t> num_parallel_calls;
  bool deterministic = true;
};
// tf.data interleave: cycle_length datasets opened from input elements,
// block_length elements from each in turn.
Result<DatasetPtr> Interleave(DatasetPtr input, InterleaveFn fn, ElementSpec out_spec, InterleaveOptions options = {});

// In-memory cache: the first pass that reaches the end stores every element;
// later iterators replay it. A partial pass stores nothing.
Result<DatasetPtr> Cache(DatasetPtr input);

// ---- Frameworks: C++ generators and the queue bridge -----------------------------
// (src/data/generator.cc, src/data/queue_bridge.cc)

// One pass of a C++ generator: each call returns the next element, nullopt
// at the end, or an error (the element's: the caller may call again). Called
// by one thread at a time, the iterator's consumer.
using GeneratorFn = std::function<Result<std::optional<Element>>()>;
// Makes the generator of one pass; called once per iterator, on its first
// GetNext. Must be thread-safe (iterators of one dataset may start at once).
using GeneratorFactory = std::function<Result<GeneratorFn>()>;
// tf.data.Dataset.from_generator with a C++ callable: the elements
// factory()() returns, each checked against `spec` (dtype, shape, arity:
// InvalidArgument naming the component otherwise; dtype kInvalid and
// unknown shapes accept anything). Unknown cardinality. A failure of the
// factory is every GetNext's error until it succeeds.
Result<DatasetPtr> FromGenerator(GeneratorFactory factory, ElementSpec spec);

// A dataset that dequeues from a sluice queue (the TF1 queue world into
// tf.data): each GetNext is one queue->Dequeue(); once the queue is closed
// and empty, the sequence ends. Blocks while the queue is empty and open;
// destroying the iterator (its tree's cancellation) wakes it with Cancelled.
// Every iterator dequeues from the same queue, so two passes split the
// elements between them; cardinality unknown. element_spec: the queue's
// dtypes and shapes. A probe pass (IteratorContext::probe) dequeues nothing:
// it sees one zero element. InvalidArgument for a null queue.
Result<DatasetPtr> FromQueue(std::shared_ptr<queue::Queue> queue);

// A QueueRunner (train/queue_runner.h) whose num_threads threads enqueue the
// elements of one pass over `dataset` into `queue`, in order when
// num_threads is 1. The pass ends with OutOfRange, so the last thread closes
// the queue and its consumers see the epoch end as with any TF1 producer.
// A Coordinator stop runs the cancel op, which cancels the dataset's
// iterator (waking a GetNext blocked inside the tree) and closes the queue
// with cancel_pending_enqueues. Closing the queue from elsewhere ends the
// runner quietly (Cancelled is a closed code). A dataset error is the
// thread's error: it stops the coordinator (Join raises it). The iterator is
// made by the first enqueue step and lives as long as the runner.
// InvalidArgument for a null dataset or queue, num_threads < 1, or a dataset
// whose arity or (known) dtypes differ from the queue's.
Result<std::shared_ptr<train::QueueRunner>> DatasetQueueRunner(DatasetPtr dataset, std::shared_ptr<queue::Queue> queue,
                                                               int num_threads = 1);

}  // namespace sluice::data

#endif  // SLUICE_DATA_DATASETS_H_
