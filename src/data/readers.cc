// TFRecordDataset, TextLineDataset, FixedLengthRecordDataset: the records of
// a list of files, one file after the other; with num_parallel_reads, an
// Interleave of one such dataset per file (TF's construction).
//
// Checkpoints save the file index and the byte offset of the next record
// (uncompressed); restore opens the file and seeks there. A GZIP/ZLIB file
// cannot seek, so its restore inflates the file again from the start up to
// the offset (no record is parsed on the way).
#include <utility>

#include "data/dataset_util.h"
#include "data/error_policy.h"
#include "data/model.h"
#include "data/record_source.h"
#include "io/buffered_input.h"
#include "sluice/data/datasets.h"
#include "sluice/io/record_iterator.h"

namespace sluice::data {
namespace {

using Format = RecordSource::Format;

struct FileOptions {
  Format format;
  io::CompressionType compression;
  size_t buffer_size;
  FixedLengthOptions fixed;
};

// Reads the records of one file; GetNext as IteratorBase.
class FileReader {
 public:
  virtual ~FileReader() = default;
  virtual Status GetNext(std::string_view* record, bool* end_of_sequence) = 0;
  // Offset of the next record, and of the record GetNext returned last.
  virtual uint64_t offset() const = 0;
  virtual uint64_t last_offset() const = 0;
  // Continues at `offset`, the start of the record after the first `records`.
  virtual Status Seek(uint64_t offset, int64_t records) = 0;
};

class TFRecordFileReader : public FileReader {
 public:
  explicit TFRecordFileReader(std::unique_ptr<io::TFRecordIterator> it) : it_(std::move(it)) {}
  Status GetNext(std::string_view* record, bool* end) override { return it_->GetNext(record, end); }
  uint64_t offset() const override { return it_->offset(); }
  uint64_t last_offset() const override { return it_->reader()->last_record_offset(); }
  Status Seek(uint64_t offset, int64_t records) override { return it_->Seek(offset, records); }

 private:
  std::unique_ptr<io::TFRecordIterator> it_;
};

class LineFileReader : public FileReader {
 public:
  explicit LineFileReader(std::unique_ptr<io::LineIterator> it) : it_(std::move(it)) {}
  Status GetNext(std::string_view* record, bool* end) override {
    last_offset_ = it_->offset();
    return it_->GetNext(record, end);
  }
  uint64_t offset() const override { return it_->offset(); }
  uint64_t last_offset() const override { return last_offset_; }
  Status Seek(uint64_t offset, int64_t records) override { return it_->Seek(offset, records); }

 private:
  std::unique_ptr<io::LineIterator> it_;
  uint64_t last_offset_ = 0;
};

class FixedLengthFileReader : public FileReader {
 public:
  FixedLengthFileReader(std::unique_ptr<io::BufferedInput> input, FixedLengthOptions fixed, std::string path)
      : input_(std::move(input)), fixed_(fixed), path_(std::move(path)) {}

  Status GetNext(std::string_view* record, bool* end) override {
    if (!started_) {
      // A file shorter than its header has no records.
      Result<uint64_t> skipped = input_->Skip(static_cast<uint64_t>(fixed_.header_bytes));
      if (!skipped.ok()) return WithOrigin(skipped.status());
      started_ = true;
    }
    if (pending_) input_->Consume(static_cast<size_t>(fixed_.record_bytes));
    pending_ = false;
    // A record counts only if the footer still fits after it.
    const size_t need = static_cast<size_t>(fixed_.record_bytes + fixed_.footer_bytes);
    Result<size_t> got = input_->Ensure(need);
    if (!got.ok()) return WithOrigin(got.status());
    if (*got < need) {
      *end = true;
      return Status();
    }
    *record = std::string_view(input_->data(), static_cast<size_t>(fixed_.record_bytes));
    *end = false;
    pending_ = true;
    ++index_;
    return Status();
  }

  uint64_t offset() const override {
    if (!started_) return static_cast<uint64_t>(fixed_.header_bytes);
    return input_->Tell() + (pending_ ? static_cast<uint64_t>(fixed_.record_bytes) : 0);
  }
  uint64_t last_offset() const override { return input_->Tell(); }
  Status Seek(uint64_t offset, int64_t records) override {
    started_ = true;
    pending_ = false;
    index_ = records;
    return WithOrigin(input_->Seek(offset));
  }

 private:
  Status WithOrigin(const Status& s) const {
    return s.WithPayload("file", path_).WithPayload("record", std::to_string(index_));
  }
  std::unique_ptr<io::BufferedInput> input_;
  const FixedLengthOptions fixed_;
  const std::string path_;
  bool started_ = false;
  bool pending_ = false;
  int64_t index_ = 0;
};

// TF refuses an uncompressed file whose body is not whole records.
Status CheckFixedLengthBody(const std::string& path, const FixedLengthOptions& fixed) {
  SLUICE_ASSIGN_OR_RETURN(uint64_t size, io::DefaultFileSystem()->GetFileSize(path));
  const int64_t body = static_cast<int64_t>(size) - fixed.header_bytes - fixed.footer_bytes;
  if (body > 0 && body % fixed.record_bytes != 0) {
    return InvalidArgument("Excluding the header (" + std::to_string(fixed.header_bytes) + " bytes) and footer (" +
                           std::to_string(fixed.footer_bytes) + " bytes), input file \"" + path +
                           "\" has body length " + std::to_string(body) +
                           " bytes, which is not an exact multiple of the record length (" +
                           std::to_string(fixed.record_bytes) + " bytes).");
  }
  return Status();
}

Result<std::unique_ptr<FileReader>> OpenFile(const std::string& path, const FileOptions& o) {
  switch (o.format) {
    case Format::kTFRecord: {
      io::RecordReaderOptions options;
      options.compression_type = o.compression;
      if (o.buffer_size > 0) options.buffer_size = o.buffer_size;
      SLUICE_ASSIGN_OR_RETURN(auto it, io::TFRecordIterator::Open(path, options));
      return std::unique_ptr<FileReader>(new TFRecordFileReader(std::move(it)));
    }
    case Format::kTextLine: {
      io::LineIteratorOptions options;
      options.compression_type = o.compression;
      if (o.buffer_size > 0) options.buffer_size = o.buffer_size;
      SLUICE_ASSIGN_OR_RETURN(auto it, io::LineIterator::Open(path, options));
      return std::unique_ptr<FileReader>(new LineFileReader(std::move(it)));
    }
    case Format::kFixedLength: {
      if (o.compression == io::CompressionType::kNone) SLUICE_RETURN_IF_ERROR(CheckFixedLengthBody(path, o.fixed));
      SLUICE_ASSIGN_OR_RETURN(auto file, io::DefaultFileSystem()->NewRandomAccessFile(path));
      SLUICE_ASSIGN_OR_RETURN(auto stream, io::NewInputStream(std::move(file), o.compression));
      auto input = o.buffer_size > 0 ? std::make_unique<io::BufferedInput>(std::move(stream), o.buffer_size)
                                     : std::make_unique<io::BufferedInput>(std::move(stream));
      return std::unique_ptr<FileReader>(new FixedLengthFileReader(std::move(input), o.fixed, path));
    }
  }
  return InvalidArgument("unknown record format");
}

class FilesDataset : public DatasetBase {
 public:
  FilesDataset(std::vector<std::string> filenames, FileOptions options)
      : DatasetBase(ElementSpec{{DType::kString}, {PartialShape({})}, {}}),
        filenames_(std::move(filenames)),
        options_(options) {}

  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override {
    return options_.format == Format::kTFRecord   ? "TFRecordDataset"
           : options_.format == Format::kTextLine ? "TextLineDataset"
                                                  : "FixedLengthRecordDataset";
  }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<FilesDataset> {
   public:
    Iterator(const FilesDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), node_(NewNode(ctx, d->DebugName())) {}

    // One record in Node::kSampleEvery is timed.
    Status GetNext(Element* out, bool* end_of_sequence) override {
      if (!node_->SampleNext()) return Read(out, end_of_sequence);
      const int64_t start = NowNanos();
      Status s = Read(out, end_of_sequence);
      Node::Bump(node_->busy_ns, (NowNanos() - start) * Node::kSampleEvery);
      return s;
    }

    const ElementOrigin* origin() const override { return origin_.file ? &origin_ : nullptr; }

    // The file index, and in an open file the next record's offset and the
    // number of records returned from it.
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("next_file", static_cast<int64_t>(next_file_));
      w->WriteBool("in_file", reader_ != nullptr);
      if (!reader_) return Status();
      w->WriteInt("offset", static_cast<int64_t>(reader_->offset()));
      w->WriteInt("record", origin_.record);
      return Status();
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t next_file = 0, offset = 0, record = 0;
      bool in_file = false;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("next_file", &next_file));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("in_file", &in_file));
      const auto files = static_cast<int64_t>(dataset_->filenames_.size());
      if (next_file < 0 || next_file > files || (in_file && next_file == 0)) {
        return InvalidArgument(dataset_->DebugName() + " checkpoint is at file " + std::to_string(next_file) +
                               " of a list of " + std::to_string(files));
      }
      reader_.reset();
      origin_ = ElementOrigin();
      next_file_ = static_cast<size_t>(next_file);
      if (!in_file) return Status();
      SLUICE_RETURN_IF_ERROR(r->ReadInt("offset", &offset));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("record", &record));
      --next_file_;
      SLUICE_RETURN_IF_ERROR(OpenNext());
      origin_.record = record;
      return reader_->Seek(static_cast<uint64_t>(offset), record + 1);
    }

   private:
    // Opens file next_file_ and moves past it.
    Status OpenNext() {
      const FilesDataset& d = *dataset_;
      const std::string& path = d.filenames_[next_file_++];  // an error belongs to this file: the next call goes on
      SLUICE_ASSIGN_OR_RETURN(reader_, OpenFile(path, d.options_));
      RecordSource::Spec spec{d.options_.format, d.options_.compression, d.options_.fixed, path};
      auto source = std::make_shared<const RecordSource>(std::move(spec));
      origin_.file = std::shared_ptr<const std::string>(source, &source->path());
      origin_.source = std::move(source);
      origin_.record = -1;
      return Status();
    }

    Status Read(Element* out, bool* end_of_sequence) {
      const FilesDataset& d = *dataset_;
      while (true) {
        if (!reader_) {
          if (next_file_ >= d.filenames_.size()) {
            *end_of_sequence = true;
            return Status();
          }
          SLUICE_RETURN_IF_ERROR(OpenNext());
        }
        std::string_view record;
        bool end = false;
        Status s = reader_->GetNext(&record, &end);
        if (!s.ok()) {
          // TF's rule: the rest of a file that fails is skipped, so that the
          // next call (ignore_errors) goes on with the next file instead of
          // meeting the same failure for ever.
          reader_.reset();
          return s;
        }
        if (!end) {
          *end_of_sequence = false;
          *out = Element{Tensor::String(record)};
          ++origin_.record;
          origin_.offset = reader_->last_offset();
          Node::Bump(node_->elements, 1);
          Node::Bump(node_->bytes, static_cast<int64_t>(record.size()));
          return Status();
        }
        reader_.reset();
      }
    }

    size_t next_file_ = 0;
    std::unique_ptr<FileReader> reader_;
    ElementOrigin origin_;  // of the last record returned
    const std::shared_ptr<Node> node_;
  };

  const std::vector<std::string> filenames_;
  const FileOptions options_;
};

Result<DatasetPtr> MakeFilesDataset(std::vector<std::string> filenames, FileOptions file_options,
                                    const RecordDatasetOptions& options) {
  if (options.buffer_size < 0) return InvalidArgument("buffer_size must be >= 0");
  if (!options.num_parallel_reads.has_value()) {
    auto files = std::make_shared<FilesDataset>(std::move(filenames), file_options);
    std::string stage = files->DebugName();
    // The readers' errors reach the error policy (the stage's, else Options').
    return WithErrorPolicy(std::move(files), std::move(stage), StageErrorPolicy{});
  }
  int64_t n = *options.num_parallel_reads;
  if (n == kAutotune) n = AutotuneParallelism();
  if (n < 1) return InvalidArgument("num_parallel_reads must be positive or AUTOTUNE, not " + std::to_string(n));
  std::vector<std::string> files = filenames;
  SLUICE_ASSIGN_OR_RETURN(DatasetPtr names, FromTensorSlices(Element{Tensor::FromStrings(files)}));
  InterleaveFn open = [file_options](Element e) -> Result<DatasetPtr> {
    return DatasetPtr(
        std::make_shared<FilesDataset>(std::vector<std::string>{e[0].scalar<std::string>()}, file_options));
  };
  ElementSpec spec{{DType::kString}, {PartialShape({})}, {}};
  const std::string stage = FilesDataset(std::vector<std::string>{}, file_options).DebugName();
  SLUICE_ASSIGN_OR_RETURN(DatasetPtr reads, Interleave(std::move(names), std::move(open), std::move(spec),
                                                       InterleaveOptions{.cycle_length = n, .block_length = 1,
                                                                         .num_parallel_calls = n}));
  return WithErrorPolicy(std::move(reads), stage, StageErrorPolicy{});
}

}  // namespace

Result<DatasetPtr> TFRecordDataset(std::vector<std::string> filenames, RecordDatasetOptions options) {
  SLUICE_ASSIGN_OR_RETURN(io::CompressionType c, io::ParseCompressionType(options.compression_type));
  return MakeFilesDataset(std::move(filenames), {Format::kTFRecord, c, static_cast<size_t>(options.buffer_size), {}},
                          options);
}

Result<DatasetPtr> TextLineDataset(std::vector<std::string> filenames, RecordDatasetOptions options) {
  SLUICE_ASSIGN_OR_RETURN(io::CompressionType c, io::ParseCompressionType(options.compression_type));
  return MakeFilesDataset(std::move(filenames), {Format::kTextLine, c, static_cast<size_t>(options.buffer_size), {}},
                          options);
}

Result<DatasetPtr> FixedLengthRecordDataset(std::vector<std::string> filenames, FixedLengthOptions fixed,
                                            RecordDatasetOptions options) {
  if (fixed.record_bytes <= 0) return InvalidArgument("record_bytes must be positive");
  if (fixed.header_bytes < 0 || fixed.footer_bytes < 0) {
    return InvalidArgument("header_bytes and footer_bytes must be >= 0");
  }
  SLUICE_ASSIGN_OR_RETURN(io::CompressionType c, io::ParseCompressionType(options.compression_type));
  return MakeFilesDataset(std::move(filenames),
                          {Format::kFixedLength, c, static_cast<size_t>(options.buffer_size), fixed}, options);
}

}  // namespace sluice::data
