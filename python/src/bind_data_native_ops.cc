// A chain of native element ops, described in Python as a list of steps
// (name, component, {argument: value}) (sluice/_data_native_ops.py), built
// into one fused NativeMap on the input's signature: a Dataset map stage, or
// a producer stage for the TF 1 batchers (sluice.compat.v1).
#include "bind_data_native_ops.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bind_data.h"
#include "sluice/data/file_ops.h"
#include "sluice/data/native_ops.h"
#include "sluice/pipeline/producer_ops.h"

namespace sluice::python {
namespace {

// Argument `key` of a step's dict as T, or `fallback` when absent or None.
template <class T>
T Arg(const nb::dict& args, const char* key, T fallback) {
  if (!args.contains(key)) return fallback;
  nb::handle v = args[key];
  return v.is_none() ? fallback : nb::cast<T>(v);
}

Result<data::NativeMap> BuildStep(const data::ElementSpec& spec, const std::string& name, size_t c,
                                  const nb::dict& args) {
  using V = std::vector<int64_t>;
  const uint64_t seed = Arg<uint64_t>(args, "seed", 0);
  if (name == "decode_raw") {
    return data::DecodeRawMap(spec, c, static_cast<DType>(Arg<int>(args, "out_type", 0)),
                              Arg<bool>(args, "little_endian", true));
  }
  if (name == "cast") return data::CastMap(spec, c, static_cast<DType>(Arg<int>(args, "dtype", 0)));
  if (name == "reshape") return data::ReshapeMap(spec, c, Arg<V>(args, "shape", {}));
  if (name == "strided_slice") {
    ops::StridedSliceSpec s;
    s.begin = Arg<V>(args, "begin", {});
    s.end = Arg<V>(args, "end", {});
    s.strides = Arg<V>(args, "strides", {});
    s.begin_mask = Arg<int64_t>(args, "begin_mask", 0);
    s.end_mask = Arg<int64_t>(args, "end_mask", 0);
    s.shrink_axis_mask = Arg<int64_t>(args, "shrink_axis_mask", 0);
    return data::StridedSliceMap(spec, c, std::move(s));
  }
  if (name == "slice") return data::SliceMap(spec, c, Arg<V>(args, "begin", {}), Arg<V>(args, "size", {}));
  if (name == "transpose") return data::TransposeMap(spec, c, Arg<V>(args, "perm", {}));
  if (name == "random_crop") return data::RandomCropMap(spec, c, Arg<V>(args, "size", {}), seed);
  if (name == "random_flip_left_right") return data::RandomFlipLeftRightMap(spec, c, seed);
  if (name == "random_flip_up_down") return data::RandomFlipUpDownMap(spec, c, seed);
  if (name == "random_brightness") {
    return data::RandomBrightnessMap(spec, c, Arg<float>(args, "max_delta", 0.0f), seed);
  }
  if (name == "random_contrast") {
    return data::RandomContrastMap(spec, c, Arg<float>(args, "lower", 0.0f), Arg<float>(args, "upper", 0.0f), seed);
  }
  if (name == "per_image_standardization") return data::PerImageStandardizationMap(spec, c);
  if (name == "resize") {
    return data::ResizeBilinearMap(spec, c, Arg<int64_t>(args, "height", 0), Arg<int64_t>(args, "width", 0));
  }
  if (name == "normalize") {
    return data::NormalizeMap(spec, c, Arg<std::vector<float>>(args, "mean", {}),
                              Arg<std::vector<float>>(args, "std", {}));
  }
  if (name == "add" || name == "sub" || name == "rsub" || name == "mul" || name == "div") {
    const data::ScalarOp op = name == "add"   ? data::ScalarOp::kAdd
                              : name == "sub" ? data::ScalarOp::kSub
                              : name == "rsub" ? data::ScalarOp::kReverseSub
                              : name == "mul" ? data::ScalarOp::kMul
                                              : data::ScalarOp::kDiv;
    return data::ScalarArithmeticMap(spec, c, op, Arg<double>(args, "value", 0.0));
  }
  if (name == "one_hot") return data::OneHotMap(spec, c, Arg<int64_t>(args, "depth", 0));
  if (name == "read_file") return data::ReadFileMap(spec, c);
  if (name == "select") return data::SelectMap(spec, Arg<std::vector<size_t>>(args, "components", {}));
  return errors::InvalidArgument("no native op named '", name, "'");
}

// The steps, each built on the previous one's signature, fused into one map.
data::NativeMap BuildChain(data::ElementSpec spec, const nb::list& steps) {
  std::vector<data::NativeMap> maps;
  for (nb::handle step : steps) {
    nb::tuple t = nb::cast<nb::tuple>(step);
    data::NativeMap m = ValueOrThrow(BuildStep(spec, nb::cast<std::string>(t[0]), nb::cast<size_t>(t[1]),
                                               nb::cast<nb::dict>(t[2])));
    spec = m.spec;
    maps.push_back(std::move(m));
  }
  if (maps.empty()) throw nb::value_error("a native chain needs at least one op");
  return data::Compose(std::move(maps));
}

}  // namespace

void BindDataNativeOps(nb::module_& d) {
  // steps: [(name, component, {argument: value})], applied in order.
  d.def("map_native_chain", [](const DataDatasetHandle& in, const nb::list& steps, nb::handle npc_obj,
                               std::optional<bool> deterministic) {
    data::NativeMap m = BuildChain(in.ds->element_spec(), steps);
    return Wrap(data::MapWithIndex(in.ds, std::move(m.fn), std::move(m.spec),
                                   data::MapOptions{.num_parallel_calls = OptInt(npc_obj),
                                                    .deterministic = deterministic}));
  }, nb::arg("dataset"), nb::arg("steps"), nb::arg("num_parallel_calls").none(), nb::arg("deterministic").none());
  d.def("producer_native_chain", [](const train::TypedProducer& in, const nb::list& steps) {
    data::NativeMap m = BuildChain(data::ElementSpec{in.dtypes, in.shapes, in.names}, steps);
    return data::MapNativeProducer(in, std::move(m));
  }, nb::arg("producer"), nb::arg("steps"));
}

}  // namespace sluice::python
