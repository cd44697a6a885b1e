// ScanRecords: one pass over a TFRecord file that checks every checksum,
// lists each corrupt stretch (where, and what was lost) and, optionally,
// copies every readable record to a RecordWriter. It is the loop behind the
// `sluice records count|verify|convert|salvage` commands.
//
// Thread-safety: ScanRecords keeps no state between calls; concurrent calls
// on different files are safe. The writer, when given, must not be used by
// another thread during the call.
#ifndef SLUICE_IO_RECORD_SCAN_H_
#define SLUICE_IO_RECORD_SCAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/io/file_system.h"
#include "sluice/io/record_reader.h"
#include "sluice/io/record_writer.h"

namespace sluice::io {

struct RecordScanOptions {
  // Compression and buffers of the reader; its ignore_errors and reporter
  // are set by ScanRecords.
  RecordReaderOptions reader;
  // true: skip each corrupt stretch and go on (verify, salvage), as an
  // ignore_errors reader does; false: stop at the first one (count, convert).
  bool keep_going = true;
};

// One stretch of the file that could not be read.
struct RecordCorruption {
  // First byte of the stretch in the (uncompressed) record stream.
  uint64_t offset = 0;
  // Index in the file of the first record lost; -1 when an earlier corrupt
  // header hid how many records came before.
  int64_t record = -1;
  // Readable records before the stretch.
  int64_t records_before = 0;
  // Bytes dropped (0 when the scan stopped there) and records known to be
  // dropped (0 when a corrupt header hid how many the bytes held).
  uint64_t bytes = 0;
  int64_t records = 0;
  // The reader's DataLoss (with its "file", "record", "offset" payloads).
  Status reason;
};

struct RecordScanResult {
  int64_t records = 0;         // readable records
  uint64_t payload_bytes = 0;  // their total payload length
  uint64_t stream_bytes = 0;   // where the scan ended in the record stream
  std::vector<RecordCorruption> corruptions;
  // What ended the scan before the end of the file: the first corruption
  // when !keep_going, or an error no reader can skip (a corrupt compressed
  // stream, a read error). OK when the scan reached the end.
  Status stopped;
  bool clean() const { return corruptions.empty() && stopped.ok(); }
};

// Reads `path` (on `fs`; null: DefaultFileSystem()) from start to end.
// Writes each readable record to `out` when not null. Errors (the scan
// result is then lost): those of opening `path` (NotFound, ...); those of
// `out`'s Write. Data errors of the file are not errors here: they are
// listed in the result. Blocks on file I/O only.
[[nodiscard]] Result<RecordScanResult> ScanRecords(const std::string& path, const RecordScanOptions& options,
                                                   RecordWriter* out = nullptr, FileSystem* fs = nullptr);

}  // namespace sluice::io

#endif  // SLUICE_IO_RECORD_SCAN_H_
