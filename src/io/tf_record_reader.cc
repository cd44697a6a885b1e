// TFRecordReader (TensorFlow core/kernels/tf_record_reader_op.cc).
#include <memory>
#include <string>

#include "io/io_errors.h"
#include "sluice/io/readers.h"

namespace sluice::io {
namespace {

class TFRecordReader : public ReaderBase {
 public:
  TFRecordReader(const TFRecordReaderOptions& options, const RecordReaderOptions& record_options)
      : ReaderBase("TFRecordReader", options.name),
        fs_(OrDefault(options.file_system)),
        record_options_(record_options) {}

 private:
  Status OnWorkStartedLocked() override SLUICE_REQUIRES(mu_) {
    offset_ = 0;
    SLUICE_ASSIGN_OR_RETURN(reader_, RecordReader::Open(current_work(), record_options_, fs_));
    return Status::OK();
  }

  Status OnWorkFinishedLocked() override SLUICE_REQUIRES(mu_) {
    reader_.reset();
    return Status::OK();
  }

  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override SLUICE_REQUIRES(mu_) {
    std::string_view record;
    Status s = reader_->ReadRecord(&offset_, &record);
    if (errors::IsOutOfRange(s)) {
      *at_end = true;
      return Status::OK();
    }
    SLUICE_RETURN_IF_ERROR(s);
    const std::string offset = std::to_string(reader_->last_record_offset());
    key->reserve(current_work().size() + 1 + offset.size());
    key->assign(current_work()).append(1, ':').append(offset);
    value->assign(record.data(), record.size());
    *produced = true;
    return Status::OK();
  }

  Status ResetLocked() override SLUICE_REQUIRES(mu_) {
    offset_ = 0;
    reader_.reset();
    return ReaderBase::ResetLocked();
  }

  // Constant after construction.
  FileSystem* const fs_;
  const RecordReaderOptions record_options_;

  // Protected by mu_.
  uint64_t offset_ SLUICE_GUARDED_BY(mu_) = 0;
  std::unique_ptr<RecordReader> reader_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace

Result<std::unique_ptr<ReaderBase>> NewTFRecordReader(const TFRecordReaderOptions& options) {
  RecordReaderOptions record_options = options.record_options;
  Result<CompressionType> type = ParseCompressionType(options.compression_type);
  if (type.ok()) {
    record_options.compression_type = *type;
  } else {
    LogWarning(StrCat("TFRecordReader: unknown compression_type '", options.compression_type,
                      "'; reading without compression"));
    record_options.compression_type = CompressionType::kNone;
  }
  return std::unique_ptr<ReaderBase>(new TFRecordReader(options, record_options));
}

}  // namespace sluice::io
