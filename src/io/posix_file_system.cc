// The POSIX FileSystem: pread(2), buffered write(2), glob(3).
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "io/io_errors.h"
#include "sluice/io/file_system.h"

namespace sluice::io {
namespace {

// The components of a path, split at '/'.
std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

// True if a component of a glob match is "." or ".." where the pattern's
// component is a wildcard (glob never matches across '/', so they align).
bool HasUnnamedDotEntry(const std::vector<std::string_view>& match, const std::vector<std::string_view>& pattern) {
  for (size_t i = 0; i < match.size(); ++i) {
    if ((match[i] == "." || match[i] == "..") && (i >= pattern.size() || pattern[i] != match[i])) return true;
  }
  return false;
}

class PosixRandomAccessFile : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  Result<size_t> Read(uint64_t offset, size_t n, char* dst) const override {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd_, dst + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return IOError(name_, StrCat(name_, ": read at offset ", offset + done), errno);
      }
      if (r == 0) break;  // end of file
      done += static_cast<size_t>(r);
    }
    return done;
  }

  const std::string& name() const override { return name_; }

 private:
  const std::string name_;
  const int fd_;
};

class PosixSequentialFile : public SequentialFile {
 public:
  PosixSequentialFile(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Result<size_t> Read(size_t n, char* dst) override {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = ::read(fd_, dst + done, n - done);
      if (r < 0) {
        if (errno == EINTR) continue;
        return IOError(name_, StrCat(name_, ": read"), errno);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    return done;
  }

  Status Skip(uint64_t n) override {
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) < 0) return IOError(name_, StrCat(name_, ": seek"), errno);
    return Status::OK();
  }

  const std::string& name() const override { return name_; }

 private:
  const std::string name_;
  const int fd_;
};

// Buffers small appends (a TFRecord header is 12 bytes) into 64 KiB writes.
class PosixWritableFile : public WritableFile {
 public:
  static constexpr size_t kBufferSize = 64 << 10;

  PosixWritableFile(std::string name, int fd) : name_(std::move(name)), fd_(fd) { buf_.reserve(kBufferSize); }
  ~PosixWritableFile() override {
    if (fd_ >= 0) Close().IgnoreError();
  }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return Closed();
    if (buf_.size() + data.size() <= kBufferSize) {
      buf_.append(data);
      return Status::OK();
    }
    SLUICE_RETURN_IF_ERROR(FlushBuffer());
    if (data.size() < kBufferSize) {
      buf_.append(data);
      return Status::OK();
    }
    return WriteRaw(data);
  }

  Status Flush() override {
    if (fd_ < 0) return Closed();
    return FlushBuffer();
  }

  Status Sync() override {
    SLUICE_RETURN_IF_ERROR(Flush());
    if (::fdatasync(fd_) != 0) return IOError(name_, StrCat(name_, ": fdatasync"), errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Closed();
    Status s = FlushBuffer();
    if (::close(fd_) != 0 && s.ok()) s = IOError(name_, StrCat(name_, ": close"), errno);
    fd_ = -1;
    return s;
  }

  const std::string& name() const override { return name_; }

 private:
  Status Closed() const {
    return errors::FailedPrecondition(name_, ": file already closed").WithPayload("file", name_);
  }

  Status FlushBuffer() {
    Status s = WriteRaw(buf_);
    buf_.clear();
    return s;
  }

  Status WriteRaw(std::string_view data) {
    while (!data.empty()) {
      const ssize_t r = ::write(fd_, data.data(), data.size());
      if (r < 0) {
        if (errno == EINTR) continue;
        return IOError(name_, StrCat(name_, ": write"), errno);
      }
      data.remove_prefix(static_cast<size_t>(r));
    }
    return Status::OK();
  }

  const std::string name_;
  int fd_;
  std::string buf_;
};

class PosixFileSystem : public FileSystem {
 public:
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(int fd, OpenForReading(path));
    return std::unique_ptr<RandomAccessFile>(new PosixRandomAccessFile(path, fd));
  }

  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(int fd, OpenForReading(path));
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return std::unique_ptr<SequentialFile>(new PosixSequentialFile(path, fd));
  }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return IOError(path, path, errno);
    return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
  }

  Result<FileStatistics> Stat(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return IOError(path, path, errno);
    FileStatistics out;
    out.length = static_cast<uint64_t>(st.st_size);
    out.mtime_nsec = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    out.is_directory = S_ISDIR(st.st_mode);
    return out;
  }

  Result<std::vector<std::string>> GetMatchingPaths(const std::string& pattern) override {
    glob_t g{};
    // GLOB_PERIOD: TensorFlow's wildcards match hidden files; "." and ".."
    // then match too, and are kept only where the pattern names them.
    const int rc = ::glob(pattern.c_str(), GLOB_NOSORT | GLOB_PERIOD, nullptr, &g);
    std::vector<std::string> out;
    if (rc == 0) {
      const std::vector<std::string_view> wanted = Split(pattern);
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        if (!HasUnnamedDotEntry(Split(g.gl_pathv[i]), wanted)) out.emplace_back(g.gl_pathv[i]);
      }
    }
    ::globfree(&g);
    if (rc == GLOB_NOSPACE) return errors::ResourceExhausted("out of memory matching ", pattern);
    if (rc == GLOB_ABORTED) return errors::Unknown("read error matching ", pattern);
    std::sort(out.begin(), out.end());
    return out;
  }

  Status DeleteFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return IOError(path, path, errno);
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& dst) override {
    if (::rename(src.c_str(), dst.c_str()) != 0) return IOError(src, StrCat("rename ", src, " to ", dst), errno);
    return Status::OK();
  }

 private:
  static Result<int> OpenForReading(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return IOError(path, path, errno);
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return IOError(path, path, EISDIR);
    }
    return fd;
  }
};

}  // namespace

FileSystem* DefaultFileSystem() {
  static FileSystem* const fs = new PosixFileSystem();
  return fs;
}

}  // namespace sluice::io
