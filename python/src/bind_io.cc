// Bindings of the io layer: the TFRecord writer, iterator and index, and the
// queue-fed readers. sluice/io.py wraps them with TensorFlow's names
// (TFRecordWriter and TFRecordIterator subclass the classes bound here;
// TFRecordReader & co. hold a _core.Reader).
//
//   _core.RecordOptions   io::TFRecordOptions (compression type + zlib knobs)
//   _core.RecordWriter    io::RecordWriter
//   _core.RecordIterator  io::TFRecordIterator, Python's iterator protocol
//   _core.RecordIndex     io::RecordIndex plus a reader for random access
//   _core.Reader          io::ReaderBase (made by the new_*_reader functions)
//
// GIL: file I/O runs without the GIL (writes of records of at least
// kGilFreeWriteBytes, every read, open, flush and close), and reader calls,
// which may block on the filename queue, go through BlockingCall (timeout,
// Ctrl-C). Errors are raised by ThrowStatus once the GIL is held again.
//
// Locks: the C++ writer, iterator and record reader are single-threaded, so
// each handle keeps a mutex and Python threads sharing one object take turns.
// A handle's mutex may be held while the thread takes the GIL back (to turn
// the reader's buffer into a bytes object before the next read reuses it),
// so it is only ever acquired with the GIL released -- except the writer's,
// whose holder never takes the GIL, which makes acquiring it with the GIL
// held (small writes) safe. ReaderBase is thread-safe on its own.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bind_common.h"
#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/reader_base.h"
#include "sluice/io/readers.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_iterator.h"
#include "sluice/io/record_reader.h"
#include "sluice/io/record_writer.h"
#include "sluice/io/tfrecord_options.h"
#include "sluice/queue/queue.h"

namespace sluice::python {
namespace {

using Timeout = std::optional<double>;
using OptInt = std::optional<int>;

// Records at least this large are written without the GIL; smaller ones cost
// less to write than to release and retake it.
constexpr size_t kGilFreeWriteBytes = 64 << 10;

nb::bytes ToBytes(std::string_view s) { return nb::bytes(s.data(), s.size()); }

// A read-only view of a record given as bytes, str (UTF-8, as TensorFlow's
// writer takes it) or any C-contiguous buffer (bytearray, memoryview, numpy).
// The buffer is held (a bytearray cannot be resized) until destruction.
// REQUIRES: the GIL is held for construction and destruction.
class RecordBytes {
 public:
  explicit RecordBytes(nb::handle obj) {
    PyObject* o = obj.ptr();
    if (PyBytes_Check(o)) {
      view_ = std::string_view(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o)));
    } else if (PyUnicode_Check(o)) {
      Py_ssize_t size = 0;
      const char* utf8 = PyUnicode_AsUTF8AndSize(o, &size);  // cached by the str object
      if (utf8 == nullptr) throw nb::python_error();
      view_ = std::string_view(utf8, static_cast<size_t>(size));
    } else if (PyObject_CheckBuffer(o)) {
      if (PyObject_GetBuffer(o, &buffer_, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
      has_buffer_ = true;
      view_ = std::string_view(static_cast<const char*>(buffer_.buf), static_cast<size_t>(buffer_.len));
    } else {
      throw nb::type_error(("a record must be bytes, str or a bytes-like object, not " +
                            std::string(Py_TYPE(o)->tp_name))
                               .c_str());
    }
  }
  ~RecordBytes() {
    if (has_buffer_) PyBuffer_Release(&buffer_);
  }
  RecordBytes(const RecordBytes&) = delete;
  RecordBytes& operator=(const RecordBytes&) = delete;

  std::string_view view() const { return view_; }

 private:
  std::string_view view_;
  Py_buffer buffer_{};
  bool has_buffer_ = false;
};

// ---- RecordOptions ------------------------------------------------------------------

void InitRecordOptions(io::TFRecordOptions* self, std::string compression_type, OptInt flush_mode,
                       OptInt input_buffer_size, OptInt output_buffer_size, OptInt window_bits,
                       OptInt compression_level, OptInt mem_level, OptInt compression_strategy) {
  auto* o = new (self) io::TFRecordOptions();
  o->compression_type = std::move(compression_type);
  o->flush_mode = flush_mode;
  o->input_buffer_size = input_buffer_size;
  o->output_buffer_size = output_buffer_size;
  o->window_bits = window_bits;
  o->compression_level = compression_level;
  o->mem_level = mem_level;
  o->compression_strategy = compression_strategy;
}

io::RecordReaderOptions ReaderOptionsOf(const io::TFRecordOptions& options) {
  return ValueOrThrow(options.ToReaderOptions());
}

// ---- RecordWriter --------------------------------------------------------------------

struct WriterHandle {
  explicit WriterHandle(std::unique_ptr<io::RecordWriter> w) : writer(std::move(w)) {}

  Mutex mu;
  std::unique_ptr<io::RecordWriter> writer SLUICE_GUARDED_BY(mu);
  bool closed SLUICE_GUARDED_BY(mu) = false;
};

void InitWriter(WriterHandle* self, nb::handle path_arg, const io::TFRecordOptions& options, bool write_index) {
  const std::string path = PathArg(path_arg);
  io::RecordWriterOptions o = ValueOrThrow(options.ToWriterOptions());
  o.write_index = write_index;
  Result<std::unique_ptr<io::RecordWriter>> w = [&] {
    GilRelease release;
    return io::RecordWriter::Open(path, o);
  }();
  new (self) WriterHandle(ValueOrThrow(std::move(w)));
}

Status WriteLocked(WriterHandle& h, std::string_view record) SLUICE_REQUIRES(h.mu) {
  if (h.closed) return errors::FailedPrecondition("Writer is closed.");
  return h.writer->Write(record);
}

void WriterWrite(WriterHandle& h, nb::handle record) {
  RecordBytes bytes(record);
  Status s;
  if (bytes.view().size() >= kGilFreeWriteBytes) {
    GilRelease release;
    MutexLock lock(&h.mu);
    s = WriteLocked(h, bytes.view());
  } else {
    MutexLock lock(&h.mu);  // its holder never needs the GIL (see the top)
    s = WriteLocked(h, bytes.view());
  }
  ThrowIfError(s);
}

void WriterFlush(WriterHandle& h) {
  Status s;
  {
    GilRelease release;
    MutexLock lock(&h.mu);
    s = h.closed ? errors::FailedPrecondition("Writer is closed.") : h.writer->Flush();
  }
  ThrowIfError(s);
}

// Closing twice is a no-op, as in TensorFlow.
void WriterClose(WriterHandle& h) {
  Status s;
  {
    GilRelease release;
    MutexLock lock(&h.mu);
    if (h.closed) return;
    h.closed = true;
    s = h.writer->Close();
  }
  ThrowIfError(s);
}

template <class T>
T WithWriter(WriterHandle& h, T (*get)(const io::RecordWriter&)) {
  GilRelease release;
  MutexLock lock(&h.mu);
  return get(*h.writer);
}

// ---- RecordIterator -------------------------------------------------------------------

struct IteratorHandle {
  IteratorHandle(std::string p, io::RecordReaderOptions o, std::unique_ptr<io::CountingReporter> r,
                 std::unique_ptr<io::TFRecordIterator> i)
      : path(std::move(p)), reporter(std::move(r)), options(std::move(o)), it(std::move(i)) {}

  // Constant after construction.
  const std::string path;
  const std::unique_ptr<io::CountingReporter> reporter;  // options.reporter; counts across reopen()
  const io::RecordReaderOptions options;

  Mutex mu;  // acquired only without the GIL
  std::unique_ptr<io::TFRecordIterator> it SLUICE_GUARDED_BY(mu);  // null once closed
  uint64_t offset SLUICE_GUARDED_BY(mu) = 0;  // where a closed iterator stopped
  int64_t record_index SLUICE_GUARDED_BY(mu) = 0;
};

// Opens the file before constructing the handle, so that a failure leaves
// nothing half-built.
void InitIterator(IteratorHandle* self, nb::handle path_arg, const io::TFRecordOptions& options,
                  bool ignore_errors) {
  const std::string path = PathArg(path_arg);
  io::RecordReaderOptions o = ReaderOptionsOf(options);
  auto reporter = std::make_unique<io::CountingReporter>();
  o.ignore_errors = ignore_errors;
  o.reporter = reporter.get();
  Result<std::unique_ptr<io::TFRecordIterator>> it = [&] {
    GilRelease release;
    return io::TFRecordIterator::Open(path, o);
  }();
  std::unique_ptr<io::TFRecordIterator> opened = ValueOrThrow(std::move(it));
  new (self) IteratorHandle(path, std::move(o), std::move(reporter), std::move(opened));
}

nb::bytes IteratorNext(IteratorHandle& h) {
  std::optional<GilRelease> release(std::in_place);
  MutexLock lock(&h.mu);
  if (!h.it) {
    release.reset();
    throw nb::stop_iteration();
  }
  std::string_view record;
  bool end = false;
  Status s = h.it->GetNext(&record, &end);
  release.reset();  // the record views the iterator's buffer: copy it under mu
  if (!s.ok()) ThrowStatus(s);
  if (end) throw nb::stop_iteration();
  return ToBytes(record);
}

// TensorFlow's RecordIterator.close(): later next() calls end the iteration.
void IteratorClose(IteratorHandle& h) {
  GilRelease release;
  MutexLock lock(&h.mu);
  if (!h.it) return;
  h.offset = h.it->offset();
  h.record_index = h.it->record_index();
  h.it.reset();
}

// TensorFlow's RecordIterator.reopen(): opens the file again and goes on
// where the iterator stands (so records appended since are read).
void IteratorReopen(IteratorHandle& h) {
  Status s;
  {
    GilRelease release;
    MutexLock lock(&h.mu);
    if (h.it) {
      h.offset = h.it->offset();
      h.record_index = h.it->record_index();
      h.it.reset();
    }
    Result<std::unique_ptr<io::TFRecordIterator>> it = io::TFRecordIterator::Open(h.path, h.options);
    s = it.status();
    if (s.ok()) s = it.value()->Seek(h.offset, h.record_index);
    if (s.ok()) h.it = std::move(it).value();
  }
  ThrowIfError(s);
}

nb::tuple IteratorPosition(IteratorHandle& h) {
  uint64_t offset = 0;
  int64_t index = 0;
  {
    GilRelease release;
    MutexLock lock(&h.mu);
    offset = h.it ? h.it->offset() : h.offset;
    index = h.it ? h.it->record_index() : h.record_index;
  }
  return nb::make_tuple(offset, index);
}

nb::object LastSkipError(const io::CountingReporter& r) {
  Status s = r.last_error();
  if (s.ok()) return nb::none();
  return nb::str(s.message().c_str());
}

// ---- RecordIndex ------------------------------------------------------------------------

struct IndexHandle {
  IndexHandle(std::string p, io::RecordReaderOptions o, io::RecordIndex i, bool r)
      : path(std::move(p)), options(std::move(o)), index(std::move(i)), rebuilt(r) {}

  // Constant after construction.
  const std::string path;
  const io::RecordReaderOptions options;  // strict: records are read at known offsets
  const io::RecordIndex index;
  const bool rebuilt;

  Mutex mu;  // acquired only without the GIL
  std::unique_ptr<io::RecordReader> reader SLUICE_GUARDED_BY(mu);  // opened by the first read
};

// `index_path_arg`: None or "" for the default (<path>.idx).
void InitIndex(IndexHandle* self, nb::handle path_arg, const io::TFRecordOptions& options, nb::handle index_path_arg,
               bool use_cache, bool ignore_errors) {
  const std::string path = PathArg(path_arg);
  const std::string index_path = index_path_arg.is_none() ? std::string() : PathArg(index_path_arg);
  io::RecordReaderOptions o = ReaderOptionsOf(options);
  io::RecordReaderOptions build = o;
  build.ignore_errors = ignore_errors;
  bool rebuilt = true;
  Result<io::RecordIndex> index = [&] {
    GilRelease release;
    if (!use_cache) return io::RecordIndex::Build(path, build);
    return io::RecordIndex::LoadOrBuild(path, build, nullptr, index_path, &rebuilt);
  }();
  new (self) IndexHandle(path, o, ValueOrThrow(std::move(index)), rebuilt);
}

// Records [begin, end), read in order with one reader. REQUIRES: 0 <= begin
// <= end <= len (sluice/io.py checks).
nb::list IndexReadRange(IndexHandle& h, int64_t begin, int64_t end) {
  nb::list out;
  std::optional<GilRelease> release(std::in_place);
  MutexLock lock(&h.mu);
  Status s;
  if (!h.reader) {
    Result<std::unique_ptr<io::RecordReader>> r = io::RecordReader::Open(h.path, h.options);
    if (r.ok()) {
      h.reader = std::move(r).value();
    } else {
      s = r.status();
    }
  }
  for (int64_t i = begin; s.ok() && i < end; ++i) {
    if (!release) release.emplace();
    std::string_view record;
    s = h.index.ReadRecord(h.reader.get(), i, &record);
    if (errors::IsOutOfRange(s)) {
      s = errors::DataLoss(h.path, " ends before record ", i, " at offset ", h.index.offset(i),
                           "; the file changed after it was indexed");
    }
    if (!s.ok()) break;
    release.reset();  // copy the record out of the reader's buffer under mu
    out.append(ToBytes(record));
  }
  release.reset();
  if (!s.ok()) ThrowStatus(s);
  return out;
}

nb::bytes IndexOffsets(const IndexHandle& h) {
  const std::vector<uint64_t>& offsets = h.index.offsets();
  std::string raw(offsets.size() * sizeof(uint64_t), '\0');
  if (!offsets.empty()) std::memcpy(raw.data(), offsets.data(), raw.size());
  return ToBytes(raw);  // native-endian uint64 values
}

void IndexSave(const IndexHandle& h, nb::handle index_path_arg) {
  const std::string index_path = index_path_arg.is_none() ? std::string() : PathArg(index_path_arg);
  Status s;
  {
    GilRelease release;
    s = h.index.Save(index_path.empty() ? io::RecordIndex::IndexPath(h.path) : index_path);
  }
  ThrowIfError(s);
}

// ---- Readers ----------------------------------------------------------------------------------

// The reader is shared with the native producers that read from it
// (ReaderOf, bind_pipeline.cc); its deleter owns the reporter, so that the
// reporter outlives the reader whichever owner lets go last.
struct ReaderHandle {
  std::shared_ptr<io::CountingReporter> reporter;  // TFRecordReader(ignore_errors); outlives reader
  std::shared_ptr<io::ReaderBase> reader;
};

ReaderHandle MakeReader(Result<std::unique_ptr<io::ReaderBase>> reader,
                        std::unique_ptr<io::CountingReporter> reporter = nullptr) {
  std::shared_ptr<io::CountingReporter> shared_reporter = std::move(reporter);
  std::unique_ptr<io::ReaderBase> owned = ValueOrThrow(std::move(reader));
  std::shared_ptr<io::ReaderBase> shared(owned.release(),
                                         [keep = shared_reporter](io::ReaderBase* r) { delete r; });
  return ReaderHandle{std::move(shared_reporter), std::move(shared)};
}

ReaderHandle NewIdentity(const std::string& name) {
  io::ReaderOptions o;
  o.name = name;
  return MakeReader(io::NewIdentityReader(o));
}

ReaderHandle NewWholeFile(const std::string& name) {
  io::ReaderOptions o;
  o.name = name;
  return MakeReader(io::NewWholeFileReader(o));
}

ReaderHandle NewTextLine(const std::string& name, int64_t skip_header_lines) {
  io::TextLineReaderOptions o;
  o.name = name;
  o.skip_header_lines = skip_header_lines;
  return MakeReader(io::NewTextLineReader(o));
}

ReaderHandle NewFixedLength(const std::string& name, int64_t record_bytes, int64_t header_bytes,
                            int64_t footer_bytes, int64_t hop_bytes, const std::string& encoding) {
  io::FixedLengthRecordReaderOptions o;
  o.name = name;
  o.record_bytes = record_bytes;
  o.header_bytes = header_bytes;
  o.footer_bytes = footer_bytes;
  o.hop_bytes = hop_bytes;
  o.encoding = encoding;
  return MakeReader(io::NewFixedLengthRecordReader(o));
}

ReaderHandle NewTFRecord(const std::string& name, const io::TFRecordOptions& options, bool ignore_errors) {
  io::TFRecordReaderOptions o;
  o.name = name;
  o.compression_type = options.compression_type;
  o.record_options = ReaderOptionsOf(options);
  std::unique_ptr<io::CountingReporter> reporter;
  if (ignore_errors) {
    reporter = std::make_unique<io::CountingReporter>();
    o.record_options.ignore_errors = true;
    o.record_options.reporter = reporter.get();
  }
  return MakeReader(io::NewTFRecordReader(o), std::move(reporter));
}

nb::tuple ReaderRead(ReaderHandle& h, const QueueHandle& q, Timeout timeout) {
  std::shared_ptr<queue::Queue> queue = q.queue;  // borrowed for the call
  BlockingCall call(timeout);
  Result<io::ReaderBase::Record> r =
      call.Run([&] { return h.reader->Read(*queue, call.wait<queue::WaitOptions>()); });
  io::ReaderBase::Record record = ValueOrThrow(std::move(r));
  return nb::make_tuple(ToBytes(record.key), ToBytes(record.value));
}

nb::list BytesList(const std::vector<std::string>& items) {
  nb::list out;
  for (const std::string& s : items) out.append(ToBytes(s));
  return out;
}

nb::tuple ReaderReadUpTo(ReaderHandle& h, const QueueHandle& q, int64_t num_records, Timeout timeout) {
  std::shared_ptr<queue::Queue> queue = q.queue;
  BlockingCall call(timeout);
  Result<io::ReaderBase::Records> r =
      call.Run([&] { return h.reader->ReadUpTo(*queue, num_records, call.wait<queue::WaitOptions>()); });
  io::ReaderBase::Records records = ValueOrThrow(std::move(r));
  return nb::make_tuple(BytesList(records.keys), BytesList(records.values));
}

// The counters wait behind a read blocked on the filename queue (the
// reader's lock), so they too run without the GIL.
int64_t ReaderRecordsProduced(ReaderHandle& h) {
  GilRelease release;
  return h.reader->num_records_produced();
}

int64_t ReaderWorkUnitsCompleted(ReaderHandle& h) {
  GilRelease release;
  return h.reader->num_work_units_completed();
}

void ReaderReset(ReaderHandle& h) {
  Status s;
  {
    GilRelease release;
    s = h.reader->Reset();
  }
  ThrowIfError(s);
}

nb::bytes ReaderSerializeState(ReaderHandle& h) {
  Result<std::string> state = [&] {
    GilRelease release;
    return h.reader->SerializeState();
  }();
  return ToBytes(ValueOrThrow(std::move(state)));
}

void ReaderRestoreState(ReaderHandle& h, nb::handle state) {
  RecordBytes bytes(state);
  Status s;
  {
    GilRelease release;
    s = h.reader->RestoreState(bytes.view());
  }
  ThrowIfError(s);
}

nb::object ReaderSkips(const ReaderHandle& h) {
  if (!h.reporter) return nb::none();
  const io::CountingReporter& r = *h.reporter;
  return nb::make_tuple(r.corruptions(), r.records_dropped(), r.bytes_dropped(), LastSkipError(r));
}

}  // namespace

std::shared_ptr<io::ReaderBase> ReaderOf(nb::handle reader) { return nb::cast<const ReaderHandle&>(reader).reader; }

void BindIo(nb::module_& m) {
  nb::class_<io::TFRecordOptions>(m, "RecordOptions",
                                  "io::TFRecordOptions: a compression type and zlib parameters (None: "
                                  "TensorFlow's default). Built by sluice.io.TFRecordOptions.")
      .def("__init__", &InitRecordOptions, nb::arg("compression_type") = "", nb::arg("flush_mode") = nb::none(),
           nb::arg("input_buffer_size") = nb::none(), nb::arg("output_buffer_size") = nb::none(),
           nb::arg("window_bits") = nb::none(), nb::arg("compression_level") = nb::none(),
           nb::arg("mem_level") = nb::none(), nb::arg("compression_strategy") = nb::none())
      .def_ro("compression_type", &io::TFRecordOptions::compression_type)
      .def("validate", [](const io::TFRecordOptions& o) { (void)ValueOrThrow(o.ToWriterOptions()); },
           "Raises InvalidArgumentError for an unknown compression type or a zlib value out of range.");

  nb::class_<WriterHandle>(m, "RecordWriter", "io::RecordWriter (see sluice.io.TFRecordWriter).")
      .def("__init__", &InitWriter, nb::arg("path"), nb::arg("options"), nb::arg("write_index") = false)
      .def("write", &WriterWrite, nb::arg("record"), "Appends one record (bytes, str or a bytes-like object).")
      .def("flush", &WriterFlush, "Hands what was written to the operating system.")
      .def("close", &WriterClose, "Finishes the file; closing again does nothing.")
      .def_prop_ro("records_written",
                   [](WriterHandle& h) {
                     return WithWriter<int64_t>(h, [](const io::RecordWriter& w) { return w.records_written(); });
                   })
      .def_prop_ro("offset", [](WriterHandle& h) {
        return WithWriter<uint64_t>(h, [](const io::RecordWriter& w) { return w.offset(); });
      });

  nb::class_<IteratorHandle>(m, "RecordIterator", "io::TFRecordIterator (see sluice.io.TFRecordIterator).")
      .def("__init__", &InitIterator, nb::arg("path"), nb::arg("options"), nb::arg("ignore_errors") = false)
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &IteratorNext)
      .def("close", &IteratorClose, "Closes the file; iteration then ends.")
      .def("reopen", &IteratorReopen, "Opens the file again and goes on from the current record.")
      .def("_position", &IteratorPosition, "(offset, record index) of the next record (index -1: unknown).")
      .def_prop_ro("corruptions_skipped", [](const IteratorHandle& h) { return h.reporter->corruptions(); })
      .def_prop_ro("records_skipped", [](const IteratorHandle& h) { return h.reporter->records_dropped(); })
      .def_prop_ro("bytes_skipped", [](const IteratorHandle& h) { return h.reporter->bytes_dropped(); })
      .def_prop_ro("last_skipped_error", [](const IteratorHandle& h) { return LastSkipError(*h.reporter); });

  nb::class_<IndexHandle>(m, "RecordIndex", "io::RecordIndex (see sluice.io.TFRecordIndex).")
      .def("__init__", &InitIndex, nb::arg("path"), nb::arg("options"), nb::arg("index_path").none() = nb::none(),
           nb::arg("use_cache") = true, nb::arg("ignore_errors") = false)
      .def("__len__", [](const IndexHandle& h) { return h.index.num_records(); })
      .def("_read_range", &IndexReadRange, nb::arg("begin"), nb::arg("end"))
      .def("_offsets", &IndexOffsets)
      .def("_record_length", [](const IndexHandle& h, int64_t i) { return h.index.record_length(i); }, nb::arg("i"))
      .def("_shard_range",
           [](const IndexHandle& h, int64_t shard, int64_t num_shards) {
             auto [begin, end] = h.index.ShardRange(shard, num_shards);
             return nb::make_tuple(begin, end);
           },
           nb::arg("shard"), nb::arg("num_shards"))
      .def("save", &IndexSave, nb::arg("index_path").none() = nb::none())
      .def_prop_ro("path", [](const IndexHandle& h) { return PathToPython(h.path); })
      .def_prop_ro("rebuilt", [](const IndexHandle& h) { return h.rebuilt; })
      .def_prop_ro("stream_length", [](const IndexHandle& h) { return h.index.stream_length(); })
      .def_prop_ro("compression_type",
                   [](const IndexHandle& h) { return std::string(io::CompressionTypeName(h.index.compression())); });
  m.def("masked_crc32c", [](nb::bytes data) { return io::crc32c::Mask(io::crc32c::Value(data.c_str(), data.size())); },
        nb::arg("data"), "The masked CRC32C of `data` (TFRecord's length and data checksums).");
  m.def("record_index_path", [](nb::handle path) { return PathToPython(io::RecordIndex::IndexPath(PathArg(path))); },
        nb::arg("path"), "<path>.idx, as a str (os.fsdecode); `path`: str, bytes or os.PathLike.");

  nb::class_<ReaderHandle>(m, "Reader", "io::ReaderBase (see sluice.io.ReaderBase).")
      .def("read", &ReaderRead, nb::arg("queue"), nb::arg("timeout") = nb::none())
      .def("read_up_to", &ReaderReadUpTo, nb::arg("queue"), nb::arg("num_records"), nb::arg("timeout") = nb::none())
      .def("num_records_produced", &ReaderRecordsProduced)
      .def("num_work_units_completed", &ReaderWorkUnitsCompleted)
      .def("reset", &ReaderReset)
      .def("serialize_state", &ReaderSerializeState)
      .def("restore_state", &ReaderRestoreState, nb::arg("state"))
      .def("skips", &ReaderSkips,
           "(corruptions, records, bytes, last error message) skipped with ignore_errors, else None.")
      .def_prop_ro("supports_serialize", [](const ReaderHandle& h) { return h.reader->supports_serialize(); })
      .def_prop_ro("type_name", [](const ReaderHandle& h) { return h.reader->type_name(); })
      .def_prop_ro("name", [](const ReaderHandle& h) { return h.reader->name(); });

  m.def("new_identity_reader", &NewIdentity, nb::arg("name"));
  m.def("new_whole_file_reader", &NewWholeFile, nb::arg("name"));
  m.def("new_text_line_reader", &NewTextLine, nb::arg("name"), nb::arg("skip_header_lines"));
  m.def("new_fixed_length_record_reader", &NewFixedLength, nb::arg("name"), nb::arg("record_bytes"),
        nb::arg("header_bytes"), nb::arg("footer_bytes"), nb::arg("hop_bytes"), nb::arg("encoding"));
  m.def("new_tfrecord_reader", &NewTFRecord, nb::arg("name"), nb::arg("options"), nb::arg("ignore_errors") = false);
  BindIoScan(m);
}

}  // namespace sluice::python
