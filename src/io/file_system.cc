// FileSystem defaults and helpers shared by every implementation.
#include "sluice/io/file_system.h"

#include <fnmatch.h>

#include <string>

#include "io/io_errors.h"

namespace sluice::io {
namespace {

// A SequentialFile over a RandomAccessFile.
class RandomAccessSequentialFile : public SequentialFile {
 public:
  explicit RandomAccessSequentialFile(std::unique_ptr<RandomAccessFile> file) : file_(std::move(file)) {}

  Result<size_t> Read(size_t n, char* dst) override {
    Result<size_t> got = file_->Read(pos_, n, dst);
    if (got.ok()) pos_ += *got;
    return got;
  }
  Status Skip(uint64_t n) override {
    pos_ += n;
    return Status::OK();
  }
  const std::string& name() const override { return file_->name(); }

 private:
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t pos_ = 0;
};

}  // namespace

Result<std::unique_ptr<SequentialFile>> FileSystem::NewSequentialFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, NewRandomAccessFile(path));
  return std::unique_ptr<SequentialFile>(new RandomAccessSequentialFile(std::move(file)));
}

Result<uint64_t> FileSystem::GetFileSize(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(FileStatistics stat, Stat(path));
  return stat.length;
}

Status FileSystem::FileExists(const std::string& path) { return Stat(path).status(); }

Result<std::string> ReadFileToString(FileSystem* fs, const std::string& path) {
  fs = OrDefault(fs);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs->NewRandomAccessFile(path));
  std::string out;
  // Read in growing chunks until a short read: the size from Stat may be
  // stale, and some files (pipes, /proc) report none.
  size_t chunk = 64 << 10;
  for (;;) {
    const size_t old = out.size();
    out.resize(old + chunk);
    SLUICE_ASSIGN_OR_RETURN(size_t got, file->Read(old, chunk, out.data() + old));
    out.resize(old + got);
    if (got < chunk) break;
    if (chunk < (16u << 20)) chunk *= 2;
  }
  return out;
}

Status WriteStringToFile(FileSystem* fs, const std::string& path, std::string_view data) {
  fs = OrDefault(fs);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs->NewWritableFile(path));
  SLUICE_RETURN_IF_ERROR(file->Append(data));
  return file->Close();
}

bool MatchesGlob(std::string_view pattern, std::string_view path) {
  const std::string p(pattern), s(path);
  return fnmatch(p.c_str(), s.c_str(), FNM_PATHNAME) == 0;
}

}  // namespace sluice::io
