// Bindings of the image layer's transforms (sluice/image/{resize,geometry,
// color,normalize,sample_distorted_bounding_box,random_resized_crop}.h) as flat `image_*`
// functions; python/sluice/_image_ops.py gives them tf.image's names,
// defaults and argument checks.
//
// Images arrive as (array, dtype enum): the Python layer passes a
// C-contiguous numpy array whose storage matches the dtype, which is viewed
// in place (Tensor::Wrap holding a reference to the array); anything else is
// copied. Each op runs without the GIL. Results are numpy arrays
// (TensorToPython, zero-copy).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "bind_common.h"
#include "sluice/image/color.h"
#include "sluice/image/geometry.h"
#include "sluice/image/normalize.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/image/resize.h"
#include "sluice/image/sample_distorted_bounding_box.h"

namespace sluice::python {
namespace {

namespace img = ::sluice::image;

// A Tensor over `array` (viewed in place when possible).
Tensor ImageArg(nb::handle array, int dtype_enum) {
  const DType dtype = static_cast<DType>(dtype_enum);
  ContiguousArray a;
  if (AsContiguousArray(array.ptr(), NumpyStorageDescr(dtype), &a)) {
    std::vector<int64_t> dims(a.dims, a.dims + a.ndim);
    PyObject* owner = array.ptr();
    Py_INCREF(owner);
    return Tensor::Wrap(dtype, TensorShape(std::span<const int64_t>(dims)), const_cast<void*>(a.data), [owner] {
      nb::gil_scoped_acquire gil;
      Py_DECREF(owner);
    });
  }
  return PythonToTensor(array, dtype);
}

// Runs `fn` (returning Result<Tensor>) without the GIL; raises its error.
template <class F>
nb::object Run(F&& fn) {
  std::optional<Result<Tensor>> result;
  {
    nb::gil_scoped_release release;
    result.emplace(fn());
  }
  return TensorToPython(ValueOrThrow(std::move(*result)));
}

img::ResizeMethod Method(const std::string& name) {
  std::optional<img::ResizeMethod> m = img::ResizeMethodFromName(name);
  if (!m) throw nb::value_error(("Resize method is not implemented: " + name).c_str());
  return *m;
}

img::DataFormat Format(const std::string& name) {
  if (name == "HWC" || name == "NHWC") return img::DataFormat::kHWC;
  if (name == "CHW" || name == "NCHW") return img::DataFormat::kCHW;
  throw nb::value_error(("data_format must be 'HWC' or 'CHW', got " + name).c_str());
}

// f(image, dtype) -> op(image) for the one-argument ops.
template <Result<Tensor> (*Op)(const Tensor&)>
nb::object Unary(nb::handle image, int dtype) {
  Tensor t = ImageArg(image, dtype);
  return Run([&] { return Op(t); });
}

void BindResize(nb::module_& m) {
  m.def("image_resize", [](nb::handle images, int dtype, int64_t height, int64_t width, const std::string& method,
                           bool preserve_aspect_ratio, bool antialias) {
    Tensor t = ImageArg(images, dtype);
    img::ResizeOptions o;
    o.height = height;
    o.width = width;
    o.method = Method(method);
    o.preserve_aspect_ratio = preserve_aspect_ratio;
    o.antialias = antialias;
    return Run([&] { return img::Resize(t, o); });
  });
  // TF 1's resize ops (ResizeV1) and tf.compat.v1.image.resize_images.
  m.def("image_resize_v1", [](nb::handle images, int dtype, int64_t height, int64_t width, const std::string& method,
                              bool align_corners, bool half_pixel_centers) {
    Tensor t = ImageArg(images, dtype);
    img::ResizeV1Options o;
    o.height = height;
    o.width = width;
    o.method = Method(method);
    o.align_corners = align_corners;
    o.half_pixel_centers = half_pixel_centers;
    return Run([&] { return img::ResizeV1(t, o); });
  });
  m.def("image_resize_images_v1", [](nb::handle images, int dtype, int64_t height, int64_t width,
                                     const std::string& method, bool align_corners, bool preserve_aspect_ratio) {
    Tensor t = ImageArg(images, dtype);
    img::ResizeImagesV1Options o;
    o.height = height;
    o.width = width;
    o.method = Method(method);
    o.align_corners = align_corners;
    o.preserve_aspect_ratio = preserve_aspect_ratio;
    return Run([&] { return img::ResizeImagesV1(t, o); });
  });
  m.def("image_resize_with_pad", [](nb::handle images, int dtype, int64_t target_height, int64_t target_width,
                                    const std::string& method, bool antialias) {
    Tensor t = ImageArg(images, dtype);
    const img::ResizeMethod rm = Method(method);
    return Run([&] { return img::ResizeWithPad(t, target_height, target_width, rm, antialias); });
  });
  m.def("image_resize_flip_normalize",
        [](nb::handle image, int dtype, int64_t height, int64_t width, const std::string& method, bool antialias,
           std::optional<std::tuple<int64_t, int64_t, int64_t, int64_t>> crop, bool flip,
           std::vector<float> mean, std::vector<float> stddev, const std::string& data_format) {
          Tensor t = ImageArg(image, dtype);
          img::ResizeFlipNormalizeOptions o;
          o.height = height;
          o.width = width;
          o.method = Method(method);
          o.antialias = antialias;
          if (crop) {
            const auto [y, x, h, w] = *crop;
            o.crop = img::CropWindow{y, x, h, w};
          }
          o.flip_left_right = flip;
          o.normalize.mean = std::move(mean);
          o.normalize.stddev = std::move(stddev);
          o.normalize.data_format = Format(data_format);
          return Run([&] { return img::ResizeFlipNormalize(t, o); });
        });
}

void BindGeometry(nb::module_& m) {
  m.def("image_crop_to_bounding_box", [](nb::handle image, int dtype, int64_t oh, int64_t ow, int64_t th, int64_t tw) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::CropToBoundingBox(t, oh, ow, th, tw); });
  });
  m.def("image_pad_to_bounding_box", [](nb::handle image, int dtype, int64_t oh, int64_t ow, int64_t th, int64_t tw) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::PadToBoundingBox(t, oh, ow, th, tw); });
  });
  m.def("image_central_crop", [](nb::handle image, int dtype, double fraction) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::CentralCrop(t, fraction); });
  });
  m.def("image_flip_left_right", &Unary<img::FlipLeftRight>);
  m.def("image_flip_up_down", &Unary<img::FlipUpDown>);
  m.def("image_transpose", &Unary<img::Transpose>);
  m.def("image_rot90", [](nb::handle image, int dtype, int64_t k) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::Rot90(t, k); });
  });
  m.def("image_random_crop", [](nb::handle value, int dtype, std::vector<int64_t> size, uint64_t seed) {
    Tensor t = ImageArg(value, dtype);
    return Run([&] { return img::RandomCrop(t, size, seed); });
  });
  m.def("image_random_flip_left_right", [](nb::handle image, int dtype, uint64_t seed) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::RandomFlipLeftRight(t, seed); });
  });
  m.def("image_random_flip_up_down", [](nb::handle image, int dtype, uint64_t seed) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::RandomFlipUpDown(t, seed); });
  });
}

void BindColor(nb::module_& m) {
  m.def("image_convert_image_dtype", [](nb::handle image, int dtype, int out_dtype, bool saturate) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::ConvertImageDtype(t, static_cast<DType>(out_dtype), saturate); });
  });
  m.def("image_adjust_brightness", [](nb::handle image, int dtype, float delta) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::AdjustBrightness(t, delta); });
  });
  m.def("image_adjust_contrast", [](nb::handle image, int dtype, float factor) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::AdjustContrast(t, factor); });
  });
  m.def("image_adjust_saturation", [](nb::handle image, int dtype, float factor) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::AdjustSaturation(t, factor); });
  });
  m.def("image_adjust_hue", [](nb::handle image, int dtype, float delta) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::AdjustHue(t, delta); });
  });
  m.def("image_adjust_gamma", [](nb::handle image, int dtype, float gamma, float gain) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::AdjustGamma(t, gamma, gain); });
  });
  m.def("image_rgb_to_grayscale", &Unary<img::RgbToGrayscale>);
  m.def("image_grayscale_to_rgb", &Unary<img::GrayscaleToRgb>);
  m.def("image_rgb_to_hsv", &Unary<img::RgbToHsv>);
  m.def("image_hsv_to_rgb", &Unary<img::HsvToRgb>);
  m.def("image_random_brightness", [](nb::handle image, int dtype, float max_delta, uint64_t seed) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::RandomBrightness(t, max_delta, seed); });
  });
  m.def("image_random_contrast", [](nb::handle image, int dtype, float lower, float upper, uint64_t seed) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::RandomContrast(t, lower, upper, seed); });
  });
  m.def("image_random_saturation", [](nb::handle image, int dtype, float lower, float upper, uint64_t seed) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::RandomSaturation(t, lower, upper, seed); });
  });
  m.def("image_random_hue", [](nb::handle image, int dtype, float max_delta, uint64_t seed) {
    Tensor t = ImageArg(image, dtype);
    return Run([&] { return img::RandomHue(t, max_delta, seed); });
  });
}

void BindNormalize(nb::module_& m) {
  m.def("image_per_image_standardization", &Unary<img::PerImageStandardization>);
  m.def("image_normalize", [](nb::handle image, int dtype, std::vector<float> mean, std::vector<float> stddev,
                              const std::string& data_format) {
    Tensor t = ImageArg(image, dtype);
    img::NormalizeOptions o;
    o.mean = std::move(mean);
    o.stddev = std::move(stddev);
    o.data_format = Format(data_format);
    return Run([&] { return img::Normalize(t, o); });
  });
  m.def("image_sample_distorted_bounding_box",
        [](int64_t height, int64_t width, nb::handle boxes, uint64_t seed, float min_object_covered,
           std::tuple<float, float> aspect_ratio_range, std::tuple<float, float> area_range, int32_t max_attempts,
           bool use_image_if_no_bounding_boxes) {
          Tensor b = ImageArg(boxes, static_cast<int>(DType::kFloat32));
          img::SampleDistortedBoundingBoxOptions o;
          o.seed = seed;
          o.min_object_covered = min_object_covered;
          o.aspect_ratio_range = {std::get<0>(aspect_ratio_range), std::get<1>(aspect_ratio_range)};
          o.area_range = {std::get<0>(area_range), std::get<1>(area_range)};
          o.max_attempts = max_attempts;
          o.use_image_if_no_bounding_boxes = use_image_if_no_bounding_boxes;
          Result<img::DistortedBoundingBox> r = img::SampleDistortedBoundingBox(height, width, b, o);
          img::DistortedBoundingBox box = ValueOrThrow(std::move(r));
          Tensor begin(DType::kInt32, {3}), size(DType::kInt32, {3}), bboxes(DType::kFloat32, {1, 1, 4});
          for (int i = 0; i < 3; ++i) {
            begin.data<int32_t>()[i] = box.begin[i];
            size.data<int32_t>()[i] = box.size[i];
          }
          for (int i = 0; i < 4; ++i) bboxes.data<float>()[i] = box.box[i];
          return nb::make_tuple(TensorToPython(begin), TensorToPython(size), TensorToPython(bboxes));
        });
}

// ---- random resized crop ---------------------------------------------------

// `options`: a _core.RandomResizedCropOptions (bind_crop_options.cc).
void BindRandomResizedCrop(nb::module_& m) {
  m.def(
      "image_decode_random_resized_crop",
      [](nb::bytes contents, const img::RandomResizedCropOptions& options, uint64_t seed) {
        // bytes are immutable and the caller holds `contents`: read in place.
        const std::string_view data(contents.c_str(), contents.size());
        return Run([&] { return img::DecodeRandomResizedCrop(data, options, seed); });
      },
      nb::arg("contents"), nb::arg("options"), nb::arg("seed"));
  m.def(
      "image_sample_random_resized_crop",
      [](int64_t image_height, int64_t image_width, const img::RandomResizedCropOptions& options, uint64_t seed) {
        img::RandomResizedCropParams p =
            ValueOrThrow(img::SampleRandomResizedCrop(image_height, image_width, options, seed));
        return nb::make_tuple(p.window.y, p.window.x, p.window.height, p.window.width, p.flip);
      },
      nb::arg("image_height"), nb::arg("image_width"), nb::arg("options"), nb::arg("seed"));
}

}  // namespace

void BindImageOps(nb::module_& m) {
  BindResize(m);
  BindGeometry(m);
  BindColor(m);
  BindNormalize(m);
  BindCropOptions(m);
  BindRandomResizedCrop(m);
}

}  // namespace sluice::python
