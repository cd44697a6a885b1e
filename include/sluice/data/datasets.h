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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/data/dataset.h"
#include "sluice/io/record_reader.h"
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

// ---- Error policy (error_policy.cc; reports at the end of this file) ---------------

// What a stage does with an error of one of its elements (a corrupt record,
// a read error, a map function's failure such as an undecodable image or a
// parse error): kFail returns it (tf.data's behaviour, the default); kSkip
// drops the element, counts it in skipped_errors() and reports it
// (IteratorErrors); kReplace reports it and yields a substitute instead.
// Cancelled and the memory budget's ResourceExhausted always pass through.
enum class ErrorPolicy { kFail, kSkip, kReplace };
// "fail", "skip" or "replace"; InvalidArgument otherwise.
Result<ErrorPolicy> ParseErrorPolicy(std::string_view name);
std::string_view ErrorPolicyName(ErrorPolicy policy);
// A stage's own policy (MapOptions, RecordDatasetOptions).
struct StageErrorPolicy {
  std::optional<ErrorPolicy> policy;   // nullopt: Options.error_policy (nullopt there: kFail)
  std::optional<Element> replacement;  // kReplace's substitute; nullopt: zeros of the stage's element_spec
};
// A copy of `stage` with its own error policy: a Map's applies to its
// function's errors; a reader's (TFRecordDataset, ...) to the reader's;
// any other dataset is wrapped, so that every error of its elements is
// handled. InvalidArgument for a replacement unlike the elements.
Result<DatasetPtr> WithStageErrorPolicy(const DatasetPtr& stage, StageErrorPolicy policy);

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
// the "file", "record" and "offset" payloads. The readers' errors (a file
// that does not open, a read error, a corrupt record) reach
// Options.error_policy, or the reader's own (WithStageErrorPolicy); the rest
// of a file that fails is skipped (TF's rule), so kReplace yields one
// substitute for it.
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
  // Applies to the function's errors only (not to its input's).
  StageErrorPolicy error_policy = {};
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

// ---- Windows, scans, grouping, rebatching and skipping errors (window.cc,
// scan.cc, take_while.cc, unique.cc, ignore_errors.cc, rebatch.cc,
// group_by_window.cc, bucket_by_sequence_length.cc) -----------------------------------------------------------

// A dataset of the given elements, in order, shared (not copied) by every
// iterator; `spec` is their signature. InvalidArgument for a null vector.
// (tf.data's window datasets and group_by_window's windows are these.)
Result<DatasetPtr> FromElements(std::shared_ptr<const std::vector<Element>> elements, ElementSpec spec);

// tf.data's window(size, shift, stride, drop_remainder). TF's elements are
// nested datasets; here a window of n input elements of k components is one
// element of n * k tensors (input element i's component j at i * k + j, the
// tensors shared, not copied), and element_spec() is the input's: the
// signature of every element inside a window. WindowDatasets turns such an
// element into TF's k datasets (so flat_map / interleave over windows is
// Interleave with a function that calls it); Batch and the like treat the
// flat tensors as components and are not meant for a window dataset.
// Windows start every `shift` (nullopt: size) input elements and take every
// `stride`-th element; without drop_remainder the last windows are partial
// (never empty). Buffers at most (size - 1) * stride + 1 input elements.
// InvalidArgument (TF's messages) for size, shift or stride < 1.
Result<DatasetPtr> Window(DatasetPtr input, int64_t size, std::optional<int64_t> shift = std::nullopt,
                          int64_t stride = 1, bool drop_remainder = false);
// The k datasets of one window element of a dataset whose element_spec() is
// `spec` (component j's dataset: the window's n values of component j).
// InvalidArgument if the window's size is not a non-zero multiple of k.
Result<std::vector<DatasetPtr>> WindowDatasets(const Element& window, const ElementSpec& spec);

// A scan function: (state, element) -> (new state, output element). The new
// state must have the initial state's dtypes and arity.
using ScanFn = std::function<Result<std::pair<Element, Element>>(const Element& state, Element element)>;
// tf.data's scan: each element's output, the state carried from element to
// element (every iterator starts from initial_state). A new state of other
// dtypes or arity is InvalidArgument at that element (TF checks when
// tracing). `out_spec` the output signature.
Result<DatasetPtr> Scan(DatasetPtr input, Element initial_state, ScanFn fn, ElementSpec out_spec);

// The elements up to (not including) the first for which predicate is false.
Result<DatasetPtr> TakeWhile(DatasetPtr input, PredicateFn predicate);

// Each distinct element once, in order of first appearance. The input must
// have one component of dtype int32, int64 or string (InvalidArgument
// otherwise, TF's messages); the set of seen values grows with the number of
// distinct values (TF's too).
Result<DatasetPtr> Unique(DatasetPtr input);

// tf.data's ignore_errors: an element whose GetNext fails with any error but
// Cancelled is skipped, and counted in the tree's skipped count
// (IteratorBase::skipped_errors() of the root iterator); with log_warning,
// each is logged as a warning that carries the error's message (and its
// file / record context). Cancelled passes (the tree is shutting down).
Result<DatasetPtr> IgnoreErrors(DatasetPtr input, bool log_warning = false);

// tf.data's rebatch: the input's batches (every component of rank >= 1, the
// same first dimension) cut and joined into batches of batch_sizes[0],
// batch_sizes[1], ... (cycling): input.unbatch().batch(n) with n cycling.
// A batch that is one input batch's rows is a slice of it (no copy).
// drop_remainder drops a last batch smaller than its size. InvalidArgument
// for an empty batch_sizes, a size < 1 (TF loops for ever on 0), or scalar
// components (TF's message); per batch for components of different first
// dimensions.
Result<DatasetPtr> Rebatch(DatasetPtr input, std::vector<int64_t> batch_sizes, bool drop_remainder = false);

// group_by_window's functions: the int64 key of an element; the window size
// of a key (called once per key); the dataset a full window (or a key's last,
// partial one) reduces to.
using KeyFn = std::function<Result<int64_t>(const Element&)>;
using WindowSizeFn = std::function<Result<int64_t>(int64_t key)>;
using ReduceFn = std::function<Result<DatasetPtr>(int64_t key, DatasetPtr window)>;
// tf.data's group_by_window: elements are gathered per key; when a key's
// window reaches its size, reduce_fn(key, window) is called and the dataset
// it returns is read to the end before any more input is read. At the end of
// the input the remaining windows are reduced in ascending key order. Every
// window holds at most its size (windows are FromElements datasets sharing
// the tensors). A window size < 1 is InvalidArgument at that element (TF's
// message). `out_spec` the signature of reduce_fn's datasets.
Result<DatasetPtr> GroupByWindow(DatasetPtr input, KeyFn key_fn, ReduceFn reduce_fn, WindowSizeFn window_size_fn,
                                 ElementSpec out_spec);

// The length of an element, for BucketBySequenceLength.
using ElementLengthFn = std::function<Result<int64_t>(const Element&)>;
struct BucketOptions {
  // Per component (empty: each component's own shape); unknown dims are
  // padded to the batch's longest (or bucket boundary - 1, below).
  std::vector<PartialShape> padded_shapes;
  Element padding_values;  // scalars; empty: 0 / ""
  // Unknown dims padded to the bucket's boundary - 1 instead; an element of
  // the last bucket (length >= the last boundary) is then InvalidArgument.
  bool pad_to_bucket_boundary = false;
  bool no_padding = false;  // Batch instead of PaddedBatch
  bool drop_remainder = false;
};
// tf.data's bucket_by_sequence_length (TF builds it the same way):
// GroupByWindow keyed by the bucket of length_fn(element) (bucket i holds
// lengths in [boundaries[i-1], boundaries[i])), each window of
// bucket_batch_sizes[i] elements padded-batched. InvalidArgument (TF's
// message) unless bucket_batch_sizes has one more entry than boundaries.
Result<DatasetPtr> BucketBySequenceLength(DatasetPtr input, ElementLengthFn length_fn,
                                          std::vector<int64_t> bucket_boundaries,
                                          std::vector<int64_t> bucket_batch_sizes, BucketOptions options = {});

// ---- File lists, CSV, file cache, sampling, sparse components ----------------------
// (sources and transformations of file_sources.cc, csv_dataset.cc,
// file_cache.cc, directed_interleave.cc and sparse.cc)

// tf.data.Dataset.list_files: the files matching any of `patterns`
// (io::FileSystem::GetMatchingPaths), sorted, then with `shuffle` shuffled
// by Shuffle(n, seed, seed2, reshuffle_each_iteration=true) as TF does.
// InvalidArgument "... No files matched pattern: p1, p2" (TF's eager Assert
// message) when nothing matches; the file system's errors.
Result<DatasetPtr> ListFiles(std::vector<std::string> patterns, bool shuffle = true, int64_t seed = 0,
                             int64_t seed2 = 0);
// The readers above over a dataset of file names (string scalars; otherwise
// InvalidArgument): each file is opened when the name dataset yields it,
// one after the other, or num_parallel_reads at once with their records
// interleaved one by one (TF's order).
Result<DatasetPtr> TFRecordDatasetOf(DatasetPtr filenames, RecordDatasetOptions options = {});
Result<DatasetPtr> TextLineDatasetOf(DatasetPtr filenames, RecordDatasetOptions options = {});
Result<DatasetPtr> FixedLengthRecordDatasetOf(DatasetPtr filenames, FixedLengthOptions fixed,
                                              RecordDatasetOptions options = {});

// tf.data.experimental.CsvDataset: the records of CSV files, one scalar per
// column of record_defaults (a 1-element tensor: the default; 0 elements:
// required), decoded by ops::DecodeCSV's rules; a quoted field may span
// lines. header skips each file's first record. select_cols or
// exclude_cols (not both: InvalidArgument "Either select_cols or
// exclude_cols should be empty") pick the columns. Option errors are
// InvalidArgument here; a bad record is InvalidArgument with TF's message
// and " (file \"f\", line L, column C)" (1-based) appended, and the payloads
// "file", "line" and (0-based) "column".
struct CsvDatasetOptions {
  std::string compression_type;
  int64_t buffer_size = 0;  // bytes; 0: the default
  bool header = false;
  std::string field_delim = ",";
  bool use_quote_delim = true;
  std::string na_value;
  std::vector<int64_t> select_cols;
  std::vector<int64_t> exclude_cols;
  // Skip what fails (a bad record; a file that cannot be opened; the rest of
  // a file after a read error) instead of returning it, telling `reporter`
  // (may be null; called on the iterating thread) of each, as
  // tf.data.experimental.ignore_errors does after a CsvDataset.
  bool ignore_errors = false;
  std::shared_ptr<io::CorruptionReporter> reporter;
};
Result<DatasetPtr> CsvDataset(std::vector<std::string> filenames, std::vector<Tensor> record_defaults,
                              CsvDatasetOptions options = {});

// cache(filename): the first pass that reaches the end writes every element
// to `filename`, through "<filename>.tmp-<pid>-<n>" renamed at the end (a
// partial pass leaves nothing); while it writes it holds
// "<filename>.lockfile", and a second writer fails with AlreadyExists (TF's
// message). Iterators made once the file exists read it. The format is
// documented in file_cache.cc: records with a CRC32C each and a footer
// holding the element count, so a truncated or corrupt file is DataLoss
// naming the file. Any dtype and SparseTensor components (as three dense
// components) round-trip.
Result<DatasetPtr> CacheToFile(DatasetPtr input, std::string filename);

// tf.data.Dataset.choose_from_datasets: element i comes from
// datasets[choice_dataset's i-th int64 scalar] (TF's DirectedInterleave);
// an exhausted input's turn is skipped, or ends the whole sequence with
// stop_on_empty_dataset. Errors: InvalidArgument for no datasets, specs that
// differ, a choice dataset that is not int64 scalars, and (per element) an
// index out of range ("Selector index out of range: 5 >= 2").
Result<DatasetPtr> ChooseFromDatasets(std::vector<DatasetPtr> datasets, DatasetPtr choice_dataset,
                                      bool stop_on_empty_dataset = true);
// tf.data.Dataset.sample_from_datasets: each element from datasets[i] with
// probability weights[i] / sum (empty: uniform), drawn as TF draws it
// (Dataset.random(seed).batch(2) seeding stateless_multinomial over
// log(weights)), so TF's (seed, seed2) give TF's order; both 0:
// nondeterministic. Datasets of weight 0 are dropped first. With
// rerandomize_each_iteration, each iterator (each epoch under Repeat) draws
// from other seeds, derived as Shuffle's are; otherwise every iterator
// repeats the first sequence of draws. The selector's iterator counter is
// atomic (see dataset.h).
Result<DatasetPtr> SampleFromDatasets(std::vector<DatasetPtr> datasets, std::vector<double> weights = {},
                                      int64_t seed = 0, int64_t seed2 = 0, bool stop_on_empty_dataset = false,
                                      bool rerandomize_each_iteration = false);
// As above, element i drawn with the weights of element i of `weights` (a
// dataset of float32/float64 vectors, one weight per dataset; the sequence
// ends with it). No dataset is dropped: a weight of 0 is never drawn.
Result<DatasetPtr> SampleFromDatasetsWithWeightDataset(std::vector<DatasetPtr> datasets, DatasetPtr weights,
                                                      int64_t seed = 0, int64_t seed2 = 0,
                                                      bool stop_on_empty_dataset = false,
                                                      bool rerandomize_each_iteration = false);

// SparseTensor components: `sparse` lists the first component of each
// SparseTensor, held as three components (indices int64 [n, rank], values
// [n], dense_shape int64 [rank]). FromTensorSlices slices them along their
// first dense dimension (indices lose their first column); Batch gives
// each batched SparseTensor indices [sum n, rank + 1] with the position in
// the batch first, and dense_shape [batch, max of each dim]; Unbatch
// splits them back. InvalidArgument for sizes or ranks that disagree.
Result<DatasetPtr> FromTensorSlicesWithSparse(Element components, std::vector<size_t> sparse,
                                              std::vector<std::string> names = {});
Result<DatasetPtr> BatchWithSparse(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                                   std::vector<size_t> sparse);
Result<DatasetPtr> UnbatchWithSparse(DatasetPtr input, std::vector<size_t> sparse);
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

// ---- Record files with a record index, and global shuffle (record_files.cc,
// index_permutation.h) ---------------------------------------------------------------

// Which side-file indexes (io::RecordIndex, "<file>.idx") FromRecordFiles uses.
enum class RecordIndexPolicy {
  // A fresh side file is loaded; else the file is scanned once and the index
  // written beside it (a failure to write, e.g. a read-only folder, is only
  // logged).
  kLoadOrBuild,
  // As kLoadOrBuild, but never writes a side file.
  kLoadOrBuildNoSave,
  // Only a fresh side file will do: FailedPrecondition otherwise.
  kRequireFresh,
};

// A global shuffle: every record of all files once per epoch, in the order
// of IndexPermutation(total records, seed, epoch). Epoch k is the k-th
// iterator made from the dataset (each pass under Repeat is one) with
// reshuffle_each_iteration; without, every iterator uses epoch 0.
struct GlobalShuffleOptions {
  uint64_t seed = 0;
  bool reshuffle_each_iteration = true;
};

struct RecordFilesOptions {
  // Only "" (uncompressed): a compressed stream cannot be read at an offset
  // without decompressing everything before it, so ZLIB/GZIP are refused
  // (InvalidArgument).
  std::string compression_type;
  RecordIndexPolicy index = RecordIndexPolicy::kLoadOrBuild;
  // nullopt: the records in file order.
  std::optional<GlobalShuffleOptions> shuffle;
  // Read-ahead: the next read_ahead_records positions (at most
  // read_ahead_bytes of records, at least one record) are read together,
  // grouped by file and sorted by offset; then handed out in permutation
  // order. 0: defaults (64 records, 1 MiB).
  int64_t read_ahead_records = 0;
  int64_t read_ahead_bytes = 0;
  // Read the files through read-only memory mappings, made here and kept
  // for the dataset's lifetime: no system call per record. The file's size
  // is checked once per read-ahead batch, so records lost to a truncation
  // are DataLoss (only a truncation inside that instant's window could still
  // raise SIGBUS, as with any mapping); false reads with pread instead
  // (nearby records joined into one read).
  bool use_mmap = true;
};

// The records of TFRecord files, one string scalar each (TFRecordDataset's
// elements), read at the offsets of each file's record index, so that they
// can be visited in any order. The indexes are loaded (or built) here, once:
// cardinality() is the total record count, and a file changed after this
// call reads as corrupt (DataLoss). Errors here: InvalidArgument (no files,
// compression, negative read-ahead), FailedPrecondition (kRequireFresh
// without a fresh index), those of building an index (NotFound, DataLoss
// naming file, record and offset). Errors while iterating: DataLoss for a
// record whose length or checksum does not match ("corrupted record at
// <offset> in <file> (record <i>)", payloads "file", "record", "offset"),
// I/O errors of reading; the failing record's position is then passed, so
// GetNext goes on with the next record.
Result<DatasetPtr> FromRecordFiles(std::vector<std::string> filenames, RecordFilesOptions options = {});
// The records of `record_files` (a dataset FromRecordFiles made) in the
// order of `shuffle` (replacing its options' shuffle), sharing its indexes.
// InvalidArgument for any other dataset (a transformation of it included).
Result<DatasetPtr> GlobalShuffle(const DatasetPtr& record_files, GlobalShuffleOptions shuffle);

// Where an iterator of FromRecordFiles is: the permutation's (seed, epoch)
// and the number of records it has handed out (or failed on) this epoch.
// Without a shuffle, seed and epoch are 0.
struct GlobalShufflePosition {
  uint64_t seed = 0;
  uint64_t epoch = 0;
  int64_t position = 0;
};

// The iterators of FromRecordFiles' datasets (MakeRecordFilesIterator).
class RecordFilesIterator : public IteratorBase {
 public:
  // Not thread-safe (as GetNext).
  virtual GlobalShufflePosition position() const = 0;
};

// A pass over `dataset` that tells its position (as MakeIterator(), which
// hides the type under its root iterator). Null unless `dataset` was made by
// FromRecordFiles. Thread-safe.
std::unique_ptr<RecordFilesIterator> MakeRecordFilesIterator(const DatasetPtr& dataset);
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
struct OptimizationOptions {
  // A parallel map followed by batch runs as one MapAndBatch stage
  // (nullopt: true, as TF's default).
  std::optional<bool> map_and_batch_fusion;
};
struct Options {
  // Where an op's own `deterministic` is unset (nullopt: true).
  std::optional<bool> deterministic = std::nullopt;
  AutotuneOptions autotune;
  ThreadingOptions threading;
  OptimizationOptions optimization;
  // sluice's own: the hard byte budget of the tree's buffers (see "Memory
  // budget" below; nullopt or 0: none), which AUTOTUNE also plans within
  // where autotune.ram_budget is unset; and the error policy of every
  // reader and map whose own is unset (nullopt: kFail).
  std::optional<int64_t> ram_budget = std::nullopt;
  std::optional<ErrorPolicy> error_policy = std::nullopt;
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

// ---- Map and batch in one stage (map_and_batch.cc) --------------------------------

// tf.data's map_and_batch: MapWithIndex(input, fn, out_spec, options) then
// Batch(batch_size, drop_remainder), as one stage whose workers write each
// mapped element straight into its row of the batch (the consumer is woken
// once per batch). Batch() itself makes this stage from any Map with
// num_parallel_calls whose output dtypes are known and numeric, unless
// Options' optimization.map_and_batch_fusion is false (TF's
// map_and_batch_fusion). Same elements, order and errors as map then batch,
// except that a failed element fails its whole batch and the next batch
// starts where that one would have ended (as TF's fused op does); a row whose
// shape differs from the batch's first fails the batch with TF's "Cannot add
// tensor to the batch" message. Ordered whatever options.deterministic says.
// Unset num_parallel_calls: 1. Errors: as MapWithIndex and Batch.
Result<DatasetPtr> MapAndBatch(DatasetPtr input, IndexedMapFn fn, ElementSpec out_spec, int64_t batch_size,
                               bool drop_remainder = false, MapOptions options = {});

// ---- Memory budget and error reports (memory_budget.cc, error_policy.cc) -----------

// The byte account of an iterator tree (src/data/memory_budget.h). Every
// buffer between stages (prefetch, shuffle, parallel map, parallel
// interleave's read-ahead, cache in memory, batch assembly) charges the
// tensor bytes it holds. With Options.ram_budget set, a stage that could
// do without its next element waits (shuffle samples from a smaller buffer
// instead) while the total would pass the budget less a reserve of one
// element per buffering stage (the largest each has held); a stage whose
// consumer needs its next element now never waits. So a pipeline slows
// down instead of passing the budget, never hangs, and the tracked bytes
// stay within the budget, except that an element larger than every earlier
// one of its stage may pass it by the difference (until each stage has held
// an element, the others keep to half the budget less the reserve, which
// leaves the first elements of the rest the other half). A budget smaller than the
// reserve fails the charge that shows it (at the first elements) with
// ResourceExhausted; an in-memory cache that outgrows it too.
struct MemoryStats {
  int64_t limit = 0;          // Options.ram_budget (0: none)
  int64_t bytes = 0;          // tracked now
  int64_t peak_bytes = 0;     // the most tracked at once
  int64_t reserve_bytes = 0;  // one element per buffering stage (with a limit)
  int64_t waits = 0;          // charges that waited for room
  int64_t wait_ns = 0;        // their time waiting
};
// Thread-safe, while `root` (a MakeIterator() iterator) is alive.
MemoryStats IteratorMemory(const IteratorBase& root);

// The errors an error policy (kSkip, kReplace, or ignore_errors) handled, per
// kind (stage and code), with the first kMaxErrorExamples of each.
inline constexpr size_t kMaxErrorExamples = 5;
struct ErrorExample {
  std::string file;      // the "file" payload ("" if none)
  int64_t record = -1;   // the "record" payload (-1 if none)
  int64_t offset = -1;   // the "offset" payload (-1 if none)
  int64_t element = -1;  // the "element" payload: position in the map's pass
  std::string message;
};
struct ErrorKindStats {
  std::string stage;  // "TFRecordDataset", "Map", "ParallelMap", "IgnoreErrors", ...
  Code code = Code::kUnknown;
  ErrorPolicy policy = ErrorPolicy::kSkip;
  int64_t count = 0;
  std::vector<ErrorExample> examples;
};
// In the order the kinds first happened. Thread-safe, while `root` is alive.
std::vector<ErrorKindStats> IteratorErrors(const IteratorBase& root);

// ---- tf.data API completions: Counter, Random, AssertCardinality (tfapi_datasets.cc) ----

// start, start + step, ... (tf.data.Dataset.counter): scalars of `dtype` (an
// integer or float type), for ever (kInfiniteCardinality). Thread-safe to make.
Result<DatasetPtr> Counter(int64_t start, int64_t step = 1, DType dtype = DType::kInt64);
// Random int64 scalars in [0, 2^32) for ever (tf.data.Dataset.random; not
// TF's values). Element i depends only on (seed, seed2, pass, i): the pass is
// 0 unless rerandomize_each_iteration, then the dataset's iterator count (each
// epoch under Repeat another sequence). seed == seed2 == 0: a key drawn at
// random when the dataset is made. Checkpoints save (pass, i).
Result<DatasetPtr> Random(uint64_t seed, uint64_t seed2, bool rerandomize_each_iteration);
// `input`'s elements, its cardinality declared as `expected_cardinality` (a
// count or kInfiniteCardinality; else InvalidArgument). An iteration that
// ends early, or reaches one element more, fails with FailedPrecondition in
// TF's words ("Input dataset was expected to contain 5 elements but
// contained only 3 elements.").
Result<DatasetPtr> AssertCardinality(DatasetPtr input, int64_t expected_cardinality);

// ---- Probe passes (IteratorContext::probe; src/data/generator.cc) ----------------
// A probe pass reads one element to learn a Python function's output
// signature. It must take nothing the real passes would then miss, and read
// little: shuffle, prefetch, cache, repeat, take and shard hand their input's
// elements straight through in a probe (no buffer, no thread, no cache
// file); parallel map, map_and_batch and parallel interleave run
// sequentially; filter and skip still apply. Sources that consume shared
// state either yield zeros (FromQueue) or are told the pass is a probe:

// As GeneratorFactory, called with the pass's IteratorContext::probe, so a
// generator that reads something a later pass can get again (an iterator
// object its callable hands out each time) can keep what a probe read and
// replay it first.
using ProbeAwareGeneratorFactory = std::function<Result<GeneratorFn>(bool probe)>;
// FromGenerator with a ProbeAwareGeneratorFactory (same checks and errors).
Result<DatasetPtr> FromProbeAwareGenerator(ProbeAwareGeneratorFactory factory, ElementSpec spec);

}  // namespace sluice::data

#endif  // SLUICE_DATA_DATASETS_H_
