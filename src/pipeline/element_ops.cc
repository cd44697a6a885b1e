#include "sluice/pipeline/element_ops.h"

#include <utility>
#include <variant>

#include "sluice/core/tensor.h"
#include "sluice/ops/composite_tensor.h"
#include "sluice/ops/feature_spec.h"

namespace sluice::train {
namespace {

Status InvalidArgument(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

// Appends the signature of one parsed feature to *out.
Status AppendFeatureSignature(const std::string& key, const ops::FeatureConfig& config, ElementSignature* out) {
  auto add = [out](DType dtype, PartialShape shape, std::string name) {
    out->dtypes.push_back(dtype);
    out->shapes.push_back(std::move(shape));
    out->names.push_back(std::move(name));
  };
  auto add_sparse = [&](DType dtype, int64_t rank) {
    add(DType::kInt64, PartialShape({-1, rank}), key + "/indices");
    add(dtype, PartialShape({-1}), key + "/values");
    add(DType::kInt64, PartialShape({rank}), key + "/dense_shape");
  };
  if (const auto* fixed = std::get_if<ops::FixedLenFeature>(&config)) {
    add(fixed->dtype, PartialShape(fixed->shape), key);
  } else if (const auto* var = std::get_if<ops::VarLenFeature>(&config)) {
    add_sparse(var->dtype, 1);
  } else if (const auto* sparse = std::get_if<ops::SparseFeature>(&config)) {
    add_sparse(sparse->dtype, static_cast<int64_t>(sparse->index_key.size()));
  } else {
    return InvalidArgument("map_parse_example supports FixedLenFeature, VarLenFeature and SparseFeature; '" + key +
                           "' is another kind");
  }
  return Status();
}

// The components of parsed features, in the spec's (sorted) order.
Element FlattenFeatures(ops::ParsedFeatures&& parsed, size_t num_components) {
  std::vector<Tensor> components;
  components.reserve(num_components);
  for (auto& [name, value] : parsed) {
    if (auto* dense = std::get_if<Tensor>(&value)) {
      components.push_back(std::move(*dense));
    } else if (auto* sparse = std::get_if<ops::SparseTensor>(&value)) {
      components.push_back(std::move(sparse->indices));
      components.push_back(std::move(sparse->values));
      components.push_back(std::move(sparse->dense_shape));
    }
  }
  return Element(std::move(components));
}

}  // namespace

Status CheckStringScalar(const ElementSignature& sig, size_t component, std::string_view op) {
  if (component >= sig.size()) {
    return InvalidArgument(std::string(op) + ": component " + std::to_string(component) +
                           " is out of range (the input has " + std::to_string(sig.size()) + " components)");
  }
  const PartialShape& shape = sig.shapes[component];
  const DType dtype = sig.dtypes[component];
  if (dtype != DType::kString || !shape.rank_known() || shape.rank() != 0) {
    return InvalidArgument(std::string(op) + ": component " + std::to_string(component) +
                           " must be a string scalar, not " + std::string(DTypeName(dtype)) + " " +
                           shape.DebugString());
  }
  return Status();
}

Result<std::string_view> StringScalarOf(const Element& e, size_t component, std::string_view op) {
  if (component >= e.size() || e[component].dtype() != DType::kString || e[component].num_elements() != 1) {
    return Status(Code::kInvalidArgument,
                  std::string(op) + ": expected a string scalar at component " + std::to_string(component));
  }
  return std::string_view(e[component].scalar<std::string>());
}

Result<ElementSignature> ParseExampleSignature(const ops::ExampleParser& parser) {
  ElementSignature out;
  for (const auto& [key, config] : parser.features()) {
    SLUICE_RETURN_IF_ERROR(AppendFeatureSignature(key, config, &out));
  }
  return out;
}

Result<Element> ParseExampleElement(const ops::ExampleParser& parser, const Element& e, size_t value_index,
                                    size_t num_components) {
  SLUICE_ASSIGN_OR_RETURN(std::string_view record, StringScalarOf(e, value_index, "map_parse_example"));
  SLUICE_ASSIGN_OR_RETURN(ops::ParsedFeatures parsed, parser.ParseSingle(record));
  return FlattenFeatures(std::move(parsed), num_components);
}

Status DecodeJpegElement(Element* e, size_t component, const image::DecodeJpegOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::string_view contents, StringScalarOf(*e, component, "map_decode_jpeg"));
  SLUICE_ASSIGN_OR_RETURN(Tensor decoded, image::DecodeJpeg(contents, options));
  (*e)[component] = std::move(decoded);
  return Status();
}

Status RandomResizedCropElement(Element* e, size_t component, const image::RandomResizedCropOptions& options,
                                const TensorShape& shape, uint64_t seed) {
  SLUICE_ASSIGN_OR_RETURN(std::string_view contents, StringScalarOf(*e, component, "map_random_resized_crop"));
  Tensor crop(DType::kFloat32, shape);
  SLUICE_RETURN_IF_ERROR(image::DecodeRandomResizedCropInto(contents, options, seed, crop));
  (*e)[component] = std::move(crop);
  return Status();
}

}  // namespace sluice::train
