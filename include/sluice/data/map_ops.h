// Native map functions: sluice's own ops as map functions that run in C++
// worker threads (no Python, no GIL), each with the output signature it
// gives for a given input signature:
//
//   NativeMap parse = *ParseExampleMap(records->element_spec(), parser);
//   DatasetPtr examples = *MapWithIndex(records, parse.fn, parse.spec, {.num_parallel_calls = kAutotune});
//
// They are the same element-level code as the pipeline layer's producer stages
// (sluice/pipeline/element_ops.h). A component of dtype kInvalid in the input
// signature (not known before iterating) is checked per element instead.
// Thread-safe: the functions keep no mutable state.
#ifndef SLUICE_DATA_MAP_OPS_H_
#define SLUICE_DATA_MAP_OPS_H_

#include <cstddef>
#include <cstdint>

#include "sluice/data/datasets.h"
#include "sluice/image/codec.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/ops/parse_example.h"

namespace sluice::data {

struct NativeMap {
  IndexedMapFn fn;
  ElementSpec spec;  // the output signature
};

// parse_single_example of string scalar component `value_index` (the whole
// element is replaced by the features, in train::ParseExampleSignature's
// order and names). Errors at build time: InvalidArgument for a component out
// of range or not a string scalar, or an unsupported feature kind.
Result<NativeMap> ParseExampleMap(const ElementSpec& input, ops::ExampleParser parser, size_t value_index = 0);
// decode_jpeg of string scalar `component` (uint8 [h, w, c]); the others pass.
Result<NativeMap> DecodeJpegMap(const ElementSpec& input, size_t component, image::DecodeJpegOptions options = {});
// The fused random resized crop of encoded image `component`; the crop of
// element (epoch, index) draws its randomness from (seed, epoch, index) only.
Result<NativeMap> RandomResizedCropMap(const ElementSpec& input, size_t component,
                                       image::RandomResizedCropOptions options, uint64_t seed);

}  // namespace sluice::data

#endif  // SLUICE_DATA_MAP_OPS_H_
