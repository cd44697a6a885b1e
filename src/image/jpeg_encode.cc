// EncodeJpeg on libjpeg-turbo (see codec.h). The compressed bytes go to
// libjpeg-turbo's growing memory destination (jpeg_mem_dest); as in
// jpeg_decode.cc, every libjpeg call runs inside a step of
// JpegEncoder::Run, which holds the only setjmp, and no object with a
// destructor lives between it and libjpeg's error_exit.
#include <csetjmp>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t
#include <cstdlib>
#include <cstring>
#include <string>

#include <jerror.h>
#include <jpeglib.h>

#include "sluice/image/codec.h"

namespace sluice::image {
namespace {

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

void OutputMessage(j_common_ptr /*cinfo*/) {}

// The settings of one compression, checked before any libjpeg call.
struct EncodeParams {
  const uint8_t* pixels;
  JDIMENSION height, width;
  int channels;  // 1 or 3
  int quality;
  bool progressive, optimize_size, chroma_downsampling;
  UINT8 density_unit;  // 1 = inch, 2 = cm
  UINT16 x_density, y_density;
  const std::string* xmp_metadata;
};

constexpr char kXmpNamespace[] = "http://ns.adobe.com/xap/1.0/";  // with its NUL

class JpegEncoder {
 public:
  explicit JpegEncoder(const EncodeParams& params) : params_(params) {
    std::memset(&cinfo_, 0, sizeof(cinfo_));
    std::memset(&err_, 0, sizeof(err_));
  }
  ~JpegEncoder() {
    jpeg_destroy_compress(&cinfo_);  // no-op before Compress ran
    std::free(buffer_);              // allocated by jpeg_mem_dest
  }
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;

  bool Run() {
    if (setjmp(err_.jump) != 0) return false;
    Compress();
    return true;
  }
  const char* message() const { return err_.message; }
  std::string Output() const { return std::string(reinterpret_cast<const char*>(buffer_), size_); }

 private:
  void Compress();
  void WriteXmp();

  const EncodeParams params_;
  jpeg_compress_struct cinfo_;
  ErrorManager err_;
  unsigned char* buffer_ = nullptr;
  unsigned long size_ = 0;  // NOLINT(runtime/int): jpeg_mem_dest's type
};

void JpegEncoder::Compress() {
  cinfo_.err = jpeg_std_error(&err_.pub);
  err_.pub.error_exit = ErrorExit;
  err_.pub.output_message = OutputMessage;
  jpeg_create_compress(&cinfo_);
  jpeg_mem_dest(&cinfo_, &buffer_, &size_);
  cinfo_.image_width = params_.width;
  cinfo_.image_height = params_.height;
  cinfo_.input_components = params_.channels;
  cinfo_.in_color_space = params_.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo_);
  if (params_.optimize_size) cinfo_.optimize_coding = TRUE;
  cinfo_.density_unit = params_.density_unit;
  cinfo_.X_density = params_.x_density;
  cinfo_.Y_density = params_.y_density;
  jpeg_set_quality(&cinfo_, params_.quality, TRUE);
  if (params_.progressive) jpeg_simple_progression(&cinfo_);
  if (!params_.chroma_downsampling) {
    for (int i = 0; i < cinfo_.num_components; ++i) {
      cinfo_.comp_info[i].h_samp_factor = 1;
      cinfo_.comp_info[i].v_samp_factor = 1;
    }
  }
  jpeg_start_compress(&cinfo_, TRUE);
  if (!params_.xmp_metadata->empty()) WriteXmp();
  const size_t stride = static_cast<size_t>(params_.width) * params_.channels;
  while (cinfo_.next_scanline < cinfo_.image_height) {
    // libjpeg only reads the rows it is given.
    JSAMPROW row = const_cast<JSAMPROW>(params_.pixels + cinfo_.next_scanline * stride);
    jpeg_write_scanlines(&cinfo_, &row, 1);
  }
  jpeg_finish_compress(&cinfo_);
}

// XMP goes in APP1 as the namespace, a NUL, then the packet.
void JpegEncoder::WriteXmp() {
  const std::string& xmp = *params_.xmp_metadata;
  const size_t length = sizeof(kXmpNamespace) + xmp.size();
  if (length > 65533) ERREXIT(&cinfo_, JERR_BAD_LENGTH);
  jpeg_write_m_header(&cinfo_, JPEG_APP0 + 1, static_cast<unsigned int>(length));
  for (char c : kXmpNamespace) jpeg_write_m_byte(&cinfo_, static_cast<unsigned char>(c));
  for (char c : xmp) jpeg_write_m_byte(&cinfo_, static_cast<unsigned char>(c));
}

Result<EncodeParams> CheckEncodeJpeg(const Tensor& image, const EncodeJpegOptions& o) {
  if (image.dtype() != DType::kUInt8) {
    return errors::InvalidArgument("EncodeJpeg: image must be uint8, got ", DTypeName(image.dtype()));
  }
  if (image.rank() != 3) {
    return errors::InvalidArgument("image must be 3-dimensional", image.shape().DebugString());
  }
  const TensorShape& s = image.shape();
  const int64_t channels = s.dim(2);
  if (channels != 1 && channels != 3) {
    return errors::InvalidArgument("image must have 1 or 3 channels, got ", s.DebugString());
  }
  if ((o.format == "grayscale" && channels != 1) || (o.format == "rgb" && channels != 3)) {
    return errors::InvalidArgument("format '", o.format, "' does not match the image's ", channels,
                                   " channels");
  }
  if (!o.format.empty() && o.format != "grayscale" && o.format != "rgb") {
    return errors::InvalidArgument("format must be '', 'grayscale' or 'rgb', got '", o.format, "'");
  }
  if (s.dim(0) <= 0 || s.dim(1) <= 0 || s.dim(0) > JPEG_MAX_DIMENSION || s.dim(1) > JPEG_MAX_DIMENSION) {
    return errors::InvalidArgument("EncodeJpeg: image size ", s.DebugString(),
                                   " must be positive and at most ", JPEG_MAX_DIMENSION, " per side");
  }
  if (o.quality < 0 || o.quality > 100) {
    return errors::InvalidArgument("quality must be in [0,100], got ", o.quality);
  }
  if (o.density_unit != "in" && o.density_unit != "cm") {
    return errors::InvalidArgument("density_unit must be 'in' or 'cm', got '", o.density_unit, "'");
  }
  if (o.x_density < 0 || o.x_density > 65535 || o.y_density < 0 || o.y_density > 65535) {
    return errors::InvalidArgument("x_density and y_density must be in [0, 65535]");
  }
  if (o.xmp_metadata.size() + sizeof(kXmpNamespace) > 65533) {
    return errors::InvalidArgument("xmp_metadata is too long for a JPEG marker (",
                                   o.xmp_metadata.size(), " bytes)");
  }
  return EncodeParams{image.data<uint8_t>(),
                      static_cast<JDIMENSION>(s.dim(0)),
                      static_cast<JDIMENSION>(s.dim(1)),
                      static_cast<int>(channels),
                      o.quality,
                      o.progressive,
                      o.optimize_size,
                      o.chroma_downsampling,
                      static_cast<UINT8>(o.density_unit == "in" ? 1 : 2),
                      static_cast<UINT16>(o.x_density),
                      static_cast<UINT16>(o.y_density),
                      &o.xmp_metadata};
}

}  // namespace

Result<std::string> EncodeJpeg(const Tensor& image, const EncodeJpegOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(const EncodeParams params, CheckEncodeJpeg(image, options));
  JpegEncoder encoder(params);
  if (!encoder.Run()) return errors::Internal("JPEG encoding failed: ", encoder.message());
  return encoder.Output();
}

}  // namespace sluice::image
