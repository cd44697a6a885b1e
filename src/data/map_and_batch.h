// Private to src/data: what map.cc, map_ops.cc and batch.cc share with the
// fused MapAndBatch dataset (map_and_batch.cc), which Batch() puts in place
// of a parallel map followed by batch (tf.data's map_and_batch_fusion).
#ifndef SLUICE_SRC_DATA_MAP_AND_BATCH_H_
#define SLUICE_SRC_DATA_MAP_AND_BATCH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sluice/data/datasets.h"
#include "sluice/image/random_resized_crop.h"

namespace sluice::data {

// What a parallel MapDataset is made of. `epochs` is the map's pass counter
// (lives as long as `map`), so a fused pass numbers its elements as the
// map's own iterator would.
struct ParallelMapParts {
  DatasetPtr map;  // the MapDataset itself
  DatasetPtr input;
  IndexedMapFn fn;
  MapOptions options;
  std::atomic<uint64_t>* epochs = nullptr;
};
// The parts of `ds` if it is a Map with num_parallel_calls set (map.cc).
std::optional<ParallelMapParts> AsParallelMap(const DatasetPtr& ds);

// fn(e, index), with Map's error rules: an OutOfRange becomes
// InvalidArgument, a failure gains the "element" payload and `origin`'s file
// and record (map.cc).
Result<Element> CallMapFn(const IndexedMapFn& fn, Element e, ElementIndex index, const ElementOrigin* origin);

// The fused random resized crop as a map function (RandomResizedCropMap's),
// which can also write its output straight into a row of a batch.
// Thread-safe: const.
struct RandomResizedCropFn {
  size_t component;
  image::RandomResizedCropOptions options;
  TensorShape shape;
  uint64_t seed;

  Result<Element> operator()(Element e, ElementIndex at) const;
  // Maps `e` into `row`: row[c] (a tensor of the output's dtype and shape,
  // a view into a batch) receives component c. Errors: the crop's, and
  // InvalidArgument (TF's batch message) for a passed-through component
  // whose dtype or shape differs from row[c]'s.
  Status Into(Element e, ElementIndex at, const std::vector<Tensor>& row) const;
};

// map_and_batch of the parallel map `ds`, or nullptr when `ds` is not one
// whose outputs can be written into a batch (a dtype unknown before
// iterating, or strings): Batch() then batches as usual.
// `unfused` is Batch(ds, ...) itself, which iterators use where Options set
// map_and_batch_fusion to false.
DatasetPtr FuseMapAndBatch(const DatasetPtr& unfused, const DatasetPtr& ds, int64_t batch_size, bool drop_remainder);

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_MAP_AND_BATCH_H_
