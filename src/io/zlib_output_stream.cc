// A WritableFile that deflates into another (TensorFlow's ZlibOutputStream).
//
// Appends gather into an input buffer of options.input_buffer_size bytes,
// deflated with Z_NO_FLUSH when it fills; compressed bytes gather into an
// output buffer written to the destination when it fills. Flush() deflates
// with options.flush_mode; Close() with Z_FINISH. Because deflate's output
// does not depend on how Z_NO_FLUSH input is split into calls, the stream
// equals a one-shot compression of the same bytes (zlib's compress()).
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "io/io_errors.h"
#include "io/zlib_input_stream.h"
#include "sluice/io/input_stream.h"

namespace sluice::io {
namespace {

class ZlibOutputStream : public WritableFile {
 public:
  ZlibOutputStream(std::unique_ptr<WritableFile> dest, CompressionType type, const ZlibOptions& options)
      : dest_(std::move(dest)), gzip_(type == CompressionType::kGzip), options_(options) {
    std::memset(&z_, 0, sizeof(z_));
    in_.reserve(options_.input_buffer_size);
    out_.reset(new unsigned char[options_.output_buffer_size]);
  }

  ~ZlibOutputStream() override {
    if (!closed_) Close().IgnoreError();
    if (initialised_) deflateEnd(&z_);
  }

  Status Init() {
    const int rc = deflateInit2(&z_, options_.compression_level, Z_DEFLATED,
                                options_.window_bits + (gzip_ ? 16 : 0), options_.mem_level,
                                options_.compression_strategy);
    if (rc != Z_OK) return errors::InvalidArgument("deflateInit2 failed with error ", rc, " for ", name());
    initialised_ = true;
    z_.next_out = out_.get();
    z_.avail_out = static_cast<uInt>(options_.output_buffer_size);
    return Status::OK();
  }

  Status Append(std::string_view data) override {
    SLUICE_RETURN_IF_ERROR(CheckUsable());
    while (!data.empty()) {
      const size_t room = options_.input_buffer_size - in_.size();
      const size_t take = std::min(room, data.size());
      in_.append(data.data(), take);
      data.remove_prefix(take);
      if (in_.size() == options_.input_buffer_size) SLUICE_RETURN_IF_ERROR(Sticky(Deflate(Z_NO_FLUSH)));
    }
    return Status::OK();
  }

  Status Flush() override {
    SLUICE_RETURN_IF_ERROR(CheckUsable());
    SLUICE_RETURN_IF_ERROR(Sticky(Deflate(options_.flush_mode)));
    SLUICE_RETURN_IF_ERROR(Sticky(WriteOutput()));
    return Sticky(dest_->Flush());
  }

  Status Sync() override {
    SLUICE_RETURN_IF_ERROR(Flush());
    return Sticky(dest_->Sync());
  }

  Status Close() override {
    if (closed_) return errors::FailedPrecondition(name(), ": file already closed");
    closed_ = true;
    Status s = error_;
    if (s.ok()) s = Deflate(Z_FINISH);
    if (s.ok()) s = WriteOutput();
    Status c = dest_->Close();
    return s.ok() ? c : s;
  }

  const std::string& name() const override { return dest_->name(); }

 private:
  Status CheckUsable() const {
    if (closed_) return errors::FailedPrecondition(name(), ": file already closed");
    return error_;
  }

  // Remembers the first error: after one, the stream is broken.
  Status Sticky(Status s) {
    if (!s.ok() && error_.ok()) error_ = s;
    return s;
  }

  // Deflates the gathered input with `flush`, writing out full buffers.
  Status Deflate(int flush) {
    z_.next_in = reinterpret_cast<Bytef*>(in_.data());
    z_.avail_in = static_cast<uInt>(in_.size());
    for (;;) {
      const int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return errors::Internal("deflate() failed for ", name());
      if (z_.avail_out == 0) {
        SLUICE_RETURN_IF_ERROR(WriteOutput());
        continue;
      }
      // Output space is left, so deflate has done all it can for `flush`.
      if (z_.avail_in == 0 && (flush != Z_FINISH || rc == Z_STREAM_END)) break;
    }
    in_.clear();
    return Status::OK();
  }

  Status WriteOutput() {
    const size_t n = options_.output_buffer_size - z_.avail_out;
    if (n > 0) {
      SLUICE_RETURN_IF_ERROR(dest_->Append(std::string_view(reinterpret_cast<char*>(out_.get()), n)));
    }
    z_.next_out = out_.get();
    z_.avail_out = static_cast<uInt>(options_.output_buffer_size);
    return Status::OK();
  }

  const std::unique_ptr<WritableFile> dest_;
  const bool gzip_;
  const ZlibOptions options_;
  z_stream z_;
  bool initialised_ = false;
  bool closed_ = false;
  std::string in_;
  std::unique_ptr<unsigned char[]> out_;
  Status error_;
};

}  // namespace

Result<std::unique_ptr<WritableFile>> NewZlibOutputStream(std::unique_ptr<WritableFile> dest, CompressionType type,
                                                          const ZlibOptions& options) {
  if (type == CompressionType::kNone) {
    return errors::InvalidArgument("NewZlibOutputStream needs ZLIB or GZIP compression");
  }
  SLUICE_RETURN_IF_ERROR(ValidateZlibOptions(options));
  auto stream = std::make_unique<ZlibOutputStream>(std::move(dest), type, options);
  SLUICE_RETURN_IF_ERROR(stream->Init());
  return std::unique_ptr<WritableFile>(std::move(stream));
}

}  // namespace sluice::io
