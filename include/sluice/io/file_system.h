// The file-system seam under every reader and writer (LevelDB's Env).
//
// Readers and writers reach files only through a FileSystem, so that tests
// can inject faults (FaultInjectionFileSystem: truncation, read errors, open
// errors) and other storage can be plugged in later. DefaultFileSystem() is
// the POSIX implementation: pread(2) for random access, buffered write(2) for
// writing, glob(3) for patterns.
//
// Errors map errno the way TensorFlow does: ENOENT -> NotFound, EACCES/EPERM
// -> PermissionDenied, EEXIST -> AlreadyExists, ENOSPC/EDQUOT/EMFILE ->
// ResourceExhausted, EISDIR/ENOTDIR -> FailedPrecondition, EINVAL ->
// InvalidArgument, others -> Unknown. Messages start with the path; every
// error carries the "file" payload.
//
// Thread-safety: FileSystem methods and RandomAccessFile::Read are
// thread-safe. A SequentialFile or WritableFile is used by one thread at a
// time. Files do not keep their FileSystem alive: a FileSystem must outlive
// the files it opened (DefaultFileSystem() lives for the whole process).
#ifndef SLUICE_IO_FILE_SYSTEM_H_
#define SLUICE_IO_FILE_SYSTEM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::io {

// A file read at arbitrary offsets.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;

  // Reads up to `n` bytes at `offset` into `dst`; returns how many were
  // read. Fewer than `n` only at end of file (0 when offset >= size).
  // Errors: the I/O error (Unknown, FailedPrecondition for a directory, ...).
  // Thread-safe; does not move any file position.
  [[nodiscard]] virtual Result<size_t> Read(uint64_t offset, size_t n, char* dst) const = 0;

  // The path the file was opened with.
  virtual const std::string& name() const = 0;
};

// A file read front to back.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to `n` bytes into `dst`; fewer only at end of file (0 there).
  [[nodiscard]] virtual Result<size_t> Read(size_t n, char* dst) = 0;
  // Skips `n` bytes; skipping past the end leaves the file at its end.
  [[nodiscard]] virtual Status Skip(uint64_t n) = 0;
  virtual const std::string& name() const = 0;
};

// A file written front to back. Not thread-safe.
class WritableFile {
 public:
  // Destroying an open file closes it and drops any close error; call Close()
  // to see it.
  virtual ~WritableFile() = default;
  // Appends `data` (possibly buffered).
  [[nodiscard]] virtual Status Append(std::string_view data) = 0;
  // Hands buffered data to the operating system.
  [[nodiscard]] virtual Status Flush() = 0;
  // Flush, then make the data durable (fdatasync).
  [[nodiscard]] virtual Status Sync() = 0;
  // Flushes and closes. Later calls return FailedPrecondition.
  [[nodiscard]] virtual Status Close() = 0;
  virtual const std::string& name() const = 0;
};

struct FileStatistics {
  uint64_t length = 0;
  int64_t mtime_nsec = 0;  // modification time, nanoseconds since the epoch
  bool is_directory = false;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Errors: NotFound (no such file), PermissionDenied, ...
  [[nodiscard]] virtual Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) = 0;
  // The default reads through NewRandomAccessFile.
  [[nodiscard]] virtual Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path);
  // Creates or truncates `path`. Errors: NotFound (missing directory), ...
  [[nodiscard]] virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) = 0;

  [[nodiscard]] virtual Result<FileStatistics> Stat(const std::string& path) = 0;
  // The file's length. Errors as Stat.
  [[nodiscard]] virtual Result<uint64_t> GetFileSize(const std::string& path);
  // OK if `path` exists, NotFound if not, another error if it cannot tell.
  [[nodiscard]] virtual Status FileExists(const std::string& path);
  // The paths matching `pattern`, sorted bytewise; empty if none match.
  // `?` one character, `*` any run of characters, `[...]` a character class
  // (`[!...]` negated); none of them match '/', and a leading '.' of a name
  // is matched only by a literal '.' (glob(3)). `\` escapes the next
  // character.
  [[nodiscard]] virtual Result<std::vector<std::string>> GetMatchingPaths(const std::string& pattern) = 0;
  [[nodiscard]] virtual Status DeleteFile(const std::string& path) = 0;
  // Atomically replaces `dst` with `src` (rename(2)).
  [[nodiscard]] virtual Status RenameFile(const std::string& src, const std::string& dst) = 0;
};

// The process-wide POSIX file system. Never null, never destroyed.
FileSystem* DefaultFileSystem();

// `fs` if non-null, else DefaultFileSystem().
inline FileSystem* OrDefault(FileSystem* fs) { return fs != nullptr ? fs : DefaultFileSystem(); }

// Reads the whole file. Errors as NewRandomAccessFile and Read.
[[nodiscard]] Result<std::string> ReadFileToString(FileSystem* fs, const std::string& path);
// Creates or replaces the file with `data`.
[[nodiscard]] Status WriteStringToFile(FileSystem* fs, const std::string& path, std::string_view data);

// True if `path` matches the glob `pattern` (the syntax of GetMatchingPaths).
bool MatchesGlob(std::string_view pattern, std::string_view path);

}  // namespace sluice::io

#endif  // SLUICE_IO_FILE_SYSTEM_H_
