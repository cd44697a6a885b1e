// Private helpers shared by the JPEG, PNG and format-sniffing files of the
// image codecs (include/sluice/image/codec.h is the public side).
#ifndef SLUICE_SRC_IMAGE_CODEC_INTERNAL_H_
#define SLUICE_SRC_IMAGE_CODEC_INTERNAL_H_

#include <string_view>

#include "sluice/core/dtype.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/image/codec.h"

namespace sluice::image::internal {

// The JPEG decoder proper: uint8 HWC, crop applied when `crop` is set.
// With a crop and a non-null `column_offset`, the columns are not realigned:
// the result holds the crop's rows at the width libjpeg decodes them (whole
// iMCU columns covering the crop), and *column_offset says where the crop
// starts in them (0 when the rows came out exactly cropped). This skips a
// copy of every row; the fused random resized crop reads the window in place.
// `output_dtype`: what the caller converts the image to; the decode limit
// (options.max_decode_bytes) counts bytes of it, for the whole image.
// REQUIRES: SniffImageFormat(contents) == kJpeg; options already checked.
Result<Tensor> DecodeJpegData(std::string_view contents, const DecodeJpegOptions& options,
                              const CropWindow* crop, int64_t* column_offset = nullptr,
                              DType output_dtype = DType::kUInt8);

// The PNG decoder proper: uint8 (`bits` 8) or uint16 (`bits` 16) HWC,
// refused from its header when over the decode limit `max_decode_bytes`
// (0: the default), counting bytes of `output_dtype`.
// REQUIRES: SniffImageFormat(contents) == kPng; channels in {0,1,3,4}.
Result<Tensor> DecodePngData(std::string_view contents, int channels, int bits, int64_t max_decode_bytes,
                             DType output_dtype);

// The limit of one decode: `max_decode_bytes` when > 0, else
// DefaultMaxDecodeBytes(). InvalidArgument for a negative option.
Result<int64_t> DecodeLimit(int64_t max_decode_bytes);

// The "Decode limit" error of codec.h unless width x height x channels
// values of `dtype` fit in `max_bytes` bytes.
// REQUIRES: width * height * channels < 2^31 (TF's own limits, checked
// first, keep the product far from overflow).
Status CheckDecodeLimit(ImageFormat format, int64_t width, int64_t height, int64_t channels, DType dtype,
                        int64_t max_bytes);

// Checks shared by the decoders, with TF's messages.
Status CheckChannels(int channels);  // 0, 1, 3 or 4
Status CheckJpegOptions(const DecodeJpegOptions& options);

// "Input is empty." / the unknown-format error / GIF/BMP/WebP refusal for
// a `format` that is neither JPEG nor PNG.
Status EmptyInputError();
Status UnsupportedFormatError(ImageFormat format);

// A decoded uint8 or uint16 image as `dtype` (uint8, uint16, float32,
// float64) with tf.image.convert_image_dtype's scaling. Returns `image`
// itself when the dtype already matches.
Result<Tensor> ConvertDecoded(Tensor image, DType dtype);

}  // namespace sluice::image::internal

#endif  // SLUICE_SRC_IMAGE_CODEC_INTERNAL_H_
