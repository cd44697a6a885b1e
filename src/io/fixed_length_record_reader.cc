// FixedLengthRecordReader (TensorFlow core/kernels/fixed_length_record_reader_op.cc).
#include <memory>
#include <string>

#include "io/buffered_input.h"
#include "sluice/io/readers.h"

namespace sluice::io {
namespace {

class FixedLengthRecordReader : public ReaderBase {
 public:
  FixedLengthRecordReader(const FixedLengthRecordReaderOptions& options, CompressionType encoding)
      : ReaderBase("FixedLengthRecordReader", options.name),
        fs_(OrDefault(options.file_system)),
        header_bytes_(static_cast<uint64_t>(options.header_bytes)),
        record_bytes_(static_cast<size_t>(options.record_bytes)),
        footer_bytes_(static_cast<size_t>(options.footer_bytes)),
        hop_bytes_(options.hop_bytes == 0 ? static_cast<uint64_t>(options.record_bytes)
                                          : static_cast<uint64_t>(options.hop_bytes)),
        encoding_(encoding) {}

 private:
  Status OnWorkStartedLocked() override REQUIRES(mu_) {
    record_number_ = 0;
    hop_pending_ = false;
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs_->NewRandomAccessFile(current_work()));
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> stream, NewInputStream(std::move(file), encoding_));
    input_ = std::make_unique<BufferedInput>(std::move(stream));
    // A file shorter than its header simply has no records.
    return input_->Skip(header_bytes_).status();
  }

  Status OnWorkFinishedLocked() override REQUIRES(mu_) {
    input_.reset();
    return Status::OK();
  }

  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override REQUIRES(mu_) {
    // The hop after a record is taken at the next read, so that a failure
    // there is reported by a read that produced nothing.
    if (hop_pending_) {
      SLUICE_RETURN_IF_ERROR(input_->Skip(hop_bytes_).status());
      hop_pending_ = false;
    }
    const size_t need = record_bytes_ + footer_bytes_;
    SLUICE_ASSIGN_OR_RETURN(size_t got, input_->Ensure(need));
    if (got < need) {  // a trailing partial record is dropped
      *at_end = true;
      return Status::OK();
    }
    key->assign(current_work()).append(1, ':').append(std::to_string(record_number_));
    value->assign(input_->data(), record_bytes_);
    ++record_number_;
    hop_pending_ = true;
    *produced = true;
    return Status::OK();
  }

  Status ResetLocked() override REQUIRES(mu_) {
    record_number_ = 0;
    hop_pending_ = false;
    input_.reset();
    return ReaderBase::ResetLocked();
  }

  // Constant after construction.
  FileSystem* const fs_;
  const uint64_t header_bytes_;
  const size_t record_bytes_;
  const size_t footer_bytes_;
  const uint64_t hop_bytes_;
  const CompressionType encoding_;

  // Protected by mu_.
  int64_t record_number_ GUARDED_BY(mu_) = 0;
  bool hop_pending_ GUARDED_BY(mu_) = false;
  std::unique_ptr<BufferedInput> input_ GUARDED_BY(mu_);
};

}  // namespace

Result<std::unique_ptr<ReaderBase>> NewFixedLengthRecordReader(const FixedLengthRecordReaderOptions& options) {
  const std::pair<const char*, int64_t> sizes[] = {{"header_bytes", options.header_bytes},
                                                   {"record_bytes", options.record_bytes},
                                                   {"footer_bytes", options.footer_bytes},
                                                   {"hop_bytes", options.hop_bytes}};
  for (const auto& [field, value] : sizes) {
    if (value < 0) return errors::InvalidArgument(field, " must be >= 0 not ", value);
  }
  if (options.record_bytes == 0 && options.hop_bytes == 0) {
    return errors::InvalidArgument("record_bytes and hop_bytes must not both be 0");
  }
  SLUICE_ASSIGN_OR_RETURN(CompressionType encoding, ParseCompressionType(options.encoding));
  return std::unique_ptr<ReaderBase>(new FixedLengthRecordReader(options, encoding));
}

}  // namespace sluice::io
