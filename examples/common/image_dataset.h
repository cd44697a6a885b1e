// The Dataset form of the image training pipeline's stages after the
// records, shared by examples/data_image_pipeline.cc,
// examples/distribute_image_pipeline.cc and bench/checkpoint_benchmark.cc:
//
//   records -> Map(parse_example {image, label, id}) -> Map(random resized
//   crop + flip + ImageNet normalise, CHW) -> [Batch(B)] -> [Prefetch(P)]
//
// Each caller builds its own record source (TFRecordDataset, Shuffle,
// Repeat, ShardedRecordFiles) and hands it in. A plain function, no state.
#ifndef SLUICE_EXAMPLES_COMMON_IMAGE_DATASET_H_
#define SLUICE_EXAMPLES_COMMON_IMAGE_DATASET_H_

#include <cstdint>
#include <utility>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/data/datasets.h"
#include "sluice/data/map_ops.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/ops/feature_spec.h"
#include "sluice/ops/parse_example.h"

namespace sluice_examples {

struct ImageDatasetOptions {
  int64_t size = 224;            // the crops' height and width
  sluice::data::MapOptions map;  // of both maps (default: sequential)
  int64_t batch = 0;             // 0: no Batch
  int64_t prefetch = 0;          // 0: no Prefetch
  uint64_t crop_seed = 1;
};

// The pipeline over `records` (serialized Examples {image: JPEG, label, id});
// its elements are {id, image, label} (the parsed features' sorted order),
// batched when options.batch > 0. Errors: those of the datasets it makes.
inline sluice::Result<sluice::data::DatasetPtr> ImageDataset(sluice::data::DatasetPtr records,
                                                             const ImageDatasetOptions& options) {
  namespace data = sluice::data;
  namespace ops = sluice::ops;
  using sluice::DType;
  using sluice::TensorShape;
  ops::FeatureSpec spec;
  spec["image"] = ops::FixedLenFeature(TensorShape({}), DType::kString);
  spec["label"] = ops::FixedLenFeature(TensorShape({}), DType::kInt64);
  spec["id"] = ops::FixedLenFeature(TensorShape({}), DType::kInt64);
  SLUICE_ASSIGN_OR_RETURN(ops::ExampleParser parser, ops::ExampleParser::Create(spec));
  sluice::image::RandomResizedCropOptions crop;  // torchvision's RandomResizedCrop + flip + ImageNet Normalize, CHW
  crop.height = options.size;
  crop.width = options.size;

  data::DatasetPtr ds = std::move(records);
  SLUICE_ASSIGN_OR_RETURN(data::NativeMap parse, data::ParseExampleMap(ds->element_spec(), parser));
  SLUICE_ASSIGN_OR_RETURN(ds, data::MapWithIndex(ds, parse.fn, parse.spec, options.map));  // {id, image, label}
  SLUICE_ASSIGN_OR_RETURN(data::NativeMap crops,
                          data::RandomResizedCropMap(ds->element_spec(), 1, crop, options.crop_seed));
  SLUICE_ASSIGN_OR_RETURN(ds, data::MapWithIndex(ds, crops.fn, crops.spec, options.map));
  if (options.batch > 0) {
    SLUICE_ASSIGN_OR_RETURN(ds, data::Batch(ds, options.batch));
  }
  if (options.prefetch > 0) return data::Prefetch(ds, options.prefetch);
  return ds;
}

}  // namespace sluice_examples

#endif  // SLUICE_EXAMPLES_COMMON_IMAGE_DATASET_H_
