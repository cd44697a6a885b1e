#include "sluice/io/record_iterator.h"

#include "io/buffered_input.h"
#include "io/io_errors.h"

namespace sluice::io {

Result<std::unique_ptr<TFRecordIterator>> TFRecordIterator::Open(const std::string& path,
                                                                 const RecordReaderOptions& options, FileSystem* fs) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path, options, fs));
  return std::unique_ptr<TFRecordIterator>(new TFRecordIterator(std::move(reader)));
}

Status TFRecordIterator::GetNext(std::string_view* record, bool* end_of_sequence) {
  Status s = reader_->ReadNext(record);
  *end_of_sequence = errors::IsOutOfRange(s);
  return *end_of_sequence ? Status::OK() : s;
}

Result<std::optional<std::string>> TFRecordIterator::Next() {
  std::string_view record;
  bool end = false;
  SLUICE_RETURN_IF_ERROR(GetNext(&record, &end));
  if (end) return std::optional<std::string>();
  return std::optional<std::string>(std::string(record));
}

Result<std::unique_ptr<LineIterator>> LineIterator::Open(const std::string& path, const LineIteratorOptions& options,
                                                         FileSystem* fs) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, OrDefault(fs)->NewRandomAccessFile(path));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> stream,
                          NewInputStream(std::move(file), options.compression_type, options.zlib));
  return std::unique_ptr<LineIterator>(
      new LineIterator(std::make_unique<BufferedInput>(std::move(stream), options.buffer_size)));
}

LineIterator::LineIterator(std::unique_ptr<BufferedInput> input) : input_(std::move(input)) {}
LineIterator::~LineIterator() = default;

uint64_t LineIterator::offset() const { return input_->Tell(); }

Status LineIterator::GetNext(std::string_view* line, bool* end_of_sequence) {
  const uint64_t start = input_->Tell();
  Status s = input_->ReadLine(line);
  *end_of_sequence = errors::IsOutOfRange(s);
  if (*end_of_sequence) return Status::OK();
  if (!s.ok()) {
    // Nothing was consumed: a retry reads the same line.
    return WithLocation(s, input_->name(), line_number_, start);
  }
  ++line_number_;
  return s;
}

Result<std::optional<std::string>> LineIterator::Next() {
  std::string_view line;
  bool end = false;
  SLUICE_RETURN_IF_ERROR(GetNext(&line, &end));
  if (end) return std::optional<std::string>();
  return std::optional<std::string>(std::string(line));
}

Status LineIterator::Seek(uint64_t offset, int64_t line_number) {
  line_number_ = line_number;
  return WithLocation(input_->Seek(offset), input_->name(), line_number, offset);
}

}  // namespace sluice::io
