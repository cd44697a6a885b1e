#include "record_errors.h"

#include <string>

namespace sluice::ops::internal {

std::string_view RecordName(std::span<const std::string> names, int64_t i) {
  if (names.empty()) return "<unknown>";
  return names[static_cast<size_t>(i)];
}

Status FeatureError(std::string_view name, std::string_view key, int64_t index, int64_t record,
                    std::string_view suffix) {
  return errors::InvalidArgument("Name: ", name, ", Key: ", key, ", Index: ", index, ".  ", suffix)
      .WithPayload("record", std::to_string(record))
      .WithPayload("feature", std::string(key));
}

Status UnparsableRecord(std::string_view name, int64_t record, std::string_view serialized) {
  return errors::InvalidArgument("Name: ", name, ", Index: ", record,
                                 ".  Could not parse example input, value: '", EscapeBytes(serialized), "'")
      .WithPayload("record", std::to_string(record));
}

std::string EscapeBytes(std::string_view bytes, size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  const size_t n = bytes.size() < max_bytes ? bytes.size() : max_bytes;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        }
    }
  }
  if (n < bytes.size()) out += "...";
  return out;
}

}  // namespace sluice::ops::internal
