// _core.RandomResizedCropOptions: image::RandomResizedCropOptions bound once,
// filled by keyword, its defaults those of the C++ struct (one declaration:
// include/sluice/image/random_resized_crop.h). The Python front ends
// (python/sluice/_crop_options.py) pass only the options their caller gave;
// the image op, the train producer and the data map all take the object.
//
// Thread-safety: a bound options object is a value; Python code builds it
// with the GIL held, and the stages copy it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bind_common.h"
#include "sluice/image/normalize.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/image/resize.h"

namespace sluice::python {
namespace {

namespace img = ::sluice::image;
using Pair = std::pair<double, double>;

std::string DataFormatName(img::DataFormat f) { return f == img::DataFormat::kCHW ? "CHW" : "HWC"; }
std::string SamplerName(img::CropSampler s) {
  return s == img::CropSampler::kTensorFlow ? "tensorflow" : "torchvision";
}

img::DataFormat DataFormatOf(const std::string& name) {
  if (name == "CHW" || name == "NCHW") return img::DataFormat::kCHW;
  if (name == "HWC" || name == "NHWC") return img::DataFormat::kHWC;
  throw nb::value_error(("data_format must be 'CHW' or 'HWC', not '" + name + "'").c_str());
}

img::CropSampler SamplerOf(const std::string& name) {
  if (name == "torchvision") return img::CropSampler::kTorchvision;
  if (name == "tensorflow") return img::CropSampler::kTensorFlow;
  throw nb::value_error(("sampler must be 'torchvision' or 'tensorflow', not '" + name + "'").c_str());
}

img::ResizeMethod MethodOf(const std::string& name) {
  std::optional<img::ResizeMethod> m = img::ResizeMethodFromName(name);
  if (!m) throw nb::value_error(("Resize method is not implemented: " + name).c_str());
  return *m;
}

// The one conversion of the options from Python: the names become enums
// (ValueError for an unknown one); ranges are checked by the C++ ops.
void Init(img::RandomResizedCropOptions* self, int64_t height, int64_t width, Pair scale, Pair ratio,
          float flip_probability, std::vector<float> mean, std::vector<float> std, const std::string& data_format,
          const std::string& sampler, const std::string& method, bool antialias, int channels, int32_t max_attempts,
          bool dct_scaling, std::string dct_method) {
  img::RandomResizedCropOptions o;
  o.height = height;
  o.width = width;
  o.scale = {scale.first, scale.second};
  o.ratio = {ratio.first, ratio.second};
  o.flip_probability = flip_probability;
  o.normalize.mean = std::move(mean);
  o.normalize.stddev = std::move(std);
  o.normalize.data_format = DataFormatOf(data_format);
  o.sampler = SamplerOf(sampler);
  o.method = MethodOf(method);
  o.antialias = antialias;
  o.channels = channels;
  o.max_attempts = max_attempts;
  o.dct_scaling = dct_scaling;
  o.dct_method = std::move(dct_method);
  new (self) img::RandomResizedCropOptions(std::move(o));
}

}  // namespace

void BindCropOptions(nb::module_& m) {
  using O = img::RandomResizedCropOptions;
  const O d;  // the defaults
  nb::class_<O>(m, "RandomResizedCropOptions",
                "image::RandomResizedCropOptions: keyword arguments only; an option not given keeps the C++ "
                "default. ValueError for an unknown data_format, sampler or method.")
      .def("__init__", &Init, nb::kw_only(), nb::arg("height") = d.height, nb::arg("width") = d.width,
           nb::arg("scale") = Pair{d.scale[0], d.scale[1]}, nb::arg("ratio") = Pair{d.ratio[0], d.ratio[1]},
           nb::arg("flip_probability") = d.flip_probability, nb::arg("mean") = d.normalize.mean,
           nb::arg("std") = d.normalize.stddev, nb::arg("data_format") = DataFormatName(d.normalize.data_format),
           nb::arg("sampler") = SamplerName(d.sampler), nb::arg("method") = std::string(img::ResizeMethodName(d.method)),
           nb::arg("antialias") = d.antialias, nb::arg("channels") = d.channels,
           nb::arg("max_attempts") = d.max_attempts, nb::arg("dct_scaling") = d.dct_scaling,
           nb::arg("dct_method") = d.dct_method)
      .def_ro("height", &O::height)
      .def_ro("width", &O::width)
      .def_prop_ro("scale", [](const O& o) { return Pair{o.scale[0], o.scale[1]}; })
      .def_prop_ro("ratio", [](const O& o) { return Pair{o.ratio[0], o.ratio[1]}; })
      .def_ro("flip_probability", &O::flip_probability)
      .def_prop_ro("mean", [](const O& o) { return o.normalize.mean; })
      .def_prop_ro("std", [](const O& o) { return o.normalize.stddev; })
      .def_prop_ro("data_format", [](const O& o) { return DataFormatName(o.normalize.data_format); })
      .def_prop_ro("sampler", [](const O& o) { return SamplerName(o.sampler); })
      .def_prop_ro("method", [](const O& o) { return std::string(img::ResizeMethodName(o.method)); })
      .def_ro("antialias", &O::antialias)
      .def_ro("channels", &O::channels)
      .def_ro("max_attempts", &O::max_attempts)
      .def_ro("dct_scaling", &O::dct_scaling)
      .def_ro("dct_method", &O::dct_method);
}

}  // namespace sluice::python
