// CacheToFile: Dataset.cache(filename).
//
// File format (little-endian), written once by the first complete pass:
//   magic       8 bytes "SLCACHE1"
//   record*     u32 length | u32 masked CRC32C of the payload | payload
//               payload = one element: u32 components, then per component
//               u8 dtype | u8 rank | i64 dims[rank] | data, where data is
//               the raw values, or for strings u64 length + bytes each
//   footer      u32 0xFFFFFFFF | u64 element count | u32 masked CRC32C of
//               the count
// A file that ends before its footer, a bad CRC or magic, or a payload that
// does not parse is DataLoss naming the file (payloads "file", "offset").
// The writer holds "<filename>.lockfile" (created exclusively) and writes
// "<filename>.tmp-<pid>-<n>", renamed to `filename` after the footer; an
// unfinished pass deletes both.
//
// Checkpoints: a pass reading the finished cache saves its offset and
// count. A pass writing the cache saves its input's position and the count
// of elements it returned; restored, it goes on reading its input without
// writing (the partial file was deleted with the saving process's pass), so
// the cache is written by the next complete pass. If the cache was finished
// meanwhile, the restored pass reads it instead, from that count.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <ctime>
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "data/element_codec.h"
#include "sluice/data/datasets.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/file_system.h"

namespace sluice::data {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'C', 'A', 'C', 'H', 'E', '1'};
constexpr uint32_t kFooterMarker = 0xFFFFFFFFu;

template <class T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

Status DataLossAt(const std::string& path, uint64_t offset, std::string_view what) {
  return Status(Code::kDataLoss, "Corrupted cache file \"" + path + "\" at offset " + std::to_string(offset) + ": " +
                                     std::string(what))
      .WithPayload("file", path)
      .WithPayload("offset", std::to_string(offset));
}

// Replays a finished cache file.
class CacheReader {
 public:
  explicit CacheReader(std::string path) : path_(std::move(path)) {}

  Status GetNext(Element* out, bool* end) {
    if (!file_) SLUICE_RETURN_IF_ERROR(Open());
    char head[8];
    SLUICE_RETURN_IF_ERROR(ReadExactly(offset_, sizeof(head), head));
    uint32_t length, masked;
    std::memcpy(&length, head, 4);
    std::memcpy(&masked, head + 4, 4);
    if (length == kFooterMarker) return Footer(end);
    if (length > size_ - offset_ - 8) return DataLossAt(path_, offset_, "truncated");  // before allocating
    std::string payload(length, '\0');
    SLUICE_RETURN_IF_ERROR(ReadExactly(offset_ + 8, length, payload.data()));
    if (io::crc32c::Unmask(masked) != io::crc32c::Value(payload)) return DataLossAt(path_, offset_, "bad checksum");
    if (!DecodeElement(payload, out)) return DataLossAt(path_, offset_, "bad element");
    offset_ += 8 + length;
    ++count_;
    *end = false;
    return Status();
  }

  uint64_t offset() const { return offset_; }
  uint64_t count() const { return count_; }
  // Continues at element `count`, which starts at `offset` (0: find it by
  // reading `count` elements from the start).
  Status Seek(uint64_t offset, uint64_t count) {
    if (!file_) SLUICE_RETURN_IF_ERROR(Open());
    if (offset == 0) {
      Element e;
      bool end = false;
      while (count_ < count) {
        SLUICE_RETURN_IF_ERROR(GetNext(&e, &end));
        if (end) return DataLossAt(path_, offset_, "fewer elements than the checkpoint has read");
      }
      return Status();
    }
    if (offset < sizeof(kMagic) || offset > size_) return DataLossAt(path_, offset, "offset outside the file");
    offset_ = offset;
    count_ = count;
    return Status();
  }

 private:
  Status Open() {
    SLUICE_ASSIGN_OR_RETURN(file_, io::DefaultFileSystem()->NewRandomAccessFile(path_));
    SLUICE_ASSIGN_OR_RETURN(size_, io::DefaultFileSystem()->GetFileSize(path_));
    char magic[sizeof(kMagic)];
    SLUICE_RETURN_IF_ERROR(ReadExactly(0, sizeof(magic), magic));
    if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) return DataLossAt(path_, 0, "not a sluice cache file");
    offset_ = sizeof(kMagic);
    return Status();
  }

  Status Footer(bool* end) {
    char tail[12];
    SLUICE_RETURN_IF_ERROR(ReadExactly(offset_ + 4, sizeof(tail), tail));
    uint64_t count;
    uint32_t masked;
    std::memcpy(&count, tail, 8);
    std::memcpy(&masked, tail + 8, 4);
    if (io::crc32c::Unmask(masked) != io::crc32c::Value(tail, 8) || count != count_) {
      return DataLossAt(path_, offset_, "bad footer");
    }
    *end = true;
    return Status();
  }

  Status ReadExactly(uint64_t offset, size_t n, char* dst) {
    Result<size_t> got = file_->Read(offset, n, dst);
    if (!got.ok()) return got.status().WithPayload("file", path_);
    if (*got != n) return DataLossAt(path_, offset, "truncated");
    return Status();
  }

  const std::string path_;
  std::unique_ptr<io::RandomAccessFile> file_;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
  uint64_t count_ = 0;
};

std::atomic<uint64_t> g_temp_counter{0};

// Writes the elements of one pass; Finish publishes them.
class CacheWriter {
 public:
  explicit CacheWriter(std::string path) : path_(std::move(path)), lock_path_(path_ + ".lockfile") {}
  CacheWriter(const CacheWriter&) = delete;
  CacheWriter& operator=(const CacheWriter&) = delete;
  ~CacheWriter() { Abandon(); }

  // Takes the lock file and opens the temporary file. AlreadyExists (TF's
  // message) while another pass writes this cache.
  Status Start() {
    const int fd = ::open(lock_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == EEXIST) {
        return Status(Code::kAlreadyExists,
                      "There appears to be a concurrent caching iterator running - cache lockfile already exists "
                      "('" + lock_path_ + "'). If you are sure no other running TF computations are using this "
                      "cache prefix, delete the lockfile and re-initialize the iterator.")
            .WithPayload("file", lock_path_);
      }
      return Status(Code::kUnavailable, "cannot create cache lockfile '" + lock_path_ + "': " + std::strerror(errno))
          .WithPayload("file", lock_path_);
    }
    const std::string note = "Created at: " + std::to_string(std::time(nullptr)) + "\n";
    (void)!::write(fd, note.data(), note.size());
    ::close(fd);
    locked_ = true;
    temp_path_ = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(g_temp_counter++);
    SLUICE_ASSIGN_OR_RETURN(file_, io::DefaultFileSystem()->NewWritableFile(temp_path_));
    return file_->Append(std::string_view(kMagic, sizeof(kMagic)));
  }

  Status Append(const Element& e) {
    const std::string payload = EncodeElement(e);
    std::string head;
    Put<uint32_t>(&head, static_cast<uint32_t>(payload.size()));
    Put<uint32_t>(&head, io::crc32c::Mask(io::crc32c::Value(payload)));
    SLUICE_RETURN_IF_ERROR(file_->Append(head));
    SLUICE_RETURN_IF_ERROR(file_->Append(payload));
    ++count_;
    return Status();
  }

  Status Finish() {
    std::string footer, count;
    Put<uint32_t>(&footer, kFooterMarker);
    Put<uint64_t>(&count, count_);
    footer += count;
    Put<uint32_t>(&footer, io::crc32c::Mask(io::crc32c::Value(count)));
    SLUICE_RETURN_IF_ERROR(file_->Append(footer));
    SLUICE_RETURN_IF_ERROR(file_->Close());
    file_.reset();
    SLUICE_RETURN_IF_ERROR(io::DefaultFileSystem()->RenameFile(temp_path_, path_));
    temp_path_.clear();
    Unlock();
    return Status();
  }

 private:
  void Abandon() {
    if (file_) {
      (void)file_->Close();
      file_.reset();
    }
    if (!temp_path_.empty()) (void)io::DefaultFileSystem()->DeleteFile(temp_path_);
    Unlock();
  }
  void Unlock() {
    if (locked_) (void)io::DefaultFileSystem()->DeleteFile(lock_path_);
    locked_ = false;
  }

  const std::string path_, lock_path_;
  std::string temp_path_;
  std::unique_ptr<io::WritableFile> file_;
  bool locked_ = false;
  uint64_t count_ = 0;
};

class FileCacheDataset : public DatasetBase {
 public:
  FileCacheDataset(DatasetPtr input, std::string filename)
      : DatasetBase(input->element_spec()), input_(std::move(input)), filename_(std::move(filename)) {}
  int64_t cardinality() const override { return input_->cardinality(); }
  std::string DebugName() const override { return "Cache"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    if (io::DefaultFileSystem()->FileExists(filename_).ok()) return std::make_unique<ReadIterator>(this, ctx);
    if (ctx.probe) return input_->MakeIteratorInternal(ctx);  // a probe writes no cache file
    return std::make_unique<WriteIterator>(this, ctx);
  }

 private:
  class ReadIterator : public DatasetIterator<FileCacheDataset> {
   public:
    ReadIterator(const FileCacheDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), reader_(d->filename_), node_(NewNode(ctx, "Cache")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      Status s = reader_.GetNext(out, end_of_sequence);
      return timer.Finish(std::move(s), *out, *end_of_sequence);
    }

    Status Save(IteratorStateWriter* w) override {
      w->WriteBool("writing", false);
      w->WriteInt("count", static_cast<int64_t>(reader_.count()));
      w->WriteInt("offset", static_cast<int64_t>(reader_.offset()));
      return Status();
    }
    // From a writing pass's checkpoint (the cache was finished since): the
    // element after the `count` it returned.
    Status Restore(IteratorStateReader* r) override {
      bool writing = false;
      int64_t count = 0, offset = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadBool("writing", &writing));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("count", &count));
      if (!writing) SLUICE_RETURN_IF_ERROR(r->ReadInt("offset", &offset));
      if (count < 0 || offset < 0) return InvalidArgument("cache checkpoint has a negative position");
      return reader_.Seek(static_cast<uint64_t>(offset), static_cast<uint64_t>(count));
    }

   private:
    CacheReader reader_;
    const std::shared_ptr<Node> node_;
  };

  // Passes the input through, writing each element; an input error passes
  // through and is not cached.
  class WriteIterator : public DatasetIterator<FileCacheDataset> {
   public:
    WriteIterator(const FileCacheDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d),
          input_(d->input_->MakeIteratorInternal(ctx)),
          writer_(d->filename_),
          node_(NewNode(ctx, "Cache")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      if (done_) {
        *end_of_sequence = true;
        return Status();
      }
      if (!started_) {
        SLUICE_RETURN_IF_ERROR(writer_.Start());
        started_ = true;
      }
      SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
      if (*end_of_sequence) {
        done_ = true;
        return restored_ ? Status() : writer_.Finish();
      }
      ++count_;
      return timer.Finish(restored_ ? Status() : writer_.Append(*out), *out, false);
    }

    Status Save(IteratorStateWriter* w) override {
      w->WriteBool("writing", true);
      w->WriteInt("count", count_);
      w->WriteBool("done", done_);
      return SaveInput(*input_, w);  // even once done: its passes decide the next epochs
    }
    Status Restore(IteratorStateReader* r) override {
      bool writing = false;
      SLUICE_RETURN_IF_ERROR(r->ReadBool("writing", &writing));
      if (!writing) {
        return Status(Code::kFailedPrecondition,
                      "the iterator checkpoint was reading the cache file \"" + dataset_->filename_ +
                          "\", which no longer exists");
      }
      SLUICE_RETURN_IF_ERROR(r->ReadInt("count", &count_));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("done", &done_));
      restored_ = true;
      started_ = true;
      return RestoreInput(*input_, r);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    CacheWriter writer_;
    bool started_ = false;
    bool done_ = false;
    bool restored_ = false;  // resumed mid-pass: passes the input through without writing
    int64_t count_ = 0;      // elements returned
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
  const std::string filename_;
};

}  // namespace

Result<DatasetPtr> CacheToFile(DatasetPtr input, std::string filename) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "cache"));
  if (filename.empty()) return Cache(std::move(input));
  return DatasetPtr(std::make_shared<FileCacheDataset>(std::move(input), std::move(filename)));
}

}  // namespace sluice::data
