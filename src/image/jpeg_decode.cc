// JPEG decoding on libjpeg-turbo: DecodeJpeg, DecodeAndCropJpeg and
// ExtractJpegShape (see codec.h).
//
// libjpeg reports a fatal error by calling error_exit, which must not
// return. Ours longjmps back to JpegDecoder::Run, the only place that calls
// setjmp. Every libjpeg call happens inside a "step" run by Run, and a step
// (like libjpeg itself) holds no object with a destructor, so the longjmp
// skips no destructor; C++ objects (the output Tensor, Status messages) live
// in the callers of Run, above the setjmp frame. Warnings are counted by
// libjpeg and never printed.
//
// The source manager reproduces TF's (tensorflow/core/lib/jpeg/jpeg_handle):
// when the data runs out it suspends, so jpeg_read_scanlines returns 0 rows
// and the rows decoded so far are kept (acceptable_fraction), unless
// try_recover_truncated, where it supplies an EOI marker and libjpeg fills
// the missing blocks with grey.
#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t
#include <cstring>
#include <string_view>

#include <jerror.h>
#include <jpeglib.h>

#include "codec_internal.h"
#include "sluice/core/shape.h"

namespace sluice::image::internal {
namespace {

// TF's limit: output pixels times components below 2^29.
constexpr int64_t kMaxOutputSamples = int64_t{1} << 29;
// Rows handed to one jpeg_read_scanlines call when decoding in place.
constexpr int kRowsPerCall = 16;
// With try_recover_truncated, an EOI marker is supplied each time the data
// runs out (as TF does); libjpeg stops reading at the first, so a few
// suffice. The cap turns any pathological re-reading into an error.
constexpr int kMaxFakeEois = 1000;
const JOCTET kFakeEoi[2] = {0xFF, JPEG_EOI};

struct ErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg sees a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void ErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void OutputMessage(j_common_ptr /*cinfo*/) {}  // warnings are not printed

struct MemorySource {
  jpeg_source_mgr pub;  // first: libjpeg sees a jpeg_source_mgr*
  bool try_recover;
  int fake_eois;
};

void InitSource(j_decompress_ptr /*cinfo*/) {}
void TermSource(j_decompress_ptr /*cinfo*/) {}

boolean FillInputBuffer(j_decompress_ptr cinfo) {
  auto* src = reinterpret_cast<MemorySource*>(cinfo->src);
  if (!src->try_recover) return FALSE;  // suspend: the data ended here
  if (++src->fake_eois > kMaxFakeEois) ERREXIT(cinfo, JERR_FILE_READ);
  WARNMS(cinfo, JWRN_JPEG_EOF);
  src->pub.next_input_byte = kFakeEoi;
  src->pub.bytes_in_buffer = sizeof(kFakeEoi);
  return TRUE;
}

void SkipInputData(j_decompress_ptr cinfo, long num_bytes) {  // NOLINT(runtime/int): libjpeg's type
  if (num_bytes <= 0) return;
  jpeg_source_mgr* src = cinfo->src;
  if (static_cast<size_t>(num_bytes) > src->bytes_in_buffer) {
    src->next_input_byte += src->bytes_in_buffer;
    src->bytes_in_buffer = 0;
    (void)FillInputBuffer(cinfo);  // a fake EOI, or a suspension on the next read
  } else {
    src->next_input_byte += num_bytes;
    src->bytes_in_buffer -= static_cast<size_t>(num_bytes);
  }
}

// How decoded rows reach the output.
enum class RowMode {
  kDirect,   // libjpeg writes the output rows
  kRealign,  // crop narrower than the MCU-aligned width: via a scratch row
  kCmyk,     // CMYK/YCCK to RGB: via a scratch row, converted as TF does
};

// One libjpeg decompressor over `contents`. Not copyable; destroys the
// libjpeg object (and everything it allocated) on destruction.
class JpegDecoder {
 public:
  JpegDecoder(std::string_view contents, bool try_recover) {
    std::memset(&cinfo_, 0, sizeof(cinfo_));
    std::memset(&err_, 0, sizeof(err_));
    std::memset(&src_, 0, sizeof(src_));
    src_.pub.next_input_byte = reinterpret_cast<const JOCTET*>(contents.data());
    src_.pub.bytes_in_buffer = contents.size();
    src_.pub.init_source = InitSource;
    src_.pub.fill_input_buffer = FillInputBuffer;
    src_.pub.skip_input_data = SkipInputData;
    src_.pub.resync_to_restart = jpeg_resync_to_restart;
    src_.pub.term_source = TermSource;
    src_.try_recover = try_recover;
  }
  ~JpegDecoder() { jpeg_destroy_decompress(&cinfo_); }  // no-op before Create
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Runs one step; false if libjpeg failed in it (then message()).
  bool Run(void (JpegDecoder::*step)()) {
    if (setjmp(err_.jump) != 0) return false;
    (this->*step)();
    return true;
  }

  // ---- Steps (run only through Run) ----
  void Create() {
    cinfo_.err = jpeg_std_error(&err_.pub);
    err_.pub.error_exit = ErrorExit;
    err_.pub.output_message = OutputMessage;
    jpeg_create_decompress(&cinfo_);
    cinfo_.src = &src_.pub;
  }
  void ReadHeader() { header_complete_ = jpeg_read_header(&cinfo_, TRUE) == JPEG_HEADER_OK; }
  void CalcOutputDimensions() { jpeg_calc_output_dimensions(&cinfo_); }
  void StartDecompress() { started_ = jpeg_start_decompress(&cinfo_) != FALSE; }
  void SetUpCrop() {
    JDIMENSION x = crop_x_;
    JDIMENSION width = crop_width_;
    jpeg_crop_scanline(&cinfo_, &x, &width);
    column_offset_ = crop_x_ - x;
    rows_skipped_ = crop_y_ == 0 ? 0 : jpeg_skip_scanlines(&cinfo_, crop_y_);
  }
  void ReadRows();
  void SkipRemainingRowsAndFinish() {
    if (cropping_ && cinfo_.output_scanline < cinfo_.output_height) {
      jpeg_skip_scanlines(&cinfo_, cinfo_.output_height - cinfo_.output_scanline);
    }
    jpeg_finish_decompress(&cinfo_);
  }
  void Abort() { jpeg_abort_decompress(&cinfo_); }

  // ---- State, set by the caller between steps or read after them ----
  jpeg_decompress_struct& cinfo() { return cinfo_; }
  const char* message() const { return err_.message; }
  bool header_complete() const { return header_complete_; }
  bool started() const { return started_; }

  // Crop window (in output pixels); set before SetUpCrop.
  void SetCrop(JDIMENSION y, JDIMENSION x, JDIMENSION width) {
    cropping_ = true;
    crop_y_ = y;
    crop_x_ = x;
    crop_width_ = width;
  }
  JDIMENSION rows_skipped() const { return rows_skipped_; }
  // After SetUpCrop: crop x minus the first decoded (MCU-aligned) column.
  JDIMENSION column_offset() const { return column_offset_; }

  // Destination of ReadRows: `rows` rows of `width` pixels of `channels`.
  void SetOutput(uint8_t* data, JDIMENSION rows, JDIMENSION width, int channels) {
    out_ = data;
    out_rows_ = rows;
    out_width_ = width;
    out_channels_ = channels;
  }
  // Rows of the output written by ReadRows; less than out_rows when the data
  // ended early (suspension).
  JDIMENSION rows_read() const { return rows_read_; }

 private:
  size_t row_bytes() const { return static_cast<size_t>(out_width_) * out_channels_; }
  void ConvertCmykRow(const JSAMPLE* cmyk, uint8_t* rgb) const;

  jpeg_decompress_struct cinfo_;
  ErrorManager err_;
  MemorySource src_;
  bool header_complete_ = false;
  bool started_ = false;
  bool cropping_ = false;
  JDIMENSION crop_y_ = 0, crop_x_ = 0, crop_width_ = 0;
  JDIMENSION column_offset_ = 0;  // crop_x minus the MCU-aligned x
  JDIMENSION rows_skipped_ = 0;
  uint8_t* out_ = nullptr;
  JDIMENSION out_rows_ = 0, out_width_ = 0;
  int out_channels_ = 0;
  JDIMENSION rows_read_ = 0;
};

// TF's conversion (jpeg_mem.cc): Adobe files store inverted CMYK.
void JpegDecoder::ConvertCmykRow(const JSAMPLE* cmyk, uint8_t* rgb) const {
  const JSAMPLE* p = cmyk + static_cast<size_t>(column_offset_) * 4;
  const bool adobe = cinfo_.saw_Adobe_marker != FALSE;
  for (JDIMENSION i = 0; i < out_width_; ++i, p += 4, rgb += 3) {
    const int c = p[0], m = p[1], y = p[2], k = p[3];
    if (adobe) {
      rgb[0] = static_cast<uint8_t>(k * c / 255);
      rgb[1] = static_cast<uint8_t>(k * m / 255);
      rgb[2] = static_cast<uint8_t>(k * y / 255);
    } else {
      rgb[0] = static_cast<uint8_t>((255 - k) * (255 - c) / 255);
      rgb[1] = static_cast<uint8_t>((255 - k) * (255 - m) / 255);
      rgb[2] = static_cast<uint8_t>((255 - k) * (255 - y) / 255);
    }
  }
}

void JpegDecoder::ReadRows() {
  const RowMode mode = cinfo_.out_color_space == JCS_CMYK ? RowMode::kCmyk
                       : cinfo_.output_width != out_width_ ? RowMode::kRealign
                                                           : RowMode::kDirect;
  const size_t stride = row_bytes();
  JSAMPARRAY scratch = nullptr;
  if (mode != RowMode::kDirect) {  // freed with the libjpeg object
    // kRowsPerCall rows, as in the direct mode: one row per libjpeg call
    // made cropped decodes slower than libjpeg's own partial decode
    // (docs/perf/jpeg-decode.md).
    scratch = (*cinfo_.mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(&cinfo_), JPOOL_IMAGE,
                                          cinfo_.output_width * cinfo_.output_components, kRowsPerCall);
  }
  JSAMPROW rows[kRowsPerCall];
  while (rows_read_ < out_rows_) {
    uint8_t* out = out_ + rows_read_ * stride;
    const JDIMENSION want = std::min<JDIMENSION>(kRowsPerCall, out_rows_ - rows_read_);
    JDIMENSION got;
    // kRealign: while `want` rows of the decoded (MCU-aligned, wider)
    // width still fit in the output from `out` on, libjpeg writes them there
    // and each row is then moved left into place (destination below its
    // source, and below every later row's source: safe in ascending order),
    // in cache. Only the last batch or two go through the scratch rows:
    // copying every row from scratch into the cold output was a visible part
    // of a cropped decode (docs/perf/jpeg-decode.md).
    const size_t wide = static_cast<size_t>(cinfo_.output_width) * cinfo_.output_components;
    const bool in_place = mode == RowMode::kRealign &&
                          static_cast<size_t>(out_rows_ - rows_read_) * stride >= size_t{want} * wide;
    if (mode == RowMode::kDirect) {
      for (JDIMENSION i = 0; i < want; ++i) rows[i] = out + i * stride;
      got = jpeg_read_scanlines(&cinfo_, rows, want);
    } else if (in_place) {
      for (JDIMENSION i = 0; i < want; ++i) rows[i] = out + i * wide;
      got = jpeg_read_scanlines(&cinfo_, rows, want);
      const size_t shift = static_cast<size_t>(column_offset_) * out_channels_;
      for (JDIMENSION i = 0; i < got; ++i) std::memmove(out + i * stride, out + i * wide + shift, stride);
    } else {
      got = jpeg_read_scanlines(&cinfo_, scratch, want);
      for (JDIMENSION i = 0; i < got; ++i) {
        if (mode == RowMode::kCmyk) {
          ConvertCmykRow(scratch[i], out + i * stride);
        } else {
          std::memcpy(out + i * stride, scratch[i] + static_cast<size_t>(column_offset_) * out_channels_, stride);
        }
      }
    }
    if (got == 0) return;  // suspended: the data ended
    rows_read_ += got;
  }
}

constexpr std::string_view kUncompressFailed = "jpeg::Uncompress failed. Invalid JPEG data or crop window: ";

Status LibjpegError(const JpegDecoder& d) {
  return errors::InvalidArgument(kUncompressFailed, d.message());
}

Status CheckCropWindow(const CropWindow& w, JDIMENSION width, JDIMENSION height) {
  if (w.height > 0 && w.width > 0 && w.y >= 0 && w.x >= 0 && w.y + w.height <= height &&
      w.x + w.width <= width) {
    return Status::OK();
  }
  return errors::InvalidArgument(kUncompressFailed, "crop window [y=", w.y, ", x=", w.x,
                                 ", height=", w.height, ", width=", w.width,
                                 "] is empty or not inside the ", height, "x", width, " image");
}

// Sets the output colour space, scaling and DCT as TF does. Returns the
// number of output channels.
int ConfigureDecompress(jpeg_decompress_struct& cinfo, const DecodeJpegOptions& options) {
  int channels = options.channels == 0 ? std::min(cinfo.num_components, 3) : options.channels;
  if (channels == 1) {
    cinfo.out_color_space = JCS_GRAYSCALE;
  } else {
    channels = 3;
    // libjpeg decodes Adobe CMYK/YCCK to CMYK; TF converts that to RGB.
    const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  }
  cinfo.do_fancy_upsampling = options.fancy_upscaling ? TRUE : FALSE;
  cinfo.scale_num = 1;
  cinfo.scale_denom = static_cast<unsigned int>(options.ratio);
  cinfo.dct_method = options.dct_method == "INTEGER_ACCURATE" ? JDCT_ISLOW : JDCT_IFAST;
  return channels;
}

// After a suspension: TF's recovery (repeat the last row) or its
// acceptable_fraction rule (zero the missing rows).
Status HandleMissingRows(const DecodeJpegOptions& options, JDIMENSION rows_read, JDIMENSION rows,
                         uint8_t* data, size_t stride) {
  if (options.try_recover_truncated) {
    for (JDIMENSION r = rows_read; r < rows; ++r) {
      uint8_t* row = data + r * stride;
      if (r == 0) {
        std::memset(row, 0, stride);
      } else {
        std::memcpy(row, row - stride, stride);
      }
    }
    return Status::OK();
  }
  const float fraction = static_cast<float>(rows_read) / static_cast<float>(rows);
  if (fraction < std::min(1.0f, options.acceptable_fraction)) {
    return errors::InvalidArgument(kUncompressFailed, "Premature end of JPEG data: ", rows_read,
                                   " of ", rows, " rows decoded, less than acceptable_fraction ",
                                   options.acceptable_fraction);
  }
  std::memset(data + rows_read * stride, 0, (rows - rows_read) * stride);
  return Status::OK();
}

}  // namespace

Result<Tensor> DecodeJpegData(std::string_view contents, const DecodeJpegOptions& options,
                              const CropWindow* crop, int64_t* column_offset, DType output_dtype) {
  JpegDecoder d(contents, options.try_recover_truncated);
  if (!d.Run(&JpegDecoder::Create) || !d.Run(&JpegDecoder::ReadHeader)) return LibjpegError(d);
  if (!d.header_complete()) {
    return errors::InvalidArgument(kUncompressFailed, "the data ends inside the JPEG header");
  }
  jpeg_decompress_struct& cinfo = d.cinfo();
  const int channels = ConfigureDecompress(cinfo, options);
  if (!d.Run(&JpegDecoder::CalcOutputDimensions)) return LibjpegError(d);
  const int64_t samples = int64_t{cinfo.output_width} * cinfo.output_height * cinfo.num_components;
  if (cinfo.output_width == 0 || cinfo.output_height == 0 || samples >= kMaxOutputSamples) {
    return errors::InvalidArgument(kUncompressFailed, "image size ", cinfo.output_height, "x",
                                   cinfo.output_width, "x", cinfo.num_components,
                                   " is empty or too large (limit 2^29 samples)");
  }
  // Before jpeg_start_decompress, which allocates libjpeg's buffers.
  SLUICE_ASSIGN_OR_RETURN(const int64_t max_bytes, DecodeLimit(options.max_decode_bytes));
  SLUICE_RETURN_IF_ERROR(CheckDecodeLimit(ImageFormat::kJpeg, cinfo.output_width, cinfo.output_height, channels,
                                          output_dtype, max_bytes));
  if (crop != nullptr) {
    SLUICE_RETURN_IF_ERROR(CheckCropWindow(*crop, cinfo.output_width, cinfo.output_height));
  }
  if (!d.Run(&JpegDecoder::StartDecompress)) return LibjpegError(d);
  if (!d.started()) {  // a multi-scan file whose scans end early
    return errors::InvalidArgument(kUncompressFailed,
                                   "Premature end of JPEG data (a progressive or multi-scan file "
                                   "is cut; try_recover_truncated decodes what is there)");
  }
  JDIMENSION rows = cinfo.output_height;
  JDIMENSION width = cinfo.output_width;
  if (crop != nullptr) {
    rows = static_cast<JDIMENSION>(crop->height);
    width = static_cast<JDIMENSION>(crop->width);
    d.SetCrop(static_cast<JDIMENSION>(crop->y), static_cast<JDIMENSION>(crop->x), width);
    if (!d.Run(&JpegDecoder::SetUpCrop)) return LibjpegError(d);
    // The caller takes the decoded columns as they are (no realigning copy);
    // CMYK rows go through the converting scratch row anyway.
    if (column_offset != nullptr) {
      *column_offset = 0;
      if (cinfo.out_color_space != JCS_CMYK) {
        width = cinfo.output_width;
        *column_offset = d.column_offset();
      }
    }
  }

  Tensor image(DType::kUInt8, TensorShape{int64_t{rows}, int64_t{width}, int64_t{channels}});
  uint8_t* data = image.data<uint8_t>();
  d.SetOutput(data, rows, width, channels);
  const bool skipped_all = crop == nullptr || d.rows_skipped() == static_cast<JDIMENSION>(crop->y);
  if (skipped_all && !d.Run(&JpegDecoder::ReadRows)) return LibjpegError(d);

  if (d.rows_read() < rows) {
    const size_t stride = static_cast<size_t>(width) * channels;
    SLUICE_RETURN_IF_ERROR(HandleMissingRows(options, d.rows_read(), rows, data, stride));
    d.Run(&JpegDecoder::Abort);
    return image;
  }
  if (!d.Run(&JpegDecoder::SkipRemainingRowsAndFinish)) return LibjpegError(d);
  return image;
}

}  // namespace sluice::image::internal

namespace sluice::image {

using internal::JpegDecoder;

Result<Tensor> ExtractJpegShape(std::string_view contents, DType output_type) {
  if (output_type != DType::kInt32 && output_type != DType::kInt64) {
    return errors::InvalidArgument("output_type must be int32 or int64, got ",
                                   DTypeName(output_type));
  }
  const auto invalid = [&](std::string_view why) {
    return errors::InvalidArgument("Invalid JPEG data, size ", contents.size(), ": ", why);
  };
  if (contents.empty()) return invalid("Input is empty.");
  JpegDecoder d(contents, /*try_recover=*/false);
  if (!d.Run(&JpegDecoder::Create) || !d.Run(&JpegDecoder::ReadHeader)) return invalid(d.message());
  if (!d.header_complete()) return invalid("the data ends inside the JPEG header");
  if (!d.Run(&JpegDecoder::CalcOutputDimensions)) return invalid(d.message());
  const jpeg_decompress_struct& cinfo = d.cinfo();
  const int64_t dims[3] = {cinfo.output_height, cinfo.output_width, cinfo.output_components};
  if (output_type == DType::kInt32) {
    return Tensor::FromVector<int32_t>({static_cast<int32_t>(dims[0]), static_cast<int32_t>(dims[1]),
                                        static_cast<int32_t>(dims[2])});
  }
  return Tensor::FromVector<int64_t>({dims[0], dims[1], dims[2]});
}

}  // namespace sluice::image
