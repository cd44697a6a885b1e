#include "sluice/train/producer_ops.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/composite_tensor.h"
#include "sluice/ops/feature_spec.h"

namespace sluice::train {
namespace {

Status InvalidArgument(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

// Checks that `component` names a string scalar of `input` (the encoded
// record or image a stage reads).
Status CheckStringScalar(const TypedProducer& input, size_t component, std::string_view op) {
  if (!input.producer) return InvalidArgument(std::string(op) + ": the input producer is empty");
  if (component >= input.size()) {
    return InvalidArgument(std::string(op) + ": component " + std::to_string(component) +
                           " is out of range (the input has " + std::to_string(input.size()) + " components)");
  }
  const PartialShape& shape = input.shapes[component];
  if (input.dtypes[component] != DType::kString || !shape.rank_known() || shape.rank() != 0) {
    return InvalidArgument(std::string(op) + ": component " + std::to_string(component) +
                           " must be a string scalar, not " + std::string(DTypeName(input.dtypes[component])) + " " +
                           shape.DebugString());
  }
  return Status();
}

// The string scalar `component` of an element produced by a checked input.
Result<std::string_view> StringScalarOf(const Element& e, size_t component, std::string_view op) {
  if (component >= e.size() || e[component].dtype() != DType::kString || e[component].num_elements() != 1) {
    return Status(Code::kInvalidArgument,
                  std::string(op) + ": expected a string scalar at component " + std::to_string(component));
  }
  return std::string_view(e[component].scalar<std::string>());
}

// Appends the signature of one parsed feature to *out.
Status AppendFeatureSignature(const std::string& key, const ops::FeatureConfig& config, TypedProducer* out) {
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

uint64_t SeedStream::SeedFor(uint64_t seed, uint64_t index) {
  // SplitMix64's finaliser over the seed, then over the index offset by the
  // mixed seed: two streams with different seeds do not share a sequence
  // shifted by a few indices.
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const uint64_t s = mix(seed + 0x9E3779B97F4A7C15ull);
  return mix(s ^ ((index + 1) * 0x9E3779B97F4A7C15ull));
}

Result<TypedProducer> MapParseExample(TypedProducer input, ops::ExampleParser parser, size_t value_index) {
  if (Status s = CheckStringScalar(input, value_index, "map_parse_example"); !s.ok()) return s;
  TypedProducer out;
  for (const auto& [key, config] : parser.features()) {
    if (Status s = AppendFeatureSignature(key, config, &out); !s.ok()) return s;
  }
  const size_t num_components = out.size();
  out.producer = [in = std::move(input.producer), parser = std::move(parser), value_index,
                  num_components]() -> Result<Element> {
    RecordOriginScope origin;
    Result<Element> e = in();
    if (!e.ok()) return e.status();
    Result<std::string_view> record = StringScalarOf(*e, value_index, "map_parse_example");
    if (!record.ok()) return record.status();
    Result<ops::ParsedFeatures> parsed = parser.ParseSingle(*record);
    if (!parsed.ok()) return origin.Annotate(parsed.status());
    return FlattenFeatures(std::move(*parsed), num_components);
  };
  return out;
}

Result<TypedProducer> MapDecodeJpeg(TypedProducer input, size_t component, image::DecodeJpegOptions options) {
  if (Status s = CheckStringScalar(input, component, "map_decode_jpeg"); !s.ok()) return s;
  if (options.channels != 0 && options.channels != 1 && options.channels != 3) {
    return InvalidArgument("map_decode_jpeg: channels must be 0, 1 or 3, not " + std::to_string(options.channels));
  }
  if (options.ratio != 1 && options.ratio != 2 && options.ratio != 4 && options.ratio != 8) {
    return InvalidArgument("map_decode_jpeg: ratio must be 1, 2, 4 or 8, not " + std::to_string(options.ratio));
  }
  TypedProducer out = input;
  out.dtypes[component] = DType::kUInt8;
  out.shapes[component] = PartialShape({-1, -1, options.channels == 0 ? -1 : options.channels});
  out.producer = [in = std::move(input.producer), component, options = std::move(options)]() -> Result<Element> {
    RecordOriginScope origin;
    Result<Element> e = in();
    if (!e.ok()) return e.status();
    Result<std::string_view> contents = StringScalarOf(*e, component, "map_decode_jpeg");
    if (!contents.ok()) return contents.status();
    Result<Tensor> decoded = image::DecodeJpeg(*contents, options);
    if (!decoded.ok()) return origin.Annotate(decoded.status());
    (*e)[component] = std::move(*decoded);
    return e;
  };
  return out;
}

Result<TypedProducer> MapRandomResizedCrop(TypedProducer input, size_t component,
                                           image::RandomResizedCropOptions options, uint64_t seed) {
  if (Status s = CheckStringScalar(input, component, "map_random_resized_crop"); !s.ok()) return s;
  Result<TensorShape> shape = image::RandomResizedCropShape(options);
  if (!shape.ok()) return shape.status();
  TypedProducer out = input;
  out.dtypes[component] = DType::kFloat32;
  out.shapes[component] = PartialShape(*shape);
  auto seeds = std::make_shared<SeedStream>(seed);
  out.producer = [in = std::move(input.producer), component, options = std::move(options), shape = *shape,
                  seeds]() -> Result<Element> {
    RecordOriginScope origin;
    Result<Element> e = in();
    if (!e.ok()) return e.status();
    Result<std::string_view> contents = StringScalarOf(*e, component, "map_random_resized_crop");
    if (!contents.ok()) return contents.status();
    Tensor crop(DType::kFloat32, shape);
    if (Status s = image::DecodeRandomResizedCropInto(*contents, options, seeds->Next(), crop); !s.ok()) {
      return origin.Annotate(s);
    }
    (*e)[component] = std::move(crop);
    return e;
  };
  return out;
}

Result<TypedProducer> MapSelect(TypedProducer input, std::vector<size_t> components) {
  if (!input.producer) return InvalidArgument("map_select: the input producer is empty");
  if (components.empty()) return InvalidArgument("map_select: at least one component is required");
  TypedProducer out;
  for (size_t c : components) {
    if (c >= input.size()) {
      return InvalidArgument("map_select: component " + std::to_string(c) + " is out of range (the input has " +
                             std::to_string(input.size()) + " components)");
    }
    out.dtypes.push_back(input.dtypes[c]);
    out.shapes.push_back(input.shapes[c]);
    if (!input.names.empty()) out.names.push_back(input.names[c]);
  }
  out.producer = [in = std::move(input.producer), components = std::move(components)]() -> Result<Element> {
    Result<Element> e = in();
    if (!e.ok()) return e.status();
    std::vector<Tensor> selected;
    selected.reserve(components.size());
    for (size_t c : components) {
      if (c >= e->size()) return InvalidArgument("map_select: the input returned too few components");
      selected.push_back((*e)[c]);
    }
    return Element(std::move(selected));
  };
  return out;
}

Result<TypedProducer> MapSelect(TypedProducer input, const std::vector<std::string>& names) {
  std::vector<size_t> indices;
  for (const std::string& name : names) {
    size_t i = 0;
    while (i < input.names.size() && input.names[i] != name) ++i;
    if (i == input.names.size()) return InvalidArgument("map_select: no component is named '" + name + "'");
    indices.push_back(i);
  }
  return MapSelect(std::move(input), std::move(indices));
}

}  // namespace sluice::train
