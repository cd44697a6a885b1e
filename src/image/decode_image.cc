// Format sniffing and the public decode entry points (see codec.h): each
// checks its arguments with TF's messages, looks at the magic bytes, and
// hands the data to the JPEG or PNG decoder. Also the decode limit.
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

#include "codec_internal.h"
#include "sluice/image/codec.h"

namespace sluice::image {

ImageFormat SniffImageFormat(std::string_view c) {
  if (c.starts_with("\xff\xd8\xff")) return ImageFormat::kJpeg;
  if (c.starts_with(std::string_view("\x89PNG\r\n\x1a\n", 8))) return ImageFormat::kPng;
  if (c.starts_with("GIF8")) return ImageFormat::kGif;
  if (c.starts_with("BM")) return ImageFormat::kBmp;
  if (c.size() >= 12 && c.starts_with("RIFF") && c.substr(8, 4) == "WEBP") return ImageFormat::kWebp;
  return ImageFormat::kUnknown;
}

std::string_view ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kGif: return "GIF";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

bool IsJpeg(std::string_view contents) { return SniffImageFormat(contents) == ImageFormat::kJpeg; }

namespace internal {

Status CheckChannels(int channels) {
  if (channels == 0 || channels == 1 || channels == 3 || channels == 4) return Status::OK();
  return errors::InvalidArgument("`channels` must be 0, 1, 3 or 4 but got ", channels);
}

Status CheckJpegOptions(const DecodeJpegOptions& o) {
  SLUICE_RETURN_IF_ERROR(CheckChannels(o.channels));
  if (o.ratio != 1 && o.ratio != 2 && o.ratio != 4 && o.ratio != 8) {
    return errors::InvalidArgument("ratio must be 1, 2, 4, or 8, got ", o.ratio);
  }
  if (!o.dct_method.empty() && o.dct_method != "INTEGER_FAST" && o.dct_method != "INTEGER_ACCURATE") {
    return errors::InvalidArgument("dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}, got '",
                                   o.dct_method, "'");
  }
  return Status::OK();
}

namespace {

// The process-wide default limit (codec.h), set up on first use.
struct DefaultLimit {
  std::atomic<int64_t> bytes;  // 0 while an invalid environment value stands
  std::string env_error;       // why, then; constant after construction
};

DefaultLimit& TheDefaultLimit() {
  static DefaultLimit* const limit = [] {
    auto* l = new DefaultLimit{{kDefaultMaxDecodeBytes}, {}};
    const char* env = std::getenv("SLUICE_MAX_DECODE_BYTES");
    if (env == nullptr) return l;
    const std::string_view text(env);
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && value > 0) {
      l->bytes.store(value, std::memory_order_relaxed);
    } else {
      l->bytes.store(0, std::memory_order_relaxed);
      l->env_error = StrCat("SLUICE_MAX_DECODE_BYTES must be a positive number of bytes, got '", text,
                            "'; fix it, or set the limit with sluice.image.set_decode_limit()");
    }
    return l;
  }();
  return *limit;
}

}  // namespace

Result<int64_t> DecodeLimit(int64_t max_decode_bytes) {
  if (max_decode_bytes > 0) return max_decode_bytes;
  if (max_decode_bytes < 0) {
    return errors::InvalidArgument("max_decode_bytes must be > 0 (or 0 for the default), got ", max_decode_bytes);
  }
  return DefaultMaxDecodeBytes();
}

Status CheckDecodeLimit(ImageFormat format, int64_t width, int64_t height, int64_t channels, DType dtype,
                        int64_t max_bytes) {
  const int64_t bytes = width * height * channels * static_cast<int64_t>(DTypeSize(dtype));
  if (bytes <= max_bytes) return Status::OK();
  return errors::InvalidArgument(ImageFormatName(format), " image too large to decode: ", width, "x", height,
                                 " (width x height) x ", channels, " channels of ", DTypeName(dtype), " is ",
                                 bytes, " bytes, over the decode limit of ", max_bytes,
                                 " bytes; raise it with sluice.image.set_decode_limit(), the "
                                 "SLUICE_MAX_DECODE_BYTES environment variable or the max_decode_bytes option");
}

Status EmptyInputError() { return errors::InvalidArgument("Input is empty."); }

Status UnsupportedFormatError(ImageFormat format) {
  if (format == ImageFormat::kUnknown) {
    return errors::InvalidArgument("Unknown image file format. One of JPEG, PNG required.");
  }
  return errors::InvalidArgument("Unknown image file format: ", ImageFormatName(format),
                                 " is not supported by sluice. One of JPEG, PNG required.");
}

namespace {

template <class In, class Out, class F>
Tensor Map(const Tensor& in, DType out_dtype, F f) {
  Tensor out(out_dtype, in.shape());
  const In* src = in.data<In>();
  Out* dst = out.data<Out>();
  const int64_t n = in.num_elements();
  for (int64_t i = 0; i < n; ++i) dst[i] = f(src[i]);
  return out;
}

}  // namespace

// tf.io.decode_image's scaling: integers widen by a power of two (uint8
// v -> v * 256), float32 is v / max of the decoded type, float64 is taken
// from the uint16 image (v / 65535).
Result<Tensor> ConvertDecoded(Tensor image, DType dtype) {
  if (image.dtype() == dtype) return image;
  const bool wide = image.dtype() == DType::kUInt16;
  switch (dtype) {
    case DType::kUInt16:  // from uint8 (JPEG): v << 8, as TF
      return Map<uint8_t, uint16_t>(image, dtype, [](uint8_t v) { return static_cast<uint16_t>(v << 8); });
    case DType::kFloat32:
      if (wide) return Map<uint16_t, float>(image, dtype, [](uint16_t v) { return v * (1.0f / 65535); });
      return Map<uint8_t, float>(image, dtype, [](uint8_t v) { return v * (1.0f / 255); });
    case DType::kFloat64:  // TF goes through uint16 here, even for 8-bit data
      if (wide) return Map<uint16_t, double>(image, dtype, [](uint16_t v) { return v * (1.0 / 65535); });
      return Map<uint8_t, double>(image, dtype, [](uint8_t v) { return (v << 8) * (1.0 / 65535); });
    default:
      break;
  }
  return errors::InvalidArgument("dtype must be uint8, uint16, float32 or float64, got ", DTypeName(dtype));
}

}  // namespace internal

Result<int64_t> DefaultMaxDecodeBytes() {
  internal::DefaultLimit& limit = internal::TheDefaultLimit();
  const int64_t bytes = limit.bytes.load(std::memory_order_relaxed);
  if (bytes == 0) return errors::InvalidArgument(limit.env_error);
  return bytes;
}

Status SetDefaultMaxDecodeBytes(int64_t max_bytes) {
  if (max_bytes <= 0) return errors::InvalidArgument("the decode limit must be > 0 bytes, got ", max_bytes);
  internal::TheDefaultLimit().bytes.store(max_bytes, std::memory_order_relaxed);
  return Status::OK();
}

using internal::CheckChannels;
using internal::CheckJpegOptions;

Result<Tensor> DecodeJpeg(std::string_view contents, const DecodeJpegOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckJpegOptions(options));
  if (options.channels == 4) return errors::InvalidArgument("JPEG does not support 4 channels");
  if (contents.empty()) return internal::EmptyInputError();
  const ImageFormat format = SniffImageFormat(contents);
  if (format == ImageFormat::kPng) {
    return internal::DecodePngData(contents, options.channels, 8, options.max_decode_bytes, DType::kUInt8);
  }
  if (format != ImageFormat::kJpeg) return internal::UnsupportedFormatError(format);
  return internal::DecodeJpegData(contents, options, nullptr);
}

Result<Tensor> DecodeAndCropJpeg(std::string_view contents, const CropWindow& crop_window,
                                 const DecodeJpegOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckJpegOptions(options));
  if (options.channels == 4) return errors::InvalidArgument("JPEG does not support 4 channels");
  if (contents.empty()) return internal::EmptyInputError();
  const ImageFormat format = SniffImageFormat(contents);
  if (format == ImageFormat::kPng || format == ImageFormat::kGif || format == ImageFormat::kBmp ||
      format == ImageFormat::kWebp) {
    return errors::InvalidArgument("DecodeAndCropJpeg operation can run on JPEG only, but detected ",
                                   ImageFormatName(format), ".");
  }
  if (format != ImageFormat::kJpeg) return internal::UnsupportedFormatError(format);
  return internal::DecodeJpegData(contents, options, &crop_window);
}

Result<Tensor> DecodePng(std::string_view contents, const DecodePngOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckChannels(options.channels));
  if (options.dtype != DType::kUInt8 && options.dtype != DType::kUInt16) {
    return errors::InvalidArgument("DecodePng: dtype must be uint8 or uint16, got ",
                                   DTypeName(options.dtype));
  }
  DecodeImageOptions image_options;
  image_options.channels = options.channels;
  image_options.dtype = options.dtype;
  image_options.max_decode_bytes = options.max_decode_bytes;
  return DecodeImage(contents, image_options);
}

Result<Tensor> DecodeImage(std::string_view contents, const DecodeImageOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckChannels(options.channels));
  const DType dtype = options.dtype;
  if (dtype != DType::kUInt8 && dtype != DType::kUInt16 && dtype != DType::kFloat32 &&
      dtype != DType::kFloat64) {
    return errors::InvalidArgument("dtype must be uint8, uint16, float32 or float64, got ",
                                   DTypeName(dtype));
  }
  if (contents.empty()) return internal::EmptyInputError();
  const ImageFormat format = SniffImageFormat(contents);
  if (format == ImageFormat::kPng) {
    SLUICE_ASSIGN_OR_RETURN(Tensor image, internal::DecodePngData(contents, options.channels,
                                                                  dtype == DType::kUInt8 ? 8 : 16,
                                                                  options.max_decode_bytes, dtype));
    return internal::ConvertDecoded(std::move(image), dtype);
  }
  if (format != ImageFormat::kJpeg) return internal::UnsupportedFormatError(format);
  if (options.channels == 4) return errors::InvalidArgument("JPEG does not support 4 channels");
  DecodeJpegOptions jpeg;
  jpeg.channels = options.channels;
  jpeg.max_decode_bytes = options.max_decode_bytes;
  SLUICE_ASSIGN_OR_RETURN(Tensor image, internal::DecodeJpegData(contents, jpeg, nullptr, nullptr, dtype));
  return internal::ConvertDecoded(std::move(image), dtype);
}

}  // namespace sluice::image
