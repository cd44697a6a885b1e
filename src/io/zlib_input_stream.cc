// Decompresses a file holding one zlib or gzip stream, inflating straight
// into the caller's buffer (no intermediate copy of the output).
//
// As TensorFlow's ZlibInputStream: a gzip stream may hold several members
// (inflate is reset at each member's end); bytes after the end of a zlib
// stream are ignored; a file of zero bytes is an empty stream. Unlike
// TensorFlow, input that ends inside a member is DataLoss ("truncated
// compressed stream") rather than a silent end.
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "io/io_errors.h"
#include "io/zlib_input_stream.h"

namespace sluice::io {
namespace {

class ZlibInputStream : public InputStream {
 public:
  ZlibInputStream(std::unique_ptr<RandomAccessFile> file, CompressionType type, const ZlibOptions& options)
      : file_(std::move(file)),
        gzip_(type == CompressionType::kGzip),
        window_bits_(options.window_bits),
        in_capacity_(std::max<size_t>(options.input_buffer_size, 1024)),
        in_buf_(new unsigned char[in_capacity_]) {
    std::memset(&z_, 0, sizeof(z_));
  }

  ~ZlibInputStream() override {
    if (initialised_) inflateEnd(&z_);
  }

  Status Init() {
    const int rc = inflateInit2(&z_, window_bits_ + (gzip_ ? 16 : 0));
    if (rc != Z_OK) return errors::InvalidArgument("inflateInit2 failed with error ", rc, " for ", name());
    initialised_ = true;
    return Status::OK();
  }

  Result<size_t> Read(size_t n, char* dst) override {
    if (!pending_.ok()) {
      Status s = pending_;
      pending_ = Status::OK();
      return s;
    }
    if (n == 0 || at_end_) return size_t{0};
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    const size_t asked = z_.avail_out;
    Status error;
    while (z_.avail_out > 0 && !at_end_) {
      if (z_.avail_in == 0) {
        error = FillInput();
        if (!error.ok() || at_end_ || truncated_) break;
      }
      if (member_done_) {
        // More input after a complete gzip member: the next member.
        inflateReset(&z_);
        member_done_ = false;
      }
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done_ = true;
        if (!gzip_) at_end_ = true;  // a zlib stream: trailing bytes are ignored
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        error = errors::DataLoss("corrupt compressed data in ", name(), " at uncompressed offset ",
                                 pos_ + (asked - z_.avail_out), ": inflate() failed with error ", rc,
                                 z_.msg != nullptr ? ": " : "", z_.msg != nullptr ? z_.msg : "");
        break;
      }
    }
    const size_t produced = asked - z_.avail_out;
    pos_ += produced;
    if (truncated_) {
      truncated_ = false;
      error = errors::DataLoss("truncated compressed stream in ", name(), " at uncompressed offset ", pos_, ": the ",
                               gzip_ ? "gzip" : "zlib", " stream ends after ", in_pos_,
                               " compressed bytes, without its end marker");
    }
    if (!error.ok()) {
      error = WithLocation(error, name(), -1, pos_);
      if (produced > 0) {
        pending_ = error;
        return produced;
      }
      return error;
    }
    return produced;
  }

  Status Seek(uint64_t offset) override {
    if (offset < pos_) Rewind();
    if (offset > pos_) return Skip(offset - pos_).status();
    return Status::OK();
  }

  uint64_t Tell() const override { return pos_; }
  const std::string& name() const override { return file_->name(); }

 private:
  // Reads the next chunk of compressed input; at its end sets at_end_ (a
  // clean end) or truncated_ (the input ended inside a stream).
  Status FillInput() {
    SLUICE_ASSIGN_OR_RETURN(size_t got, file_->Read(in_pos_, in_capacity_, reinterpret_cast<char*>(in_buf_.get())));
    if (got == 0) {
      if (member_done_ || in_pos_ == 0) {
        at_end_ = true;
        return Status::OK();
      }
      truncated_ = true;
      return Status::OK();
    }
    in_pos_ += got;
    z_.next_in = in_buf_.get();
    z_.avail_in = static_cast<uInt>(got);
    return Status::OK();
  }

  void Rewind() {
    inflateReset(&z_);
    z_.avail_in = 0;
    z_.next_in = nullptr;
    in_pos_ = 0;
    pos_ = 0;
    at_end_ = false;
    member_done_ = false;
    pending_ = Status::OK();
  }

  const std::unique_ptr<RandomAccessFile> file_;
  const bool gzip_;
  const int window_bits_;
  const size_t in_capacity_;
  std::unique_ptr<unsigned char[]> in_buf_;
  z_stream z_;
  bool initialised_ = false;
  uint64_t in_pos_ = 0;       // compressed bytes read from the file
  uint64_t pos_ = 0;          // uncompressed bytes produced
  bool at_end_ = false;       // no more uncompressed bytes
  bool member_done_ = false;  // inflate reported Z_STREAM_END
  bool truncated_ = false;    // the input ended inside a stream
  Status pending_;            // an error to report on the next Read
};

}  // namespace

Status ValidateZlibOptions(const ZlibOptions& o) {
  if (o.window_bits < 8 || o.window_bits > 15) {
    return errors::InvalidArgument("window_bits must be in [8, 15], not ", o.window_bits);
  }
  if (o.compression_level < -1 || o.compression_level > 9) {
    return errors::InvalidArgument("compression_level must be in [-1, 9], not ", o.compression_level);
  }
  if (o.mem_level < 1 || o.mem_level > 9) {
    return errors::InvalidArgument("mem_level must be in [1, 9], not ", o.mem_level);
  }
  if (o.compression_strategy < 0 || o.compression_strategy > 4) {
    return errors::InvalidArgument("compression_strategy must be in [0, 4], not ", o.compression_strategy);
  }
  if (o.flush_mode != Z_NO_FLUSH && o.flush_mode != Z_SYNC_FLUSH && o.flush_mode != Z_FULL_FLUSH &&
      o.flush_mode != Z_PARTIAL_FLUSH && o.flush_mode != Z_BLOCK) {
    return errors::InvalidArgument("unsupported flush_mode ", o.flush_mode);
  }
  if (o.input_buffer_size == 0 || o.output_buffer_size == 0) {
    return errors::InvalidArgument("zlib buffer sizes must be > 0");
  }
  return Status::OK();
}

Result<std::unique_ptr<InputStream>> NewZlibInputStream(std::unique_ptr<RandomAccessFile> file, CompressionType type,
                                                        const ZlibOptions& options) {
  SLUICE_RETURN_IF_ERROR(ValidateZlibOptions(options));
  auto stream = std::make_unique<ZlibInputStream>(std::move(file), type, options);
  SLUICE_RETURN_IF_ERROR(stream->Init());
  return std::unique_ptr<InputStream>(std::move(stream));
}

}  // namespace sluice::io
