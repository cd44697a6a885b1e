// MpiCommunicator: every MPI call on one communication thread (see mpi.h).
//
// Callers queue an Op and wait for it; the thread moves queued ops to its
// active list and calls Step() on each until it reports done. Every MPI
// operation used is nonblocking (MPI-3: MPI_Ibarrier, MPI_Ibcast,
// MPI_Iallgather(v), MPI_Iallreduce, MPI_Isend, MPI_Improbe + MPI_Imrecv,
// MPI_Comm_idup), so one slow operation never holds up another: a Recv from
// any source can wait while collectives and sends go on. With nothing
// progressing, the thread polls kSpinRounds times, then waits on its
// condition variable with a growing timeout (up to kMaxIdle),
// so an idle rank costs no core (docs/perf/distributed-scaling.md).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <thread>

#include "sluice/core/mutex.h"
#include "sluice/distribute/mpi.h"

namespace sluice::distribute {
namespace {

constexpr int kSpinRounds = 256;
constexpr auto kMinIdle = std::chrono::microseconds(8);
constexpr auto kMaxIdle = std::chrono::microseconds(200);

// A pause instruction in a polling loop: never a system call (a yield on a
// loaded machine can give away a whole time slice).
inline void SpinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

Status MpiError(int rc, std::string_view what, int peer = -1) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  return errors::Unavailable("MPI ", what, " failed", peer >= 0 ? StrCat(" (peer rank ", peer, ")") : "", ": ",
                             std::string_view(text, static_cast<size_t>(len)));
}

// One operation, advanced by the communication thread only.
class Op {
 public:
  virtual ~Op() = default;
  // Advances the operation; true once it is finished (status set).
  virtual bool Step() = 0;
  Status status;
  // Set by a waiter that gave up (Cancel): an op that has not yet touched
  // MPI may then finish without doing anything.
  std::atomic<bool> abandoned{false};
  // Set by the communication thread, under the engine's lock, when Step
  // returned true.
  std::atomic<bool> done{false};

 protected:
  // Tests *req; true when it completed (or failed: status set).
  bool Test(MPI_Request* req, std::string_view what, int peer = -1, MPI_Status* st = MPI_STATUS_IGNORE) {
    int flag = 0;
    const int rc = MPI_Test(req, &flag, st);
    if (rc != MPI_SUCCESS) {
      status = MpiError(rc, what, peer);
      return true;
    }
    return flag != 0;
  }
  // Records a failed start; true (finished) when rc is an error.
  bool Failed(int rc, std::string_view what, int peer = -1) {
    if (rc == MPI_SUCCESS) return false;
    status = MpiError(rc, what, peer);
    return true;
  }
};

// The process's communication thread, started on first use and stopped
// (MPI finalised, if it initialised MPI) at exit.
class Engine {
 public:
  static Engine& Get() {
    static Engine* engine = new Engine();  // never destroyed: atexit stops it
    return *engine;
  }

  // Starts the thread once; the status of initialising MPI. Thread-safe.
  Status Start() SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    if (!started_) {
      started_ = true;
      thread_ = std::thread([this] { Loop(); });
      std::atexit([] { Engine::Get().Stop(); });
    }
    while (!init_done_) cv_.Wait(&mu_);
    return init_status_;
  }

  // Runs `op` on the thread and waits for it, or for Cancel of communicator
  // `comm_id` (the op is then abandoned).
  Status Run(const std::shared_ptr<Op>& op, int comm_id) SLUICE_EXCLUDES(mu_) {
    {
      MutexLock l(&mu_);
      if (stopped_) return errors::FailedPrecondition("MPI has been finalized (the process is exiting)");
      queue_.push_back(op);
      queued_.fetch_add(1);
      cv_.SignalAll();
    }
    // Most operations finish within microseconds: poll before sleeping, as a
    // wake-up on a busy machine can cost a scheduler time slice.
    for (int i = 0; i < kSpinRounds * 4 && !op->done.load(); ++i) SpinPause();
    MutexLock l(&mu_);
    while (!op->done.load()) {
      auto it = cancelled_.find(comm_id);
      if (it != cancelled_.end()) {
        op->abandoned.store(true);
        return it->second;
      }
      if (stopped_) return errors::FailedPrecondition("MPI has been finalized (the process is exiting)");
      cv_.Wait(&mu_);
    }
    return op->status;
  }

  // Queues `op` without waiting (freeing a communicator).
  void Post(std::shared_ptr<Op> op) SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    if (stopped_) return;
    queue_.push_back(std::move(op));
    queued_.fetch_add(1);
    cv_.SignalAll();
  }

  void Cancel(int comm_id, Status why) SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    cancelled_.emplace(comm_id, std::move(why));
    cv_.SignalAll();
  }

  int NewCommId() SLUICE_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return next_comm_id_++;
  }

 private:
  Engine() = default;

  void Stop() SLUICE_EXCLUDES(mu_) {
    {
      MutexLock l(&mu_);
      if (!started_ || stopping_) return;
      stopping_ = true;
      cv_.SignalAll();
    }
    thread_.join();
  }

  void Initialize() {
    Status s;
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized) {
      s = errors::FailedPrecondition("MPI was already finalized");
    } else if (!initialized) {
      int provided = 0;
      const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      if (rc != MPI_SUCCESS) {
        s = MpiError(rc, "MPI_Init_thread");
      } else {
        owns_mpi_ = true;
      }
    } else {
      int provided = 0;
      MPI_Query_thread(&provided);
      if (provided < MPI_THREAD_SERIALIZED) {
        s = errors::FailedPrecondition(
            "MPI was initialised by another library with a thread level below MPI_THREAD_SERIALIZED; sluice makes "
            "its MPI calls on its own thread (initialise with MPI_THREAD_SERIALIZED or MULTIPLE)");
      }
    }
    MutexLock l(&mu_);
    init_status_ = s;
    init_done_ = true;
    cv_.SignalAll();
  }

  void Loop() SLUICE_EXCLUDES(mu_) {
    Initialize();
    {
      MutexLock l(&mu_);
      if (!init_status_.ok()) {
        stopped_ = true;
        return;
      }
    }
    std::vector<std::shared_ptr<Op>> active;
    int idle_rounds = 0;  // rounds in a row in which no op finished
    auto idle = kMinIdle;
    while (true) {
      // Idle: poll for new work a while before sleeping (see Run).
      for (int i = 0; i < kSpinRounds * 4 && active.empty() && queued_.load() == 0; ++i) SpinPause();
      {
        MutexLock l(&mu_);
        while (queue_.empty() && active.empty() && !stopping_) cv_.Wait(&mu_);
        if (stopping_ && queue_.empty()) break;
        for (auto& op : queue_) active.push_back(std::move(op));
        queued_.fetch_sub(static_cast<int>(queue_.size()));
        queue_.clear();
      }
      std::vector<std::shared_ptr<Op>> finished;
      for (size_t i = 0; i < active.size();) {
        if (active[i]->Step()) {
          finished.push_back(active[i]);
          active[i] = std::move(active.back());
          active.pop_back();
        } else {
          ++i;
        }
      }
      if (!finished.empty()) {
        MutexLock l(&mu_);
        for (const auto& op : finished) op->done.store(true);
        cv_.SignalAll();
        idle_rounds = 0;
        idle = kMinIdle;
        continue;
      }
      // Nothing finished: poll again at once for a while (Open MPI
      // progresses nonblocking collectives on a fraction of the MPI_Test
      // calls only), then wait with a growing timeout.
      if (++idle_rounds <= kSpinRounds) continue;
      MutexLock l(&mu_);
      if (queue_.empty() && !stopping_) {
        cv_.WaitFor(&mu_, idle);
        idle = std::min<std::chrono::microseconds>(idle * 2, kMaxIdle);
      }
    }
    // Exiting: what is still active waits on a peer that will not answer.
    if (owns_mpi_) MPI_Finalize();
    MutexLock l(&mu_);
    stopped_ = true;
    cv_.SignalAll();
  }

  std::thread thread_;
  bool owns_mpi_ = false;  // communication thread only
  std::atomic<int> queued_{0};  // queue_.size(), read without the lock

  Mutex mu_;
  CondVar cv_;
  // Protected by mu_.
  bool started_ SLUICE_GUARDED_BY(mu_) = false;
  bool init_done_ SLUICE_GUARDED_BY(mu_) = false;
  Status init_status_ SLUICE_GUARDED_BY(mu_);
  bool stopping_ SLUICE_GUARDED_BY(mu_) = false;
  bool stopped_ SLUICE_GUARDED_BY(mu_) = false;
  std::deque<std::shared_ptr<Op>> queue_ SLUICE_GUARDED_BY(mu_);
  std::map<int, Status> cancelled_ SLUICE_GUARDED_BY(mu_);
  int next_comm_id_ SLUICE_GUARDED_BY(mu_) = 0;
};

// ---- The operations.

class DupOp : public Op {
 public:
  bool Step() override {
    if (!started_) {
      started_ = true;
      if (Failed(MPI_Comm_idup(MPI_COMM_WORLD, &comm, &req_), "MPI_Comm_idup")) return true;
    }
    if (!Test(&req_, "MPI_Comm_idup")) return false;
    if (!status.ok()) return true;
    if (Failed(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler")) return true;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    return true;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;

 private:
  bool started_ = false;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

class FreeOp : public Op {
 public:
  explicit FreeOp(MPI_Comm comm) : comm_(comm) {}
  bool Step() override {
    MPI_Comm_free(&comm_);
    return true;
  }

 private:
  MPI_Comm comm_;
};

class BarrierOp : public Op {
 public:
  explicit BarrierOp(MPI_Comm comm) : comm_(comm) {}
  bool Step() override {
    if (!started_) {
      started_ = true;
      if (Failed(MPI_Ibarrier(comm_, &req_), "MPI_Ibarrier")) return true;
    }
    return Test(&req_, "MPI_Ibarrier");
  }

 private:
  MPI_Comm comm_;
  bool started_ = false;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

class AllreduceOp : public Op {
 public:
  AllreduceOp(MPI_Comm comm, int64_t value, ReduceOp op) : comm_(comm), in_(value), op_(op) {}
  bool Step() override {
    if (!started_) {
      started_ = true;
      MPI_Op op = op_ == ReduceOp::kSum ? MPI_SUM : op_ == ReduceOp::kMin ? MPI_MIN : MPI_MAX;
      if (Failed(MPI_Iallreduce(&in_, &out, 1, MPI_INT64_T, op, comm_, &req_), "MPI_Iallreduce")) return true;
    }
    return Test(&req_, "MPI_Iallreduce");
  }
  int64_t out = 0;

 private:
  MPI_Comm comm_;
  int64_t in_;
  ReduceOp op_;
  bool started_ = false;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

// Two phases: the length, then the bytes.
class BcastOp : public Op {
 public:
  BcastOp(MPI_Comm comm, std::string bytes, int root, bool is_root)
      : bytes(std::move(bytes)), comm_(comm), root_(root), is_root_(is_root) {}
  bool Step() override {
    if (phase_ == 0) {
      length_ = bytes.size();
      if (Failed(MPI_Ibcast(&length_, 1, MPI_UINT64_T, root_, comm_, &req_), "MPI_Ibcast", root_)) return true;
      phase_ = 1;
    }
    if (phase_ == 1) {
      if (!Test(&req_, "MPI_Ibcast", root_)) return false;
      if (!status.ok() || length_ == 0) {
        if (!is_root_) bytes.clear();
        return true;
      }
      if (length_ > static_cast<uint64_t>(INT_MAX)) {
        status = errors::InvalidArgument("Bcast of ", length_, " bytes: at most 2 GiB per message");
        return true;
      }
      if (!is_root_) bytes.assign(length_, '\0');
      if (Failed(MPI_Ibcast(bytes.data(), static_cast<int>(length_), MPI_BYTE, root_, comm_, &req_), "MPI_Ibcast",
                 root_)) {
        return true;
      }
      phase_ = 2;
    }
    return Test(&req_, "MPI_Ibcast", root_);
  }
  std::string bytes;

 private:
  MPI_Comm comm_;
  int root_;
  bool is_root_;
  int phase_ = 0;
  uint64_t length_ = 0;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

// Two phases: every rank's length, then the bytes (MPI_Iallgatherv).
class AllgatherOp : public Op {
 public:
  AllgatherOp(MPI_Comm comm, int size, std::string bytes)
      : comm_(comm), mine_(std::move(bytes)), lengths_(static_cast<size_t>(size)) {}
  bool Step() override {
    if (phase_ == 0) {
      if (mine_.size() > static_cast<size_t>(INT_MAX)) {
        status = errors::InvalidArgument("Allgather of ", mine_.size(), " bytes: at most 2 GiB per rank");
        return true;
      }
      length_ = static_cast<int>(mine_.size());
      if (Failed(MPI_Iallgather(&length_, 1, MPI_INT, lengths_.data(), 1, MPI_INT, comm_, &req_), "MPI_Iallgather")) {
        return true;
      }
      phase_ = 1;
    }
    if (phase_ == 1) {
      if (!Test(&req_, "MPI_Iallgather")) return false;
      if (!status.ok()) return true;
      int64_t total = 0;
      for (int n : lengths_) {
        displs_.push_back(static_cast<int>(total));
        total += n;
        if (total > INT_MAX) {
          status = errors::InvalidArgument("Allgather of ", total, "+ bytes: at most 2 GiB in all");
          return true;
        }
      }
      all_.assign(static_cast<size_t>(total), '\0');
      if (Failed(MPI_Iallgatherv(mine_.data(), length_, MPI_BYTE, all_.data(), lengths_.data(), displs_.data(),
                                 MPI_BYTE, comm_, &req_),
                 "MPI_Iallgatherv")) {
        return true;
      }
      phase_ = 2;
    }
    if (!Test(&req_, "MPI_Iallgatherv")) return false;
    for (size_t r = 0; r < lengths_.size(); ++r) {
      out.push_back(all_.substr(static_cast<size_t>(displs_[r]), static_cast<size_t>(lengths_[r])));
    }
    return true;
  }
  std::vector<std::string> out;

 private:
  MPI_Comm comm_;
  std::string mine_;
  int length_ = 0;
  std::vector<int> lengths_, displs_;
  std::string all_;
  int phase_ = 0;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

class SendOp : public Op {
 public:
  SendOp(MPI_Comm comm, int dest, int tag, std::string_view bytes)
      : comm_(comm), dest_(dest), tag_(tag), bytes_(bytes) {}
  bool Step() override {
    if (!started_) {
      started_ = true;
      if (Failed(MPI_Isend(bytes_.data(), static_cast<int>(bytes_.size()), MPI_BYTE, dest_, tag_, comm_, &req_),
                 "MPI_Isend", dest_)) {
        return true;
      }
    }
    return Test(&req_, "MPI_Isend", dest_);
  }

 private:
  MPI_Comm comm_;
  int dest_, tag_;
  std::string bytes_;  // owned: the caller may return before the send completes
  bool started_ = false;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

// MPI_Improbe until a message matches, then MPI_Imrecv straight into an
// aligned tensor of its size.
class RecvOp : public Op {
 public:
  RecvOp(MPI_Comm comm, int source, int tag) : comm_(comm), source_(source), tag_(tag) {}
  bool Step() override {
    if (!matched_) {
      if (abandoned.load()) return true;
      int flag = 0;
      MPI_Message msg;
      MPI_Status st;
      const int rc = MPI_Improbe(source_ == kAnySource ? MPI_ANY_SOURCE : source_, tag_, comm_, &flag, &msg, &st);
      if (Failed(rc, "MPI_Improbe", source_)) return true;
      if (!flag) return false;
      matched_ = true;
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      out.source = st.MPI_SOURCE;
      out.tag = st.MPI_TAG;
      out.data = Tensor(DType::kUInt8, TensorShape{count});
      if (Failed(MPI_Imrecv(out.data.raw_data(), count, MPI_BYTE, &msg, &req_), "MPI_Imrecv", out.source)) {
        return true;
      }
    }
    return Test(&req_, "MPI_Imrecv", out.source);
  }
  Message out;

 private:
  MPI_Comm comm_;
  int source_, tag_;
  bool matched_ = false;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

// ---- The communicator.

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, int rank, int size, int local_rank, int id)
      : comm_(comm), rank_(rank), size_(size), local_rank_(local_rank), id_(id) {}
  ~MpiCommunicator() override { Engine::Get().Post(std::make_shared<FreeOp>(comm_)); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }

  Status Barrier() override { return Run(std::make_shared<BarrierOp>(comm_)); }

  Status Bcast(std::string* bytes, int root) override {
    SLUICE_RETURN_IF_ERROR(CheckRank(root));
    auto op = std::make_shared<BcastOp>(comm_, rank_ == root ? *bytes : std::string(), root, rank_ == root);
    SLUICE_RETURN_IF_ERROR(Run(op));
    *bytes = std::move(op->bytes);
    return Status();
  }

  Result<std::vector<std::string>> Allgather(std::string_view bytes) override {
    auto op = std::make_shared<AllgatherOp>(comm_, size_, std::string(bytes));
    SLUICE_RETURN_IF_ERROR(Run(op));
    return std::move(op->out);
  }

  Result<int64_t> Allreduce(int64_t value, ReduceOp reduce) override {
    auto op = std::make_shared<AllreduceOp>(comm_, value, reduce);
    SLUICE_RETURN_IF_ERROR(Run(op));
    return op->out;
  }

  Status Send(int dest, int tag, std::string_view bytes) override {
    SLUICE_RETURN_IF_ERROR(CheckRank(dest));
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
      return errors::InvalidArgument("message of ", bytes.size(), " bytes: at most 2 GiB");
    }
    return Run(std::make_shared<SendOp>(comm_, dest, tag, bytes));
  }

  Result<Message> Recv(int source, int tag) override {
    if (source != kAnySource) SLUICE_RETURN_IF_ERROR(CheckRank(source));
    auto op = std::make_shared<RecvOp>(comm_, source, tag);
    SLUICE_RETURN_IF_ERROR(Run(op));
    return std::move(op->out);
  }

  void Cancel(Status why) override { Engine::Get().Cancel(id_, std::move(why)); }

 private:
  Status Run(const std::shared_ptr<Op>& op) { return Engine::Get().Run(op, id_); }
  Status CheckRank(int r) const {
    if (r < 0 || r >= size_) return errors::InvalidArgument("rank ", r, " is not in [0, ", size_, ")");
    return Status();
  }

  const MPI_Comm comm_;
  const int rank_, size_, local_rank_, id_;
};

}  // namespace

Result<std::shared_ptr<Communicator>> MakeMpiCommunicator() {
  Engine& engine = Engine::Get();
  SLUICE_RETURN_IF_ERROR(engine.Start());
  auto dup = std::make_shared<DupOp>();
  const int id = engine.NewCommId();
  SLUICE_RETURN_IF_ERROR(engine.Run(dup, id));
  SLUICE_ASSIGN_OR_RETURN(EnvTopology env, DetectTopology());
  const int local_rank = env.launcher == Launcher::kMpi ? env.local_rank : dup->rank;
  return std::shared_ptr<Communicator>(std::make_shared<MpiCommunicator>(dup->comm, dup->rank, dup->size, local_rank, id));
}

Result<InputContext> InitMpi() {
  SetMpiCommunicatorFactory(&MakeMpiCommunicator);
  return Init();
}

}  // namespace sluice::distribute
