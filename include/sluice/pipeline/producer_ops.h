// Native producer stages: Producer -> Producer transforms that run entirely in
// C++, on the threads of the batcher that calls the final producer. They are
// what TensorFlow builds as the graph between `reader.read()` and
// `shuffle_batch` (parse_single_example, decode_jpeg, the random crop and
// flip of an ImageNet pipeline), as composable functions:
//
//   TypedProducer read{ReaderProducer(reader, files), ...};   // {key, value}
//   auto parsed = MapParseExample(read, parser, 1);            // {image, label}
//   auto crops  = MapRandomResizedCrop(*parsed, 0, options, seed);
//   ShuffleBatch(crops->producer, {.dtypes = crops->dtypes, .shapes = ...});
//
// A TypedProducer is a Producer with its output signature (each component's
// dtype and shape, and optionally its name), which a batcher needs declared
// and which each stage computes from its input's, so that a mismatch (a
// component index out of range, a non-string component given to a decoder)
// is an InvalidArgument when the pipeline is built, not a failure on a runner
// thread later.
//
// Each stage calls its input once per call and transforms that one element;
// the input's errors (OutOfRange at the end of the input included) pass
// through unchanged. A stage's own errors (a corrupt record or image) are
// InvalidArgument, which stops the pipeline through the batcher's
// Coordinator, as a failing op in TF's graph does. When the record came from
// a ReaderProducer upstream, such an error names it (RecordOriginScope in
// producer.h): " (record <key> of <reader>)" ends the message, and the
// payloads "file" and "key" hold the file and the reader's key.
//
// Thread-safety: the stages keep no state but a seed counter (an atomic), so a
// stage is as thread-safe as its input: the input producers of producer.h and
// input_producers.h are, so the whole chain may be called by several runner
// threads at once (Batch/ShuffleBatch with num_threads > 1). Ownership: a
// stage's producer shares its input producer and whatever it was built with
// (the parser's plan, the options); building one runs nothing.
#ifndef SLUICE_PIPELINE_PRODUCER_OPS_H_
#define SLUICE_PIPELINE_PRODUCER_OPS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"
#include "sluice/image/codec.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/ops/parse_example.h"
#include "sluice/train/producer.h"

namespace sluice::train {

// A producer and its output signature: dtypes[i] and shapes[i] describe
// component i of every element it returns (for a producer of batches, for
// enqueue_many batchers, with the leading batch dimension, -1). names is
// empty or has one entry per component. A plain value; copies share the
// producer.
struct TypedProducer {
  Producer producer;
  std::vector<DType> dtypes;
  std::vector<PartialShape> shapes;
  std::vector<std::string> names;

  size_t size() const { return dtypes.size(); }
};

// The seeds of a randomised stage: call k (k = 0, 1, ..., counted across every
// thread by one atomic counter) gets SeedFor(seed, k), a pure function of the
// two (a SplitMix64-style mix). So a run is reproducible per (seed, call
// index) whichever thread makes the call; which element gets call index k
// depends on the order in which runner threads reach the stage, so with one
// runner thread a whole run is reproducible, with several it is not (as TF's
// stateful random ops under several QueueRunner threads). Thread-safe.
class SeedStream {
 public:
  explicit SeedStream(uint64_t seed) : seed_(seed) {}
  SeedStream(const SeedStream&) = delete;
  SeedStream& operator=(const SeedStream&) = delete;

  // The seed of the next call index. Thread-safe, lock-free.
  uint64_t Next() { return SeedFor(seed_, counter_.fetch_add(1, std::memory_order_relaxed)); }
  // Call indices handed out so far.
  uint64_t calls() const { return counter_.load(std::memory_order_relaxed); }
  uint64_t seed() const { return seed_; }

  // The seed of call `index`. Distinct indices give well-mixed, (almost
  // surely) distinct seeds.
  static uint64_t SeedFor(uint64_t seed, uint64_t index);

 private:
  const uint64_t seed_;
  std::atomic<uint64_t> counter_{0};
};

// parse_single_example of the string scalar component `value_index` of each
// input element (usually a reader's value, index 1). The parsed features
// replace the whole element (the other components, e.g. the reader's key, are
// dropped), in the order of the parser's FeatureSpec (keys sorted bytewise,
// which is TF's dict order for these keys):
//   - a FixedLenFeature is one component: its dtype, its shape; name = key;
//   - a VarLenFeature or SparseFeature is three components, TF's
//     SparseTensor: "<key>/indices" int64 [-1, rank], "<key>/values" dtype
//     [-1], "<key>/dense_shape" int64 [rank] (rank 1 for VarLenFeature);
//     their shapes are not fully defined, so they batch only with
//     BatchOptions::dynamic_pad (not with the shuffle batchers).
// Bytes values are copied into their tensors (the element owns them).
// Errors at build time (InvalidArgument): value_index out of range or not a
// kString component of fully defined rank-0 shape; a RaggedFeature or
// FixedLenSequenceFeature in the spec. Per call: the input's errors;
// ExampleParser::ParseSingle's (InvalidArgument naming the feature).
Result<TypedProducer> MapParseExample(TypedProducer input, ops::ExampleParser parser, size_t value_index);

// tf.io.decode_jpeg (JPEG or PNG, as TF 2) of the string scalar component
// `component`, replacing it with a uint8 [height, width, channels] image;
// other components pass through. The output shape is [-1, -1, channels]
// (channels -1 when options.channels is 0: the file's own).
// Errors at build time (InvalidArgument): component out of range or not a
// kString scalar; options.channels not 0, 1 or 3 (this stage decodes to 1 or
// 3 channels); ratio not 1, 2, 4 or 8. Per call: the input's; DecodeJpeg's.
Result<TypedProducer> MapDecodeJpeg(TypedProducer input, size_t component, image::DecodeJpegOptions options = {});

// The fused training augmentation (random_resized_crop.h) of the encoded
// image (string scalar) component `component`: a random box decoded with
// decode_and_crop, resized to options.height x options.width, mirrored with
// options.flip_probability and normalised; the float32 result
// (RandomResizedCropShape(options): [c, h, w] or [h, w, c]) replaces the
// component, the others pass through. The randomness of call k is
// SeedStream::SeedFor(seed, k) (see SeedStream).
// Errors at build time (InvalidArgument): component out of range or not a
// kString scalar; the options' (RandomResizedCropShape). Per call: the
// input's; DecodeRandomResizedCrop's (a corrupt image).
Result<TypedProducer> MapRandomResizedCrop(TypedProducer input, size_t component,
                                           image::RandomResizedCropOptions options, uint64_t seed);

// The components `components` of each element, in that order (a component may
// be repeated: tensors are shared, not copied). Errors at build time
// (InvalidArgument): an empty list or an index out of range.
Result<TypedProducer> MapSelect(TypedProducer input, std::vector<size_t> components);
// As above, by name. InvalidArgument for a name that no component has (or an
// input without names).
Result<TypedProducer> MapSelect(TypedProducer input, const std::vector<std::string>& names);

}  // namespace sluice::train

#endif  // SLUICE_PIPELINE_PRODUCER_OPS_H_
