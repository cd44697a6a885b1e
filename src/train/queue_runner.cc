#include "sluice/train/queue_runner.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "core/fork.h"
#include "sluice/core/cancellation.h"
#include "sluice/core/mutex.h"

namespace sluice::train {

// What the runner and its threads share.
struct QueueRunner::Shared {
  // Constant after construction.
  std::shared_ptr<queue::Queue> queue;
  std::vector<std::function<Status()>> enqueue_ops;
  std::vector<std::string> op_names;
  std::function<Status()> close_op;
  std::function<Status()> cancel_op;
  std::vector<Code> closed_codes;

  // Cancelled by the runner's destructor: wakes the close-on-stop threads.
  CancellationManager shutdown;
  // Set (under mu) by the destructor; op threads check it before each step.
  std::atomic<bool> shutting_down{false};

  Mutex mu;
  CondVar threads_done_cv;  // signalled when `live_threads` drops
  // Protected by mu:
  // Op threads of the last CreateThreads that have not ended (TF's
  // runs-per-session count): created, started or not.
  int runs SLUICE_GUARDED_BY(mu) = 0;
  // CreateThreads calls that made threads.
  int64_t thread_sets SLUICE_GUARDED_BY(mu) = 0;
  // The last op thread of the latest set ran the close op: the input ended.
  bool input_exhausted SLUICE_GUARDED_BY(mu) = false;
  // The fork generation of the latest CreateThreads (see ~QueueRunner).
  uint64_t generation SLUICE_GUARDED_BY(mu) = 0;
  // Threads inside their body right now (all kinds).
  int live_threads SLUICE_GUARDED_BY(mu) = 0;
  int live_op_threads SLUICE_GUARDED_BY(mu) = 0;
  std::vector<Status> exceptions SLUICE_GUARDED_BY(mu);

  bool IsClosedCode(const Status& status) const {
    return std::find(closed_codes.begin(), closed_codes.end(), status.code()) != closed_codes.end();
  }

  // Counts the calling thread in, unless the runner is being destroyed.
  bool BeginThread(bool op_thread) SLUICE_EXCLUDES(mu) {
    MutexLock lock(&mu);
    if (shutting_down.load(std::memory_order_relaxed)) return false;
    ++live_threads;
    if (op_thread) ++live_op_threads;
    return true;
  }
  void EndThread(bool op_thread) SLUICE_EXCLUDES(mu) {
    MutexLock lock(&mu);
    --live_threads;
    if (op_thread) --live_op_threads;
    threads_done_cv.SignalAll();
  }

  // `coord`: null without a coordinator; `coord_gone`: there was one, but it
  // was destroyed before the thread started (which then does nothing).
  void RunOpThread(size_t op, const std::shared_ptr<Coordinator>& coord, bool coord_gone)
      SLUICE_EXCLUDES(mu);
  void RunCloseOnStopThread(Coordinator& coord) SLUICE_EXCLUDES(mu);
};

namespace {
// The runner whose thread this is, so that a destructor running on one of
// them does not wait for itself.
thread_local const void* current_runner = nullptr;
}  // namespace

// TF's QueueRunner._run.
void QueueRunner::Shared::RunOpThread(size_t op, const std::shared_ptr<Coordinator>& coord,
                                      bool coord_gone) {
  bool counted = false;  // `runs` already decremented
  Status error;
  if (!coord_gone && BeginThread(/*op_thread=*/true)) {
    current_runner = this;
    while (!shutting_down.load(std::memory_order_acquire)) {
      if (coord != nullptr && coord->should_stop()) break;
      Status status = enqueue_ops[op]();
      if (status.ok()) continue;
      // The runner is being destroyed: its own cancel op failed this step.
      if (shutting_down.load(std::memory_order_acquire)) break;
      if (!IsClosedCode(status)) {
        error = std::move(status);
        break;
      }
      // The input is exhausted. The last op thread to see it closes the
      // queue, staying counted until it has, so that CreateThreads cannot
      // start new threads on a queue about to close.
      bool last;
      {
        MutexLock lock(&mu);
        last = runs == 1;
        if (!last) --runs;
      }
      if (last) {
        close_op().IgnoreError();  // e.g. already closed
        MutexLock lock(&mu);
        input_exhausted = true;
        --runs;
      }
      counted = true;
      break;
    }
    if (!error.ok()) {
      // With a coordinator the error stops it; after its Join (or without
      // one) it would be lost, so it is kept here.
      Status unreported = coord != nullptr ? coord->RequestStop(error) : error;
      if (!unreported.ok()) {
        MutexLock lock(&mu);
        exceptions.push_back(std::move(unreported));
      }
    }
    current_runner = nullptr;
    EndThread(/*op_thread=*/true);
  }
  if (!counted) {
    MutexLock lock(&mu);
    --runs;
  }
}

// TF's QueueRunner._close_on_stop.
void QueueRunner::Shared::RunCloseOnStopThread(Coordinator& coord) {
  if (!BeginThread(/*op_thread=*/false)) return;
  current_runner = this;
  if (coord.WaitForStop(std::nullopt, &shutdown)) cancel_op().IgnoreError();
  current_runner = nullptr;
  EndThread(/*op_thread=*/false);
}

Result<std::shared_ptr<QueueRunner>> QueueRunner::Create(QueueRunnerOptions options) {
  if (options.queue == nullptr || options.enqueue_ops.empty()) {
    return errors::InvalidArgument("Must provide queue and enqueue_ops.");
  }
  for (const auto& op : options.enqueue_ops) {
    if (!op) return errors::InvalidArgument("QueueRunner: an enqueue op is empty");
  }
  const size_t n = options.enqueue_ops.size();
  if (!options.enqueue_op_names.empty() && options.enqueue_op_names.size() != n) {
    return errors::InvalidArgument("QueueRunner: ", options.enqueue_op_names.size(),
                                   " enqueue op names for ", n, " enqueue ops");
  }
  const std::vector<Code>& codes = options.queue_closed_codes;
  if (codes.empty() || std::find(codes.begin(), codes.end(), Code::kOk) != codes.end()) {
    return errors::InvalidArgument("queue_closed_codes must be a non-empty list of error codes");
  }
  auto shared = std::make_shared<Shared>();
  shared->queue = std::move(options.queue);
  shared->enqueue_ops = std::move(options.enqueue_ops);
  shared->op_names = std::move(options.enqueue_op_names);
  for (size_t i = shared->op_names.size(); i < n; ++i) {
    shared->op_names.push_back(i == 0 ? std::string("enqueue") : StrCat("enqueue_", i));
  }
  shared->close_op = options.close_op ? std::move(options.close_op)
                                      : [q = shared->queue] { return q->Close(false); };
  shared->cancel_op = options.cancel_op ? std::move(options.cancel_op)
                                        : [q = shared->queue] { return q->Close(true); };
  shared->closed_codes = std::move(options.queue_closed_codes);
  return std::shared_ptr<QueueRunner>(new QueueRunner(std::move(shared)));
}

QueueRunner::QueueRunner(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

QueueRunner::~QueueRunner() {
  Shared& s = *shared_;
  bool ops_running;
  {
    MutexLock lock(&s.mu);
    if (s.thread_sets > 0 && s.generation != sluice::internal::ForkGeneration()) {
      // A fork() child: the threads never existed here, and the locks they
      // held (the queue's, the ops') may never be released. Touch nothing.
      new std::shared_ptr<Shared>(shared_);  // NOLINT: leaked on purpose
      return;
    }
    s.shutting_down.store(true, std::memory_order_release);
    ops_running = s.live_op_threads > 0;
  }
  s.shutdown.StartCancel();                      // close-on-stop threads return
  if (ops_running) s.cancel_op().IgnoreError();  // enqueues blocked on the queue fail
  const int self = current_runner == &s ? 1 : 0;
  MutexLock lock(&s.mu);
  while (s.live_threads > self) s.threads_done_cv.Wait(&s.mu);
}

std::vector<std::shared_ptr<Thread>> QueueRunner::CreateThreads(std::shared_ptr<Coordinator> coord,
                                                                bool start) {
  const size_t n = shared_->enqueue_ops.size();
  {
    MutexLock lock(&shared_->mu);
    if (shared_->runs > 0) return {};
    shared_->runs = static_cast<int>(n);
    ++shared_->thread_sets;
    shared_->input_exhausted = false;
    shared_->generation = sluice::internal::ForkGeneration();
    shared_->exceptions.clear();
  }
  const std::string prefix = StrCat("QueueRunnerThread-", name(), "-");
  // A thread holds its coordinator only while it runs: a registered thread
  // that is never started must not keep the coordinator that holds it alive.
  const std::weak_ptr<Coordinator> weak_coord = coord;
  const bool has_coord = coord != nullptr;
  std::vector<std::shared_ptr<Thread>> threads;
  threads.reserve(n + 1);
  for (size_t i = 0; i < n; ++i) {
    threads.push_back(
        Thread::Create(prefix + shared_->op_names[i], [s = shared_, i, weak_coord, has_coord] {
          const std::shared_ptr<Coordinator> coord = weak_coord.lock();
          s->RunOpThread(i, coord, has_coord && coord == nullptr);
        }));
  }
  if (has_coord) {
    threads.push_back(Thread::Create(prefix + "close_on_stop", [s = shared_, weak_coord] {
      if (const std::shared_ptr<Coordinator> coord = weak_coord.lock()) {
        s->RunCloseOnStopThread(*coord);
      }
    }));
    for (const auto& t : threads) coord->RegisterThread(t);
  }
  if (start) {
    for (const auto& t : threads) t->Start();
  }
  return threads;
}

bool QueueRunner::running() const {
  MutexLock lock(&shared_->mu);
  return shared_->runs > 0 && shared_->generation == sluice::internal::ForkGeneration();
}

bool QueueRunner::has_run() const {
  MutexLock lock(&shared_->mu);
  return shared_->thread_sets > 0;
}

bool QueueRunner::input_exhausted() const {
  MutexLock lock(&shared_->mu);
  return shared_->input_exhausted;
}

std::vector<Status> QueueRunner::exceptions_raised() const {
  MutexLock lock(&shared_->mu);
  return shared_->exceptions;
}

const std::shared_ptr<queue::Queue>& QueueRunner::queue() const { return shared_->queue; }
const std::string& QueueRunner::name() const { return shared_->queue->name(); }
size_t QueueRunner::num_enqueue_ops() const { return shared_->enqueue_ops.size(); }
const std::vector<std::string>& QueueRunner::enqueue_op_names() const { return shared_->op_names; }
const std::vector<Code>& QueueRunner::queue_closed_codes() const { return shared_->closed_codes; }

}  // namespace sluice::train
