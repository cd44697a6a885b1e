// A buffered element's Status in an iterator checkpoint: code, message and
// payloads, so that an error a worker met is returned after a restore at the
// same position, as the saved iterator would have returned it.
#ifndef SLUICE_SRC_DATA_CHECKPOINT_STATUS_H_
#define SLUICE_SRC_DATA_CHECKPOINT_STATUS_H_

#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/data/checkpoint.h"

namespace sluice::data {

inline void WriteStatus(IteratorStateWriter* w, std::string_view key, const Status& s) {
  const std::string k(key);
  w->WriteInt(k + ".code", static_cast<int64_t>(s.code()));
  if (s.ok()) return;
  w->WriteBytes(k + ".message", s.message());
  w->WriteInt(k + ".payloads", static_cast<int64_t>(s.payloads().size()));
  int64_t i = 0;
  for (const auto& [name, value] : s.payloads()) {
    w->WriteBytes(k + ".payload_key." + std::to_string(i), name);
    w->WriteBytes(k + ".payload_value." + std::to_string(i), value);
    ++i;
  }
}

inline Status ReadStatus(const IteratorStateReader& r, std::string_view key, Status* out) {
  const std::string k(key);
  int64_t code = 0;
  SLUICE_RETURN_IF_ERROR(r.ReadInt(k + ".code", &code));
  if (code == 0) {
    *out = Status();
    return Status();
  }
  std::string message;
  int64_t payloads = 0;
  SLUICE_RETURN_IF_ERROR(r.ReadBytes(k + ".message", &message));
  SLUICE_RETURN_IF_ERROR(r.ReadInt(k + ".payloads", &payloads));
  Status s(static_cast<Code>(code), std::move(message));
  for (int64_t i = 0; i < payloads; ++i) {
    std::string name, value;
    SLUICE_RETURN_IF_ERROR(r.ReadBytes(k + ".payload_key." + std::to_string(i), &name));
    SLUICE_RETURN_IF_ERROR(r.ReadBytes(k + ".payload_value." + std::to_string(i), &value));
    s = s.WithPayload(std::move(name), std::move(value));
  }
  *out = std::move(s);
  return Status();
}

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_CHECKPOINT_STATUS_H_
