// FaultInjectionFileSystem: a FileSystem for tests that passes every call to
// a base file system (DefaultFileSystem() unless given) and injects faults on
// chosen paths (LevelDB's fault-injection Env).
//
// Faults are looked up on every call, so a fault set after a file was opened
// applies to that file's later reads (a file that shrinks or vanishes while
// it is read). Paths are compared as given (no normalisation).
//
// Injected errors follow the FileSystem contract, as the POSIX file
// system's do: the message starts with the path (and, for reads, "read at
// offset <o>", for appends "write"), then the injected status's message;
// the code is the injected status's; the "file" payload names the path.
//
// Thread-safety: thread-safe; the files it returns follow the FileSystem
// contract. It must outlive the files it opened.
#ifndef SLUICE_IO_FAULT_INJECTION_FILE_SYSTEM_H_
#define SLUICE_IO_FAULT_INJECTION_FILE_SYSTEM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/io/file_system.h"

namespace sluice::io {

class FaultInjectionFileSystem : public FileSystem {
 public:
  // `base` is not owned; null means DefaultFileSystem().
  explicit FaultInjectionFileSystem(FileSystem* base = nullptr);
  ~FaultInjectionFileSystem() override;

  // Opening `path` (any kind of file, and Stat) fails with `status`.
  void FailOpen(const std::string& path, Status status) SLUICE_EXCLUDES(mu_);
  // `path` looks `size` bytes long: reads stop there, Stat reports it.
  void Truncate(const std::string& path, uint64_t size) SLUICE_EXCLUDES(mu_);
  // A read of `path` that would return byte `offset` or a later one fails
  // with `status` instead (the call returns no bytes). After `times`
  // failures the fault heals; times < 0: it never heals.
  void FailReadsAt(const std::string& path, uint64_t offset, Status status, int times = -1) SLUICE_EXCLUDES(mu_);
  // Appends to `path` fail with `status` once `bytes` have been appended.
  // An append that would cross `bytes` writes nothing.
  void FailWritesAfter(const std::string& path, uint64_t bytes, Status status) SLUICE_EXCLUDES(mu_);
  // The disk fills up after `bytes` bytes of `path`: an append that would
  // cross the limit writes the part that fits (a short write(2)) and fails
  // with ResourceExhausted "No space left on device" (ENOSPC); later appends
  // fail the same way and write nothing.
  void FailWritesWhenFullAfter(const std::string& path, uint64_t bytes) SLUICE_EXCLUDES(mu_);
  // `path` vanishes: opening or Stat-ing it fails with NotFound, and so does
  // every later read of a file already open (a remote object deleted under
  // its reader).
  void Vanish(const std::string& path) SLUICE_EXCLUDES(mu_);
  // Removes every fault (the counters stay).
  void ClearFaults() SLUICE_EXCLUDES(mu_);

  // Read calls made on files opened for `path` (to prove that readers do not
  // issue a read per record).
  int64_t read_calls(const std::string& path) const SLUICE_EXCLUDES(mu_);

  // FileSystem:
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Result<FileStatistics> Stat(const std::string& path) override;
  Result<std::vector<std::string>> GetMatchingPaths(const std::string& pattern) override;
  Status DeleteFile(const std::string& path) override;
  Status RenameFile(const std::string& src, const std::string& dst) override;

  // For the files it returns (not part of the public contract).
  struct Faults {
    Status open_error;
    bool truncated = false;
    uint64_t truncated_size = 0;
    bool read_fault = false;
    uint64_t read_fault_offset = 0;
    Status read_error;
    int read_fault_times = -1;
    bool write_fault = false;
    uint64_t write_fault_after = 0;
    Status write_error;
    bool write_partial = false;  // write what fits before failing
  };
  // Applies the faults of `path` to a read of [offset, offset + n): returns
  // the error to report, or OK with `*n` possibly shortened. Counts the call.
  Status FilterRead(const std::string& path, uint64_t offset, size_t* n) SLUICE_EXCLUDES(mu_);
  // Applies the write fault of `path` to an append of `*n` bytes after
  // `written` bytes: returns the error to report, with `*n` set to the bytes
  // to write first (0 unless the fault writes what fits). OK leaves `*n`.
  Status FilterWrite(const std::string& path, uint64_t written, size_t* n) SLUICE_EXCLUDES(mu_);

 private:
  Status OpenErrorLocked(const std::string& path) const SLUICE_REQUIRES(mu_);

  FileSystem* const base_;
  mutable Mutex mu_;
  std::map<std::string, Faults> faults_ SLUICE_GUARDED_BY(mu_);
  std::map<std::string, int64_t> read_calls_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice::io

#endif  // SLUICE_IO_FAULT_INJECTION_FILE_SYSTEM_H_
