#include "io/io_errors.h"

#include <cerrno>
#include <cstring>

#include "sluice/core/logging.h"

namespace sluice::io {
namespace {

Code CodeForErrno(int errnum) {
  switch (errnum) {
    case 0:
      return Code::kOk;
    case ENOENT:
      return Code::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return Code::kPermissionDenied;
    case EEXIST:
      return Code::kAlreadyExists;
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return Code::kResourceExhausted;
    case EISDIR:
    case ENOTDIR:
    case ENOTEMPTY:
    case ENAMETOOLONG:
      return Code::kFailedPrecondition;
    case EINVAL:
    case ESPIPE:
      return Code::kInvalidArgument;
    default:
      return Code::kUnknown;
  }
}

}  // namespace

Status IOError(const std::string& path, std::string_view context, int errnum) {
  Code code = CodeForErrno(errnum);
  if (code == Code::kOk) code = Code::kUnknown;
  char buf[256];
  // GNU strerror_r returns the message (which may not be buf).
  const char* msg = strerror_r(errnum, buf, sizeof(buf));
  return Status(code, StrCat(context, ": ", msg)).WithPayload(kFilePayload, path);
}

Status WithFile(const Status& s, const std::string& path) {
  if (s.ok() || s.GetPayload(kFilePayload).has_value()) return s;
  return s.WithPayload(kFilePayload, path);
}

Status WithLocation(const Status& s, const std::string& path, int64_t record, uint64_t offset) {
  if (s.ok()) return s;
  Status out = s.WithPayload(kFilePayload, path).WithPayload(kOffsetPayload, std::to_string(offset));
  if (record >= 0) out = out.WithPayload(kRecordPayload, std::to_string(record));
  return out;
}

void LogWarning(std::string_view message) { ::sluice::LogWarning(message); }

}  // namespace sluice::io
