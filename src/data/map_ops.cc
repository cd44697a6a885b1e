#include "sluice/data/map_ops.h"

#include <cstring>
#include <utility>

#include "data/dataset_util.h"
#include "data/map_and_batch.h"
#include "sluice/pipeline/element_ops.h"
#include "sluice/pipeline/producer_ops.h"

namespace sluice::data {
namespace {

Status CheckComponent(const ElementSpec& input, size_t component, std::string_view op) {
  if (component < input.size() && input.dtypes[component] == DType::kInvalid) return Status();
  return train::CheckStringScalar(train::ElementSignature{input.dtypes, input.shapes, {}}, component, op);
}

uint64_t CropSeed(uint64_t seed, ElementIndex at) {
  return train::SeedStream::SeedFor(train::SeedStream::SeedFor(seed, at.epoch), at.index);
}

}  // namespace

Result<Element> RandomResizedCropFn::operator()(Element e, ElementIndex at) const {
  SLUICE_RETURN_IF_ERROR(train::RandomResizedCropElement(&e, component, options, shape, CropSeed(seed, at)));
  return e;
}

Status RandomResizedCropFn::Into(Element e, ElementIndex at, const std::vector<Tensor>& row) const {
  if (e.size() != row.size()) return InvalidArgument("elements of a batch have different numbers of components");
  for (size_t c = 0; c < e.size(); ++c) {
    if (c == component) continue;
    if (e[c].dtype() != row[c].dtype() || e[c].dtype() == DType::kString || e[c].shape() != row[c].shape()) {
      return InvalidArgument("Cannot add tensor to the batch: number of elements does not match. Shapes are: "
                             "[tensor]: " + e[c].shape().DebugString() + ", [batch]: " + row[c].shape().DebugString());
    }
    std::memcpy(row[c].raw_data(), e[c].raw_data(), e[c].TotalBytes());
  }
  SLUICE_ASSIGN_OR_RETURN(std::string_view contents,
                          train::StringScalarOf(e, component, "map_random_resized_crop"));
  return image::DecodeRandomResizedCropInto(contents, options, CropSeed(seed, at), row[component]);
}

Result<NativeMap> ParseExampleMap(const ElementSpec& input, ops::ExampleParser parser, size_t value_index) {
  SLUICE_RETURN_IF_ERROR(CheckComponent(input, value_index, "parse_example"));
  SLUICE_ASSIGN_OR_RETURN(train::ElementSignature sig, train::ParseExampleSignature(parser));
  const size_t n = sig.size();
  NativeMap out;
  out.spec = ElementSpec{std::move(sig.dtypes), std::move(sig.shapes), std::move(sig.names)};
  out.fn = [parser = std::move(parser), value_index, n](Element e, ElementIndex) {
    return train::ParseExampleElement(parser, e, value_index, n);
  };
  return out;
}

Result<NativeMap> DecodeJpegMap(const ElementSpec& input, size_t component, image::DecodeJpegOptions options) {
  SLUICE_RETURN_IF_ERROR(CheckComponent(input, component, "decode_jpeg"));
  if (options.channels != 0 && options.channels != 1 && options.channels != 3) {
    return InvalidArgument("decode_jpeg: channels must be 0, 1 or 3, not " + std::to_string(options.channels));
  }
  NativeMap out;
  out.spec = input;
  out.spec.dtypes[component] = DType::kUInt8;
  out.spec.shapes[component] = PartialShape({-1, -1, options.channels == 0 ? -1 : options.channels});
  out.fn = [component, options](Element e, ElementIndex) -> Result<Element> {
    SLUICE_RETURN_IF_ERROR(train::DecodeJpegElement(&e, component, options));
    return e;
  };
  return out;
}

Result<NativeMap> RandomResizedCropMap(const ElementSpec& input, size_t component,
                                       image::RandomResizedCropOptions options, uint64_t seed) {
  SLUICE_RETURN_IF_ERROR(CheckComponent(input, component, "random_resized_crop"));
  SLUICE_ASSIGN_OR_RETURN(TensorShape shape, image::RandomResizedCropShape(options));
  NativeMap out;
  out.spec = input;
  out.spec.dtypes[component] = DType::kFloat32;
  out.spec.shapes[component] = PartialShape(shape);
  out.fn = RandomResizedCropFn{component, options, shape, seed};
  return out;
}

}  // namespace sluice::data
