// RecordReader: reads TFRecord files (format in record_format.h), plain or
// ZLIB/GZIP-compressed, as TensorFlow's io::RecordReader does.
//
// Records are parsed in place out of a large buffer (one pread or one
// inflate call per buffer, not per record) and checked with the hardware
// CRC32C; ReadRecord(&offset, &view) hands out a view into that buffer, so a
// record is not copied at all until the caller copies it.
//
// Results of a read at offset `o`, as in TensorFlow:
//   * OK: the record; `o` advances by 16 + length.
//   * OutOfRange: the stream ends at `o` (a clean end). Fewer than 12 header
//     bytes left at the end also count as a clean end, as in TensorFlow, with
//     a warning on stderr.
//   * DataLoss "corrupted record at <o>": the length's checksum is wrong.
//   * DataLoss "corrupted record at <o + 12>": the data's checksum is wrong
//     (TensorFlow reports where the checked block starts).
//   * DataLoss "truncated record at <o>": the header is complete but the
//     data or footer is cut short.
//   * DataLoss for corrupt or truncated compressed input; read errors of the
//     file (Unknown, ...).
// Every error message names the file and, when known, the record index;
// errors carry the payloads "file", "record" (0-based index in the file,
// when known) and "offset" (the record's first byte, uncompressed).
// After an error nothing is consumed: reading at the same offset fails the
// same way, and reading at another offset works.
//
// ignore_errors: a record whose data checksum fails is skipped; a corrupt
// header makes the reader scan forward, byte by byte, for the next offset
// where a complete record with both checksums valid starts; a truncated last
// record ends the file. Each skip is reported to the options' reporter
// (LevelDB's log::Reader::Reporter) and counted by the reader. Errors of the
// file or of decompression cannot be skipped and are returned.
//
// Thread-safety: a RecordReader is used by one thread at a time. A
// CountingReporter may be shared by readers on several threads.
#ifndef SLUICE_IO_RECORD_READER_H_
#define SLUICE_IO_RECORD_READER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/io/file_system.h"
#include "sluice/io/input_stream.h"

namespace sluice::io {

class BufferedInput;

// Told about every stretch of input an ignore_errors reader dropped.
class CorruptionReporter {
 public:
  virtual ~CorruptionReporter() = default;
  // `reason`: the DataLoss the reader would have returned (with its "file",
  // "record", "offset" payloads). `bytes`: bytes dropped. `records`: records
  // known to be dropped (1 for a bad data checksum or a truncated record, 0
  // when a corrupt header hid how many records the bytes held). Called on
  // the reading thread. A TFRecordReader (ReaderBase) calls it with its
  // reader lock held, so it must not call into that reader; it should only
  // count or log (CountingReporter takes nothing but its own leaf lock).
  virtual void Corruption(const Status& reason, uint64_t bytes, int64_t records) = 0;
};

// Counts what was dropped. Thread-safe.
class CountingReporter : public CorruptionReporter {
 public:
  void Corruption(const Status& reason, uint64_t bytes, int64_t records) override SLUICE_EXCLUDES(mu_);
  int64_t corruptions() const { return corruptions_.load(std::memory_order_relaxed); }
  uint64_t bytes_dropped() const { return bytes_.load(std::memory_order_relaxed); }
  int64_t records_dropped() const { return records_.load(std::memory_order_relaxed); }
  Status last_error() const SLUICE_EXCLUDES(mu_);

 private:
  std::atomic<int64_t> corruptions_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<int64_t> records_{0};
  mutable Mutex mu_;
  Status last_error_ SLUICE_GUARDED_BY(mu_);
};

struct RecordReaderOptions {
  CompressionType compression_type = CompressionType::kNone;
  // Decompression buffers (input_buffer_size, window_bits are used).
  ZlibOptions zlib;
  // Bytes read per refill (plain files: per pread). A record larger than
  // this grows the buffer.
  size_t buffer_size = 256 << 10;
  // Skip what can be skipped instead of failing (see above).
  bool ignore_errors = false;
  // Told about skips; not owned, must outlive the reader. May be null.
  CorruptionReporter* reporter = nullptr;

  // TensorFlow's RecordReaderOptions::CreateRecordReaderOptions. Errors:
  // InvalidArgument for an unknown compression type.
  [[nodiscard]] static Result<RecordReaderOptions> FromCompressionType(std::string_view compression_type);
};

class RecordReader {
 public:
  // Opens `path` on `fs` (null: DefaultFileSystem()). Errors: those of
  // opening (NotFound, ...); InvalidArgument for bad zlib options.
  [[nodiscard]] static Result<std::unique_ptr<RecordReader>> Open(const std::string& path,
                                                                  const RecordReaderOptions& options = {},
                                                                  FileSystem* fs = nullptr);
  // Reads `file`, which the reader then owns.
  [[nodiscard]] static Result<std::unique_ptr<RecordReader>> New(std::unique_ptr<RandomAccessFile> file,
                                                                 const RecordReaderOptions& options = {});
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads the record that starts at *offset (seeking if the reader is
  // elsewhere; in a compressed file a backward seek decompresses from the
  // start) and sets *offset to the next record's offset. `*record` views
  // the reader's buffer: valid until the next call on this reader.
  // With ignore_errors, *offset moves past skipped bytes as well.
  // Results as described at the top of this file.
  [[nodiscard]] Status ReadRecord(uint64_t* offset, std::string_view* record);
  // As above, copying the record into `*record`.
  [[nodiscard]] Status ReadRecord(uint64_t* offset, std::string* record);

  // Sequential reading: the record at offset(), advancing it. Same results.
  [[nodiscard]] Status ReadNext(std::string_view* record);
  // Where ReadNext reads next.
  uint64_t offset() const { return next_offset_; }
  // Index in the file of the record ReadNext reads next; -1 when unknown
  // (after seeking to an offset given without its index, or after
  // ignore_errors skipped a corrupt header).
  int64_t record_index() const { return next_index_; }
  // Offset and index of the record the last successful read returned.
  uint64_t last_record_offset() const { return last_offset_; }
  int64_t last_record_index() const { return last_index_; }
  // Moves ReadNext to `offset`, the start of record `record_index` (-1 if
  // not known). Errors: those of a compressed stream decompressing up to
  // `offset`.
  [[nodiscard]] Status Seek(uint64_t offset, int64_t record_index = -1);

  // Records and bytes ignore_errors skipped so far.
  int64_t records_skipped() const { return records_skipped_; }
  uint64_t bytes_skipped() const { return bytes_skipped_; }
  int64_t corruptions_skipped() const { return corruptions_skipped_; }

  const std::string& filename() const;
  const RecordReaderOptions& options() const { return options_; }

 private:
  enum class Failure { kNone, kHeaderChecksum, kDataChecksum, kTruncated, kStream };

  RecordReader(std::unique_ptr<BufferedInput> input, const RecordReaderOptions& options);
  int64_t IndexAt(uint64_t offset) const;
  // One record at `offset`, no skipping. On failure sets *failure.
  Status ReadOne(uint64_t offset, int64_t index, std::string_view* record, uint64_t* frame_size,
                 Failure* failure);
  Status Corrupted(uint64_t reported_offset, uint64_t record_offset, int64_t index, std::string_view what) const;
  // ignore_errors: the first offset after `offset` where a valid record
  // starts, or the end of the stream (*found false).
  Status Resync(uint64_t offset, uint64_t* next, bool* found);
  void Report(const Status& reason, uint64_t bytes, int64_t records);

  const std::unique_ptr<BufferedInput> input_;
  const RecordReaderOptions options_;
  uint64_t next_offset_ = 0;
  int64_t next_index_ = 0;
  uint64_t last_offset_ = 0;
  int64_t last_index_ = -1;
  int64_t records_skipped_ = 0;
  uint64_t bytes_skipped_ = 0;
  int64_t corruptions_skipped_ = 0;
  bool warned_partial_header_ = false;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_RECORD_READER_H_
