// Image decoders and encoders: tf.io.decode_jpeg, decode_and_crop_jpeg,
// decode_png, decode_image, extract_jpeg_shape, encode_jpeg, encode_png and
// is_jpeg, on libjpeg-turbo and libpng.
//
// Results are TensorFlow 2's, value for value: the same libjpeg/libpng calls
// with the same settings (IFAST DCT by default, TF's CMYK -> RGB formula,
// libpng's transforms in TF's order, 16 -> 8 bits by dropping the low byte,
// 8 -> 16 bits by v * 257). Decoded images are HWC tensors (see image.h),
// written straight into the output's rows.
//
// As in TF 2, the decoders look at the bytes rather than trusting the op's
// name: DecodeJpeg decodes a PNG, DecodePng decodes a JPEG. Only JPEG and PNG
// are decoded; GIF, BMP and WebP are recognised and rejected.
//
// Errors: a corrupt, truncated or unrecognised input is InvalidArgument with
// a message saying what is wrong (libjpeg's or libpng's own words after TF's
// prefix, e.g. "jpeg::Uncompress failed. Invalid JPEG data or crop window:
// Invalid JPEG file structure: missing SOS marker"); a bad argument is
// InvalidArgument with TF's message. No input makes these functions crash,
// hang or write to stderr: library warnings are counted, never printed.
//
// Decode limit: every decoder refuses an image whose decoded size is over a
// byte budget, reading the size from the header before allocating anything
// image-sized (see "Decode limit" below). A 3 KB file can claim 13000 x
// 13000 pixels.
//
// Thread-safety: every function is reentrant and keeps no global state but
// the process-wide decode limit (an atomic); call them from any number of
// threads. `contents` is only read, and only during
// the call (pass a view of a mapped file or of a tensor's bytes: no copy).
#ifndef SLUICE_IMAGE_CODEC_H_
#define SLUICE_IMAGE_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/dtype.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/image/image.h"  // CropWindow

namespace sluice::image {

// ---- Decode limit -----------------------------------------------------------
//
// A decode fails with InvalidArgument, before the image is allocated, when
// width x height x channels x the bytes of one value of the result's dtype
// (uint8 1, uint16 2, float32 4, float64 8) is over the limit. The size is
// the whole image's at the decode's scale (DecodeJpegOptions::ratio), even
// when only a crop is returned (DecodeAndCropJpeg, the fused random resized
// crop): libjpeg still reads the whole image, and buffers a progressive one
// whole. The message names the size, the bytes and the limit, e.g.
//   "Image too large to decode: 13000x13000 (width x height) x 3 channels
//   of uint8 is 507000000 bytes, over the decode limit of 268435456 bytes;
//   raise it with sluice.image.set_decode_limit(), the
//   SLUICE_MAX_DECODE_BYTES environment variable or the max_decode_bytes
//   option"
// The limit is the options' max_decode_bytes when > 0, else the
// process-wide default below. TF's own limits still apply (a JPEG under
// 2^29 samples, a PNG under 2^31).

// The built-in default: 1 GiB of decoded output.
inline constexpr int64_t kDefaultMaxDecodeBytes = int64_t{1} << 30;

// The process-wide limit: the last SetDefaultMaxDecodeBytes, else the
// environment variable SLUICE_MAX_DECODE_BYTES (a positive decimal number
// of bytes, read once, on first use), else kDefaultMaxDecodeBytes.
// Errors: InvalidArgument when SLUICE_MAX_DECODE_BYTES is set but not a
// positive integer and no SetDefaultMaxDecodeBytes replaced it (so every
// decode relying on it fails, naming the variable). Thread-safe.
Result<int64_t> DefaultMaxDecodeBytes();

// Sets the process-wide limit for decodes from now on (calls in flight keep
// theirs). Errors: InvalidArgument for max_bytes <= 0. Thread-safe.
[[nodiscard]] Status SetDefaultMaxDecodeBytes(int64_t max_bytes);

// ---- Sniffing -------------------------------------------------------------

enum class ImageFormat { kUnknown, kJpeg, kPng, kGif, kBmp, kWebp };

// The format TF's decode_image would pick from the leading magic bytes:
// JPEG "\xff\xd8\xff", PNG "\x89PNG\r\n\x1a\n", GIF "GIF8", BMP "BM",
// WebP "RIFF....WEBP". Never fails.
ImageFormat SniffImageFormat(std::string_view contents);
// "JPEG", "PNG", "GIF", "BMP", "WebP" or "unknown".
std::string_view ImageFormatName(ImageFormat format);

// tf.io.is_jpeg: true when `contents` starts with "\xff\xd8\xff" (a cheap
// check with false positives, as TF's).
bool IsJpeg(std::string_view contents);

// ---- JPEG -----------------------------------------------------------------

// tf.io.decode_jpeg's attributes, with TF's names and defaults.
struct DecodeJpegOptions {
  // 0: the JPEG's own (1 for grayscale, 3 otherwise; CMYK becomes RGB);
  // 1: grayscale; 3: RGB. Anything else is InvalidArgument.
  int channels = 0;
  // Downscale by 1, 2, 4 or 8 while decoding (libjpeg's DCT scaling): the
  // output is ceil(h / ratio) x ceil(w / ratio).
  int ratio = 1;
  // libjpeg's do_fancy_upsampling: smooth (triangle) chroma upsampling.
  bool fancy_upscaling = true;
  // Decode a truncated file as if it ended there (libjpeg fills the missing
  // blocks with grey) instead of failing. How libjpeg-turbo fills the MCU
  // row where the data ends differs between its versions (TF 2.21 bundles
  // 2.1.4), so those rows may differ from TF's.
  bool try_recover_truncated = false;
  // Without try_recover_truncated, a truncated file still decodes when at
  // least this fraction of its rows came out; the missing rows are zero.
  float acceptable_fraction = 1.0f;
  // "" or "INTEGER_FAST" (libjpeg's JDCT_IFAST, TF's default) or
  // "INTEGER_ACCURATE" (JDCT_ISLOW).
  std::string dct_method;
  // The decode limit in bytes (see "Decode limit"); 0: the process-wide
  // default. Negative is InvalidArgument.
  int64_t max_decode_bytes = 0;
};

// tf.io.decode_jpeg: uint8 [height, width, channels]. A PNG is decoded as
// DecodePng would with the same `channels` (as TF 2 does).
// Errors (InvalidArgument): bad options; empty input ("Input is empty.");
// unknown format; corrupt or truncated JPEG (see DecodeJpegOptions for
// what a truncated file may still give); an image over the decode limit.
Result<Tensor> DecodeJpeg(std::string_view contents, const DecodeJpegOptions& options = {});

// tf.image.decode_and_crop_jpeg's crop_window [y, x, height, width] is a
// CropWindow (image.h), in the pixels of the (ratio-scaled) decoded image.

// tf.image.decode_and_crop_jpeg: equal to DecodeJpeg followed by a crop, but
// decodes only the window's rows (jpeg_skip_scanlines) and the MCU columns
// that cover it (jpeg_crop_scanline).
// Errors (InvalidArgument): as DecodeJpeg; a window that is empty or not
// inside the image; a PNG ("DecodeAndCropJpeg operation can run on JPEG
// only, but detected PNG.").
Result<Tensor> DecodeAndCropJpeg(std::string_view contents, const CropWindow& crop_window,
                                 const DecodeJpegOptions& options = {});

// tf.io.extract_jpeg_shape: [height, width, components] as int32 (or int64
// with `output_type` kInt64), from the header only. components is libjpeg's
// default output: 1 for grayscale, 3 for YCbCr/RGB, 4 for CMYK/YCCK.
// Errors (InvalidArgument): not a JPEG, or its header is corrupt or cut
// ("Invalid JPEG data, size N: ..."); `output_type` not int32/int64.
Result<Tensor> ExtractJpegShape(std::string_view contents, DType output_type = DType::kInt32);

// tf.io.encode_jpeg's attributes, with TF's names and defaults.
struct EncodeJpegOptions {
  // "" (from the image's channels), "grayscale" (1 channel) or "rgb" (3).
  std::string format;
  int quality = 95;  // 0..100
  bool progressive = false;
  bool optimize_size = false;        // optimised Huffman tables
  bool chroma_downsampling = true;   // 4:2:0 when true, 4:4:4 when false
  std::string density_unit = "in";   // "in" or "cm" (the JFIF header)
  int x_density = 300;
  int y_density = 300;
  std::string xmp_metadata;  // written in an APP1 marker when not empty
};

// tf.io.encode_jpeg: a JFIF file from a uint8 [height, width, 1 or 3] image.
// Errors (InvalidArgument): wrong dtype, rank or channels, a format that
// disagrees with the channels, an empty image, out-of-range options.
Result<std::string> EncodeJpeg(const Tensor& image, const EncodeJpegOptions& options = {});

// ---- PNG ------------------------------------------------------------------

// tf.io.decode_png's attributes.
struct DecodePngOptions {
  // 0: the file's own (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA; a palette gives
  // 3, or 4 with a tRNS chunk); 1, 3 or 4 convert (RGB -> gray with
  // libpng's rgb_to_gray and TF's 0.299/0.587 weights; alpha added opaque
  // or stripped). 2 is refused, as by TF.
  int channels = 0;
  // kUInt8 or kUInt16. 16-bit files to uint8 keep the high byte; 8-bit and
  // smaller to uint16 are scaled by 257.
  DType dtype = DType::kUInt8;
  // As DecodeJpegOptions::max_decode_bytes.
  int64_t max_decode_bytes = 0;
};

// tf.io.decode_png: [height, width, channels] of `options.dtype`; bit depths
// 1/2/4/8/16, palettes, tRNS and interlacing. A JPEG is decoded as
// DecodeJpeg would (with uint16 values v * 256, as TF).
// Errors (InvalidArgument): bad options, empty input, unknown format,
// corrupt or truncated data (bad CRC in a critical chunk, bad zlib stream,
// missing rows); an image over the decode limit.
Result<Tensor> DecodePng(std::string_view contents, const DecodePngOptions& options = {});

// tf.io.encode_png: a PNG file from a uint8 or uint16 [height, width, 1..4]
// image; `compression` -1 (zlib's default) or 0..9.
// Errors (InvalidArgument): wrong dtype, rank or channels, an empty image,
// compression out of range.
Result<std::string> EncodePng(const Tensor& image, int compression = -1);

// ---- Any format -----------------------------------------------------------

struct DecodeImageOptions {
  int channels = 0;  // 0, 1, 3 or 4 (4 only for PNG)
  // kUInt8, kUInt16, kFloat32 or kFloat64, scaled as tf.io.decode_image
  // does: uint16 from 8-bit JPEG data is v * 256; float32 is v / 255 (or
  // v / 65535 for a PNG); float64 is the uint16 image / 65535.
  DType dtype = DType::kUInt8;
  // Only meaningful for GIF, which is not decoded here; kept for TF's
  // signature.
  bool expand_animations = true;
  // As DecodeJpegOptions::max_decode_bytes; counts the bytes of `dtype`.
  int64_t max_decode_bytes = 0;
};

// tf.io.decode_image for JPEG and PNG: [height, width, channels].
// Errors (InvalidArgument): bad options, empty input, "Unknown image file
// format. One of JPEG, PNG required.", GIF/BMP/WebP ("... is not supported
// by sluice"), and the decoders' errors (the decode limit counting the
// bytes of `dtype`).
Result<Tensor> DecodeImage(std::string_view contents, const DecodeImageOptions& options = {});

}  // namespace sluice::image

#endif  // SLUICE_IMAGE_CODEC_H_
