#include "sluice/io/record_scan.h"

#include <charconv>
#include <memory>
#include <optional>
#include <string_view>

#include "io/io_errors.h"

namespace sluice::io {
namespace {

// The integer payload `key` of `s`, or `fallback`.
template <class T>
T PayloadInt(const Status& s, std::string_view key, T fallback) {
  std::optional<std::string> v = s.GetPayload(key);
  if (!v.has_value()) return fallback;
  T out = fallback;
  std::from_chars(v->data(), v->data() + v->size(), out);
  return out;
}

RecordCorruption CorruptionOf(const Status& reason, int64_t records_before) {
  RecordCorruption c;
  c.offset = PayloadInt<uint64_t>(reason, kOffsetPayload, 0);
  c.record = PayloadInt<int64_t>(reason, kRecordPayload, -1);
  c.records_before = records_before;
  c.reason = reason;
  return c;
}

// Lists what an ignore_errors reader skips. Runs on the scanning thread only.
class ListingReporter : public CorruptionReporter {
 public:
  explicit ListingReporter(RecordScanResult* result) : result_(result) {}
  void Corruption(const Status& reason, uint64_t bytes, int64_t records) override {
    RecordCorruption c = CorruptionOf(reason, result_->records);
    c.bytes = bytes;
    c.records = records;
    result_->corruptions.push_back(std::move(c));
  }

 private:
  RecordScanResult* const result_;
};

}  // namespace

Result<RecordScanResult> ScanRecords(const std::string& path, const RecordScanOptions& options, RecordWriter* out,
                                     FileSystem* fs) {
  RecordScanResult result;
  ListingReporter reporter(&result);
  RecordReaderOptions reader_options = options.reader;
  reader_options.ignore_errors = options.keep_going;
  reader_options.reporter = &reporter;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(path, reader_options, fs));
  for (;;) {
    std::string_view record;
    Status s = reader->ReadNext(&record);
    if (s.code() == Code::kOutOfRange) break;
    if (!s.ok()) {
      // A stop: a corruption in strict mode, or one no reader can skip.
      result.corruptions.push_back(CorruptionOf(s, result.records));
      result.stopped = s;
      break;
    }
    ++result.records;
    result.payload_bytes += record.size();
    if (out != nullptr) SLUICE_RETURN_IF_ERROR(out->Write(record));
  }
  result.stream_bytes = reader->offset();
  return result;
}

}  // namespace sluice::io
