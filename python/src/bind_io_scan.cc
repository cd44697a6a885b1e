// Binding of io::ScanRecords (the loop behind `sluice records count, verify,
// convert, salvage`): _core.scan_records(path, options, keep_going,
// out_path=None, out_options=None) -> dict. The scan runs without the GIL, so
// several Python threads can scan several files at once.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>
#include <utility>

#include "bind_common.h"
#include "sluice/io/record_scan.h"
#include "sluice/io/record_writer.h"
#include "sluice/io/tfrecord_options.h"

namespace sluice::python {
namespace {

nb::dict CorruptionToPython(const io::RecordCorruption& c) {
  nb::dict d;
  d["offset"] = c.offset;
  d["record"] = c.record;
  d["records_before"] = c.records_before;
  d["bytes"] = c.bytes;
  d["records"] = c.records;
  d["message"] = c.reason.message();
  return d;
}

nb::dict ResultToPython(const io::RecordScanResult& r) {
  nb::dict d;
  d["records"] = r.records;
  d["payload_bytes"] = r.payload_bytes;
  d["stream_bytes"] = r.stream_bytes;
  nb::list corruptions;
  for (const io::RecordCorruption& c : r.corruptions) corruptions.append(CorruptionToPython(c));
  d["corruptions"] = corruptions;
  d["stopped"] = r.stopped.ok() ? nb::object(nb::none()) : nb::object(nb::str(r.stopped.message().c_str()));
  return d;
}

// Scans `path`; with `out_path`, copies every readable record there (closed
// before returning, also when the scan stops early).
nb::dict ScanRecords(nb::handle path_arg, const io::TFRecordOptions& options, bool keep_going, nb::handle out_path_arg,
                     const io::TFRecordOptions* out_options) {
  const std::string path = PathArg(path_arg);
  io::RecordScanOptions scan;
  scan.reader = ValueOrThrow(options.ToReaderOptions());
  scan.keep_going = keep_going;
  std::string out_path;
  io::RecordWriterOptions writer_options;
  if (!out_path_arg.is_none()) {
    out_path = PathArg(out_path_arg);
    writer_options = ValueOrThrow((out_options != nullptr ? *out_options : io::TFRecordOptions{}).ToWriterOptions());
  }
  Result<io::RecordScanResult> result = [&]() -> Result<io::RecordScanResult> {
    GilRelease release;
    std::unique_ptr<io::RecordWriter> writer;
    if (!out_path.empty()) {
      SLUICE_ASSIGN_OR_RETURN(writer, io::RecordWriter::Open(out_path, writer_options));
    }
    Result<io::RecordScanResult> r = io::ScanRecords(path, scan, writer.get());
    if (writer != nullptr) {
      Status closed = writer->Close();
      if (r.ok() && !closed.ok()) return closed;
    }
    return r;
  }();
  return ResultToPython(ValueOrThrow(std::move(result)));
}

}  // namespace

void BindIoScan(nb::module_& m) {
  m.def("scan_records", &ScanRecords, nb::arg("path"), nb::arg("options"), nb::arg("keep_going") = true,
        nb::arg("out_path").none() = nb::none(), nb::arg("out_options").none() = nb::none(),
        "io::ScanRecords: reads a TFRecord file once, checking every checksum, and lists each corrupt "
        "stretch; with out_path, copies every readable record there. Returns a dict (records, "
        "payload_bytes, stream_bytes, corruptions, stopped).");
}

}  // namespace sluice::python
