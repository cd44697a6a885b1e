// Error statuses for Example / SequenceExample parsing, worded as
// TensorFlow's example_proto_fast_parsing.cc words them, with the record
// index in the message and in payloads (private to the ops layer).
#ifndef SLUICE_SRC_OPS_RECORD_ERRORS_H_
#define SLUICE_SRC_OPS_RECORD_ERRORS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::ops::internal {

// The name of record `i` in messages: names[i], or "<unknown>" without names.
std::string_view RecordName(std::span<const std::string> names, int64_t i);

// "Name: <name>, Key: <key>, Index: <index>.  <suffix>", InvalidArgument,
// with payloads "record" = record and "feature" = key. `index` is the record
// for Examples and the row for feature lists.
Status FeatureError(std::string_view name, std::string_view key, int64_t index, int64_t record,
                    std::string_view suffix);
inline Status FeatureError(std::string_view name, std::string_view key, int64_t record, std::string_view suffix) {
  return FeatureError(name, key, record, record, suffix);
}

// "Name: <name>, Index: <record>.  Could not parse example input, value:
// '<first bytes, escaped>'", InvalidArgument with payload "record".
Status UnparsableRecord(std::string_view name, int64_t record, std::string_view serialized);

// Bytes as a C-style escaped string, at most `max_bytes` of them ("..." when
// cut).
std::string EscapeBytes(std::string_view bytes, size_t max_bytes = 64);

}  // namespace sluice::ops::internal

#endif  // SLUICE_SRC_OPS_RECORD_ERRORS_H_
