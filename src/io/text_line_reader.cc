// TextLineReader (TensorFlow core/kernels/text_line_reader_op.cc).
#include <memory>
#include <string>

#include "io/buffered_input.h"
#include "sluice/io/readers.h"

namespace sluice::io {
namespace {

class TextLineReader : public ReaderBase {
 public:
  explicit TextLineReader(const TextLineReaderOptions& options)
      : ReaderBase("TextLineReader", options.name),
        fs_(OrDefault(options.file_system)),
        skip_header_lines_(options.skip_header_lines) {}

 private:
  Status OnWorkStartedLocked() override SLUICE_REQUIRES(mu_) {
    line_number_ = 0;
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs_->NewRandomAccessFile(current_work()));
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> stream, NewInputStream(std::move(file), CompressionType::kNone));
    input_ = std::make_unique<BufferedInput>(std::move(stream));
    std::string_view line;
    for (; line_number_ < skip_header_lines_; ++line_number_) {
      Status s = input_->ReadLine(&line);
      // A file shorter than its header yields nothing, without an error.
      if (errors::IsOutOfRange(s)) return Status::OK();
      SLUICE_RETURN_IF_ERROR(s);
    }
    return Status::OK();
  }

  Status OnWorkFinishedLocked() override SLUICE_REQUIRES(mu_) {
    input_.reset();
    return Status::OK();
  }

  Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) override SLUICE_REQUIRES(mu_) {
    std::string_view line;
    Status s = input_->ReadLine(&line);
    if (errors::IsOutOfRange(s)) {
      *at_end = true;
      return Status::OK();
    }
    // A failed read consumed nothing: the retry reads the same line number.
    SLUICE_RETURN_IF_ERROR(s);
    ++line_number_;
    key->assign(current_work()).append(1, ':').append(std::to_string(line_number_));
    value->assign(line.data(), line.size());
    *produced = true;
    return Status::OK();
  }

  Status ResetLocked() override SLUICE_REQUIRES(mu_) {
    line_number_ = 0;
    input_.reset();
    return ReaderBase::ResetLocked();
  }

  // Constant after construction.
  FileSystem* const fs_;
  const int64_t skip_header_lines_;

  // Protected by mu_.
  int64_t line_number_ SLUICE_GUARDED_BY(mu_) = 0;
  std::unique_ptr<BufferedInput> input_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace

Result<std::unique_ptr<ReaderBase>> NewTextLineReader(const TextLineReaderOptions& options) {
  if (options.skip_header_lines < 0) {
    return errors::InvalidArgument("skip_header_lines must be >= 0 not ", options.skip_header_lines);
  }
  return std::unique_ptr<ReaderBase>(new TextLineReader(options));
}

}  // namespace sluice::io
