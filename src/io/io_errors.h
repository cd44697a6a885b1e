// Status helpers shared by the io layer: errno mapping and the payloads that
// name the file, record and offset of a read error.
#ifndef SLUICE_SRC_IO_IO_ERRORS_H_
#define SLUICE_SRC_IO_IO_ERRORS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::io {

// Payload keys put on read errors.
inline constexpr char kFilePayload[] = "file";
inline constexpr char kRecordPayload[] = "record";
inline constexpr char kOffsetPayload[] = "offset";

// "<context>: <strerror(errnum)>" with the code TensorFlow maps errnum to and
// the "file" payload set to `path`.
Status IOError(const std::string& path, std::string_view context, int errnum);

// `s` with the "file" payload set (unless already set). OK stays OK.
Status WithFile(const Status& s, const std::string& path);
// `s` with "file", "record" (when >= 0) and "offset" payloads.
Status WithLocation(const Status& s, const std::string& path, int64_t record, uint64_t offset);

// Logs a warning through the core log seam (sluice/core/logging.h: stderr by
// default, Python's logging in the extension).
void LogWarning(std::string_view message);

}  // namespace sluice::io

#endif  // SLUICE_SRC_IO_IO_ERRORS_H_
