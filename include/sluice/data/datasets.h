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
  // nullopt: sequential, on the caller's thread. >= 1: that many worker
  // threads; kAutotune: twice as many threads as the CPU budget, of which
  // as many work at once as the tuner sets (starting at 1). Up to twice as many
  // chunks as calls in flight; a chunk is one element for a slow function,
  // up to 32 for a fast one (whatever takes about 50 us), so that cheap
  // functions are not dominated by thread hand-offs.
  std::optional<int64_t> num_parallel_calls;
  // false: a parallel map hands out whichever element is ready first.
  // nullopt: Options' deterministic (default true).
  std::optional<bool> deterministic = std::nullopt;
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
// A background thread keeps up to buffer_size elements ready (0: no thread;
// kAutotune: starting at 1, doubled whenever the consumer finds the buffer
// empty after it had filled, within Options' RAM budget).
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
  // nullopt: Options'. Accepted: the order is always the deterministic one.
  std::optional<bool> deterministic = std::nullopt;
};
// tf.data interleave: cycle_length datasets opened from input elements,
// block_length elements from each in turn.
Result<DatasetPtr> Interleave(DatasetPtr input, InterleaveFn fn, ElementSpec out_spec, InterleaveOptions options = {});

// In-memory cache: the first pass that reaches the end stores every element;
// later iterators replay it. A partial pass stores nothing.
Result<DatasetPtr> Cache(DatasetPtr input);

// ---- Options, statistics and AUTOTUNE (model.cc) ------------------------------------

// tf.data.Options' fields that the engine reads; nullopt: not set (TF's
// None). Options of a tree merge as TF merges them (MergeOptions).
struct AutotuneOptions {
  std::optional<bool> enabled;         // nullopt: true
  // Cores AUTOTUNE may keep busy (each AUTOTUNE stage runs at most 2 calls
  // per core); nullopt or 0: all cores.
  std::optional<int64_t> cpu_budget;
  std::optional<int64_t> ram_budget;   // bytes of AUTOTUNE buffers; nullopt or 0: half of RAM
};
struct ThreadingOptions {
  std::optional<int64_t> private_threadpool_size;   // accepted; stages keep their own threads
  std::optional<int64_t> max_intra_op_parallelism;  // accepted
};
struct Options {
  // Where an op's own `deterministic` is unset (nullopt: true).
  std::optional<bool> deterministic = std::nullopt;
  AutotuneOptions autotune;
  ThreadingOptions threading;
};
// `base` with every field that `over` sets replaced (TF's merge_options:
// the later options win).
Options MergeOptions(const Options& base, const Options& over);
// tf.data's with_options: `input` with `options` merged over its own. The
// options in effect for an iterator are those of every WithOptions in the
// tree, merged inner first (Model::MergeOptions); read when the root
// iterator starts.
Result<DatasetPtr> WithOptions(DatasetPtr input, Options options);

// One stage of an iterator tree, as IteratorStats reports it. Cumulative
// since the iterator was made.
struct StageStats {
  std::string name;           // the op ("ParallelMap", "Prefetch", ...); "Root": the consumer's side
  int64_t elements = 0;       // elements produced (Root: handed to the consumer)
  int64_t bytes = 0;          // tensor bytes of those elements (sequential stages: sampled)
  int64_t busy_ns = 0;        // time doing the stage's own work, all threads (Root: the consumer's, between calls)
  int64_t cpu_ns = 0;         // CPU time of that work where measured (parallel stages), else 0
  int64_t wait_ns = 0;        // time waiting for the input (Root: inside GetNext)
  int64_t buffer_size = 0;    // buffer capacity in elements (0: none)
  int64_t buffer_fill = 0;    // elements in the buffer now (<= buffer_size)
  int64_t parallelism = 1;    // calls at once (1: sequential)
  bool autotune = false;      // parallelism or buffer_size is tuned
};
// A snapshot of every live stage of the tree of `root` (an iterator that
// MakeIterator returned; empty otherwise), sources first, "Root" last.
// Thread-safe: any thread, at any time while `root` is alive.
std::vector<StageStats> IteratorStats(const IteratorBase& root);
// The options in effect for the tree of `root` (merged; defaults if none).
Options IteratorOptions(const IteratorBase& root);

}  // namespace sluice::data

#endif  // SLUICE_DATA_DATASETS_H_
