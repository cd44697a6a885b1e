// libFuzzer entry point for sluice's image decoders (src/image): JPEG on
// libjpeg-turbo (whole, cropped, scaled, truncated-recovery paths), PNG on
// libpng, and the format sniffing of DecodeImage. Any input must give an
// image or an InvalidArgument Status: never a crash, a hang, a leak, an
// out-of-bounds access or a message on stderr.
//
// Byte 0 picks the options:
//   bits 0-1  0: DecodeImage; 1: DecodeJpeg; 2: DecodeAndCropJpeg;
//             3: DecodePng (uint16) and ExtractJpegShape
//   bits 2-3  channels 0, 1, 3 or 4
//   bits 4-5  ratio 1, 2, 4 or 8
//   bit 6     try_recover_truncated (else acceptable_fraction 0.5)
//   bit 7     fancy_upscaling off and INTEGER_ACCURATE DCT
// Byte 1 and 2 place the crop window. The rest is the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/image/codec.h"

namespace {

using namespace sluice;         // NOLINT
using namespace sluice::image;  // NOLINT

// Images this large are valid but slow to fill; the fuzzer skips them.
constexpr int64_t kMaxPixels = int64_t{1} << 22;

int64_t DeclaredPixels(std::string_view data) {
  if (SniffImageFormat(data) == ImageFormat::kPng && data.size() >= 24) {
    auto be32 = [&](size_t at) {
      return (int64_t{static_cast<uint8_t>(data[at])} << 24) | (static_cast<uint8_t>(data[at + 1]) << 16) |
             (static_cast<uint8_t>(data[at + 2]) << 8) | static_cast<uint8_t>(data[at + 3]);
    };
    return be32(16) * be32(20);
  }
  Result<Tensor> shape = ExtractJpegShape(data, DType::kInt64);
  if (!shape.ok()) return 0;
  return shape->flat<int64_t>()[0] * shape->flat<int64_t>()[1];
}

void Check(const Status& s) {
  if (!s.ok() && !errors::IsInvalidArgument(s)) std::abort();  // only InvalidArgument is allowed
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size < 3) return 0;
  const uint8_t mode = bytes[0];
  const std::string_view data(reinterpret_cast<const char*>(bytes) + 3, size - 3);
  if (DeclaredPixels(data) > kMaxPixels) return 0;
  static constexpr int kChannels[] = {0, 1, 3, 4};
  DecodeJpegOptions o;
  o.channels = kChannels[(mode >> 2) & 3];
  o.ratio = 1 << ((mode >> 4) & 3);
  o.try_recover_truncated = (mode & 0x40) != 0;
  o.acceptable_fraction = o.try_recover_truncated ? 1.0f : 0.5f;
  if (mode & 0x80) {
    o.fancy_upscaling = false;
    o.dct_method = "INTEGER_ACCURATE";
  }
  if (o.channels == 4 && (mode & 3) != 0 && (mode & 3) != 3) o.channels = 3;
  switch (mode & 3) {
    case 0:
      Check(DecodeImage(data, {.channels = o.channels, .dtype = DType::kFloat32}).status());
      break;
    case 1:
      Check(DecodeJpeg(data, o).status());
      break;
    case 2: {
      const CropWindow w{bytes[1] % 64, bytes[2] % 64, 1 + bytes[1] / 64 * 16, 1 + bytes[2] / 64 * 16};
      Check(DecodeAndCropJpeg(data, w, o).status());
      break;
    }
    default:
      Check(DecodePng(data, {.channels = o.channels, .dtype = DType::kUInt16}).status());
      Check(ExtractJpegShape(data).status());
      break;
  }
  return 0;
}
