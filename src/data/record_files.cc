// FromRecordFiles: the records of TFRecord files read at the offsets of
// their record indexes, in file order or in a global shuffle (a keyed
// permutation of all record ids, IndexPermutation).
//
// Reading: GetNext hands out a batch of slots filled ahead. A batch is the
// next read_ahead_records positions (bounded by read_ahead_bytes); their
// records are sorted by (file, offset) and read (each record's length and
// checksums checked), and the slots are then handed out in permutation
// order. A slot holds the record or its error, so an error reaches the
// caller at that record's position and the next call goes on with the next.
//
// Files are memory-mapped (options.use_mmap): a system call per record
// costs several times a sequential reader's whole per-record work, while a
// mapped page-cache record is a memcpy. Without mmap (or where it fails),
// records less than kJoinGap bytes apart are joined into one pread.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "data/dataset_util.h"
#include "data/record_source.h"
#include "sluice/data/datasets.h"
#include "sluice/data/index_permutation.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_index.h"

namespace sluice::data {
namespace {

// Small batches: their copies of the records stay in the CPU caches until
// handed out, where large ones would evict each other.
constexpr int64_t kDefaultReadAheadRecords = 64;
constexpr int64_t kDefaultReadAheadBytes = 1 << 20;
// Records closer than this are read with one call (the gap read and dropped):
// a page-cache read of a few KiB costs less than another system call.
constexpr uint64_t kJoinGap = 4096;

// A read-only shared mapping of a whole file; empty if the file is empty or
// cannot be mapped (the caller then reads with pread). The descriptor stays
// open so that LiveSize() can tell a file truncated under the mapping, whose
// lost pages would raise SIGBUS if touched.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    struct stat st;
    if (::fstat(fd_, &st) == 0 && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd_, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const char*>(p);
        size_ = static_cast<size_t>(st.st_size);
        return;
      }
    }
    ::close(fd_);
    fd_ = -1;
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool ok() const { return data_ != nullptr; }
  // The whole mapping, for prefetching only.
  std::string_view mapped_bytes() const { return {data_, size_}; }
  // The mapped bytes that the file still holds now (all of them unless it
  // was truncated since it was mapped). Thread-safe.
  std::string_view live_bytes() const {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return {};
    return {data_, std::min(size_, static_cast<size_t>(std::max<off_t>(st.st_size, 0)))};
  }

 private:
  int fd_ = -1;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// `s` with the "file", "record" and "offset" payloads readers put on errors.
Status WithLocation(const Status& s, const std::string& path, int64_t record, uint64_t offset) {
  return s.WithPayload("file", path).WithPayload("record", std::to_string(record))
      .WithPayload("offset", std::to_string(offset));
}

uint64_t FrameSize(uint64_t length) { return io::kRecordHeaderSize + length + io::kRecordFooterSize; }

// The index of `path` under `policy`.
Result<io::RecordIndex> IndexOf(const std::string& path, RecordIndexPolicy policy) {
  if (policy == RecordIndexPolicy::kLoadOrBuild) return io::RecordIndex::LoadOrBuild(path);
  io::FileSystem* fs = io::DefaultFileSystem();
  SLUICE_ASSIGN_OR_RETURN(io::FileStatistics stat, fs->Stat(path));
  const std::string index_path = io::RecordIndex::IndexPath(path);
  Result<io::RecordIndex> loaded = io::RecordIndex::Load(index_path, fs);
  if (loaded.ok() && loaded->IsFreshFor(stat, io::CompressionType::kNone)) return loaded;
  if (policy == RecordIndexPolicy::kLoadOrBuildNoSave) return io::RecordIndex::Build(path, {}, fs);
  std::string why = loaded.ok() ? "it is stale (the file changed, or it was built skipping errors)"
                                : loaded.status().ToString();
  return errors::FailedPrecondition("no fresh record index for ", path, " at ", index_path, ": ", why,
                                    " (`sluice records index` writes one)")
      .WithPayload("file", path);
}

// The files and their indexes, shared by a dataset and its shuffled copies.
// With use_mmap the files are mapped here, once: the pages a pass touched
// stay mapped for the next passes, which then take no page faults.
struct IndexedFiles {
  IndexedFiles(std::vector<std::string> f, std::vector<io::RecordIndex> i, bool use_mmap)
      : files(std::move(f)), indexes(std::move(i)) {
    starts.push_back(0);
    for (const io::RecordIndex& index : indexes) starts.push_back(starts.back() + index.num_records());
    if (use_mmap) {
      for (const std::string& path : files) maps.push_back(std::make_unique<const MappedFile>(path));
    }
  }
  const std::vector<std::string> files;
  const std::vector<io::RecordIndex> indexes;
  std::vector<int64_t> starts;  // record id of each file's first record; then the total
  std::vector<std::unique_ptr<const MappedFile>> maps;  // empty without use_mmap
};

class RecordFilesDataset : public DatasetBase {
 public:
  RecordFilesDataset(std::shared_ptr<const IndexedFiles> files, RecordFilesOptions options)
      : DatasetBase(ElementSpec{{DType::kString}, {PartialShape({})}, {}}),
        indexed_(std::move(files)),
        files_(indexed_->files),
        indexes_(indexed_->indexes),
        starts_(indexed_->starts),
        options_(std::move(options)) {}

  // This dataset's files in the order of `shuffle`.
  DatasetPtr WithShuffle(const GlobalShuffleOptions& shuffle) const {
    RecordFilesOptions options = options_;
    options.shuffle = shuffle;
    return std::make_shared<RecordFilesDataset>(indexed_, std::move(options));
  }

  int64_t cardinality() const override { return starts_.back(); }
  std::string DebugName() const override { return options_.shuffle ? "GlobalShuffle" : "RecordFilesDataset"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return MakeTyped(ctx);
  }

  // A probe pass (IteratorContext::probe) takes no epoch.
  std::unique_ptr<RecordFilesIterator> MakeTyped(const IteratorContext& ctx = {}) const {
    uint64_t epoch = 0;
    if (options_.shuffle && options_.shuffle->reshuffle_each_iteration) epoch = NextPass(epochs_, ctx);
    return std::make_unique<Iterator>(this, epoch);
  }

 private:
  class Iterator : public RecordFilesIterator {
   public:
    Iterator(const RecordFilesDataset* d, uint64_t epoch)
        : dataset_(std::static_pointer_cast<const RecordFilesDataset>(d->shared_from_this())),
          seed_(d->options_.shuffle ? d->options_.shuffle->seed : 0),
          epoch_(epoch),
          files_(d->files_.size()) {
      if (d->options_.shuffle) permutation_.emplace(static_cast<uint64_t>(d->cardinality()), seed_, epoch_);
    }

    Status GetNext(Element* out, bool* end_of_sequence) override {
      if (next_slot_ == slots_.size()) {
        if (position_ >= dataset_->cardinality()) {
          *end_of_sequence = true;
          return Status();
        }
        FillBatch();
      }
      Slot& slot = slots_[next_slot_++];
      ++position_;
      last_ = nullptr;
      if (!slot.status.ok()) return slot.status;
      *out = std::move(slot.element);
      *end_of_sequence = false;
      last_ = &slot;
      return Status();
    }

    // Made when asked (a map, a shuffle buffer): the record's file, index
    // and offset, re-readable.
    const ElementOrigin* origin() const override {
      if (last_ == nullptr) return nullptr;
      if (sources_.empty()) {
        for (const std::string& path : dataset_->files_) {
          sources_.push_back(std::make_shared<const RecordSource>(
              RecordSource::Spec{RecordSource::Format::kTFRecord, io::CompressionType::kNone, {}, path}));
        }
      }
      const std::shared_ptr<const RecordSource>& source = sources_[last_->file];
      if (origin_.source != source) {
        origin_.source = source;
        origin_.file = std::shared_ptr<const std::string>(source, &source->path());
      }
      origin_.record = last_->record;
      origin_.offset = last_->offset;
      return &origin_;
    }

    GlobalShufflePosition position() const override { return {seed_, epoch_, position_}; }

    // (epoch, position): the batch read ahead is read again on restore.
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("epoch", static_cast<int64_t>(epoch_));
      w->WriteInt("position", position_);
      return Status();
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t epoch = 0, position = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("epoch", &epoch));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("position", &position));
      if (epoch < 0 || position < 0 || position > dataset_->cardinality()) {
        return InvalidArgument(dataset_->DebugName() + " checkpoint is at position " + std::to_string(position) +
                               " of " + std::to_string(dataset_->cardinality()) + " records");
      }
      const RecordFilesOptions& o = dataset_->options_;
      if (o.shuffle && o.shuffle->reshuffle_each_iteration) {
        epoch_ = static_cast<uint64_t>(epoch);
        RestorePass(dataset_->epochs_, epoch_);
        permutation_.emplace(static_cast<uint64_t>(dataset_->cardinality()), seed_, epoch_);
      }
      position_ = position;
      slots_.clear();
      next_slot_ = 0;
      last_ = nullptr;
      return Status();
    }

   private:
    struct Slot {
      Status status;
      Element element;
      size_t file = 0;  // where the record is
      int64_t record = 0;
      uint64_t offset = 0;
    };
    // One record to read: where it is and which slot it fills.
    struct Want {
      size_t file;
      int64_t record;  // index in the file
      uint64_t offset;
      uint64_t length;
      size_t slot;
    };

    // The record id at position p of this epoch.
    int64_t RecordAt(int64_t p) const {
      return permutation_ ? static_cast<int64_t>(permutation_->Apply(static_cast<uint64_t>(p))) : p;
    }

    // Random records are cache (and TLB) misses: each step below first
    // prefetches what the next one reads, so that the misses of a batch
    // overlap instead of being waited for one by one.
    void FillBatch() {
      const RecordFilesDataset& d = *dataset_;
      std::vector<Want> wants;
      for (int64_t p = position_; p < d.cardinality() && static_cast<int64_t>(wants.size()) < d.read_ahead_records();
           ++p) {
        const int64_t id = RecordAt(p);
        const size_t f = static_cast<size_t>(std::upper_bound(d.starts_.begin(), d.starts_.end(), id) -
                                             d.starts_.begin() - 1);
        const int64_t r = id - d.starts_[f];
        __builtin_prefetch(&d.indexes_[f].offsets()[static_cast<size_t>(r)]);
        __builtin_prefetch(&d.indexes_[f].record_lengths()[static_cast<size_t>(r)]);
        wants.push_back({f, r, 0, 0, wants.size()});
      }
      uint64_t bytes = 0;
      for (size_t i = 0; i < wants.size(); ++i) {
        Want& w = wants[i];
        w.length = d.indexes_[w.file].record_length(w.record);
        if (i > 0 && bytes + FrameSize(w.length) > static_cast<uint64_t>(d.read_ahead_bytes())) {
          wants.resize(i);
          break;
        }
        bytes += FrameSize(w.length);
        w.offset = d.indexes_[w.file].offset(w.record);
        if (const MappedFile* map = Mapped(w.file)) {
          // The header, and the footer (where a small record ends).
          // (A prefetch never faults, even past a truncation.)
          const std::string_view file = map->mapped_bytes();
          __builtin_prefetch(file.data() + std::min<uint64_t>(w.offset, file.size() - 1));
          __builtin_prefetch(file.data() + std::min<uint64_t>(w.offset + FrameSize(w.length) - 1, file.size() - 1));
        }
      }
      slots_.clear();
      slots_.resize(wants.size());
      next_slot_ = 0;
      for (const Want& w : wants) slots_[w.slot] = Slot{Status(), Element(), w.file, w.record, w.offset};
      std::sort(wants.begin(), wants.end(),
                [](const Want& a, const Want& b) { return a.file != b.file ? a.file < b.file : a.offset < b.offset; });
      for (size_t i = 0; i < wants.size();) {
        if (const MappedFile* map = Mapped(wants[i].file)) {
          // One size check per file and batch: a record past a truncation
          // is a DataLoss, never a touch of an unbacked page.
          const std::string_view file = map->live_bytes();
          const size_t f = wants[i].file;
          for (; i < wants.size() && wants[i].file == f; ++i) {
            const Want& w = wants[i];
            Slot& slot = slots_[w.slot];
            slot.status = Parse(d.files_[w.file], w, file, w.offset, &slot.element);
          }
          continue;
        }
        size_t j = i + 1;
        uint64_t end = wants[i].offset + FrameSize(wants[i].length);
        while (j < wants.size() && wants[j].file == wants[i].file && wants[j].offset <= end + kJoinGap) {
          end = std::max(end, wants[j].offset + FrameSize(wants[j].length));
          ++j;
        }
        ReadRun(wants.data() + i, wants.data() + j, end);
        i = j;
      }
    }

    // Reads the records [first, last) of one file, which lie in
    // [first->offset, end), into their slots.
    void ReadRun(const Want* first, const Want* last, uint64_t end) {
      const std::string& path = dataset_->files_[first->file];
      Status s = OpenFile(first->file);
      const uint64_t begin = first->offset;
      size_t got = 0;
      if (s.ok()) {
        buffer_.resize(static_cast<size_t>(end - begin));
        Result<size_t> r = files_[first->file]->Read(begin, buffer_.size(), buffer_.data());
        if (r.ok()) got = *r;
        s = r.status();
      }
      for (const Want* w = first; w != last; ++w) {
        Slot& slot = slots_[w->slot];
        if (!s.ok()) {
          slot.status = WithLocation(s, path, w->record, w->offset);
          continue;
        }
        slot.status = Parse(path, *w, std::string_view(buffer_.data(), got), w->offset - begin, &slot.element);
      }
    }

    // File f's mapping, or null (read it with pread).
    const MappedFile* Mapped(size_t f) const {
      const auto& maps = dataset_->indexed_->maps;
      return f < maps.size() && maps[f]->ok() ? maps[f].get() : nullptr;
    }

    Status OpenFile(size_t f) {
      if (files_[f]) return Status();
      SLUICE_ASSIGN_OR_RETURN(files_[f], io::DefaultFileSystem()->NewRandomAccessFile(dataset_->files_[f]));
      return Status();
    }

    // Checks and copies out the record `w` found at `at` in `bytes`.
    static Status Parse(const std::string& path, const Want& w, std::string_view bytes, uint64_t at, Element* out) {
      auto corrupted = [&](uint64_t reported, std::string_view what) {
        return WithLocation(
            errors::DataLoss("corrupted record at ", reported, " in ", path, " (record ", w.record, "): ", what), path,
            w.record, w.offset);
      };
      if (bytes.size() < at + FrameSize(w.length)) {
        return WithLocation(errors::DataLoss("truncated record at ", w.offset, " in ", path, " (record ",
                                                 w.record, "): the file is shorter than its index says"),
                                path, w.record, w.offset);
      }
      const char* p = bytes.data() + at;
      const uint64_t length = io::DecodeFixed64(p);
      if (io::crc32c::Unmask(io::DecodeFixed32(p + 8)) != io::crc32c::Value(p, sizeof(uint64_t))) {
        return corrupted(w.offset, "length checksum mismatch");
      }
      if (length != w.length) {
        return corrupted(w.offset, StrCat("length ", length, " where the index says ", w.length));
      }
      const std::string_view data(p + io::kRecordHeaderSize, length);
      // The data first: reading it in order brings the footer into the cache.
      const uint32_t crc = io::crc32c::Value(data);
      if (io::crc32c::Unmask(io::DecodeFixed32(p + io::kRecordHeaderSize + length)) != crc) {
        return corrupted(w.offset + io::kRecordHeaderSize, "data checksum mismatch");
      }
      *out = Element{Tensor::String(data)};
      return Status();
    }

    // Constant after construction.
    const std::shared_ptr<const RecordFilesDataset> dataset_;
    const uint64_t seed_;
    uint64_t epoch_;  // and permutation_: set again by Restore
    std::optional<IndexPermutation> permutation_;

    std::vector<std::unique_ptr<io::RandomAccessFile>> files_;  // opened on first use
    std::vector<Slot> slots_;                                   // the batch read ahead
    size_t next_slot_ = 0;
    int64_t position_ = 0;  // positions handed out this epoch
    std::string buffer_;
    const Slot* last_ = nullptr;  // of the element GetNext returned last (for origin())
    mutable std::vector<std::shared_ptr<const RecordSource>> sources_;  // per file, made on first use
    mutable ElementOrigin origin_;
  };

  int64_t read_ahead_records() const {
    return options_.read_ahead_records > 0 ? options_.read_ahead_records : kDefaultReadAheadRecords;
  }
  int64_t read_ahead_bytes() const {
    return options_.read_ahead_bytes > 0 ? options_.read_ahead_bytes : kDefaultReadAheadBytes;
  }

  const std::shared_ptr<const IndexedFiles> indexed_;
  const std::vector<std::string>& files_;
  const std::vector<io::RecordIndex>& indexes_;
  const std::vector<int64_t>& starts_;
  const RecordFilesOptions options_;
  mutable std::atomic<uint64_t> epochs_{0};
};

}  // namespace

Result<DatasetPtr> FromRecordFiles(std::vector<std::string> filenames, RecordFilesOptions options) {
  if (filenames.empty()) return InvalidArgument("from_record_files needs at least one file");
  if (!options.compression_type.empty()) {
    SLUICE_RETURN_IF_ERROR(io::ParseCompressionType(options.compression_type).status());
    return InvalidArgument("from_record_files reads records at their offsets, which a " + options.compression_type +
                           " stream does not allow; decompress the files first");
  }
  if (options.read_ahead_records < 0 || options.read_ahead_bytes < 0) {
    return InvalidArgument("read_ahead_records and read_ahead_bytes must be >= 0");
  }
  std::vector<io::RecordIndex> indexes;
  indexes.reserve(filenames.size());
  for (const std::string& path : filenames) {
    SLUICE_ASSIGN_OR_RETURN(io::RecordIndex index, IndexOf(path, options.index));
    indexes.push_back(std::move(index));
  }
  auto indexed = std::make_shared<const IndexedFiles>(std::move(filenames), std::move(indexes), options.use_mmap);
  return DatasetPtr(std::make_shared<RecordFilesDataset>(std::move(indexed), std::move(options)));
}

Result<DatasetPtr> GlobalShuffle(const DatasetPtr& record_files, GlobalShuffleOptions shuffle) {
  const auto* d = dynamic_cast<const RecordFilesDataset*>(record_files.get());
  if (d == nullptr) {
    return InvalidArgument("a global shuffle needs the dataset of from_record_files itself, not " +
                           (record_files ? record_files->DebugName() : std::string("null")));
  }
  return d->WithShuffle(shuffle);
}

std::unique_ptr<RecordFilesIterator> MakeRecordFilesIterator(const DatasetPtr& dataset) {
  const auto* d = dynamic_cast<const RecordFilesDataset*>(dataset.get());
  return d == nullptr ? nullptr : d->MakeTyped();
}

}  // namespace sluice::data
