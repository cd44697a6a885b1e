#include "sluice/io/record_reader.h"

#include <string>

#include "io/buffered_input.h"
#include "io/io_errors.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/record_format.h"

namespace sluice::io {
namespace {

// TF's hint for a record header that does not check at the start of a file,
// naming the compression when the file starts as a GZIP or ZLIB stream.
std::string NotARecordFileHint(uint64_t offset, const char* header) {
  if (offset != 0) return "";
  std::string hint = " (Is this even a TFRecord file?)";
  const auto b0 = static_cast<unsigned char>(header[0]);
  const auto b1 = static_cast<unsigned char>(header[1]);
  if (b0 == 0x1f && b1 == 0x8b) {
    hint += " It starts as a GZIP stream: read it with compression_type \"GZIP\".";
  } else if (b0 == 0x78 && (b0 * 256 + b1) % 31 == 0) {
    hint += " It starts as a ZLIB stream: read it with compression_type \"ZLIB\".";
  }
  return hint;
}

}  // namespace

void CountingReporter::Corruption(const Status& reason, uint64_t bytes, int64_t records) {
  corruptions_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
  records_.fetch_add(records, std::memory_order_relaxed);
  MutexLock l(&mu_);
  last_error_ = reason;
}

Status CountingReporter::last_error() const {
  MutexLock l(&mu_);
  return last_error_;
}

Result<RecordReaderOptions> RecordReaderOptions::FromCompressionType(std::string_view compression_type) {
  RecordReaderOptions options;
  SLUICE_ASSIGN_OR_RETURN(options.compression_type, ParseCompressionType(compression_type));
  return options;
}

Result<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path, const RecordReaderOptions& options,
                                                         FileSystem* fs) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, OrDefault(fs)->NewRandomAccessFile(path));
  return New(std::move(file), options);
}

Result<std::unique_ptr<RecordReader>> RecordReader::New(std::unique_ptr<RandomAccessFile> file,
                                                        const RecordReaderOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> stream,
                          NewInputStream(std::move(file), options.compression_type, options.zlib));
  auto input = std::make_unique<BufferedInput>(std::move(stream), options.buffer_size);
  return std::unique_ptr<RecordReader>(new RecordReader(std::move(input), options));
}

RecordReader::RecordReader(std::unique_ptr<BufferedInput> input, const RecordReaderOptions& options)
    : input_(std::move(input)), options_(options) {}

RecordReader::~RecordReader() = default;

const std::string& RecordReader::filename() const { return input_->name(); }

int64_t RecordReader::IndexAt(uint64_t offset) const {
  if (offset == next_offset_) return next_index_;
  if (offset == 0) return 0;
  return -1;
}

Status RecordReader::Seek(uint64_t offset, int64_t record_index) {
  next_offset_ = offset;
  next_index_ = record_index;
  return WithLocation(input_->Seek(offset), filename(), record_index, offset);
}

Status RecordReader::Corrupted(uint64_t reported_offset, uint64_t record_offset, int64_t index,
                               std::string_view what) const {
  std::string msg = StrCat("corrupted record at ", reported_offset, " in ", filename());
  if (index >= 0) msg += StrCat(" (record ", index, ")");
  msg += StrCat(": ", what);
  return WithLocation(errors::DataLoss(msg), filename(), index, record_offset);
}

Status RecordReader::ReadOne(uint64_t offset, int64_t index, std::string_view* record, uint64_t* frame_size,
                             Failure* failure) {
  *failure = Failure::kStream;
  *frame_size = 0;
  if (input_->Tell() != offset) SLUICE_RETURN_IF_ERROR(WithLocation(input_->Seek(offset), filename(), index, offset));
  Result<size_t> got = input_->Ensure(kRecordHeaderSize);
  if (!got.ok()) return WithLocation(got.status(), filename(), index, offset);
  if (*got < kRecordHeaderSize) {
    *failure = Failure::kNone;
    if (*got > 0 && !warned_partial_header_) {
      warned_partial_header_ = true;
      LogWarning(StrCat(filename(), ": ", *got, " bytes after the last record at offset ", offset,
                        " are too few for a record header; treating them as the end of the file"));
    }
    return errors::OutOfRange("End of file");
  }
  const char* header = input_->data();
  const uint64_t length = DecodeFixed64(header);
  if (crc32c::Unmask(DecodeFixed32(header + sizeof(uint64_t))) != crc32c::Value(header, sizeof(uint64_t))) {
    *failure = Failure::kHeaderChecksum;
    return Corrupted(offset, offset, index, StrCat("length checksum mismatch", NotARecordFileHint(offset, header)));
  }
  if (length > kMaxRecordLength) {
    *failure = Failure::kHeaderChecksum;
    return Corrupted(offset, offset, index, StrCat("record size too large (", length, " bytes)"));
  }
  const size_t need = kRecordHeaderSize + static_cast<size_t>(length) + kRecordFooterSize;
  got = input_->Ensure(need);
  if (!got.ok()) return WithLocation(got.status(), filename(), index, offset);
  if (*got < need) {
    *failure = Failure::kTruncated;
    *frame_size = *got;
    std::string msg = StrCat("truncated record at ", offset, " in ", filename());
    if (index >= 0) msg += StrCat(" (record ", index, ")");
    msg += StrCat(": ", *got, " of ", need, " bytes present");
    return WithLocation(errors::DataLoss(msg), filename(), index, offset);
  }
  *frame_size = need;
  const char* data = input_->data() + kRecordHeaderSize;
  if (crc32c::Unmask(DecodeFixed32(data + length)) != crc32c::Value(data, static_cast<size_t>(length))) {
    *failure = Failure::kDataChecksum;
    return Corrupted(offset + kRecordHeaderSize, offset, index, "data checksum mismatch");
  }
  *record = std::string_view(data, static_cast<size_t>(length));
  input_->Consume(need);
  *failure = Failure::kNone;
  return Status::OK();
}

Status RecordReader::Resync(uint64_t offset, uint64_t* next, bool* found) {
  for (uint64_t p = offset + 1;; ++p) {
    SLUICE_RETURN_IF_ERROR(WithLocation(input_->Seek(p), filename(), -1, p));
    Result<size_t> got = input_->Ensure(kRecordHeaderSize);
    if (!got.ok()) return WithLocation(got.status(), filename(), -1, p);
    if (*got < kRecordHeaderSize) {
      *next = p + *got;
      *found = false;
      return Status::OK();
    }
    const char* header = input_->data();
    if (crc32c::Unmask(DecodeFixed32(header + sizeof(uint64_t))) != crc32c::Value(header, sizeof(uint64_t))) continue;
    const uint64_t length = DecodeFixed64(header);
    if (length > kMaxRecordLength) continue;
    const size_t need = kRecordHeaderSize + static_cast<size_t>(length) + kRecordFooterSize;
    got = input_->Ensure(need);
    if (!got.ok()) return WithLocation(got.status(), filename(), -1, p);
    if (*got < need) continue;
    const char* data = input_->data() + kRecordHeaderSize;
    if (crc32c::Unmask(DecodeFixed32(data + length)) != crc32c::Value(data, static_cast<size_t>(length))) continue;
    *next = p;
    *found = true;
    return Status::OK();
  }
}

void RecordReader::Report(const Status& reason, uint64_t bytes, int64_t records) {
  ++corruptions_skipped_;
  bytes_skipped_ += bytes;
  records_skipped_ += records;
  if (options_.reporter != nullptr) options_.reporter->Corruption(reason, bytes, records);
}

Status RecordReader::ReadRecord(uint64_t* offset, std::string_view* record) {
  int64_t index = IndexAt(*offset);
  for (;;) {
    uint64_t frame = 0;
    Failure failure;
    Status s = ReadOne(*offset, index, record, &frame, &failure);
    if (s.ok()) {
      last_offset_ = *offset;
      last_index_ = index;
      *offset += frame;
      next_offset_ = *offset;
      next_index_ = index >= 0 ? index + 1 : -1;
      return s;
    }
    if (failure == Failure::kNone || failure == Failure::kStream || !options_.ignore_errors) return s;
    switch (failure) {
      case Failure::kDataChecksum:
      case Failure::kTruncated:
        Report(s, frame, 1);
        *offset += frame;
        index = index >= 0 ? index + 1 : -1;
        break;
      case Failure::kHeaderChecksum: {
        uint64_t next = 0;
        bool found = false;
        SLUICE_RETURN_IF_ERROR(Resync(*offset, &next, &found));
        Report(s, next - *offset, 0);
        *offset = next;
        index = -1;
        break;
      }
      default:
        return s;
    }
    next_offset_ = *offset;
    next_index_ = index;
  }
}

Status RecordReader::ReadRecord(uint64_t* offset, std::string* record) {
  std::string_view view;
  SLUICE_RETURN_IF_ERROR(ReadRecord(offset, &view));
  record->assign(view.data(), view.size());
  return Status::OK();
}

Status RecordReader::ReadNext(std::string_view* record) {
  uint64_t offset = next_offset_;
  return ReadRecord(&offset, record);
}

}  // namespace sluice::io
