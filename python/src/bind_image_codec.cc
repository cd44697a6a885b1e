// Bindings of the image codecs (sluice/image/codec.h), wrapped by
// sluice/_image_codec.py with TensorFlow's signatures:
//
//   _core.decode_jpeg(contents, channels, ratio, fancy_upscaling,
//                     try_recover_truncated, acceptable_fraction, dct_method)
//   _core.decode_and_crop_jpeg(contents, y, x, height, width, <same options>)
//   _core.decode_png(contents, channels, dtype)
//   _core.decode_image(contents, channels, dtype, expand_animations)
//   _core.extract_jpeg_shape(contents, output_type)
//   _core.encode_jpeg(image, format, quality, progressive, optimize_size,
//                     chroma_downsampling, density_unit, x_density,
//                     y_density, xmp_metadata)
//   _core.encode_png(image, compression)
//   _core.is_jpeg(contents)
//   _core.set_decode_limit(max_bytes), _core.get_decode_limit()
//
// `contents` is a bytes object, read in place (bytes are immutable, and the
// call holds a reference); dtypes are TF's DataType numbers. Decoding and
// encoding run without the GIL; results are numpy arrays viewing the
// decoded tensor (no copy) or bytes; errors become sluice.errors.* with the
// GIL held again.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "bind_common.h"
#include "sluice/core/dtype.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/image/codec.h"

namespace sluice::python {
namespace {

using image::CropWindow;
using image::DecodeJpegOptions;

std::string_view Contents(nb::handle obj) {
  PyObject* o = obj.ptr();
  if (!PyBytes_Check(o)) {
    throw nb::type_error((std::string("contents must be bytes, got ") + Py_TYPE(o)->tp_name).c_str());
  }
  return std::string_view(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o)));
}

// Runs `fn` (returning Result<Tensor>) without the GIL; the array or an
// exception with it.
template <class F>
nb::object DecodeToArray(F&& fn) {
  std::optional<Result<Tensor>> result;
  {
    GilRelease release;
    result.emplace(fn());
  }
  return TensorToPython(ValueOrThrow(std::move(*result)));
}

template <class F>
nb::bytes EncodeToBytes(F&& fn) {
  std::optional<Result<std::string>> result;
  {
    GilRelease release;
    result.emplace(fn());
  }
  std::string bytes = ValueOrThrow(std::move(*result));
  return nb::bytes(bytes.data(), bytes.size());
}

DecodeJpegOptions JpegOptions(int channels, int ratio, bool fancy_upscaling, bool try_recover_truncated,
                              float acceptable_fraction, std::string dct_method) {
  DecodeJpegOptions o;
  o.channels = channels;
  o.ratio = ratio;
  o.fancy_upscaling = fancy_upscaling;
  o.try_recover_truncated = try_recover_truncated;
  o.acceptable_fraction = acceptable_fraction;
  o.dct_method = std::move(dct_method);
  return o;
}

nb::object DecodeJpeg(nb::handle contents, int channels, int ratio, bool fancy_upscaling,
                      bool try_recover_truncated, float acceptable_fraction, std::string dct_method) {
  const std::string_view data = Contents(contents);
  const DecodeJpegOptions o =
      JpegOptions(channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, std::move(dct_method));
  return DecodeToArray([&] { return image::DecodeJpeg(data, o); });
}

nb::object DecodeAndCropJpeg(nb::handle contents, int64_t y, int64_t x, int64_t height, int64_t width,
                             int channels, int ratio, bool fancy_upscaling, bool try_recover_truncated,
                             float acceptable_fraction, std::string dct_method) {
  const std::string_view data = Contents(contents);
  const DecodeJpegOptions o =
      JpegOptions(channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, std::move(dct_method));
  const CropWindow window{y, x, height, width};
  return DecodeToArray([&] { return image::DecodeAndCropJpeg(data, window, o); });
}

nb::object DecodePng(nb::handle contents, int channels, int dtype) {
  const std::string_view data = Contents(contents);
  const image::DecodePngOptions o{channels, static_cast<DType>(dtype)};
  return DecodeToArray([&] { return image::DecodePng(data, o); });
}

nb::object DecodeImage(nb::handle contents, int channels, int dtype, bool expand_animations) {
  const std::string_view data = Contents(contents);
  const image::DecodeImageOptions o{channels, static_cast<DType>(dtype), expand_animations};
  return DecodeToArray([&] { return image::DecodeImage(data, o); });
}

nb::object ExtractJpegShape(nb::handle contents, int output_type) {
  const std::string_view data = Contents(contents);
  return DecodeToArray([&] { return image::ExtractJpegShape(data, static_cast<DType>(output_type)); });
}

nb::bytes EncodeJpeg(nb::handle image, std::string format, int quality, bool progressive, bool optimize_size,
                     bool chroma_downsampling, std::string density_unit, int x_density, int y_density,
                     std::string xmp_metadata) {
  const Tensor pixels = PythonToTensor(image, DType::kUInt8);
  image::EncodeJpegOptions o;
  o.format = std::move(format);
  o.quality = quality;
  o.progressive = progressive;
  o.optimize_size = optimize_size;
  o.chroma_downsampling = chroma_downsampling;
  o.density_unit = std::move(density_unit);
  o.x_density = x_density;
  o.y_density = y_density;
  o.xmp_metadata = std::move(xmp_metadata);
  return EncodeToBytes([&] { return image::EncodeJpeg(pixels, o); });
}

nb::bytes EncodePng(nb::handle image, int dtype, int compression) {
  const Tensor pixels = PythonToTensor(image, static_cast<DType>(dtype));
  return EncodeToBytes([&] { return image::EncodePng(pixels, compression); });
}

}  // namespace

void BindImageCodec(nb::module_& m) {
  m.def("decode_jpeg", &DecodeJpeg, nb::arg("contents"), nb::arg("channels"), nb::arg("ratio"),
        nb::arg("fancy_upscaling"), nb::arg("try_recover_truncated"), nb::arg("acceptable_fraction"),
        nb::arg("dct_method"));
  m.def("decode_and_crop_jpeg", &DecodeAndCropJpeg, nb::arg("contents"), nb::arg("y"), nb::arg("x"),
        nb::arg("height"), nb::arg("width"), nb::arg("channels"), nb::arg("ratio"), nb::arg("fancy_upscaling"),
        nb::arg("try_recover_truncated"), nb::arg("acceptable_fraction"), nb::arg("dct_method"));
  m.def("decode_png", &DecodePng, nb::arg("contents"), nb::arg("channels"), nb::arg("dtype"));
  m.def("decode_image", &DecodeImage, nb::arg("contents"), nb::arg("channels"), nb::arg("dtype"),
        nb::arg("expand_animations"));
  m.def("extract_jpeg_shape", &ExtractJpegShape, nb::arg("contents"), nb::arg("output_type"));
  m.def("encode_jpeg", &EncodeJpeg, nb::arg("image"), nb::arg("format"), nb::arg("quality"),
        nb::arg("progressive"), nb::arg("optimize_size"), nb::arg("chroma_downsampling"),
        nb::arg("density_unit"), nb::arg("x_density"), nb::arg("y_density"), nb::arg("xmp_metadata"));
  m.def("encode_png", &EncodePng, nb::arg("image"), nb::arg("dtype"), nb::arg("compression"));
  m.def("is_jpeg", [](nb::handle contents) { return image::IsJpeg(Contents(contents)); }, nb::arg("contents"));
  m.def("set_decode_limit", [](int64_t max_bytes) { ThrowIfError(image::SetDefaultMaxDecodeBytes(max_bytes)); },
        nb::arg("max_bytes"));
  m.def("get_decode_limit", [] { return ValueOrThrow(image::DefaultMaxDecodeBytes()); });
}

}  // namespace sluice::python
