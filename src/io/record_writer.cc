#include "sluice/io/record_writer.h"

#include "io/io_errors.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_index.h"

namespace sluice::io {

Result<RecordWriterOptions> RecordWriterOptions::FromCompressionType(std::string_view compression_type) {
  RecordWriterOptions options;
  SLUICE_ASSIGN_OR_RETURN(options.compression_type, ParseCompressionType(compression_type));
  return options;
}

Result<std::unique_ptr<RecordWriter>> RecordWriter::Open(const std::string& path, const RecordWriterOptions& options,
                                                         FileSystem* fs) {
  fs = OrDefault(fs);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs->NewWritableFile(path));
  if (options.compression_type != CompressionType::kNone) {
    SLUICE_ASSIGN_OR_RETURN(file, NewZlibOutputStream(std::move(file), options.compression_type, options.zlib));
  }
  return std::unique_ptr<RecordWriter>(new RecordWriter(std::move(file), options, path, fs));
}

Result<std::unique_ptr<RecordWriter>> RecordWriter::New(std::unique_ptr<WritableFile> dest,
                                                        const RecordWriterOptions& options) {
  if (options.compression_type != CompressionType::kNone) {
    SLUICE_ASSIGN_OR_RETURN(dest, NewZlibOutputStream(std::move(dest), options.compression_type, options.zlib));
  }
  return std::unique_ptr<RecordWriter>(new RecordWriter(std::move(dest), options, "", nullptr));
}

RecordWriter::RecordWriter(std::unique_ptr<WritableFile> dest, const RecordWriterOptions& options, std::string path,
                           FileSystem* fs)
    : dest_(std::move(dest)), options_(options), path_(std::move(path)), fs_(fs) {}

RecordWriter::~RecordWriter() {
  if (!closed_) Close().IgnoreError();
}

Status RecordWriter::Sticky(Status s) {
  if (!s.ok() && error_.ok()) error_ = WithFile(s, dest_->name());
  return error_.ok() ? s : error_;
}

Status RecordWriter::Write(std::string_view record) {
  if (closed_) return errors::FailedPrecondition("RecordWriter for ", dest_->name(), " is closed");
  SLUICE_RETURN_IF_ERROR(error_);
  char header[kRecordHeaderSize];
  char footer[kRecordFooterSize];
  EncodeRecordHeader(header, record.size());
  EncodeRecordFooter(footer, record);
  SLUICE_RETURN_IF_ERROR(Sticky(dest_->Append(std::string_view(header, sizeof(header)))));
  SLUICE_RETURN_IF_ERROR(Sticky(dest_->Append(record)));
  SLUICE_RETURN_IF_ERROR(Sticky(dest_->Append(std::string_view(footer, sizeof(footer)))));
  if (options_.write_index) offsets_.push_back(offset_);
  offset_ += kRecordHeaderSize + record.size() + kRecordFooterSize;
  ++records_written_;
  return Status::OK();
}

Status RecordWriter::Flush() {
  if (closed_) return errors::FailedPrecondition("RecordWriter for ", dest_->name(), " is closed");
  SLUICE_RETURN_IF_ERROR(error_);
  return Sticky(dest_->Flush());
}

Status RecordWriter::Close() {
  if (closed_) return errors::FailedPrecondition("RecordWriter for ", dest_->name(), " is closed");
  closed_ = true;
  Status s = error_;
  Status c = dest_->Close();
  if (s.ok()) s = WithFile(c, dest_->name());
  if (!s.ok() || !options_.write_index || path_.empty()) return s;
  SLUICE_ASSIGN_OR_RETURN(FileStatistics stat, fs_->Stat(path_));
  RecordIndex index(offsets_, offset_, options_.compression_type, stat);
  return index.Save(RecordIndex::IndexPath(path_), fs_);
}

}  // namespace sluice::io
