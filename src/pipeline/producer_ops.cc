#include "sluice/pipeline/producer_ops.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/pipeline/element_ops.h"

namespace sluice::train {
namespace {

Status InvalidArgument(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

// Checks that `component` names a string scalar of `input` (the encoded
// record or image a stage reads).
Status CheckStringScalar(const TypedProducer& input, size_t component, std::string_view op) {
  if (!input.producer) return InvalidArgument(std::string(op) + ": the input producer is empty");
  return CheckStringScalar(ElementSignature{input.dtypes, input.shapes, {}}, component, op);
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
  Result<ElementSignature> sig = ParseExampleSignature(parser);
  if (!sig.ok()) return sig.status();
  TypedProducer out{nullptr, std::move(sig->dtypes), std::move(sig->shapes), std::move(sig->names)};
  const size_t num_components = out.size();
  out.producer = [in = std::move(input.producer), parser = std::move(parser), value_index,
                  num_components]() -> Result<Element> {
    RecordOriginScope origin;
    Result<Element> e = in();
    if (!e.ok()) return e.status();
    Result<Element> parsed = ParseExampleElement(parser, *e, value_index, num_components);
    if (!parsed.ok()) return origin.Annotate(parsed.status());
    return parsed;
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
    if (Status s = DecodeJpegElement(&*e, component, options); !s.ok()) return origin.Annotate(s);
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
    if (Status s = RandomResizedCropElement(&*e, component, options, shape, seeds->Next()); !s.ok()) {
      return origin.Annotate(s);
    }
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
