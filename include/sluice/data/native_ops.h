// Native element ops: TF's common per-element ops as NativeMaps (map_ops.h)
// on one component of the element (the others pass through), each with the
// output signature it gives, and Compose, which fuses a chain of them into
// one map stage (TF's map_fusion):
//
//   NativeMap raw = *DecodeRawMap(spec, 0, DType::kUInt8);
//   NativeMap img = *ReshapeMap(raw.spec, 0, {32, 32, 3});
//   NativeMap f = Compose({raw, img});
//
// The random ops draw the randomness of element (epoch, index) from (seed,
// epoch, index) only, as RandomResizedCropMap does: a map is a pure function
// of the element and its index, so results do not depend on
// num_parallel_calls and checkpoints need nothing from it. TF's random
// streams are not reproduced. A component of unknown dtype (kInvalid) or
// shape is checked per element.
//
// Thread-safe: the functions keep no mutable state.
#ifndef SLUICE_DATA_NATIVE_OPS_H_
#define SLUICE_DATA_NATIVE_OPS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/data/datasets.h"
#include "sluice/data/map_ops.h"
#include "sluice/ops/array_ops.h"
#include "sluice/pipeline/producer_ops.h"

namespace sluice::data {

// Errors at build time, for every factory: InvalidArgument for a component
// out of range, or (where stated) of the wrong dtype or rank. Errors per
// element: the kernel's (sluice/ops/array_ops.h, sluice/image/*.h), naming
// the op.

// tf.io.decode_raw of string `component`: out_type [.., n] (TF's shape: the
// input's + [-1]). Build errors: a non-string component, out_type string.
Result<NativeMap> DecodeRawMap(const ElementSpec& input, size_t component, DType out_type, bool little_endian = true);
// tf.cast (ops::Cast's dtypes).
Result<NativeMap> CastMap(const ElementSpec& input, size_t component, DType dtype);
// tf.reshape (one -1 allowed).
Result<NativeMap> ReshapeMap(const ElementSpec& input, size_t component, std::vector<int64_t> shape);
// tf.strided_slice of a fixed box (ops::StridedSliceSpec); tf.slice(begin,
// size) is StridedSliceMap with end = begin + size (size -1: to the end).
Result<NativeMap> StridedSliceMap(const ElementSpec& input, size_t component, ops::StridedSliceSpec spec);
Result<NativeMap> SliceMap(const ElementSpec& input, size_t component, const std::vector<int64_t>& begin,
                           const std::vector<int64_t>& size);
// tf.transpose(x, perm).
Result<NativeMap> TransposeMap(const ElementSpec& input, size_t component, std::vector<int64_t> perm);
// tf.image.random_crop(value, size).
Result<NativeMap> RandomCropMap(const ElementSpec& input, size_t component, std::vector<int64_t> size, uint64_t seed);
// tf.image.random_flip_left_right / random_flip_up_down ([h, w, c]).
Result<NativeMap> RandomFlipLeftRightMap(const ElementSpec& input, size_t component, uint64_t seed);
Result<NativeMap> RandomFlipUpDownMap(const ElementSpec& input, size_t component, uint64_t seed);
// tf.image.random_brightness(max_delta) / random_contrast(lower, upper).
// Build errors: max_delta < 0; not 0 <= lower < upper.
Result<NativeMap> RandomBrightnessMap(const ElementSpec& input, size_t component, float max_delta, uint64_t seed);
Result<NativeMap> RandomContrastMap(const ElementSpec& input, size_t component, float lower, float upper,
                                    uint64_t seed);
// tf.image.per_image_standardization: float32 of the same shape.
Result<NativeMap> PerImageStandardizationMap(const ElementSpec& input, size_t component);
// tf.image.resize(images, [height, width]) (bilinear): float32.
Result<NativeMap> ResizeBilinearMap(const ElementSpec& input, size_t component, int64_t height, int64_t width);
// image::Normalize: (x on the [0, 1] scale - mean[c]) / stddev[c], float32.
Result<NativeMap> NormalizeMap(const ElementSpec& input, size_t component, std::vector<float> mean,
                               std::vector<float> stddev);
// x + value, x - value, value - x, x * value or x / value (TF's AddV2, Sub,
// Mul, RealDiv with a scalar constant): `value` is converted to the
// component's dtype first and each result rounded once, as TF computes.
// Build errors: an unknown op; a dtype other than float32, float64, int32 or
// int64 (int division is not offered).
enum class ScalarOp { kAdd, kSub, kReverseSub, kMul, kDiv };
Result<NativeMap> ScalarArithmeticMap(const ElementSpec& input, size_t component, ScalarOp op, double value);
// tf.one_hot(indices, depth): float32 [.., depth].
Result<NativeMap> OneHotMap(const ElementSpec& input, size_t component, int64_t depth);
// The components `components` of the element, in that order (repeats share
// the tensor): a TF graph's fan-out of one tensor into several branches.
Result<NativeMap> SelectMap(const ElementSpec& input, std::vector<size_t> components);

// One map running `maps` in order; the output signature is the last one's.
// REQUIRES: maps non-empty, each built on the previous one's spec.
NativeMap Compose(std::vector<NativeMap> maps);

// A producer stage (sluice/pipeline/producer_ops.h) running `map` on each
// element its input returns; call k of the stage is element (0, k) (counted
// across threads, as SeedStream). So TF 1 queue pipelines run the same maps.
train::TypedProducer MapNativeProducer(train::TypedProducer input, NativeMap map);

}  // namespace sluice::data

#endif  // SLUICE_DATA_NATIVE_OPS_H_
