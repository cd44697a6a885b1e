// InputStream basics and the plain-file stream.
#include "sluice/io/input_stream.h"

#include <memory>

#include "io/io_errors.h"
#include "io/zlib_input_stream.h"

namespace sluice::io {
namespace {

class FileInputStream : public InputStream {
 public:
  explicit FileInputStream(std::unique_ptr<RandomAccessFile> file) : file_(std::move(file)) {}

  Result<size_t> Read(size_t n, char* dst) override {
    SLUICE_ASSIGN_OR_RETURN(size_t got, file_->Read(pos_, n, dst));
    pos_ += got;
    return got;
  }
  Result<uint64_t> Skip(uint64_t n) override {
    pos_ += n;
    return n;
  }
  Status Seek(uint64_t offset) override {
    pos_ = offset;
    return Status::OK();
  }
  uint64_t Tell() const override { return pos_; }
  const std::string& name() const override { return file_->name(); }

 private:
  const std::unique_ptr<RandomAccessFile> file_;
  uint64_t pos_ = 0;
};

}  // namespace

Result<CompressionType> ParseCompressionType(std::string_view name) {
  if (name.empty() || name == "NONE") return CompressionType::kNone;
  if (name == "ZLIB") return CompressionType::kZlib;
  if (name == "GZIP") return CompressionType::kGzip;
  return errors::InvalidArgument("Unsupported compression type '", name, "': expected \"\", \"ZLIB\" or \"GZIP\"");
}

std::string_view CompressionTypeName(CompressionType type) {
  switch (type) {
    case CompressionType::kZlib:
      return "ZLIB";
    case CompressionType::kGzip:
      return "GZIP";
    case CompressionType::kNone:
      break;
  }
  return "";
}

Result<uint64_t> InputStream::Skip(uint64_t n) {
  constexpr size_t kChunk = 64 << 10;
  std::unique_ptr<char[]> scratch(new char[kChunk]);
  uint64_t done = 0;
  while (done < n) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, n - done));
    SLUICE_ASSIGN_OR_RETURN(size_t got, Read(want, scratch.get()));
    done += got;
    if (got < want) break;
  }
  return done;
}

Result<std::unique_ptr<InputStream>> NewInputStream(std::unique_ptr<RandomAccessFile> file, CompressionType type,
                                                    const ZlibOptions& options) {
  if (type == CompressionType::kNone) return std::unique_ptr<InputStream>(new FileInputStream(std::move(file)));
  return NewZlibInputStream(std::move(file), type, options);
}

}  // namespace sluice::io
