// The library's log seam: where sluice's warnings go (a record file that ends
// in a partial header, an index that could not be saved, ...). Errors are
// Status values, never log lines; this is for what the caller cannot act on
// at the call.
//
// By default a line "sluice: warning: <message>" goes to stderr. A host sets
// its own sink with SetLogSink (the Python extension forwards to Python's
// `logging`, logger "sluice"), and nullptr restores the default.
//
// Thread-safety: every function is thread-safe. A sink runs on the thread
// that logs, outside any lock of this module, and may be running on other
// threads when SetLogSink returns; the io layer logs while holding a
// reader's lock, so a sink must not call back into the object that logged.
#ifndef SLUICE_CORE_LOGGING_H_
#define SLUICE_CORE_LOGGING_H_

#include <functional>
#include <string_view>

namespace sluice {

enum class LogSeverity { kInfo, kWarning, kError };

// "INFO", "WARNING", "ERROR".
std::string_view LogSeverityName(LogSeverity severity);

// Receives one message (no trailing newline). Must not throw.
using LogSink = std::function<void(LogSeverity severity, std::string_view message)>;

// Replaces the process-wide sink; an empty `sink` restores the default
// (stderr). Thread-safe.
void SetLogSink(LogSink sink);

// Hands `message` to the current sink. Thread-safe.
void Log(LogSeverity severity, std::string_view message);
inline void LogWarning(std::string_view message) { Log(LogSeverity::kWarning, message); }

// The default sink: "sluice: <severity in lower case>: <message>\n" on stderr.
void LogToStderr(LogSeverity severity, std::string_view message);

}  // namespace sluice

#endif  // SLUICE_CORE_LOGGING_H_
