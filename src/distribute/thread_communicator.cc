// ThreadCommunicator: N ranks as threads of one process, joined by a Hub
// (one mutex: mailboxes and collective rounds). For unit tests of the
// protocols, under TSan.
#include <cstring>
#include <deque>

#include "sluice/core/mutex.h"
#include "sluice/distribute/communicator.h"

namespace sluice::distribute {
namespace {

Tensor BytesTensor(std::string_view bytes) {
  Tensor t(DType::kUInt8, TensorShape{static_cast<int64_t>(bytes.size())});
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

class Hub {
 public:
  explicit Hub(int n) : n_(n), mail_(static_cast<size_t>(n)), cancelled_(static_cast<size_t>(n)) {}

  int size() const { return n_; }

  // One collective round: waits for every rank's bytes and returns them all.
  Result<std::vector<std::string>> Exchange(int rank, std::string bytes) SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    SLUICE_RETURN_IF_ERROR(cancelled_[static_cast<size_t>(rank)]);
    const uint64_t round = generation_;
    if (contributions_.empty()) contributions_.resize(static_cast<size_t>(n_));
    contributions_[static_cast<size_t>(rank)] = std::move(bytes);
    if (++arrived_ == n_) {
      // The last rank publishes; the next round cannot complete before
      // every rank of this one has copied the result (it needs them all).
      result_ = std::move(contributions_);
      contributions_.clear();
      arrived_ = 0;
      ++generation_;
      cv_.SignalAll();
      return result_;
    }
    while (generation_ == round) {
      SLUICE_RETURN_IF_ERROR(cancelled_[static_cast<size_t>(rank)]);
      cv_.Wait(&mu_);
    }
    return result_;
  }

  Status Post(int source, int dest, int tag, std::string_view bytes) SLUICE_EXCLUDES(mu_) {
    Tensor data = BytesTensor(bytes);  // copied outside the lock
    MutexLock l(&mu_);
    SLUICE_RETURN_IF_ERROR(cancelled_[static_cast<size_t>(source)]);
    mail_[static_cast<size_t>(dest)].push_back(Message{source, tag, std::move(data)});
    cv_.SignalAll();
    return Status();
  }

  Result<Message> Take(int rank, int source, int tag) SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    std::deque<Message>& box = mail_[static_cast<size_t>(rank)];
    while (true) {
      SLUICE_RETURN_IF_ERROR(cancelled_[static_cast<size_t>(rank)]);
      for (auto it = box.begin(); it != box.end(); ++it) {
        if (it->tag == tag && (source == kAnySource || it->source == source)) {
          Message m = std::move(*it);
          box.erase(it);
          return m;
        }
      }
      cv_.Wait(&mu_);
    }
  }

  void Cancel(int rank, Status why) SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    if (cancelled_[static_cast<size_t>(rank)].ok()) cancelled_[static_cast<size_t>(rank)] = std::move(why);
    cv_.SignalAll();
  }

 private:
  // Constant after construction.
  const int n_;

  Mutex mu_;
  CondVar cv_;
  // Protected by mu_.
  std::vector<std::deque<Message>> mail_ SLUICE_GUARDED_BY(mu_);
  std::vector<Status> cancelled_ SLUICE_GUARDED_BY(mu_);
  std::vector<std::string> contributions_ SLUICE_GUARDED_BY(mu_);
  std::vector<std::string> result_ SLUICE_GUARDED_BY(mu_);
  int arrived_ SLUICE_GUARDED_BY(mu_) = 0;
  uint64_t generation_ SLUICE_GUARDED_BY(mu_) = 0;
};

std::string EncodeInt(int64_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); }
int64_t DecodeInt(const std::string& s) {
  int64_t v = 0;
  std::memcpy(&v, s.data(), sizeof v);
  return v;
}

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<Hub> hub, int rank) : hub_(std::move(hub)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return hub_->size(); }
  int local_rank() const override { return rank_; }

  Status Barrier() override { return hub_->Exchange(rank_, "").status(); }

  Status Bcast(std::string* bytes, int root) override {
    SLUICE_RETURN_IF_ERROR(CheckRank(root));
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> all, hub_->Exchange(rank_, rank_ == root ? *bytes : ""));
    *bytes = std::move(all[static_cast<size_t>(root)]);
    return Status();
  }

  Result<std::vector<std::string>> Allgather(std::string_view bytes) override {
    return hub_->Exchange(rank_, std::string(bytes));
  }

  Result<int64_t> Allreduce(int64_t value, ReduceOp op) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> all, hub_->Exchange(rank_, EncodeInt(value)));
    int64_t out = DecodeInt(all[0]);
    for (size_t i = 1; i < all.size(); ++i) {
      const int64_t v = DecodeInt(all[i]);
      out = op == ReduceOp::kSum ? out + v : op == ReduceOp::kMin ? std::min(out, v) : std::max(out, v);
    }
    return out;
  }

  Status Send(int dest, int tag, std::string_view bytes) override {
    SLUICE_RETURN_IF_ERROR(CheckRank(dest));
    return hub_->Post(rank_, dest, tag, bytes);
  }

  Result<Message> Recv(int source, int tag) override {
    if (source != kAnySource) SLUICE_RETURN_IF_ERROR(CheckRank(source));
    return hub_->Take(rank_, source, tag);
  }

  void Cancel(Status why) override { hub_->Cancel(rank_, std::move(why)); }

 private:
  Status CheckRank(int r) const {
    if (r < 0 || r >= size()) return errors::InvalidArgument("rank ", r, " is not in [0, ", size(), ")");
    return Status();
  }

  const std::shared_ptr<Hub> hub_;
  const int rank_;
};

}  // namespace

std::vector<std::shared_ptr<Communicator>> MakeThreadCommunicators(int n) {
  auto hub = std::make_shared<Hub>(n);
  std::vector<std::shared_ptr<Communicator>> out;
  for (int r = 0; r < n; ++r) out.push_back(std::make_shared<ThreadCommunicator>(hub, r));
  return out;
}

}  // namespace sluice::distribute
