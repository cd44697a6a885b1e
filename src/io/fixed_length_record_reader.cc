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
  Status OnWorkStartedLocked() override SLUICE_REQUIRES(mu_) {
    record_number_ = 0;
    next_offset_ = header_bytes_;
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs_->NewRandomAccessFile(current_work()));
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> stream, NewInputStream(std::move(file), encoding_));
    input_ = std::make_unique<BufferedInput>(std::move(stream));
    // A file shorter than its header simply has no records.
    return input_->Skip(header_bytes_).status();
  }

  Status OnWorkFinishedLocked() override SLUICE_REQUIRES(mu_) {
    input_.reset();
    return Status::OK();
  }

  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override SLUICE_REQUIRES(mu_) {
    // Each record is read from its absolute offset, so that a read retried
    // after an error (one in the middle of a hop included) starts where the
    // record does; a relative skip would be repeated from wherever the
    // failed one stopped.
    if (input_->Tell() != next_offset_) SLUICE_RETURN_IF_ERROR(input_->Seek(next_offset_));
    const size_t need = record_bytes_ + footer_bytes_;
    SLUICE_ASSIGN_OR_RETURN(size_t got, input_->Ensure(need));
    if (got < need) {  // a trailing partial record is dropped
      *at_end = true;
      return Status::OK();
    }
    key->assign(current_work()).append(1, ':').append(std::to_string(record_number_));
    value->assign(input_->data(), record_bytes_);
    ++record_number_;
    next_offset_ += hop_bytes_;
    *produced = true;
    return Status::OK();
  }

  Status ResetLocked() override SLUICE_REQUIRES(mu_) {
    record_number_ = 0;
    next_offset_ = 0;
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
  int64_t record_number_ SLUICE_GUARDED_BY(mu_) = 0;
  uint64_t next_offset_ SLUICE_GUARDED_BY(mu_) = 0;  // of the next record, in the (decompressed) stream
  std::unique_ptr<BufferedInput> input_ SLUICE_GUARDED_BY(mu_);
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
