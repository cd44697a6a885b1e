#include "sluice/ops/decode_compressed.h"

#include <zlib.h>

#include <algorithm>
#include <string>

namespace sluice::ops {
namespace {

// Ends the inflate stream however the function leaves.
class InflateStream {
 public:
  explicit InflateStream(int window_bits) { ok_ = inflateInit2(&zs_, window_bits) == Z_OK; }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  ~InflateStream() {
    if (ok_) inflateEnd(&zs_);
  }
  bool ok() const { return ok_; }
  z_stream* get() { return &zs_; }

 private:
  z_stream zs_{};
  bool ok_ = false;
};

constexpr size_t kMaxChunk = size_t{1} << 30;  // zlib counts in 32 bits

bool IsGzipMagic(const unsigned char* p, size_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

}  // namespace

Result<std::string> DecompressString(std::string_view data, std::string_view compression_type) {
  if (compression_type.empty()) return std::string(data);
  const bool gzip = compression_type == "GZIP";
  if (!gzip && compression_type != "ZLIB") {
    return errors::InvalidArgument("Only ZLIB, GZIP or NONE are supported compressions");
  }
  // TF 2.21 (tf.io.decode_compressed, checked) decodes empty input to empty
  // output for both types.
  if (data.empty()) return std::string();
  InflateStream stream(gzip ? MAX_WBITS + 16 : MAX_WBITS);
  if (!stream.ok()) return errors::ResourceExhausted("Could not initialise zlib");
  z_stream* zs = stream.get();
  auto* in = reinterpret_cast<const unsigned char*>(data.data());
  size_t in_left = data.size();
  std::string out(std::max<size_t>(256, data.size() * 3), '\0');
  size_t produced = 0;
  while (true) {
    if (zs->avail_in == 0 && in_left > 0) {
      const size_t chunk = std::min(in_left, kMaxChunk);
      zs->next_in = const_cast<unsigned char*>(in);
      zs->avail_in = static_cast<uInt>(chunk);
      in += chunk;
      in_left -= chunk;
    }
    if (produced == out.size()) out.resize(out.size() * 2);
    const size_t room = std::min(out.size() - produced, kMaxChunk);
    zs->next_out = reinterpret_cast<unsigned char*>(out.data() + produced);
    zs->avail_out = static_cast<uInt>(room);
    const int ret = inflate(zs, Z_NO_FLUSH);
    produced += room - zs->avail_out;
    if (ret == Z_STREAM_END) {
      // What follows the end of the stream, as TF 2.21 treats it: after a
      // ZLIB stream, anything is ignored (TF inflates no further). After a
      // GZIP member, TF inflates the rest as the next member, so two or more
      // bytes without the gzip magic are DataLoss ("incorrect header check"
      // in TF) and a single byte, too short for zlib to judge, is ignored.
      // (TF also returns what it got from a truncated member; we keep
      // reporting truncation as DataLoss, below.)
      const size_t rest = zs->avail_in + in_left;
      if (rest == 0 || !gzip || rest == 1) break;
      if (!IsGzipMagic(zs->next_in, zs->avail_in)) {
        return errors::DataLoss(rest, " bytes of trailing data after the ", compression_type, " stream");
      }
      if (inflateReset(zs) != Z_OK) return errors::DataLoss("Could not restart zlib for the next GZIP member");
      continue;  // the next gzip member
    }
    if (ret == Z_BUF_ERROR && zs->avail_in == 0 && in_left == 0) {
      return errors::DataLoss("Truncated ", compression_type, " data: the stream ends early");
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      return errors::DataLoss("Corrupt ", compression_type, " data: ", zs->msg != nullptr ? zs->msg : "inflate failed",
                              " (zlib error ", ret, ")");
    }
  }
  out.resize(produced);
  return out;
}

Result<Tensor> DecodeCompressed(const Tensor& bytes, std::string_view compression_type) {
  if (bytes.dtype() != DType::kString) {
    return errors::InvalidArgument("DecodeCompressed needs a string tensor, not ", DTypeName(bytes.dtype()));
  }
  if (!compression_type.empty() && compression_type != "ZLIB" && compression_type != "GZIP") {
    return errors::InvalidArgument("Only ZLIB, GZIP or NONE are supported compressions");
  }
  Tensor out(DType::kString, bytes.shape());
  const std::string* in = bytes.data<std::string>();
  std::string* dst = out.data<std::string>();
  for (int64_t i = 0; i < bytes.num_elements(); ++i) {
    Result<std::string> s = DecompressString(in[i], compression_type);
    if (!s.ok()) return s.status().WithPrefix(StrCat("Element ", i, ": ")).WithPayload("element", std::to_string(i));
    dst[i] = std::move(s).value();
  }
  return out;
}

}  // namespace sluice::ops
