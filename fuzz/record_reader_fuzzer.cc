// libFuzzer entry point for sluice's TFRecord reading (src/io): the record
// parser, the zlib/gzip stream, ignore_errors resynchronisation, the
// line splitter and the record-index parser. Any input must give records or
// an error Status: never a crash, a hang, an out-of-bounds read or a leak.
//
// Byte 0 picks the mode:
//   bits 0-1  0: plain; 1: the bytes as a ZLIB stream; 2: as a GZIP stream;
//             3: the bytes zlib-compressed here, then read as ZLIB (so the
//             record parser sees the fuzzed bytes through the decompressor)
//   bit 2     ignore_errors
//   bit 3     a tiny buffer (64 bytes) instead of 4 KiB
//   bit 4     also read from the middle (random access)
//   bit 5     also split the stream into lines
// The rest is the file's content, served from memory.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "io/buffered_input.h"
#include "sluice/io/file_system.h"
#include "sluice/io/input_stream.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_reader.h"

namespace {

using namespace sluice;      // NOLINT
using namespace sluice::io;  // NOLINT

class StringFile : public RandomAccessFile {
 public:
  explicit StringFile(std::string data) : data_(std::move(data)) {}
  Result<size_t> Read(uint64_t offset, size_t n, char* dst) const override {
    if (offset >= data_.size()) return size_t{0};
    const size_t got = std::min<size_t>(n, data_.size() - offset);
    std::memcpy(dst, data_.data() + offset, got);
    return got;
  }
  const std::string& name() const override { return name_; }

 private:
  const std::string data_;
  const std::string name_ = "fuzz.tfrecord";
};

std::string Compress(std::string_view data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string out(size, '\0');
  if (compress(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(data.data()),
               static_cast<uLong>(data.size())) != Z_OK) {
    return "";
  }
  out.resize(size);
  return out;
}

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void ReadRecords(const std::string& contents, const RecordReaderOptions& options, bool random_access,
                 size_t plain_size) {
  auto reader = RecordReader::New(std::make_unique<StringFile>(contents), options);
  if (!reader.ok()) return;
  std::string_view record;
  uint64_t last_end = 0;
  for (int i = 0; i < 100000; ++i) {
    Status s = (*reader)->ReadNext(&record);
    if (!s.ok()) {
      Check(s.code() != Code::kOk);
      break;
    }
    // A record lies inside the stream, after the previous one.
    Check((*reader)->last_record_offset() >= last_end);
    last_end = (*reader)->offset();
    Check(last_end == (*reader)->last_record_offset() + record.size() + 16);
    if (options.compression_type == CompressionType::kNone) Check(last_end <= plain_size);
  }
  if (random_access) {
    uint64_t offset = plain_size / 2;
    (*reader)->ReadRecord(&offset, &record).IgnoreError();
    offset = 0;
    (*reader)->ReadRecord(&offset, &record).IgnoreError();
  }
}

void ReadLines(const std::string& contents, CompressionType type) {
  auto stream = NewInputStream(std::make_unique<StringFile>(contents), type);
  if (!stream.ok()) return;
  BufferedInput input(std::move(stream).value(), 64);
  std::string_view line;
  for (int i = 0; i < 100000; ++i) {
    if (!input.ReadLine(&line).ok()) break;
    Check(line.size() <= (type == CompressionType::kNone ? contents.size() : line.size()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  RecordReaderOptions options;
  options.ignore_errors = (mode & 4) != 0;
  options.buffer_size = (mode & 8) != 0 ? 64 : 4096;
  options.zlib.input_buffer_size = 1024;
  CountingReporter reporter;
  options.reporter = &reporter;
  std::string contents = bytes;
  switch (mode & 3) {
    case 0:
      options.compression_type = CompressionType::kNone;
      break;
    case 1:
      options.compression_type = CompressionType::kZlib;
      break;
    case 2:
      options.compression_type = CompressionType::kGzip;
      break;
    default:
      options.compression_type = CompressionType::kZlib;
      contents = Compress(bytes);
      break;
  }
  ReadRecords(contents, options, (mode & 16) != 0, bytes.size());
  if ((mode & 32) != 0) ReadLines(contents, options.compression_type);
  RecordIndex::Parse(bytes, "fuzz.idx").status().IgnoreError();
  return 0;
}
