#include "sluice/io/record_index.h"

#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cstring>

#include "io/io_errors.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/record_format.h"

namespace sluice::io {
namespace {

constexpr size_t kFixedSize = 64;  // bytes before the offsets

Status Corrupt(const std::string& path, std::string_view why) {
  return errors::DataLoss("corrupt record index ", path, ": ", why).WithPayload(kFilePayload, path);
}

// Payload lengths of records stored back to back, ending at `stream_length`.
std::vector<uint64_t> ContiguousLengths(const std::vector<uint64_t>& offsets, uint64_t stream_length) {
  std::vector<uint64_t> lengths(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) {
    const uint64_t end = i + 1 < offsets.size() ? offsets[i + 1] : stream_length;
    lengths[i] = end - offsets[i] - kRecordHeaderSize - kRecordFooterSize;
  }
  return lengths;
}

}  // namespace

RecordIndex::RecordIndex(std::vector<uint64_t> offsets, uint64_t stream_length, CompressionType compression,
                         const FileStatistics& stat)
    : offsets_(std::move(offsets)),
      lengths_(ContiguousLengths(offsets_, stream_length)),
      stream_length_(stream_length),
      compression_(compression),
      file_length_(stat.length),
      file_mtime_nsec_(stat.mtime_nsec) {}

RecordIndex::RecordIndex(std::vector<uint64_t> offsets, std::vector<uint64_t> lengths, uint64_t stream_length,
                         CompressionType compression, const FileStatistics& stat, int64_t records_skipped,
                         uint64_t bytes_skipped)
    : offsets_(std::move(offsets)),
      lengths_(std::move(lengths)),
      stream_length_(stream_length),
      compression_(compression),
      file_length_(stat.length),
      file_mtime_nsec_(stat.mtime_nsec),
      records_skipped_(records_skipped),
      bytes_skipped_(bytes_skipped) {
  assert(offsets_.size() == lengths_.size());
}

bool RecordIndex::IsFreshFor(const FileStatistics& stat, CompressionType compression, bool ignore_errors) const {
  return stat.length == file_length_ && stat.mtime_nsec == file_mtime_nsec_ && compression == compression_ &&
         (ignore_errors || !lossy());
}

std::pair<int64_t, int64_t> RecordIndex::ShardRange(int64_t shard, int64_t num_shards) const {
  const int64_t n = num_records();
  const int64_t base = n / num_shards, extra = n % num_shards;
  const int64_t begin = shard * base + std::min(shard, extra);
  return {begin, begin + base + (shard < extra ? 1 : 0)};
}

Status RecordIndex::ReadRecord(RecordReader* reader, int64_t i, std::string_view* record) const {
  if (i < 0 || i >= num_records()) {
    return errors::OutOfRange("record ", i, " is outside [0, ", num_records(), ") in the index of ",
                              reader->filename());
  }
  uint64_t off = offset(i);
  if (reader->offset() != off || reader->record_index() != i) SLUICE_RETURN_IF_ERROR(reader->Seek(off, i));
  return reader->ReadNext(record);
}

std::string RecordIndex::Serialize() const {
  const size_t n = offsets_.size();
  std::string out(kFixedSize + 16 * n + 4, '\0');
  char* p = out.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  EncodeFixed32(p + 8, kVersion);
  EncodeFixed32(p + 12, static_cast<uint32_t>(compression_));
  EncodeFixed64(p + 16, file_length_);
  EncodeFixed64(p + 24, static_cast<uint64_t>(file_mtime_nsec_));
  EncodeFixed64(p + 32, stream_length_);
  EncodeFixed64(p + 40, n);
  EncodeFixed64(p + 48, static_cast<uint64_t>(records_skipped_));
  EncodeFixed64(p + 56, bytes_skipped_);
  for (size_t i = 0; i < n; ++i) {
    EncodeFixed64(p + kFixedSize + 8 * i, offsets_[i]);
    EncodeFixed64(p + kFixedSize + 8 * (n + i), lengths_[i]);
  }
  const size_t body = kFixedSize + 16 * n;
  EncodeFixed32(p + body, crc32c::Mask(crc32c::Value(p, body)));
  return out;
}

Result<RecordIndex> RecordIndex::Load(const std::string& index_path, FileSystem* fs) {
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(fs, index_path));
  return Parse(bytes, index_path);
}

Result<RecordIndex> RecordIndex::Parse(std::string_view bytes, const std::string& index_path) {
  if (bytes.size() < kFixedSize + 4) return Corrupt(index_path, StrCat("only ", bytes.size(), " bytes"));
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) return Corrupt(index_path, "bad magic");
  if (DecodeFixed32(p + 8) != kVersion) return Corrupt(index_path, StrCat("unknown version ", DecodeFixed32(p + 8)));
  const uint64_t count = DecodeFixed64(p + 40);
  if (count > (bytes.size() - kFixedSize - 4) / 16 || kFixedSize + 16 * count + 4 != bytes.size()) {
    return Corrupt(index_path, StrCat("size ", bytes.size(), " does not fit ", count, " records"));
  }
  const size_t body = kFixedSize + 16 * count;
  if (crc32c::Unmask(DecodeFixed32(p + body)) != crc32c::Value(p, body)) return Corrupt(index_path, "checksum mismatch");
  const uint32_t compression = DecodeFixed32(p + 12);
  if (compression > 2) return Corrupt(index_path, StrCat("unknown compression ", compression));
  RecordIndex index;
  index.compression_ = static_cast<CompressionType>(compression);
  index.file_length_ = DecodeFixed64(p + 16);
  index.file_mtime_nsec_ = static_cast<int64_t>(DecodeFixed64(p + 24));
  index.stream_length_ = DecodeFixed64(p + 32);
  index.records_skipped_ = static_cast<int64_t>(DecodeFixed64(p + 48));
  index.bytes_skipped_ = DecodeFixed64(p + 56);
  if (index.records_skipped_ < 0) return Corrupt(index_path, "negative count of skipped records");
  index.offsets_.resize(count);
  index.lengths_.resize(count);
  uint64_t min_next = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t off = DecodeFixed64(p + kFixedSize + 8 * i);
    const uint64_t length = DecodeFixed64(p + kFixedSize + 8 * (count + i));
    if (off < min_next) return Corrupt(index_path, StrCat("offset of record ", i, " out of order"));
    // Bounded so that the sum below cannot wrap.
    if (off > index.stream_length_ || length > index.stream_length_) {
      return Corrupt(index_path, StrCat("record ", i, " extends past the stream length"));
    }
    index.offsets_[i] = off;
    index.lengths_[i] = length;
    min_next = off + kRecordHeaderSize + length + kRecordFooterSize;
  }
  if (min_next > index.stream_length_) return Corrupt(index_path, "records extend past the stream length");
  return index;
}

Status RecordIndex::Save(const std::string& index_path, FileSystem* fs) const {
  fs = OrDefault(fs);
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = StrCat(index_path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  Status s = WriteStringToFile(fs, tmp, Serialize());
  if (s.ok()) s = fs->RenameFile(tmp, index_path);
  if (!s.ok()) fs->DeleteFile(tmp).IgnoreError();
  return s;
}

Result<RecordIndex> RecordIndex::Build(const std::string& path, const RecordReaderOptions& options, FileSystem* fs) {
  fs = OrDefault(fs);
  // Stat first: a file that changes during the scan then looks stale later.
  SLUICE_ASSIGN_OR_RETURN(FileStatistics stat, fs->Stat(path));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path, options, fs));
  std::vector<uint64_t> offsets, lengths;
  std::string_view record;
  uint64_t end = 0;
  for (;;) {
    Status s = reader->ReadNext(&record);
    if (errors::IsOutOfRange(s)) break;
    SLUICE_RETURN_IF_ERROR(s);
    offsets.push_back(reader->last_record_offset());
    lengths.push_back(record.size());
    end = reader->offset();
  }
  // Skips are recorded so that a strict user treats this index as stale
  // (IsFreshFor) instead of silently missing the dropped records.
  return RecordIndex(std::move(offsets), std::move(lengths), end, options.compression_type, stat,
                     reader->records_skipped(), reader->bytes_skipped());
}

Result<RecordIndex> RecordIndex::LoadOrBuild(const std::string& path, const RecordReaderOptions& options,
                                             FileSystem* fs, std::string index_path, bool* rebuilt) {
  fs = OrDefault(fs);
  if (index_path.empty()) index_path = IndexPath(path);
  SLUICE_ASSIGN_OR_RETURN(FileStatistics stat, fs->Stat(path));
  Result<RecordIndex> loaded = Load(index_path, fs);
  if (loaded.ok() && loaded->IsFreshFor(stat, options.compression_type, options.ignore_errors)) {
    if (rebuilt != nullptr) *rebuilt = false;
    return loaded;
  }
  SLUICE_ASSIGN_OR_RETURN(RecordIndex index, Build(path, options, fs));
  if (rebuilt != nullptr) *rebuilt = true;
  Status saved = index.Save(index_path, fs);
  if (!saved.ok()) LogWarning(StrCat("could not save the record index of ", path, ": ", saved.ToString()));
  return index;
}

}  // namespace sluice::io
