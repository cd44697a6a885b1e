// RecordIndex: the offset of every record of a TFRecord file, for record
// counts, random access to record i and contiguous shards, kept in a small
// side file so that the scan is done once.
//
// Side file ("<file>.idx" by default), little-endian:
//
//   offset   size  field
//   0        8     magic "SLCRIDX\0"
//   8        4     uint32 version (2)
//   12       4     uint32 compression type (0 none, 1 ZLIB, 2 GZIP)
//   16       8     uint64 length of the indexed file in bytes (as stored)
//   24       8     int64  modification time of the indexed file, ns since epoch
//   32       8     uint64 stream length (uncompressed end of the last record)
//   40       8     uint64 record count N
//   48       8     uint64 records an ignore_errors build skipped (0: strict)
//   56       8     uint64 bytes an ignore_errors build skipped (0: strict)
//   64       8*N   uint64 offset of each record (uncompressed), increasing
//   64+8N    8*N   uint64 payload length of each record
//   64+16N   4     uint32 masked crc32c of bytes [0, 64+16N)
//
// Version 1 (no skip counts, no lengths) is refused as corrupt, so an old
// side file is rebuilt.
//
// An index is "fresh" for a file when the stored length, modification time
// and compression type equal the file's and, for a strict (not
// ignore_errors) user, nothing was skipped building it: a "lossy" index
// (built with ignore_errors over a corrupt file) is stale for a strict user,
// whose rebuild then fails with the reader's DataLoss, and may be reused by
// an ignore_errors user. LoadOrBuild() rebuilds (and rewrites) a stale,
// missing or corrupt index.
//
// In a compressed file, reading record i decompresses from the start (or
// from the reader's current position when moving forward), as TensorFlow
// does.
//
// Thread-safety: a RecordIndex is immutable after it is built or loaded and
// may be shared read-only across threads.
#ifndef SLUICE_IO_RECORD_INDEX_H_
#define SLUICE_IO_RECORD_INDEX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/io/file_system.h"
#include "sluice/io/input_stream.h"
#include "sluice/io/record_reader.h"

namespace sluice::io {

class RecordIndex {
 public:
  static constexpr char kMagic[8] = {'S', 'L', 'C', 'R', 'I', 'D', 'X', '\0'};
  static constexpr uint32_t kVersion = 2;

  RecordIndex() = default;
  // An index from known offsets (the writer's) of records stored back to
  // back (no gaps), for a file whose Stat is `stat`.
  RecordIndex(std::vector<uint64_t> offsets, uint64_t stream_length, CompressionType compression,
              const FileStatistics& stat);
  // An index from known offsets and payload lengths, which may leave gaps
  // (bytes an ignore_errors scan skipped). REQUIRES: offsets.size() ==
  // lengths.size().
  RecordIndex(std::vector<uint64_t> offsets, std::vector<uint64_t> lengths, uint64_t stream_length,
              CompressionType compression, const FileStatistics& stat, int64_t records_skipped,
              uint64_t bytes_skipped);

  // "<path>.idx".
  static std::string IndexPath(const std::string& path) { return path + ".idx"; }

  // Reads `path` once, checking every checksum. Errors: those of
  // RecordReader (DataLoss for a corrupt file unless options.ignore_errors,
  // which indexes only the good records and records what it skipped).
  [[nodiscard]] static Result<RecordIndex> Build(const std::string& path, const RecordReaderOptions& options = {},
                                                 FileSystem* fs = nullptr);
  // Parses an index file. Errors: those of reading it; DataLoss for a
  // corrupt or foreign file ("corrupt record index <path>: ...").
  [[nodiscard]] static Result<RecordIndex> Load(const std::string& index_path, FileSystem* fs = nullptr);
  // Parses Serialize()'s bytes; `index_path` names them in errors.
  [[nodiscard]] static Result<RecordIndex> Parse(std::string_view bytes, const std::string& index_path);
  // The index of `path`: loaded from `index_path` (default IndexPath(path))
  // when fresh (IsFreshFor with options.ignore_errors), else built and saved
  // there. A failure to save is not an
  // error (the index is still returned). `*rebuilt` tells which happened.
  [[nodiscard]] static Result<RecordIndex> LoadOrBuild(const std::string& path,
                                                       const RecordReaderOptions& options = {},
                                                       FileSystem* fs = nullptr, std::string index_path = "",
                                                       bool* rebuilt = nullptr);
  // Writes the index file atomically (a temporary file, then rename).
  [[nodiscard]] Status Save(const std::string& index_path, FileSystem* fs = nullptr) const;
  // The bytes Save() writes.
  std::string Serialize() const;

  // True when this index describes a file with these statistics and may
  // serve a reader with `ignore_errors`: a lossy() index serves only
  // ignore_errors readers.
  bool IsFreshFor(const FileStatistics& stat, CompressionType compression, bool ignore_errors = false) const;

  int64_t num_records() const { return static_cast<int64_t>(offsets_.size()); }
  // REQUIRES: 0 <= i < num_records().
  uint64_t offset(int64_t i) const { return offsets_[static_cast<size_t>(i)]; }
  // Payload length of record i (not counting bytes an ignore_errors build
  // skipped after it). REQUIRES as offset().
  uint64_t record_length(int64_t i) const { return lengths_[static_cast<size_t>(i)]; }
  const std::vector<uint64_t>& offsets() const { return offsets_; }
  const std::vector<uint64_t>& record_lengths() const { return lengths_; }
  // What an ignore_errors build dropped; both 0 for a strict build. A
  // corrupt header hides how many records it held, so bytes may be skipped
  // with no record counted.
  int64_t records_skipped() const { return records_skipped_; }
  uint64_t bytes_skipped() const { return bytes_skipped_; }
  // True when the build skipped anything: the index misses data a strict
  // reader would have failed on.
  bool lossy() const { return records_skipped_ != 0 || bytes_skipped_ != 0; }
  uint64_t stream_length() const { return stream_length_; }
  CompressionType compression() const { return compression_; }
  uint64_t file_length() const { return file_length_; }
  int64_t file_mtime_nsec() const { return file_mtime_nsec_; }

  // Records [begin, end) of shard `shard` of `num_shards`: contiguous, in
  // order, sizes differing by at most one. REQUIRES: 0 <= shard < num_shards.
  std::pair<int64_t, int64_t> ShardRange(int64_t shard, int64_t num_shards) const;

  // Reads record i with `reader`, which must read the indexed file. `*record`
  // as RecordReader::ReadRecord. Errors: OutOfRange for i outside
  // [0, num_records()); those of the reader.
  [[nodiscard]] Status ReadRecord(RecordReader* reader, int64_t i, std::string_view* record) const;

 private:
  std::vector<uint64_t> offsets_;
  std::vector<uint64_t> lengths_;  // payload length of each record
  uint64_t stream_length_ = 0;
  CompressionType compression_ = CompressionType::kNone;
  uint64_t file_length_ = 0;
  int64_t file_mtime_nsec_ = 0;
  int64_t records_skipped_ = 0;
  uint64_t bytes_skipped_ = 0;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_RECORD_INDEX_H_
