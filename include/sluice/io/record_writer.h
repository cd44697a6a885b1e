// RecordWriter: writes TFRecord files (format in record_format.h), plain or
// as one ZLIB/GZIP stream, as TensorFlow's io::RecordWriter does.
//
// With default options a ZLIB file is byte-identical to zlib's compress() of
// the uncompressed file (TensorFlow's tf_record_test asserts this for files
// below about 16 KiB; see ZlibOptions::mem_level). A GZIP file carries
// zlib's minimal gzip header (OS byte 3).
//
// Errors are sticky: after a failed write, every later call returns that
// error, since the file no longer holds a valid record stream.
//
// Thread-safety: not thread-safe; one writer per thread (or an external
// lock). Destroying an open writer closes it and drops any error; call
// Close() to see it.
#ifndef SLUICE_IO_RECORD_WRITER_H_
#define SLUICE_IO_RECORD_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/io/file_system.h"
#include "sluice/io/input_stream.h"

namespace sluice::io {

struct RecordWriterOptions {
  CompressionType compression_type = CompressionType::kNone;
  // Compression parameters (TensorFlow's defaults).
  ZlibOptions zlib;
  // Also write a record index beside the file at Close() (RecordIndex,
  // "<path>.idx"). Only with RecordWriter::Open, which knows the path.
  bool write_index = false;

  // TensorFlow's RecordWriterOptions::CreateRecordWriterOptions. Errors:
  // InvalidArgument for an unknown compression type.
  [[nodiscard]] static Result<RecordWriterOptions> FromCompressionType(std::string_view compression_type);
};

class RecordWriter {
 public:
  // Creates or truncates `path` on `fs` (null: DefaultFileSystem()).
  // Errors: those of creating the file; InvalidArgument for bad options.
  [[nodiscard]] static Result<std::unique_ptr<RecordWriter>> Open(const std::string& path,
                                                                  const RecordWriterOptions& options = {},
                                                                  FileSystem* fs = nullptr);
  // Writes into `dest`, which the writer then owns.
  [[nodiscard]] static Result<std::unique_ptr<RecordWriter>> New(std::unique_ptr<WritableFile> dest,
                                                                 const RecordWriterOptions& options = {});
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one record. Errors: the file's write errors;
  // FailedPrecondition after Close().
  [[nodiscard]] Status Write(std::string_view record);
  // Hands what was written to the operating system (compressed files: as
  // far as ZlibOptions::flush_mode makes deflate emit it).
  [[nodiscard]] Status Flush();
  // Finishes the stream, closes the file, writes the index if asked. Later
  // calls return FailedPrecondition.
  [[nodiscard]] Status Close();

  int64_t records_written() const { return records_written_; }
  // Uncompressed bytes written: the offset the next record will have.
  uint64_t offset() const { return offset_; }
  // Offsets of the records written (kept only with write_index).
  const std::vector<uint64_t>& record_offsets() const { return offsets_; }

 private:
  RecordWriter(std::unique_ptr<WritableFile> dest, const RecordWriterOptions& options, std::string path,
               FileSystem* fs);
  Status Sticky(Status s);

  std::unique_ptr<WritableFile> dest_;
  const RecordWriterOptions options_;
  const std::string path_;  // empty unless opened by path
  FileSystem* const fs_;
  int64_t records_written_ = 0;
  uint64_t offset_ = 0;
  std::vector<uint64_t> offsets_;
  bool closed_ = false;
  Status error_;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_RECORD_WRITER_H_
