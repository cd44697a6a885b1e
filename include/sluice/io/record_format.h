// The TFRecord wire format (TensorFlow core/lib/io/record_writer.h).
//
// A file is a sequence of records, each, little-endian:
//
//   offset      size  field
//   0           8     uint64 length            (of data)
//   8           4     uint32 masked_crc32c(the 8 length bytes)
//   12          n     byte   data[length]
//   12 + n      4     uint32 masked_crc32c(data)
//
// so a record of n bytes takes n + 16 bytes, and record i + 1 starts at
// offset(i) + 16 + length(i). masked_crc32c is crc32c::Mask(crc32c::Value(..)).
// Example: b"123" is 03 00 00 00 00 00 00 00 | b0 99 49 0e | 31 32 33 |
// ce 0b e7 01 (19 bytes); the empty record is 00 x 8 | 29 03 98 07 |
// d8 ea 82 a2 (16 bytes).
//
// With compression, the whole concatenated record stream is one zlib
// (RFC 1950, "ZLIB") or gzip (RFC 1952, "GZIP") stream; offsets then count
// uncompressed bytes.
//
// Thread-safety: pure functions.
#ifndef SLUICE_IO_RECORD_FORMAT_H_
#define SLUICE_IO_RECORD_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "sluice/io/crc32c.h"

namespace sluice::io {

inline constexpr size_t kRecordHeaderSize = sizeof(uint64_t) + sizeof(uint32_t);  // 12
inline constexpr size_t kRecordFooterSize = sizeof(uint32_t);                     // 4
// Lengths above this are treated as corrupt (TensorFlow: "record size too
// large"); no real record comes near it.
inline constexpr uint64_t kMaxRecordLength = uint64_t{1} << 56;

inline void EncodeFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
inline void EncodeFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
inline uint32_t DecodeFixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | (static_cast<uint32_t>(u[1]) << 8) | (static_cast<uint32_t>(u[2]) << 16) |
         (static_cast<uint32_t>(u[3]) << 24);
}
inline uint64_t DecodeFixed64(const char* p) {
  return static_cast<uint64_t>(DecodeFixed32(p)) | (static_cast<uint64_t>(DecodeFixed32(p + 4)) << 32);
}

// The 12 header bytes of a record of `length` bytes.
inline void EncodeRecordHeader(char* dst, uint64_t length) {
  EncodeFixed64(dst, length);
  EncodeFixed32(dst + 8, crc32c::Mask(crc32c::Value(dst, sizeof(uint64_t))));
}
// The 4 footer bytes of a record holding `data`.
inline void EncodeRecordFooter(char* dst, std::string_view data) {
  EncodeFixed32(dst, crc32c::Mask(crc32c::Value(data)));
}
// The whole framed record.
inline std::string EncodeRecord(std::string_view data) {
  std::string out(kRecordHeaderSize + data.size() + kRecordFooterSize, '\0');
  EncodeRecordHeader(out.data(), data.size());
  if (!data.empty()) std::memcpy(out.data() + kRecordHeaderSize, data.data(), data.size());
  EncodeRecordFooter(out.data() + kRecordHeaderSize + data.size(), data);
  return out;
}

}  // namespace sluice::io

#endif  // SLUICE_IO_RECORD_FORMAT_H_
