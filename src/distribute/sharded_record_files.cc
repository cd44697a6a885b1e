// ShardedRecordFiles: a rank's share of the records of TFRecord files, per
// epoch, from the pure plans of sharding.h; DYNAMIC asks rank 0's
// dispatcher for splits instead.
#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "sluice/core/mutex.h"
#include "sluice/data/index_permutation.h"
#include "sluice/distribute/datasets.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_reader.h"

namespace sluice::distribute {
namespace {

// Bumped when a change makes ranks of different builds read different
// records for the same inputs: the consistency check compares it.
constexpr const char* kFormat = "sluice-distribute 1";
// Tags of the DYNAMIC dispatcher's messages: kDispatchTagBase + 2 * serial
// (requests to rank 0) and + 1 (replies); serial is rank 0's, broadcast.
// MPI guarantees tags up to 32767 only.
constexpr int kDispatchTagBase = 20000;
constexpr uint64_t kDispatchSerials = 6000;

std::string EncodeU64s(std::initializer_list<uint64_t> values) {
  std::string out;
  for (uint64_t v : values) out += std::to_string(v) + " ";
  return out;
}

std::vector<uint64_t> DecodeU64s(std::string_view s) {
  std::vector<uint64_t> out;
  uint64_t v = 0;
  bool in = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + static_cast<uint64_t>(c - '0');
      in = true;
    } else if (in) {
      out.push_back(v);
      v = 0;
      in = false;
    }
  }
  if (in) out.push_back(v);
  return out;
}

// The files and their indexes: immutable, shared by the dataset's iterators.
struct IndexedFiles {
  std::vector<std::string> files;
  std::vector<io::RecordIndex> indexes;
  std::vector<uint64_t> starts;  // first record id of each file; then the total
  uint64_t total() const { return starts.back(); }
  std::vector<uint64_t> RecordsPerFile() const {
    std::vector<uint64_t> out;
    for (const io::RecordIndex& index : indexes) out.push_back(static_cast<uint64_t>(index.num_records()));
    return out;
  }
};

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

// DYNAMIC's bookkeeping: hands out splits of each epoch's positions, first
// come first served, and journals which rank got which, so that the
// positions no rank has read after `reads` reads each (a synchronous step)
// can be named for a checkpoint. Thread-safe.
class SplitJournal {
 public:
  // `resume`: a checkpoint's epoch and the positions it had left.
  SplitJournal(int ranks, uint64_t total, uint64_t split, std::optional<std::pair<uint64_t, Ranges>> resume)
      : ranks_(ranks), total_(total), split_(split), resume_(std::move(resume)) {}

  // The next split of `epoch` for `rank`; empty at the end of the epoch.
  std::pair<uint64_t, uint64_t> Grant(uint64_t epoch, int rank) SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (finished_.count(epoch) != 0) return {0, 0};
    Epoch& e = Get(epoch);
    while (e.range < e.todo.size() && e.next >= e.todo[e.range].second) {
      if (++e.range < e.todo.size()) e.next = e.todo[e.range].first;
    }
    const size_t r = static_cast<size_t>(rank);
    if (e.range == e.todo.size()) {
      if (!e.ended[r]) {
        e.ended[r] = true;
        // Every rank has its end: nobody asks for this epoch's splits again.
        if (++e.ended_ranks == ranks_) {
          epochs_.erase(epoch);
          finished_.insert(epoch);
        }
      }
      return {0, 0};
    }
    const uint64_t begin = e.next, end = std::min(e.todo[e.range].second, begin + split_);
    e.next = end;
    e.grants[r].emplace_back(begin, end);
    e.granted[r] += end - begin;
    return {begin, end};
  }

  // Whether some rank has started an epoch that not every rank has ended.
  bool HasOpenEpoch() SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    for (const auto& [epoch, e] : epochs_) {
      for (size_t r = 0; r < e.grants.size(); ++r) {
        if (!e.grants[r].empty() || e.ended[r]) return true;
      }
    }
    return false;
  }

  // The positions of `epoch` not read once every rank has made `reads`
  // reads: the rest of each rank's splits and what was not handed out yet.
  // FailedPrecondition when a rank cannot have made them (it holds fewer
  // positions and has not reached the end): state() was not called at a
  // synchronous step.
  Result<Ranges> Left(uint64_t epoch, uint64_t reads) SLUICE_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (finished_.count(epoch) != 0) return Ranges();
    Epoch& e = Get(epoch);
    Ranges left;
    for (size_t r = 0; r < e.grants.size(); ++r) {
      if (e.granted[r] < reads && !e.ended[r]) {
        return errors::FailedPrecondition("DYNAMIC state after ", reads, " reads per rank, but rank ", r,
                                          " has been handed only ", e.granted[r],
                                          ": take the state at a synchronous step, when every rank has read as many");
      }
      uint64_t consumed = reads;
      for (const auto& [b, end] : e.grants[r]) {
        const uint64_t n = end - b;
        if (consumed >= n) {
          consumed -= n;
          continue;
        }
        left.emplace_back(b + consumed, end);
        consumed = 0;
      }
    }
    for (size_t i = e.range; i < e.todo.size(); ++i) {
      const uint64_t b = i == e.range ? std::max(e.next, e.todo[i].first) : e.todo[i].first;
      if (b < e.todo[i].second) left.emplace_back(b, e.todo[i].second);
    }
    std::sort(left.begin(), left.end());
    Ranges merged;
    for (const auto& range : left) {
      if (!merged.empty() && merged.back().second == range.first) {
        merged.back().second = range.second;
      } else {
        merged.push_back(range);
      }
    }
    return merged;
  }

 private:
  struct Epoch {
    Ranges todo;        // what to hand out, in order
    size_t range = 0;   // todo[range] is being handed out,
    uint64_t next = 0;  // from here
    std::vector<Ranges> grants;      // per rank, in the order handed out
    std::vector<uint64_t> granted;   // per rank: positions handed out
    std::vector<bool> ended;         // per rank: got the empty split
    int ended_ranks = 0;
  };

  Epoch& Get(uint64_t epoch) SLUICE_REQUIRES(mu_) {
    auto [it, fresh] = epochs_.try_emplace(epoch);
    Epoch& e = it->second;
    if (fresh) {
      e.todo = resume_ && resume_->first == epoch ? resume_->second : Ranges{{0, total_}};
      e.todo.erase(std::remove_if(e.todo.begin(), e.todo.end(), [](const auto& r) { return r.first >= r.second; }),
                   e.todo.end());
      e.next = e.todo.empty() ? 0 : e.todo[0].first;
      e.grants.resize(static_cast<size_t>(ranks_));
      e.granted.resize(static_cast<size_t>(ranks_));
      e.ended.resize(static_cast<size_t>(ranks_));
    }
    return e;
  }

  const int ranks_;
  const uint64_t total_, split_;
  const std::optional<std::pair<uint64_t, Ranges>> resume_;
  Mutex mu_;
  std::map<uint64_t, Epoch> epochs_ SLUICE_GUARDED_BY(mu_);
  std::set<uint64_t> finished_ SLUICE_GUARDED_BY(mu_);  // every rank ended: journal dropped
};

// Rank 0 of a DYNAMIC dataset: answers the ranks' split and state requests
// from the journal. Requests: "<epoch>" for a split, answered "<begin>
// <end>"; "<epoch> <reads>" for a state, answered "0 <b> <e> ..." (the left
// ranges) or "1 <message>". Destroyed while some rank is still in an epoch
// (rank 0 dropped its dataset first), it tells every other rank "gone
// <message>", which its next request reads as the answer: an error that
// says what happened, instead of a wait for an answer that never comes.
class Dispatcher {
 public:
  Dispatcher(std::shared_ptr<Communicator> comm, int request_tag, std::shared_ptr<SplitJournal> journal)
      : comm_(std::move(comm)), request_tag_(request_tag), journal_(std::move(journal)) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~Dispatcher() {
    // A request from this rank with no epoch: the stop signal.
    if (!comm_->Send(comm_->rank(), request_tag_, "").ok()) comm_->Cancel(errors::Cancelled("dispatcher stopped"));
    thread_.join();
    if (!journal_->HasOpenEpoch()) return;
    for (int r = 0; r < comm_->size(); ++r) {
      if (r == comm_->rank()) continue;
      (void)comm_->Send(r, request_tag_ + 1,
                        "gone rank 0's DYNAMIC dataset was destroyed while this rank was still in an epoch: keep "
                        "rank 0's dataset until every rank has finished its passes");
    }
  }
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

 private:
  void Serve() {
    while (true) {
      Result<Message> m = comm_->Recv(kAnySource, request_tag_);
      if (!m.ok()) return;
      const std::vector<uint64_t> request = DecodeU64s(m->bytes());
      if (request.empty()) return;  // stop
      std::string reply;
      if (request.size() == 1) {
        const auto [begin, end] = journal_->Grant(request[0], m->source);
        reply = EncodeU64s({begin, end});
      } else {
        Result<Ranges> left = journal_->Left(request[0], request[1]);
        if (left.ok()) {
          reply = "0 ";
          for (const auto& [b, e] : *left) reply += EncodeU64s({b, e});
        } else {
          reply = StrCat("1 ", left.status().message());
        }
      }
      if (!comm_->Send(m->source, request_tag_ + 1, reply).ok()) return;
    }
  }

  const std::shared_ptr<Communicator> comm_;
  const int request_tag_;
  const std::shared_ptr<SplitJournal> journal_;
  std::thread thread_;
};

// What every iterator of the dataset needs.
struct Config {
  std::shared_ptr<const IndexedFiles> files;
  ShardingPolicy policy;  // resolved (never kAuto)
  uint64_t seed;
  Uneven uneven;
  bool shuffle;
  bool balance_records;
  uint64_t split_records;
  int rank, size;
  std::shared_ptr<Communicator> comm;  // null: none
  int request_tag;                     // DYNAMIC
  // DYNAMIC on rank 0 (or on a single rank without a communicator): the
  // journal itself; the other ranks ask rank 0's dispatcher.
  std::shared_ptr<SplitJournal> journal;
};

// Where a pass starts: a checkpoint's (world size, position, rest), or the
// epoch's start at the config's size.
struct Start {
  int world_size;
  uint64_t position = 0;
  uint64_t rest = 0;
};

// FILE: one rank's files in the epoch's order, as record-id ranges.
struct OwnFiles {
  std::vector<uint64_t> files, starts;  // file numbers; their first read
  uint64_t total = 0;
  uint64_t count = 0;  // reads of the epoch after `uneven`
};

class ShardedIteratorImpl : public ShardedIterator {
 public:
  ShardedIteratorImpl(std::shared_ptr<const data::DatasetBase> dataset, const Config& config, uint64_t epoch,
                      Start from)
      : dataset_(std::move(dataset)),
        c_(config),
        epoch_(epoch),
        n_(c_.files->total()),
        permutation_(n_, c_.seed, c_.shuffle ? epoch : 0),
        readers_(c_.files->files.size()) {
    const uint64_t start = from.position;
    switch (c_.policy) {
      case ShardingPolicy::kRecord:
      case ShardingPolicy::kData:
      case ShardingPolicy::kHint:
        plan_ = StridePlan{n_, std::min(start, n_), c_.size, c_.uneven};
        count_ = static_cast<int64_t>(plan_.CountFor(c_.rank));
        break;
      case ShardingPolicy::kFile:
        if (from.world_size == c_.size && from.rest == 0) {
          own_ = PlanFiles(c_.size)[static_cast<size_t>(c_.rank)];
          count_ = static_cast<int64_t>(own_.count);
          read_ = std::min<int64_t>(static_cast<int64_t>(start), count_);
        } else {
          PlanRest(from);
        }
        break;
      case ShardingPolicy::kOff:
        count_ = static_cast<int64_t>(n_);
        read_ = std::min<int64_t>(static_cast<int64_t>(start), count_);
        break;
      case ShardingPolicy::kDynamic:
      case ShardingPolicy::kAuto:
        count_ = -1;
        break;
    }
  }

  Status GetNext(Element* out, bool* end_of_sequence) override {
    Result<std::optional<uint64_t>> id = NextRecordId();
    SLUICE_RETURN_IF_ERROR(id.status());
    if (!id->has_value()) {
      *end_of_sequence = true;
      return Status();
    }
    SLUICE_RETURN_IF_ERROR(Read(**id, out));
    *end_of_sequence = false;
    return Status();
  }

  Result<DistributedState> state() const override {
    DistributedState s{.seed = c_.seed, .epoch = epoch_, .policy = c_.policy, .world_size = c_.size};
    switch (c_.policy) {
      case ShardingPolicy::kRecord:
      case ShardingPolicy::kData:
      case ShardingPolicy::kHint:
        s.position = plan_.PositionAfterSteps(static_cast<uint64_t>(read_));
        break;
      case ShardingPolicy::kFile:
        if (rest_mode_) {
          s.world_size = rest_from_.world_size;
          s.position = rest_from_.position;
          s.rest = plan_.PositionAfterSteps(static_cast<uint64_t>(read_));
          break;
        }
        s.position = static_cast<uint64_t>(read_);  // reads per rank
        break;
      case ShardingPolicy::kOff:
        s.position = static_cast<uint64_t>(read_);  // reads per rank
        break;
      case ShardingPolicy::kDynamic: {
        s.position = static_cast<uint64_t>(read_);  // reads per rank
        SLUICE_ASSIGN_OR_RETURN(s.left, DynamicLeft());
        break;
      }
      default:
        break;
    }
    return s;
  }

  int64_t count() const override { return count_; }

  // DYNAMIC: this iterator reads the epoch's first record once, asking the
  // dispatcher (or journal) for nothing; other policies read as they would.
  void SetProbe() { probe_ = true; }

 private:
  // The record id of the next read, or nullopt at the end of this rank's epoch.
  Result<std::optional<uint64_t>> NextRecordId() {
    if (c_.policy == ShardingPolicy::kDynamic) return NextDynamic();
    if (read_ >= count_) return std::optional<uint64_t>();
    const uint64_t k = static_cast<uint64_t>(read_++);
    switch (c_.policy) {
      case ShardingPolicy::kRecord: {
        const uint64_t p = plan_.PositionAt(c_.rank, k);
        return std::optional<uint64_t>(c_.shuffle ? permutation_.Apply(p) : p);
      }
      case ShardingPolicy::kData:
      case ShardingPolicy::kHint:
        return std::optional<uint64_t>(plan_.PositionAt(c_.rank, k));
      case ShardingPolicy::kFile:
        if (rest_mode_) return std::optional<uint64_t>(RestRecordAt(plan_.PositionAt(c_.rank, k)));
        return std::optional<uint64_t>(FileRecordAt(own_, k));
      default:
        return std::optional<uint64_t>(k);  // OFF
    }
  }

  Result<std::optional<uint64_t>> NextDynamic() {
    if (dynamic_ended_) return std::optional<uint64_t>();
    if (probe_) {
      dynamic_ended_ = true;
      if (n_ == 0) return std::optional<uint64_t>();
      return std::optional<uint64_t>(c_.shuffle ? permutation_.Apply(0) : 0);
    }
    if (split_next_ == split_end_) {
      if (c_.journal) {
        std::tie(split_next_, split_end_) = c_.journal->Grant(epoch_, c_.rank);
      } else {
        SLUICE_ASSIGN_OR_RETURN(std::string reply, AskDispatcher({epoch_}));
        const std::vector<uint64_t> range = DecodeU64s(reply);
        if (range.size() != 2) return errors::Internal("bad split from the dispatcher: \"", reply, "\"");
        split_next_ = range[0];
        split_end_ = range[1];
      }
      if (split_next_ == split_end_) {
        dynamic_ended_ = true;  // the journal counts each rank's end once
        return std::optional<uint64_t>();
      }
    }
    ++read_;
    const uint64_t p = split_next_++;
    return std::optional<uint64_t>(c_.shuffle ? permutation_.Apply(p) : p);
  }

  // FailedPrecondition (and for every later request) once rank 0's
  // dispatcher said it is gone.
  Result<std::string> AskDispatcher(std::initializer_list<uint64_t> request) const {
    if (!dispatcher_gone_.ok()) return dispatcher_gone_;
    SLUICE_RETURN_IF_ERROR(c_.comm->Send(0, c_.request_tag, EncodeU64s(request)));
    SLUICE_ASSIGN_OR_RETURN(Message reply, c_.comm->Recv(0, c_.request_tag + 1));
    std::string bytes(reply.bytes());
    if (bytes.rfind("gone ", 0) == 0) {
      dispatcher_gone_ = errors::FailedPrecondition(bytes.substr(5));
      return dispatcher_gone_;
    }
    return bytes;
  }

  // DYNAMIC: the positions no rank has read once each has made read_ reads.
  Result<Ranges> DynamicLeft() const {
    const uint64_t reads = static_cast<uint64_t>(read_);
    if (c_.journal) return c_.journal->Left(epoch_, reads);
    SLUICE_ASSIGN_OR_RETURN(std::string reply, AskDispatcher({epoch_, reads}));
    if (reply.rfind("1 ", 0) == 0) return errors::FailedPrecondition(reply.substr(2));
    const std::vector<uint64_t> v = DecodeU64s(reply);
    if (v.empty() || v[0] != 0 || v.size() % 2 != 1) {
      return errors::Internal("bad state from the dispatcher: \"", reply, "\"");
    }
    Ranges left;
    for (size_t i = 1; i + 1 < v.size(); i += 2) left.emplace_back(v[i], v[i + 1]);
    return left;
  }

  // FILE: every rank's files of this epoch at `size` ranks.
  std::vector<OwnFiles> PlanFiles(int size) const {
    const std::vector<uint64_t> per_file = c_.files->RecordsPerFile();
    const auto lists = AssignFiles(per_file.size(), size, c_.seed, c_.shuffle ? epoch_ : 0,
                                   c_.balance_records ? per_file : std::vector<uint64_t>());
    std::vector<uint64_t> totals;
    for (const auto& list : lists) {
      uint64_t t = 0;
      for (uint64_t f : list) t += per_file[f];
      totals.push_back(t);
    }
    std::vector<OwnFiles> out(lists.size());
    for (size_t r = 0; r < lists.size(); ++r) {
      OwnFiles& own = out[r];
      for (uint64_t f : lists[r]) {
        if (per_file[f] == 0) continue;
        own.files.push_back(f);
        own.starts.push_back(own.total);
        own.total += per_file[f];
      }
      // Nothing of its own to pad with: no reads.
      own.count = own.total == 0 ? 0 : FileModeCount(totals, static_cast<int>(r), c_.uneven);
    }
    return out;
  }

  // FILE resumed from a checkpoint of another world size (or of such a
  // resume): the reads the checkpoint's ranks had left, old rank by old rank
  // in order, dealt by stride over this job's ranks from from.rest on. Each
  // record the old plan had left is read once (uneven as configured).
  void PlanRest(const Start& from) {
    rest_mode_ = true;
    rest_from_ = from;
    rest_ranks_ = PlanFiles(from.world_size);
    uint64_t n = 0;
    for (const OwnFiles& own : rest_ranks_) {
      rest_starts_.push_back(n);
      n += own.count > from.position ? own.count - from.position : 0;
    }
    plan_ = StridePlan{n, std::min(from.rest, n), c_.size, c_.uneven};
    count_ = static_cast<int64_t>(plan_.CountFor(c_.rank));
  }

  // The record at position p of the rest (PlanRest).
  uint64_t RestRecordAt(uint64_t p) const {
    const size_t r = static_cast<size_t>(std::upper_bound(rest_starts_.begin(), rest_starts_.end(), p) -
                                         rest_starts_.begin() - 1);
    return FileRecordAt(rest_ranks_[r], rest_from_.position + (p - rest_starts_[r]));
  }

  uint64_t FileRecordAt(const OwnFiles& own, uint64_t k) const {
    k %= own.total;  // kPad repeats the rank's records from its first
    const size_t i = static_cast<size_t>(std::upper_bound(own.starts.begin(), own.starts.end(), k) -
                                         own.starts.begin() - 1);
    return c_.files->starts[own.files[i]] + (k - own.starts[i]);
  }

  Status Read(uint64_t id, Element* out) {
    const IndexedFiles& f = *c_.files;
    const size_t file = static_cast<size_t>(std::upper_bound(f.starts.begin(), f.starts.end(), id) -
                                            f.starts.begin() - 1);
    if (!readers_[file]) {
      SLUICE_ASSIGN_OR_RETURN(readers_[file], io::RecordReader::Open(f.files[file]));
    }
    std::string_view record;
    SLUICE_RETURN_IF_ERROR(
        f.indexes[file].ReadRecord(readers_[file].get(), static_cast<int64_t>(id - f.starts[file]), &record));
    *out = Element{Tensor::String(record)};
    return Status();
  }

  const std::shared_ptr<const data::DatasetBase> dataset_;  // keeps the config's owner alive
  const Config& c_;
  const uint64_t epoch_;
  const uint64_t n_;
  const data::IndexPermutation permutation_;
  StridePlan plan_;
  int64_t count_ = 0;
  int64_t read_ = 0;
  // FILE: this rank's files; or, resumed at another world size, the old
  // ranks' files, where each one's rest starts in the rest, and the checkpoint.
  OwnFiles own_;
  bool rest_mode_ = false;
  Start rest_from_{1};
  std::vector<OwnFiles> rest_ranks_;
  std::vector<uint64_t> rest_starts_;
  // DYNAMIC: the current split [split_next_, split_end_); the end was handed out.
  uint64_t split_next_ = 0, split_end_ = 0;
  bool dynamic_ended_ = false;
  mutable Status dispatcher_gone_;  // rank 0's dispatcher said it stopped
  bool probe_ = false;
  std::vector<std::unique_ptr<io::RecordReader>> readers_;
};

class ShardedDataset : public data::DatasetBase {
 public:
  ShardedDataset(Config config, uint64_t first_epoch, Start first_start, std::unique_ptr<Dispatcher> dispatcher)
      : data::DatasetBase(data::ElementSpec{{DType::kString}, {PartialShape({})}, {}}),
        config_(std::move(config)),
        first_epoch_(first_epoch),
        first_start_(first_start),
        dispatcher_(std::move(dispatcher)) {}

  int64_t cardinality() const override {
    if (config_.policy == ShardingPolicy::kDynamic) return data::kUnknownCardinality;
    // A fresh (not resumed) epoch's count: the same every epoch.
    ShardedIteratorImpl probe(nullptr, config_, first_epoch_ + 1, Start{config_.size});
    return probe.count();
  }
  std::string DebugName() const override { return "ShardedRecordFiles"; }
  // A probe pass (a Python function's tracing) takes no pass (epoch) and no
  // split from the dispatcher.
  std::unique_ptr<data::IteratorBase> MakeIteratorInternal(const data::IteratorContext& ctx) const override {
    if (!ctx.probe) return MakeTyped();
    std::unique_ptr<ShardedIteratorImpl> it = MakeForPass(passes_.load(std::memory_order_relaxed));
    it->SetProbe();
    return it;
  }

  std::unique_ptr<ShardedIterator> MakeTyped() const {
    return MakeForPass(passes_.fetch_add(1, std::memory_order_relaxed));
  }

 private:
  std::unique_ptr<ShardedIteratorImpl> MakeForPass(uint64_t pass) const {
    return std::make_unique<ShardedIteratorImpl>(shared_from_this(), config_, first_epoch_ + pass,
                                                 pass == 0 ? first_start_ : Start{config_.size});
  }

  const Config config_;
  const uint64_t first_epoch_;
  const Start first_start_;
  mutable std::atomic<uint64_t> passes_{0};
  const std::unique_ptr<Dispatcher> dispatcher_;  // rank 0 of DYNAMIC only
};

std::atomic<uint64_t> next_dispatch_serial{0};

// FNV-1a, 64 bits: a fixed function, the same on every machine.
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string FileListField(const IndexedFiles& f) {
  std::string out;
  for (size_t i = 0; i < f.files.size(); ++i) out += StrCat(f.files[i], " (", f.indexes[i].num_records(), " records)\n");
  return out;
}

// The first line where a and b differ, for the consistency message.
std::string FirstDifference(const std::string& mine, const std::string& theirs) {
  size_t a = 0, b = 0;
  for (int line = 0;; ++line) {
    const size_t ea = mine.find('\n', a), eb = theirs.find('\n', b);
    const std::string_view la = std::string_view(mine).substr(a, ea == std::string::npos ? std::string::npos : ea - a);
    const std::string_view lb =
        std::string_view(theirs).substr(b, eb == std::string::npos ? std::string::npos : eb - b);
    if (la != lb || ea == std::string::npos || eb == std::string::npos) {
      return StrCat("line ", line + 1, ": \"", lb, "\" where rank 0 has \"", la, "\"");
    }
    a = ea + 1;
    b = eb + 1;
  }
}

}  // namespace

Status CheckConsistency(Communicator& comm, const std::vector<std::pair<std::string, std::string>>& fields) {
  // First one 8-byte hash per field (a few bytes per rank, whatever the
  // file list's length); the values themselves only when a hash differs, to
  // name the first difference.
  std::string hashes;
  for (const auto& field : fields) {
    const uint64_t h = Fnv1a(field.second);
    hashes.append(reinterpret_cast<const char*>(&h), sizeof h);
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> all_hashes, comm.Allgather(hashes));
  if (std::all_of(all_hashes.begin(), all_hashes.end(), [&](const std::string& h) { return h == all_hashes[0]; })) {
    return Status();
  }
  std::string mine;
  for (const auto& [name, value] : fields) mine += StrCat(name.size(), ":", name, value.size(), ":", value);
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> all, comm.Allgather(mine));
  // Every rank decodes every rank's fields against its own names.
  const auto decode = [&](const std::string& s) {
    std::vector<std::string> values;
    size_t at = 0;
    while (at < s.size()) {
      for (int part = 0; part < 2; ++part) {
        const size_t colon = s.find(':', at);
        if (colon == std::string::npos) return values;
        const size_t len = std::stoull(s.substr(at, colon - at));
        if (part == 1) values.push_back(s.substr(colon + 1, len));
        at = colon + 1 + len;
      }
    }
    return values;
  };
  const std::vector<std::string> root = decode(all[0]);
  for (size_t i = 0; i < fields.size(); ++i) {
    std::vector<int> differing;
    std::string example;
    for (size_t r = 1; r < all.size(); ++r) {
      const std::vector<std::string> theirs = decode(all[r]);
      const std::string value = i < theirs.size() ? theirs[i] : "<missing>";
      const std::string root_value = i < root.size() ? root[i] : "<missing>";
      if (value != root_value) {
        if (differing.empty()) example = StrCat("rank ", r, " at ", FirstDifference(root_value, value));
        differing.push_back(static_cast<int>(r));
      }
    }
    if (!differing.empty()) {
      std::string ranks;
      for (int r : differing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
      return errors::FailedPrecondition("ranks disagree on ", fields[i].first, ": rank(s) ", ranks,
                                        " differ from rank 0 (", example, ")");
    }
  }
  return errors::Internal("ranks' consistency hashes differ but their values agree");
}

Result<data::DatasetPtr> ShardedRecordFiles(std::vector<std::string> files, DistributeOptions options,
                                            const InputContext& ctx) {
  if (files.empty()) return errors::InvalidArgument("ShardedRecordFiles needs at least one file");
  if (options.split_records < 1) return errors::InvalidArgument("split_records must be >= 1, got ", options.split_records);
  const int size = ctx.communicator ? ctx.communicator->size() : ctx.num_input_pipelines;
  const int rank = ctx.communicator ? ctx.communicator->rank() : ctx.input_pipeline_id;
  if (size < 1 || rank < 0 || rank >= size) return errors::InvalidArgument("rank ", rank, " of ", size, " ranks");
  const ShardingPolicy policy = ResolvePolicy(options.policy, static_cast<int64_t>(files.size()), size);
  if (policy == ShardingPolicy::kDynamic && size > 1 && !ctx.communicator) {
    return errors::InvalidArgument("DYNAMIC sharding needs a communicator (launch with mpirun or srun)");
  }

  // Seed (and the dispatcher's tag serial) from rank 0 when not given.
  uint64_t seed = options.seed.value_or(0), serial = next_dispatch_serial.fetch_add(1);
  if (ctx.communicator) {
    std::string agreed = EncodeU64s({options.seed ? *options.seed : std::random_device()() * 0x100000001ull, serial});
    SLUICE_RETURN_IF_ERROR(ctx.communicator->Bcast(&agreed, 0));
    const std::vector<uint64_t> v = DecodeU64s(agreed);
    if (v.size() != 2) return errors::Internal("bad seed broadcast \"", agreed, "\"");
    seed = options.seed ? *options.seed : v[0];
    serial = v[1];
  } else if (!options.seed) {
    if (size > 1) {
      return errors::InvalidArgument("a seed is required with ", size,
                                     " ranks and no communicator (launcher ", LauncherName(ctx.launcher),
                                     "): every rank must draw the same permutation");
    }
    seed = std::random_device()();
  }

  auto indexed = std::make_shared<IndexedFiles>();
  indexed->files = std::move(files);
  indexed->starts.push_back(0);
  for (const std::string& path : indexed->files) {
    SLUICE_ASSIGN_OR_RETURN(io::RecordIndex index, io::RecordIndex::LoadOrBuild(path));
    indexed->starts.push_back(indexed->starts.back() + static_cast<uint64_t>(index.num_records()));
    indexed->indexes.push_back(std::move(index));
  }

  uint64_t first_epoch = 0;
  Start first_start{size};
  if (options.resume) {
    const DistributedState& r = *options.resume;
    if (r.policy != policy) {
      return errors::InvalidArgument("cannot resume a ", ShardingPolicyName(r.policy), " checkpoint with policy ",
                                     ShardingPolicyName(policy));
    }
    if (policy == ShardingPolicy::kOff && r.world_size != size) {
      return errors::FailedPrecondition("OFF checkpoints resume at the same world size (", r.world_size, "), not ",
                                        size, "; RECORD, DATA and FILE resume at any size");
    }
    if (r.seed != seed) {
      return errors::InvalidArgument("the checkpoint's seed ", r.seed, " differs from the seed ", seed);
    }
    first_epoch = r.epoch;
    if (policy != ShardingPolicy::kDynamic) first_start = Start{r.world_size, r.position, r.rest};
    if (policy == ShardingPolicy::kDynamic && r.left) {
      for (const auto& [b, e] : *r.left) {
        if (b >= e || e > indexed->total()) {
          return errors::InvalidArgument("the checkpoint's left range ", b, "-", e, " is not within the epoch's ",
                                         indexed->total(), " positions (another file list?)");
        }
      }
    }
  }

  if (ctx.communicator && options.check_consistency) {
    SLUICE_RETURN_IF_ERROR(CheckConsistency(
        *ctx.communicator,
        {{"the format version", kFormat},
         {"the file list", FileListField(*indexed)},
         {"the seed", std::to_string(seed)},
         {"the sharding policy", std::string(ShardingPolicyName(policy))},
         {"uneven", std::string(UnevenName(options.uneven))},
         {"shuffle", options.shuffle ? "true" : "false"},
         {"the resume state", options.resume ? options.resume->Serialize() : "none"}}));
  }

  Config config{indexed,
                policy,
                seed,
                options.uneven,
                options.shuffle,
                options.balance_records,
                static_cast<uint64_t>(options.split_records),
                rank,
                size,
                ctx.communicator,
                kDispatchTagBase + 2 * static_cast<int>(serial % kDispatchSerials),
                nullptr};
  std::unique_ptr<Dispatcher> dispatcher;
  if (policy == ShardingPolicy::kDynamic && rank == 0) {
    std::optional<std::pair<uint64_t, Ranges>> resume;
    if (options.resume && options.resume->left) resume.emplace(options.resume->epoch, *options.resume->left);
    config.journal = std::make_shared<SplitJournal>(size, indexed->total(), config.split_records, std::move(resume));
    if (ctx.communicator) dispatcher = std::make_unique<Dispatcher>(ctx.communicator, config.request_tag, config.journal);
  }
  return data::DatasetPtr(
      std::make_shared<ShardedDataset>(std::move(config), first_epoch, first_start, std::move(dispatcher)));
}

std::unique_ptr<ShardedIterator> MakeShardedIterator(const data::DatasetPtr& dataset) {
  const auto* sharded = dynamic_cast<const ShardedDataset*>(dataset.get());
  return sharded ? sharded->MakeTyped() : nullptr;
}

}  // namespace sluice::distribute
