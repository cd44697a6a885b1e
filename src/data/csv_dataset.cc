// CsvDataset (tf.data.experimental.CsvDataset): the records of CSV files,
// file after file, each decoded by ops::DecodeCSV into one scalar per
// selected column. A record is a line, or several lines while a quoted field
// is open (an odd number of '"' so far), so quoted fields may hold newlines
// as in TF. Errors keep TF's wording and name the file, line and column.
#include <algorithm>
#include <utility>

#include "data/dataset_util.h"
#include "sluice/data/datasets.h"
#include "sluice/io/record_iterator.h"
#include "sluice/io/input_stream.h"
#include "sluice/ops/decode_csv.h"

namespace sluice::data {
namespace {

class CsvFilesDataset : public DatasetBase {
 public:
  CsvFilesDataset(std::vector<std::string> filenames, std::vector<Tensor> defaults, ElementSpec spec,
                  io::LineIteratorOptions line_options, CsvDatasetOptions options, ops::DecodeCSVOptions decode)
      : DatasetBase(std::move(spec)),
        filenames_(std::move(filenames)),
        defaults_(std::move(defaults)),
        line_options_(line_options),
        options_(std::move(options)),
        decode_(std::move(decode)) {}

  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "CSVDataset"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext&) const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<CsvFilesDataset> {
   public:
    using DatasetIterator::DatasetIterator;

    Status GetNext(Element* out, bool* end_of_sequence) override {
      while (true) {
        if (!lines_) {
          if (next_file_ >= dataset_->filenames_.size()) {
            *end_of_sequence = true;
            return Status();
          }
          Status opened = OpenNext();
          if (!opened.ok() && !Skipped(opened, 0)) return opened;
          if (!lines_) continue;
        }
        bool end = false;
        int64_t first_line = 0;
        Status read = ReadRecord(&end, &first_line);
        if (!read.ok()) {
          lines_.reset();  // the rest of the file cannot be trusted
          if (Skipped(read, 0)) continue;
          return read;
        }
        if (end) {
          lines_.reset();
          continue;
        }
        Status decoded = Decode(first_line, out);
        if (decoded.ok()) {
          *end_of_sequence = false;
          return Status();
        }
        if (!Skipped(decoded, 1)) return decoded;
      }
    }

    // The file index, and in an open file the next line's offset and number.
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("next_file", static_cast<int64_t>(next_file_));
      w->WriteBool("in_file", lines_ != nullptr);
      if (!lines_) return Status();
      w->WriteInt("offset", static_cast<int64_t>(lines_->offset()));
      w->WriteInt("line", lines_->line_number());
      return Status();
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t next_file = 0, offset = 0, line = 0;
      bool in_file = false;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("next_file", &next_file));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("in_file", &in_file));
      const auto files = static_cast<int64_t>(dataset_->filenames_.size());
      if (next_file < 0 || next_file > files || (in_file && next_file == 0)) {
        return InvalidArgument("CSVDataset checkpoint is at file " + std::to_string(next_file) + " of a list of " +
                               std::to_string(files));
      }
      lines_.reset();
      record_.clear();
      next_file_ = static_cast<size_t>(next_file);
      if (!in_file) return Status();
      SLUICE_RETURN_IF_ERROR(r->ReadInt("offset", &offset));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("line", &line));
      SLUICE_ASSIGN_OR_RETURN(lines_, io::LineIterator::Open(dataset_->filenames_[next_file_ - 1],
                                                             dataset_->line_options_));
      return lines_->Seek(static_cast<uint64_t>(offset), line);
    }

   private:
    // With ignore_errors, reports `error` (`records` dropped) and returns true.
    bool Skipped(const Status& error, int64_t records) const {
      if (!dataset_->options_.ignore_errors) return false;
      if (dataset_->options_.reporter) dataset_->options_.reporter->Corruption(error, record_.size(), records);
      return true;
    }

    // Opens the next file and skips its header line. An error belongs to
    // that file: the next call goes on with the one after it.
    Status OpenNext() {
      const std::string& path = dataset_->filenames_[next_file_++];
      record_.clear();
      SLUICE_ASSIGN_OR_RETURN(lines_, io::LineIterator::Open(path, dataset_->line_options_));
      if (dataset_->options_.header) {
        bool end = false;
        int64_t first_line = 0;
        Status s = ReadRecord(&end, &first_line);
        if (!s.ok()) lines_.reset();
        return s;
      }
      return Status();
    }

    // The next record into record_: a line, joined with the following ones
    // while a quote is open. *first_line: its 1-based line number.
    Status ReadRecord(bool* end, int64_t* first_line) {
      record_.clear();
      size_t quotes = 0;
      bool any = false;
      while (true) {
        std::string_view line;
        bool line_end = false;
        SLUICE_RETURN_IF_ERROR(lines_->GetNext(&line, &line_end));
        if (line_end) break;
        if (!any) *first_line = lines_->line_number();
        if (any) record_ += '\n';
        any = true;
        record_.append(line);
        if (dataset_->decode_.use_quote_delim) quotes += static_cast<size_t>(std::count(line.begin(), line.end(), '"'));
        if (quotes % 2 == 0) break;
      }
      *end = !any;
      return Status();
    }

    Status Decode(int64_t line, Element* out) const {
      const std::string_view record = record_;
      Result<std::vector<Tensor>> columns =
          ops::DecodeCSV(std::span<const std::string_view>(&record, 1), dataset_->defaults_, dataset_->decode_);
      if (!columns.ok()) return Located(columns.status(), line);
      out->clear();
      for (const Tensor& t : *columns) out->push_back(t.Slice(0));
      return Status();
    }

    // DecodeCSV's error for record 0, reworded as TF's dataset says it
    // ("... in record"), with the file, line and column (1-based) appended.
    Status Located(const Status& s, int64_t line) const {
      std::string message = s.message();
      for (std::string_view numbered : {" in record 0", " (record 0, field "}) {
        const size_t at = message.find(numbered);
        if (at == std::string::npos) continue;
        if (numbered[1] == '(') {
          message.erase(at);  // the column is said below
        } else {
          message.replace(at, numbered.size(), " in record");
        }
      }
      const std::string& path = dataset_->filenames_[next_file_ - 1];
      message += " (file \"" + path + "\", line " + std::to_string(line);
      std::optional<int64_t> column;
      if (std::optional<std::string> field = s.GetPayload("field")) {
        // Conversion errors ("Field j ...") count output fields; split errors count the record's.
        const int64_t f = std::stoll(*field);
        column = s.message().rfind("Field ", 0) == 0 ? ColumnOf(f) : f;
      }
      if (column) message += ", column " + std::to_string(*column + 1);
      Status out = Status(s.code(), message + ")").WithPayload("file", path).WithPayload("line", std::to_string(line));
      return column ? out.WithPayload("column", std::to_string(*column)) : out;
    }

    // The file's column of output field `field` (select_cols maps them).
    int64_t ColumnOf(int64_t field) const {
      const std::vector<int64_t>& select = dataset_->decode_.select_cols;
      return select.empty() || field >= static_cast<int64_t>(select.size()) ? field : select[field];
    }

    size_t next_file_ = 0;
    std::unique_ptr<io::LineIterator> lines_;
    std::string record_;
  };

  const std::vector<std::string> filenames_;
  const std::vector<Tensor> defaults_;
  const io::LineIteratorOptions line_options_;
  const CsvDatasetOptions options_;
  const ops::DecodeCSVOptions decode_;
};

// exclude_cols as the select_cols of a record of defaults + excluded fields.
Result<std::vector<int64_t>> SelectedColumns(const CsvDatasetOptions& o, size_t num_defaults) {
  if (!o.select_cols.empty() && !o.exclude_cols.empty()) {
    return InvalidArgument("Either select_cols or exclude_cols should be empty");
  }
  if (o.exclude_cols.empty()) return o.select_cols;
  std::vector<int64_t> excluded = o.exclude_cols;
  for (size_t i = 0; i < excluded.size(); ++i) {
    if (excluded[i] < 0) return InvalidArgument("exclude_cols contains negative values.");
    if (i > 0 && excluded[i] <= excluded[i - 1]) return InvalidArgument("exclude_cols is not strictly increasing.");
  }
  std::vector<int64_t> select;
  for (int64_t c = 0; select.size() < num_defaults; ++c) {
    if (!std::binary_search(excluded.begin(), excluded.end(), c)) select.push_back(c);
  }
  return select;
}

}  // namespace

Result<DatasetPtr> CsvDataset(std::vector<std::string> filenames, std::vector<Tensor> record_defaults,
                              CsvDatasetOptions options) {
  if (record_defaults.empty()) return InvalidArgument("record_defaults must not be empty");
  if (options.buffer_size < 0) return InvalidArgument("buffer_size must be >= 0");
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> select, SelectedColumns(options, record_defaults.size()));
  ops::DecodeCSVOptions decode{options.field_delim, options.use_quote_delim, options.na_value, std::move(select)};
  // Checks the defaults and options once, on an empty batch of records.
  SLUICE_RETURN_IF_ERROR(ops::DecodeCSV(std::span<const std::string_view>(), record_defaults, decode).status());
  io::LineIteratorOptions lines;
  SLUICE_ASSIGN_OR_RETURN(lines.compression_type, io::ParseCompressionType(options.compression_type));
  if (options.buffer_size > 0) lines.buffer_size = static_cast<size_t>(options.buffer_size);
  ElementSpec spec;
  for (const Tensor& d : record_defaults) {
    spec.dtypes.push_back(d.dtype());
    spec.shapes.push_back(PartialShape({}));
  }
  return DatasetPtr(std::make_shared<CsvFilesDataset>(std::move(filenames), std::move(record_defaults),
                                                      std::move(spec), lines, std::move(options), std::move(decode)));
}

}  // namespace sluice::data
