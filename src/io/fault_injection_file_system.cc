#include "sluice/io/fault_injection_file_system.h"

#include <algorithm>

#include "io/io_errors.h"

namespace sluice::io {
namespace {

// `injected` shaped as the POSIX file system's errors: "<context>: <message>"
// with the "file" payload.
Status AsFileError(const Status& injected, const std::string& path, std::string_view context) {
  if (injected.ok()) return injected;
  return injected.WithPrefix(StrCat(context, ": ")).WithPayload(kFilePayload, path);
}

class FaultyRandomAccessFile : public RandomAccessFile {
 public:
  FaultyRandomAccessFile(FaultInjectionFileSystem* fs, std::unique_ptr<RandomAccessFile> base)
      : fs_(fs), base_(std::move(base)) {}

  Result<size_t> Read(uint64_t offset, size_t n, char* dst) const override {
    SLUICE_RETURN_IF_ERROR(fs_->FilterRead(base_->name(), offset, &n));
    if (n == 0) return size_t{0};
    return base_->Read(offset, n, dst);
  }
  const std::string& name() const override { return base_->name(); }

 private:
  FaultInjectionFileSystem* const fs_;
  const std::unique_ptr<RandomAccessFile> base_;
};

class FaultyWritableFile : public WritableFile {
 public:
  FaultyWritableFile(FaultInjectionFileSystem* fs, std::unique_ptr<WritableFile> base)
      : fs_(fs), base_(std::move(base)) {}

  Status Append(std::string_view data) override {
    size_t n = data.size();
    Status fault = fs_->FilterWrite(base_->name(), written_, &n);
    if (!fault.ok()) {
      // A short write first, as on a full disk.
      if (n > 0 && base_->Append(data.substr(0, n)).ok()) written_ += n;
      return fault;
    }
    written_ += data.size();
    return base_->Append(data);
  }
  Status Flush() override { return base_->Flush(); }
  Status Sync() override { return base_->Sync(); }
  Status Close() override { return base_->Close(); }
  const std::string& name() const override { return base_->name(); }

 private:
  FaultInjectionFileSystem* const fs_;
  const std::unique_ptr<WritableFile> base_;
  uint64_t written_ = 0;
};

}  // namespace

FaultInjectionFileSystem::FaultInjectionFileSystem(FileSystem* base) : base_(OrDefault(base)) {}
FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

void FaultInjectionFileSystem::FailOpen(const std::string& path, Status status) {
  MutexLock l(&mu_);
  faults_[path].open_error = std::move(status);
}

void FaultInjectionFileSystem::Truncate(const std::string& path, uint64_t size) {
  MutexLock l(&mu_);
  Faults& f = faults_[path];
  f.truncated = true;
  f.truncated_size = size;
}

void FaultInjectionFileSystem::FailReadsAt(const std::string& path, uint64_t offset, Status status, int times) {
  MutexLock l(&mu_);
  Faults& f = faults_[path];
  f.read_fault = true;
  f.read_fault_offset = offset;
  f.read_error = std::move(status);
  f.read_fault_times = times;
}

void FaultInjectionFileSystem::FailWritesAfter(const std::string& path, uint64_t bytes, Status status) {
  MutexLock l(&mu_);
  Faults& f = faults_[path];
  f.write_fault = true;
  f.write_fault_after = bytes;
  f.write_error = std::move(status);
}

void FaultInjectionFileSystem::FailWritesWhenFullAfter(const std::string& path, uint64_t bytes) {
  MutexLock l(&mu_);
  Faults& f = faults_[path];
  f.write_fault = true;
  f.write_fault_after = bytes;
  f.write_error = Status(Code::kResourceExhausted, "No space left on device");
  f.write_partial = true;
}

void FaultInjectionFileSystem::Vanish(const std::string& path) {
  const Status gone(Code::kNotFound, "No such file or directory");
  MutexLock l(&mu_);
  Faults& f = faults_[path];
  f.open_error = gone;
  f.read_fault = true;
  f.read_fault_offset = 0;
  f.read_error = gone;
  f.read_fault_times = -1;
}

void FaultInjectionFileSystem::ClearFaults() {
  MutexLock l(&mu_);
  faults_.clear();
}

int64_t FaultInjectionFileSystem::read_calls(const std::string& path) const {
  MutexLock l(&mu_);
  auto it = read_calls_.find(path);
  return it == read_calls_.end() ? 0 : it->second;
}

Status FaultInjectionFileSystem::OpenErrorLocked(const std::string& path) const {
  mu_.AssertHeld();
  auto it = faults_.find(path);
  if (it == faults_.end()) return Status::OK();
  return AsFileError(it->second.open_error, path, path);
}

Status FaultInjectionFileSystem::FilterRead(const std::string& path, uint64_t offset, size_t* n) {
  MutexLock l(&mu_);
  ++read_calls_[path];
  auto it = faults_.find(path);
  if (it == faults_.end()) return Status::OK();
  Faults& f = it->second;
  if (f.truncated) {
    *n = offset >= f.truncated_size ? 0 : static_cast<size_t>(std::min<uint64_t>(*n, f.truncated_size - offset));
  }
  if (f.read_fault && f.read_fault_times != 0 && *n > 0 && offset + *n > f.read_fault_offset) {
    if (f.read_fault_times > 0) --f.read_fault_times;
    return AsFileError(f.read_error, path, StrCat(path, ": read at offset ", offset));
  }
  return Status::OK();
}

Status FaultInjectionFileSystem::FilterWrite(const std::string& path, uint64_t written, size_t* n) {
  MutexLock l(&mu_);
  auto it = faults_.find(path);
  if (it == faults_.end() || !it->second.write_fault) return Status::OK();
  const Faults& f = it->second;
  if (written + *n <= f.write_fault_after) return Status::OK();
  *n = f.write_partial && written < f.write_fault_after ? static_cast<size_t>(f.write_fault_after - written) : 0;
  return AsFileError(f.write_error, path, StrCat(path, ": write"));
}

Result<std::unique_ptr<RandomAccessFile>> FaultInjectionFileSystem::NewRandomAccessFile(const std::string& path) {
  {
    MutexLock l(&mu_);
    SLUICE_RETURN_IF_ERROR(OpenErrorLocked(path));
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> base, base_->NewRandomAccessFile(path));
  return std::unique_ptr<RandomAccessFile>(new FaultyRandomAccessFile(this, std::move(base)));
}

Result<std::unique_ptr<WritableFile>> FaultInjectionFileSystem::NewWritableFile(const std::string& path) {
  {
    MutexLock l(&mu_);
    SLUICE_RETURN_IF_ERROR(OpenErrorLocked(path));
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> base, base_->NewWritableFile(path));
  return std::unique_ptr<WritableFile>(new FaultyWritableFile(this, std::move(base)));
}

Result<FileStatistics> FaultInjectionFileSystem::Stat(const std::string& path) {
  uint64_t truncated_size = 0;
  bool truncated = false;
  {
    MutexLock l(&mu_);
    SLUICE_RETURN_IF_ERROR(OpenErrorLocked(path));
    auto it = faults_.find(path);
    if (it != faults_.end() && it->second.truncated) {
      truncated = true;
      truncated_size = it->second.truncated_size;
    }
  }
  SLUICE_ASSIGN_OR_RETURN(FileStatistics st, base_->Stat(path));
  if (truncated) st.length = std::min(st.length, truncated_size);
  return st;
}

Result<std::vector<std::string>> FaultInjectionFileSystem::GetMatchingPaths(const std::string& pattern) {
  return base_->GetMatchingPaths(pattern);
}

Status FaultInjectionFileSystem::DeleteFile(const std::string& path) { return base_->DeleteFile(path); }

Status FaultInjectionFileSystem::RenameFile(const std::string& src, const std::string& dst) {
  return base_->RenameFile(src, dst);
}

}  // namespace sluice::io
