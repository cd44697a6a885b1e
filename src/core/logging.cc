#include "sluice/core/logging.h"

#include <cstdio>
#include <memory>
#include <utility>

#include "sluice/core/mutex.h"

namespace sluice {
namespace {

// The sink is swapped as a whole under the lock and called after it is
// released, so a slow or re-entrant sink never holds up SetLogSink. A
// function-local static: a static initialiser elsewhere may log.
struct SinkSlot {
  Mutex mu;
  std::shared_ptr<const LogSink> sink SLUICE_GUARDED_BY(mu);  // null: the default
};

SinkSlot& Slot() {
  static SinkSlot* slot = new SinkSlot;  // never destroyed: threads may log at exit
  return *slot;
}

std::shared_ptr<const LogSink> CurrentSink() {
  SinkSlot& slot = Slot();
  MutexLock lock(&slot.mu);
  return slot.sink;
}

}  // namespace

std::string_view LogSeverityName(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kInfo:
      return "INFO";
    case LogSeverity::kWarning:
      return "WARNING";
    case LogSeverity::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

void SetLogSink(LogSink new_sink) {
  std::shared_ptr<const LogSink> next;
  if (new_sink) next = std::make_shared<const LogSink>(std::move(new_sink));
  SinkSlot& slot = Slot();
  MutexLock lock(&slot.mu);
  slot.sink.swap(next);  // `next`, the old sink, is destroyed after unlocking
}

void Log(LogSeverity severity, std::string_view message) {
  const std::shared_ptr<const LogSink> current = CurrentSink();
  if (current) {
    (*current)(severity, message);
  } else {
    LogToStderr(severity, message);
  }
}

void LogToStderr(LogSeverity severity, std::string_view message) {
  const char* level = severity == LogSeverity::kInfo ? "info" : severity == LogSeverity::kWarning ? "warning" : "error";
  std::fprintf(stderr, "sluice: %s: %.*s\n", level, static_cast<int>(message.size()), message.data());
}

}  // namespace sluice
