// The concrete queue-fed readers of tf.compat.v1 (docs/spec/tf-queues.md
// §11.2), each a ReaderBase made by a factory.
//
//   reader                   key                    value
//   IdentityReader           work unit              work unit
//   WholeFileReader          file name              whole file
//   TextLineReader           "<file>:<line>"        line without "\n"/"\r\n"
//   FixedLengthRecordReader  "<file>:<i>"           record_bytes bytes
//   TFRecordReader           "<file>:<offset>"      record payload
//
// Line numbers are 1-based and count skipped header lines; <i> is the
// 0-based record number; <offset> is the record's byte offset in the
// (uncompressed) stream. Only IdentityReader and WholeFileReader support
// SerializeState/RestoreState.
//
// Every reader that opens files does so when a work unit starts, through
// `file_system` (null: DefaultFileSystem()); a missing file fails that read
// with NotFound and is skipped. (TensorFlow's WholeFileReader opens the file
// in the read itself and so retries a missing file forever; here it is
// skipped like the others.)
//
// Thread-safety: as ReaderBase. The file system must outlive the reader.
#ifndef SLUICE_IO_READERS_H_
#define SLUICE_IO_READERS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "sluice/core/status.h"
#include "sluice/io/file_system.h"
#include "sluice/io/reader_base.h"
#include "sluice/io/record_reader.h"

namespace sluice::io {

struct ReaderOptions {
  // The reader's name in messages; empty: its type name.
  std::string name;
  // Not owned; null: DefaultFileSystem().
  FileSystem* file_system = nullptr;
};

[[nodiscard]] Result<std::unique_ptr<ReaderBase>> NewIdentityReader(const ReaderOptions& options = {});
[[nodiscard]] Result<std::unique_ptr<ReaderBase>> NewWholeFileReader(const ReaderOptions& options = {});

struct TextLineReaderOptions : ReaderOptions {
  // Lines skipped at the start of every file. Must be >= 0.
  int64_t skip_header_lines = 0;
};
// Errors: InvalidArgument for skip_header_lines < 0.
[[nodiscard]] Result<std::unique_ptr<ReaderBase>> NewTextLineReader(const TextLineReaderOptions& options = {});

struct FixedLengthRecordReaderOptions : ReaderOptions {
  int64_t record_bytes = 0;
  int64_t header_bytes = 0;
  int64_t footer_bytes = 0;
  // Bytes from one record's start to the next; 0 means record_bytes.
  int64_t hop_bytes = 0;
  // "" (raw), "ZLIB" or "GZIP": the whole file is compressed; header,
  // records and footer are positions in the decompressed bytes.
  std::string encoding;
};
// Record i covers [H + i*hop, H + i*hop + record_bytes) and exists iff
// H + i*hop + record_bytes + footer_bytes <= the stream's length: a trailing
// partial record is dropped silently. Errors: InvalidArgument "<x>_bytes
// must be >= 0 not N"; InvalidArgument when record_bytes and hop_bytes are
// both 0 (endless empty records); InvalidArgument for an unknown encoding.
[[nodiscard]] Result<std::unique_ptr<ReaderBase>> NewFixedLengthRecordReader(
    const FixedLengthRecordReaderOptions& options);

struct TFRecordReaderOptions : ReaderOptions {
  // "", "ZLIB" or "GZIP". As in TensorFlow, an unknown string is reported on
  // stderr and read as "".
  std::string compression_type;
  // Buffer size, ignore_errors and reporter; its compression_type is
  // replaced by the one above.
  RecordReaderOptions record_options;
};
[[nodiscard]] Result<std::unique_ptr<ReaderBase>> NewTFRecordReader(const TFRecordReaderOptions& options = {});

}  // namespace sluice::io

#endif  // SLUICE_IO_READERS_H_
