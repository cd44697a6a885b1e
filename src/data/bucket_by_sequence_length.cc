// BucketBySequenceLength: GroupByWindow keyed by length bucket, each window
// (padded-)batched, as TF's Python builds it.
#include <cstdint>
#include <limits>
#include <utility>

#include "data/dataset_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// The first bucket i with lower[i] <= length < upper[i] (TF: reduce_min of the
// matches), lower = [int32 min] + boundaries, upper = boundaries + [int32 max].
Result<int64_t> BucketOf(int64_t length, const std::vector<int64_t>& boundaries) {
  for (size_t i = 0; i <= boundaries.size(); ++i) {
    const int64_t lo = i == 0 ? std::numeric_limits<int32_t>::min() : boundaries[i - 1];
    const int64_t hi = i == boundaries.size() ? std::numeric_limits<int32_t>::max() : boundaries[i];
    if (lo <= length && length < hi) return static_cast<int64_t>(i);
  }
  return InvalidArgument("element length " + std::to_string(length) + " fits no bucket");
}

// Unknown dims (or all, with no padded_shapes) as `filler` (-1: the batch's longest).
std::vector<PartialShape> PaddedShapes(const ElementSpec& spec, const std::vector<PartialShape>& given,
                                       int64_t filler) {
  std::vector<PartialShape> out = given.empty() ? spec.shapes : given;
  for (PartialShape& shape : out) {
    if (!shape.rank_known()) continue;
    std::vector<int64_t> dims = shape.dims();
    for (int64_t& d : dims) d = d < 0 ? filler : d;
    shape = PartialShape(std::move(dims));
  }
  return out;
}

}  // namespace

Result<DatasetPtr> BucketBySequenceLength(DatasetPtr input, ElementLengthFn length_fn,
                                          std::vector<int64_t> bucket_boundaries,
                                          std::vector<int64_t> bucket_batch_sizes, BucketOptions options) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "bucket_by_sequence_length"));
  if (bucket_batch_sizes.size() != bucket_boundaries.size() + 1) {
    return InvalidArgument("`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                           "`len(bucket_batch_sizes)=" + std::to_string(bucket_batch_sizes.size()) +
                           "` and `len(bucket_boundaries)=" + std::to_string(bucket_boundaries.size()) + "`.");
  }
  if (!length_fn) return InvalidArgument("bucket_by_sequence_length: element_length_func is empty");
  KeyFn key = [length_fn, bucket_boundaries](const Element& e) -> Result<int64_t> {
    SLUICE_ASSIGN_OR_RETURN(int64_t length, length_fn(e));
    return BucketOf(length, bucket_boundaries);
  };
  WindowSizeFn size = [bucket_batch_sizes](int64_t bucket) -> Result<int64_t> {
    return bucket_batch_sizes[static_cast<size_t>(bucket)];
  };
  const ElementSpec spec = input->element_spec();
  ReduceFn reduce = [bucket_boundaries, bucket_batch_sizes, options, spec](int64_t bucket,
                                                                           DatasetPtr window) -> Result<DatasetPtr> {
    const int64_t batch_size = bucket_batch_sizes[static_cast<size_t>(bucket)];
    if (options.no_padding) return Batch(std::move(window), batch_size, options.drop_remainder);
    int64_t filler = -1;
    if (options.pad_to_bucket_boundary) {
      if (bucket >= static_cast<int64_t>(bucket_boundaries.size())) {
        return InvalidArgument("When pad_to_bucket_boundary=True, elements must have length < "
                               "max(bucket_boundaries).");
      }
      filler = bucket_boundaries[static_cast<size_t>(bucket)] - 1;
    }
    return PaddedBatch(std::move(window), batch_size, PaddedShapes(spec, options.padded_shapes, filler),
                       options.padding_values, options.drop_remainder);
  };
  // The output signature: a padded batch of the input's.
  SLUICE_ASSIGN_OR_RETURN(DatasetPtr probe, FromElements(std::make_shared<std::vector<Element>>(), spec));
  SLUICE_ASSIGN_OR_RETURN(DatasetPtr batched, options.no_padding ? Batch(probe, 1, options.drop_remainder)
                                                                 : PaddedBatch(probe, 1, options.padded_shapes,
                                                                               options.padding_values,
                                                                               options.drop_remainder));
  ElementSpec out_spec = batched->element_spec();
  if (options.drop_remainder) {
    for (PartialShape& shape : out_spec.shapes) {
      if (!shape.rank_known()) continue;
      std::vector<int64_t> dims = shape.dims();
      dims[0] = -1;  // the batch size depends on the bucket
      shape = PartialShape(std::move(dims));
    }
  }
  return GroupByWindow(std::move(input), std::move(key), std::move(reduce), std::move(size), std::move(out_spec));
}

}  // namespace sluice::data
