// PNG decoding and encoding on libpng (see codec.h).
//
// libpng reports a fatal error through our error function, which longjmps
// to PngDecoder::Run / PngEncoder::Run, the only frames that call setjmp.
// All libpng calls happen in the steps those run, which hold no object with
// a destructor; Tensors and strings live in their callers. Warnings are
// dropped. The transforms are TF's (tensorflow/core/lib/png/png_io.cc), so
// the pixels are TF's: alpha added or stripped, palette and gray expanded,
// RGB -> gray with weights 0.299/0.587, 16 -> 8 bits by png_set_strip_16,
// and 8 -> 16 bits by v * 257 after decoding.
#include <bit>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <png.h>
#include <zlib.h>

#include "codec_internal.h"
#include "sluice/core/shape.h"

namespace sluice::image {
namespace internal {
namespace {

// TF refuses images whose size does not fit an int; so do we, which also
// keeps a forged header from asking for an absurd allocation.
constexpr int64_t kMaxSamples = (int64_t{1} << 31) - 1;

// Shared by the reader and the writer: where a fatal error jumps to and
// the message it leaves.
struct ErrorState {
  std::jmp_buf jump;
  char message[256];
};

[[noreturn]] void ErrorFn(png_structp png, png_const_charp msg) {
  auto* state = static_cast<ErrorState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof(state->message), "%s", msg != nullptr ? msg : "libpng error");
  std::longjmp(state->jump, 1);
}

void WarningFn(png_structp /*png*/, png_const_charp /*msg*/) {}

class PngDecoder {
 public:
  PngDecoder(std::string_view contents, int channels, int bits)
      : data_(reinterpret_cast<const uint8_t*>(contents.data())),
        left_(contents.size()),
        channels_(channels),
        bits_(bits) {
    err_.message[0] = '\0';
  }
  ~PngDecoder() {
    if (png_ != nullptr) png_destroy_read_struct(&png_, info_ != nullptr ? &info_ : nullptr, nullptr);
  }
  PngDecoder(const PngDecoder&) = delete;
  PngDecoder& operator=(const PngDecoder&) = delete;

  bool Run(void (PngDecoder::*step)()) {
    if (setjmp(err_.jump) != 0) return false;
    (this->*step)();
    return true;
  }

  // ---- Steps ----
  void Create();
  void ReadHeader();
  void ReadImage();

  const char* message() const { return err_.message; }
  bool created() const { return png_ != nullptr && info_ != nullptr; }
  png_uint_32 width() const { return width_; }
  png_uint_32 height() const { return height_; }
  int channels() const { return channels_; }  // after ReadHeader: the output's
  int decoded_channels() const { return decoded_channels_; }
  int decoded_bits() const { return decoded_bits_; }
  bool synthesize_16() const { return synthesize_16_; }
  void SetOutput(uint8_t* data, size_t stride) {
    out_ = data;
    stride_ = stride;
  }

 private:
  static void ReadFn(png_structp png, png_bytep out, size_t length);
  void ConfigureTransforms(int bit_depth, int color_type);

  ErrorState err_;
  const uint8_t* data_;
  size_t left_;
  int channels_;
  const int bits_;
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
  png_uint_32 width_ = 0, height_ = 0;
  int passes_ = 1;
  int decoded_channels_ = 0, decoded_bits_ = 0;
  bool synthesize_16_ = false;
  uint8_t* out_ = nullptr;
  size_t stride_ = 0;
};

void PngDecoder::ReadFn(png_structp png, png_bytep out, size_t length) {
  auto* self = static_cast<PngDecoder*>(png_get_io_ptr(png));
  if (length > self->left_) png_error(png, "Read past the end of the data (truncated PNG)");
  std::memcpy(out, self->data_, length);
  self->data_ += length;
  self->left_ -= length;
}

void PngDecoder::Create() {
  png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err_, ErrorFn, WarningFn);
  if (png_ == nullptr) return;
  info_ = png_create_info_struct(png_);
  if (info_ == nullptr) return;
  png_set_read_fn(png_, this, ReadFn);
}

void PngDecoder::ReadHeader() {
  png_read_info(png_, info_);
  int bit_depth = 0, color_type = 0;
  png_get_IHDR(png_, info_, &width_, &height_, &bit_depth, &color_type, nullptr, nullptr, nullptr);
  ConfigureTransforms(bit_depth, color_type);
  png_read_update_info(png_, info_);
  decoded_channels_ = png_get_channels(png_, info_);
  decoded_bits_ = png_get_bit_depth(png_, info_);
}

// TF's choice of libpng transforms for `channels_` (0: the file's own) and
// `bits_` (8 or 16).
void PngDecoder::ConfigureTransforms(int bit_depth, int color_type) {
  const bool has_trns = png_get_valid(png_, info_, PNG_INFO_tRNS) != 0;
  if (channels_ == 0) {
    channels_ = color_type == PNG_COLOR_TYPE_PALETTE ? (has_trns ? 4 : 3) : png_get_channels(png_, info_);
  }
  const bool has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if (channels_ % 2 == 0) {  // alpha wanted
    if (!has_alpha && has_trns) {
      png_set_tRNS_to_alpha(png_);
    } else if (!has_alpha) {  // opaque, in the file's own bit depth (as TF)
      png_set_add_alpha(png_, (1u << bit_depth) - 1, PNG_FILLER_AFTER);
    }
  } else if (has_alpha || has_trns) {
    png_set_strip_alpha(png_);
  }
  if (bit_depth > 8 && bits_ == 8) png_set_strip_16(png_);
  synthesize_16_ = bit_depth <= 8 && bits_ == 16;
  png_set_packing(png_);
  passes_ = png_set_interlace_handling(png_);
  if (bits_ == 16 && std::endian::native == std::endian::little) png_set_swap(png_);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png_);
  const bool is_gray = (color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (is_gray && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png_);
  if (channels_ < 3 && !is_gray) png_set_rgb_to_gray(png_, 1, 0.299, 0.587);  // BT.601
  if (channels_ >= 3 && is_gray) png_set_gray_to_rgb(png_);
}

// png_read_row places an interlaced pass's pixels into the full rows.
void PngDecoder::ReadImage() {
  for (int pass = 0; pass < passes_; ++pass) {
    for (png_uint_32 y = 0; y < height_; ++y) png_read_row(png_, out_ + y * stride_, nullptr);
  }
  png_read_end(png_, nullptr);  // checks the rest of IDAT (Adler-32) and the CRCs
}

// 8-bit samples at the start of each row become v * 257 in place, from the
// right so that nothing is overwritten before it is read.
void Widen8To16(uint8_t* data, int64_t rows, int64_t samples_per_row, size_t stride) {
  for (int64_t y = 0; y < rows; ++y) {
    uint8_t* row = data + y * stride;
    auto* wide = reinterpret_cast<uint16_t*>(row);
    for (int64_t i = samples_per_row; i-- > 0;) wide[i] = static_cast<uint16_t>(row[i] * 257);
  }
}

}  // namespace

Result<Tensor> DecodePngData(std::string_view contents, int channels, int bits, int64_t max_decode_bytes,
                             DType output_dtype) {
  PngDecoder d(contents, channels, bits);
  const auto init_failed = [&] {
    return errors::InvalidArgument("Invalid PNG. Failed to initialize decoder: ", d.message());
  };
  if (!d.Run(&PngDecoder::Create)) return init_failed();
  if (!d.created()) return errors::ResourceExhausted("png_create_read_struct failed");
  if (!d.Run(&PngDecoder::ReadHeader)) return init_failed();
  const int64_t height = d.height(), width = d.width(), out_channels = d.channels();
  if (height * width * out_channels >= kMaxSamples) {
    return errors::InvalidArgument("Invalid PNG data, size ", contents.size(), ": image ", height,
                                   "x", width, "x", out_channels, " is too large (limit 2^31 samples)");
  }
  SLUICE_ASSIGN_OR_RETURN(const int64_t max_bytes, DecodeLimit(max_decode_bytes));
  SLUICE_RETURN_IF_ERROR(CheckDecodeLimit(ImageFormat::kPng, width, height, out_channels, output_dtype, max_bytes));
  const int expected_bits = d.synthesize_16() ? 8 : bits;
  if (d.decoded_channels() != out_channels || d.decoded_bits() != expected_bits) {
    return errors::Internal("libpng decodes ", d.decoded_channels(), " channels of ", d.decoded_bits(),
                            " bits, expected ", out_channels, " of ", expected_bits);
  }
  Tensor image(bits == 16 ? DType::kUInt16 : DType::kUInt8, TensorShape{height, width, out_channels});
  const size_t stride = static_cast<size_t>(width * out_channels) * (bits / 8);
  uint8_t* data = static_cast<uint8_t*>(image.raw_data());
  d.SetOutput(data, stride);
  if (!d.Run(&PngDecoder::ReadImage)) {
    return errors::InvalidArgument("Invalid PNG data, size ", contents.size(), ": ", d.message());
  }
  if (d.synthesize_16()) Widen8To16(data, height, width * out_channels, stride);
  return image;
}

namespace {

// The encoder's output: a malloc'd buffer grown by the write callback
// (which must not throw: libpng is C).
struct OutputBuffer {
  unsigned char* data = nullptr;
  size_t size = 0;
  size_t capacity = 0;
};

class PngEncoder {
 public:
  PngEncoder(const Tensor& image, int compression) : image_(image), compression_(compression) {
    err_.message[0] = '\0';
  }
  ~PngEncoder() {
    if (png_ != nullptr) png_destroy_write_struct(&png_, info_ != nullptr ? &info_ : nullptr);
    std::free(out_.data);
  }
  PngEncoder(const PngEncoder&) = delete;
  PngEncoder& operator=(const PngEncoder&) = delete;

  bool Run() {
    if (setjmp(err_.jump) != 0) return false;
    Encode();
    return true;
  }
  const char* message() const { return err_.message; }
  std::string Output() const { return std::string(reinterpret_cast<const char*>(out_.data), out_.size); }

 private:
  static void WriteFn(png_structp png, png_bytep data, size_t length);
  static void FlushFn(png_structp /*png*/) {}
  void Encode();

  const Tensor& image_;
  const int compression_;
  ErrorState err_;
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
  OutputBuffer out_;
};

void PngEncoder::WriteFn(png_structp png, png_bytep data, size_t length) {
  auto* out = static_cast<OutputBuffer*>(png_get_io_ptr(png));
  if (out->size + length > out->capacity) {
    size_t capacity = out->capacity == 0 ? 4096 : out->capacity;
    while (capacity < out->size + length) capacity *= 2;
    auto* grown = static_cast<unsigned char*>(std::realloc(out->data, capacity));
    if (grown == nullptr) png_error(png, "out of memory");
    out->data = grown;
    out->capacity = capacity;
  }
  std::memcpy(out->data + out->size, data, length);
  out->size += length;
}

void PngEncoder::Encode() {
  png_ = png_create_write_struct(PNG_LIBPNG_VER_STRING, &err_, ErrorFn, WarningFn);
  if (png_ == nullptr) {
    std::snprintf(err_.message, sizeof(err_.message), "png_create_write_struct failed");
    std::longjmp(err_.jump, 1);
  }
  info_ = png_create_info_struct(png_);
  if (info_ == nullptr) png_error(png_, "png_create_info_struct failed");
  const TensorShape& s = image_.shape();
  const auto height = static_cast<png_uint_32>(s.dim(0));
  const auto width = static_cast<png_uint_32>(s.dim(1));
  const int channels = static_cast<int>(s.dim(2));
  const int bits = image_.dtype() == DType::kUInt16 ? 16 : 8;
  static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                        PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(png_, &out_, WriteFn, FlushFn);
  png_set_compression_level(png_, compression_ < 0 ? Z_DEFAULT_COMPRESSION : compression_);
  png_set_compression_mem_level(png_, MAX_MEM_LEVEL);
  png_set_IHDR(png_, info_, width, height, bits, kColorTypes[channels - 1], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png_, info_);
  if (bits == 16 && std::endian::native == std::endian::little) png_set_swap(png_);
  const size_t stride = static_cast<size_t>(width) * channels * (bits / 8);
  const auto* row = static_cast<const uint8_t*>(image_.raw_data());
  for (png_uint_32 y = 0; y < height; ++y, row += stride) png_write_row(png_, row);
  png_write_end(png_, nullptr);
}

}  // namespace
}  // namespace internal

Result<std::string> EncodePng(const Tensor& image, int compression) {
  if (image.dtype() != DType::kUInt8 && image.dtype() != DType::kUInt16) {
    return errors::InvalidArgument("EncodePng: image must be uint8 or uint16, got ",
                                   DTypeName(image.dtype()));
  }
  if (image.rank() != 3) {
    return errors::InvalidArgument("image must be 3-dimensional", image.shape().DebugString());
  }
  const TensorShape& s = image.shape();
  if (s.dim(2) < 1 || s.dim(2) > 4) {
    return errors::InvalidArgument("image must have 1, 2, 3, or 4 channels, got ", s.dim(2));
  }
  if (s.dim(0) <= 0 || s.dim(1) <= 0 || s.dim(0) > PNG_UINT_31_MAX || s.dim(1) > PNG_UINT_31_MAX) {
    return errors::InvalidArgument("EncodePng: image size ", s.DebugString(), " must be positive");
  }
  if (compression < -1 || compression > 9) {
    return errors::InvalidArgument("compression should be in [-1,9], got ", compression);
  }
  internal::PngEncoder encoder(image, compression);
  if (!encoder.Run()) return errors::Internal("PNG encoding failed: ", encoder.message());
  return encoder.Output();
}

}  // namespace sluice::image
