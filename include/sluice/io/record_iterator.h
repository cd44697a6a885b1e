// Iterators over one file's records, for the Dataset layer and for Python's
// tf.compat.v1.io.tf_record_iterator: TFRecordIterator (TFRecord records)
// and LineIterator (text lines, as TextLineDataset reads them).
//
// They report the end of the sequence apart from errors (tf.data's
// GetNext(out, end_of_sequence)): a clean end is OK with *end_of_sequence
// true, never OutOfRange. Their position (offset and index) can be saved
// and restored with Seek() for checkpoints.
//
// Thread-safety: an iterator is used by one thread at a time.
#ifndef SLUICE_IO_RECORD_ITERATOR_H_
#define SLUICE_IO_RECORD_ITERATOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/io/file_system.h"
#include "sluice/io/input_stream.h"
#include "sluice/io/record_reader.h"

namespace sluice::io {

class BufferedInput;

class TFRecordIterator {
 public:
  // Errors: those of opening `path`; InvalidArgument for bad zlib options.
  [[nodiscard]] static Result<std::unique_ptr<TFRecordIterator>> Open(const std::string& path,
                                                                      const RecordReaderOptions& options = {},
                                                                      FileSystem* fs = nullptr);

  // The next record, a view valid until the next call. Errors: as
  // RecordReader (DataLoss "corrupted record at ...", ...).
  [[nodiscard]] Status GetNext(std::string_view* record, bool* end_of_sequence);
  // The next record copied; nullopt at the end.
  [[nodiscard]] Result<std::optional<std::string>> Next();

  // Offset and index of the next record.
  uint64_t offset() const { return reader_->offset(); }
  int64_t record_index() const { return reader_->record_index(); }
  [[nodiscard]] Status Seek(uint64_t offset, int64_t record_index = -1) { return reader_->Seek(offset, record_index); }
  RecordReader* reader() { return reader_.get(); }

 private:
  explicit TFRecordIterator(std::unique_ptr<RecordReader> reader) : reader_(std::move(reader)) {}
  std::unique_ptr<RecordReader> reader_;
};

struct LineIteratorOptions {
  CompressionType compression_type = CompressionType::kNone;
  ZlibOptions zlib;
  size_t buffer_size = 256 << 10;
};

// Lines split on '\n', without the '\n' and one trailing '\r'; a last line
// without '\n' is returned when non-empty after removing the '\r'.
class LineIterator {
 public:
  [[nodiscard]] static Result<std::unique_ptr<LineIterator>> Open(const std::string& path,
                                                                  const LineIteratorOptions& options = {},
                                                                  FileSystem* fs = nullptr);
  ~LineIterator();

  // The next line, a view valid until the next call. Errors: the file's
  // read and decompression errors (with "file", "record" = line index and
  // "offset" payloads).
  [[nodiscard]] Status GetNext(std::string_view* line, bool* end_of_sequence);
  [[nodiscard]] Result<std::optional<std::string>> Next();

  // Lines returned so far (so the 1-based number of the last one).
  int64_t line_number() const { return line_number_; }
  // Offset of the next line's first byte (uncompressed).
  uint64_t offset() const;
  // Continues at `offset`, the start of line `line_number` + 1.
  [[nodiscard]] Status Seek(uint64_t offset, int64_t line_number);

 private:
  explicit LineIterator(std::unique_ptr<BufferedInput> input);
  std::unique_ptr<BufferedInput> input_;
  int64_t line_number_ = 0;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_RECORD_ITERATOR_H_
