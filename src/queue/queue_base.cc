#include "queue/queue_base.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>
#include <utility>

#include "core/bulk_copy.h"
#include "queue/spin.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace sluice::queue {
namespace {

using Clock = std::chrono::steady_clock;

// How long an attempt's owner waits before it sleeps: it spins for the
// first third, then yields the CPU between checks (with more threads than
// CPUs, the thread that will complete the attempt may be waiting for this
// one). A hand-off usually comes sooner than a futex sleep and wake-up would
// take. Bounded by time, not iterations: a pause's length varies between
// CPUs. See docs/perf/queue-waiting.md.
constexpr auto kSpinTime = std::chrono::microseconds(30);

// Retries of a subclass's lock-free path that found the queue full or empty,
// before taking the lock: when both sides are busy, the other side usually
// makes room (or an element) within a few hundred nanoseconds.
constexpr int kFastSpins = 128;
// The same for enqueue_many / dequeue_many: the other side must move a
// whole batch before such a call can go on, so it yields sooner
// (docs/perf/queue-waiting.md).
constexpr int kFastSpinsMany = 16;
// Then yields and retries this many times: when threads outnumber CPUs, the
// thread that would make room (or an element) is often not running, and a
// yield lets it run without the lock and the attempt machinery.
constexpr int kFastYields = 4;

// Between two lock-free retries: pause (`spins` times), then yield; false
// once both are used up.
inline bool FastBackoff(int spin, int spins) {
  if (spin < spins) {
    CpuRelax();
    return true;
  }
  if (spin < spins + kFastYields) {
    std::this_thread::yield();
    return true;
  }
  return false;
}

// Sleeps while *word == expected, up to `timeout` (nullptr: no limit). May
// return spuriously.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, const timespec* timeout) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, timeout, nullptr, 0);
#else
  (void)timeout;
  word->wait(expected, std::memory_order_acquire);
#endif
}

// Wakes one sleeper on `word`. The word may belong to an attempt whose owner
// has already returned: a futex wake on a stale address is harmless (it can
// only cause a spurious wake-up, which every waiter tolerates), the same
// guarantee that lets POSIX semaphores be destroyed right after sem_wait.
void FutexWake(std::atomic<uint32_t>* word) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
#else
  word->notify_one();
#endif
}

timespec ToTimespec(Clock::duration d) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1000000000);
  ts.tv_nsec = static_cast<long>(ns % 1000000000);
  return ts;
}

uint64_t NextQueueId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

// One blocking call, on its owner's stack.
struct QueueBase::Attempt {
  enum Kind : uint8_t { kEnqueue, kEnqueueMany, kClose, kDequeue };

  explicit Attempt(Kind k) : kind(k) {}
  bool is_dequeue() const { return kind == kDequeue; }

  const Kind kind;
  // Protected by the queue's mu_ while in a line:
  Attempt* prev = nullptr;
  Attempt* next = nullptr;
  bool completed = false;
  Status status;
  Element input;             // enqueue: the element or the batch
  int64_t batch = 0;         // enqueue_many: rows in `input`
  int64_t next_row = 0;      // enqueue_many: rows admitted so far
  int64_t requested = 0;     // dequeue: elements asked for
  bool up_to = false;        // dequeue_up_to
  std::vector<Piece> held;   // dequeue: elements collected...
  int64_t held_count = 0;    // ...this many in all
  // kPending, then kSleeping once the owner sleeps on it (so a completer
  // knows a futex wake is needed), then kDone once completed and released by
  // its completer, after which only the owner touches the attempt.
  static constexpr uint32_t kPending = 0, kSleeping = 2, kDone = 1;
  std::atomic<uint32_t> state{kPending};
};

// The attempts completed under the lock, to wake after unlocking. Inline
// storage: the common case completes one or two.
class QueueBase::WakeList {
 public:
  void push_back(Attempt* a) {
    if (n_ < kInline) {
      inline_[n_++] = a;
    } else {
      more_.push_back(a);
    }
  }
  bool empty() const { return n_ == 0; }
  template <class F>
  void ForEach(F f) const {
    for (size_t i = 0; i < n_; ++i) f(inline_[i]);
    for (Attempt* a : more_) f(a);
  }

 private:
  static constexpr size_t kInline = 4;
  Attempt* inline_[kInline];
  size_t n_ = 0;
  std::vector<Attempt*> more_;
};

// Holds mu_ around a section that touches storage or the lines, with the
// subclass's BeginLocked / EndLocked around it.
class SLUICE_SCOPED_CAPABILITY QueueBase::StorageLock {
 public:
  explicit StorageLock(QueueBase* q) SLUICE_ACQUIRE(q->mu_) : q_(q) {
    q_->mu_.Lock();
    q_->BeginLocked();
  }
  ~StorageLock() SLUICE_RELEASE() {
    q_->EndLocked(q_->enqueuers_.empty() && q_->dequeuers_.empty() && !q_->closed_);
    q_->mu_.Unlock();
  }
  StorageLock(const StorageLock&) = delete;
  StorageLock& operator=(const StorageLock&) = delete;

 private:
  QueueBase* const q_;
};

// Wakes the attempts of a WakeList when it goes out of scope (after the
// lock declared after it).
struct QueueBase::WakeOnExit {
  const WakeList* completed;
  ~WakeOnExit() { Wake(*completed, nullptr); }
};

QueueBase::QueueBase(std::string name, int32_t capacity, std::vector<DType> dtypes,
                     std::vector<PartialShape> shapes, std::vector<std::string> names)
    : Queue(std::move(name), capacity < 0 ? kUnbounded : capacity, std::move(dtypes), std::move(shapes),
            std::move(names)),
      id_(NextQueueId()) {}

QueueBase::~QueueBase() = default;

Status QueueBase::Initialize() {
  if (dtypes().empty()) return errors::InvalidArgument("Empty component types for queue ", name());
  for (DType d : dtypes()) {
    if (DTypeSize(d) == 0) return errors::InvalidArgument("Invalid component type for queue ", name());
  }
  if (!shapes().empty() && shapes().size() != dtypes().size()) {
    return errors::InvalidArgument("Different number of component types.  Types: ", dtypes().size(),
                                   ", Shapes: ", shapes().size());
  }
  if (!shapes().empty() &&
      std::all_of(shapes().begin(), shapes().end(), [](const PartialShape& p) { return p.fully_defined(); })) {
    for (const PartialShape& p : shapes()) exact_shapes_.push_back(p.ToTensorShape());
  }
  if (!names().empty() && names().size() != dtypes().size()) {
    return errors::InvalidArgument("Queue names must have the same length as dtypes: ", names().size(),
                                   " names, ", dtypes().size(), " dtypes");
  }
  return Status();
}

// ---------------------------------------------------------------------------
// Lines

void QueueBase::Append(Line* line, Attempt* a) {
  a->prev = line->tail;
  a->next = nullptr;
  if (line->tail) {
    line->tail->next = a;
  } else {
    line->head = a;
  }
  line->tail = a;
}

void QueueBase::Remove(Line* line, Attempt* a) {
  (a->prev ? a->prev->next : line->head) = a->next;
  (a->next ? a->next->prev : line->tail) = a->prev;
  a->prev = a->next = nullptr;
}

// ---------------------------------------------------------------------------
// Validation

bool QueueBase::ShapeMatches(size_t component, const TensorShape& shape) const {
  if (!exact_shapes_.empty()) return exact_shapes_[component] == shape;
  const PartialShape& declared = shapes()[component];
  return declared.IsCompatibleWith(shape);
}

std::string QueueBase::ExpectedShape(size_t component, int64_t batch) const {
  const PartialShape& s = shapes()[component];
  return (batch < 0 ? s : s.WithFirstDim(batch)).DebugString();
}

Status QueueBase::ValidateElement(const Element& element) const {
  if (element.size() != dtypes().size()) {
    return errors::InvalidArgument("Wrong number of components in tuple. Expected ", dtypes().size(),
                                   ", got ", element.size());
  }
  for (size_t i = 0; i < element.size(); ++i) {
    if (element[i].dtype() != dtypes()[i]) {
      return errors::InvalidArgument("Type mismatch in tuple component ", i, ". Expected ",
                                     DTypeName(dtypes()[i]), ", got ", DTypeName(element[i].dtype()));
    }
    const bool matches = exact_shapes_.empty() ? shapes().empty() || ShapeMatches(i, element[i].shape())
                                               : exact_shapes_[i] == element[i].shape();
    if (!matches) {
      return errors::InvalidArgument("Shape mismatch in tuple component ", i, ". Expected ",
                                     ExpectedShape(i, -1), ", got ", element[i].shape().DebugString());
    }
  }
  return ValidateExtra(element, /*many=*/false);
}

Status QueueBase::ValidateBatch(const Element& batch) const {
  if (batch.size() != dtypes().size()) {
    return errors::InvalidArgument("Wrong number of components in tuple. Expected ", dtypes().size(),
                                   ", got ", batch.size());
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].dtype() != dtypes()[i]) {
      return errors::InvalidArgument("Type mismatch in tuple component ", i, ". Expected ",
                                     DTypeName(dtypes()[i]), ", got ", DTypeName(batch[i].dtype()));
    }
    if (batch[i].rank() < 1) {
      return errors::InvalidArgument("Enqueue many requires every component to have rank >= 1; component ",
                                     i, " has shape ", batch[i].shape().DebugString());
    }
  }
  const int64_t rows = batch[0].shape().dim(0);
  for (size_t i = 0; i < batch.size(); ++i) {
    const TensorShape& s = batch[i].shape();
    if (!shapes().empty()) {
      if (s.dim(0) != rows || !ShapeMatches(i, s.WithoutFirstDim())) {
        return errors::InvalidArgument("Shape mismatch in tuple component ", i, ". Expected ",
                                       ExpectedShape(i, rows), ", got ", s.DebugString());
      }
    } else if (s.dim(0) != rows) {
      return errors::InvalidArgument(
          "All input tensors must have the same size in the 0th dimension. Component ", i, " has ",
          s.dim(0), ", and should have ", rows);
    }
  }
  return ValidateExtra(batch, /*many=*/true);
}

// ---------------------------------------------------------------------------
// Public operations

Status QueueBase::Enqueue(Element element, const WaitOptions& wait) {
  return EnqueueImpl(std::move(element), /*many=*/false, wait);
}

Status QueueBase::EnqueueMany(Element batch, const WaitOptions& wait) {
  return EnqueueImpl(std::move(batch), /*many=*/true, wait);
}

Status QueueBase::EnqueueImpl(Element&& element, bool many, const WaitOptions& wait) {
  SLUICE_RETURN_IF_ERROR(many ? ValidateBatch(element) : ValidateElement(element));
  const int64_t rows = many ? element[0].shape().dim(0) : 1;
  if (rows == 0) return Status();  // an empty enqueue_many: even on a closed queue, as TF
  if (wait.cancellation && wait.cancellation->IsCancelled()) {
    return errors::Cancelled("Enqueue operation was cancelled");
  }
  // Lock-free path first; a full queue may drain within a few spins.
  for (int spin = 0;; ++spin) {
    const FastResult r = many ? TryEnqueueManyFast(element, rows) : TryEnqueueFast(element);
    if (r == FastResult::kDone) return Status();
    if (r == FastResult::kBusy || !FastBackoff(spin, many ? kFastSpinsMany : kFastSpins)) break;
  }
  if (!many) {
    // Fast path: nobody waits ahead and there is room. Same outcome as the
    // attempt machinery, without building an attempt.
    // `element` (moved from, or copied by a coalescing FIFOQueue) is
    // released after unlocking.
    WakeList completed;
    bool admitted = false;
    {
      StorageLock lock(this);
      if (enqueuers_.empty() && !closed_ && StoredLocked() < capacity()) {
        PushLocked(std::move(element));
        ++enqueued_;
        if (!dequeuers_.empty()) FlushLocked(&completed);
        admitted = true;
      }
    }
    if (admitted) {
      Wake(completed, nullptr);
      return Status();
    }
  }
  Attempt a(many ? Attempt::kEnqueueMany : Attempt::kEnqueue);
  a.batch = rows;
  a.input = std::move(element);
  Run(&a, wait);
  if (many && !a.status.ok()) {
    // The rows admitted before the error stay queued: say how many, so a
    // retry does not duplicate them.
    Status s(a.status.code(), StrCat(a.status.message(), " (enqueue_many enqueued ", a.next_row, " of ", rows,
                                     " rows)"));
    for (const auto& [key, value] : a.status.payloads()) s = s.WithPayload(key, value);
    return s.WithPayload(kRowsEnqueuedPayload, std::to_string(a.next_row));
  }
  return std::move(a.status);
}

Result<Element> QueueBase::Dequeue(const WaitOptions& wait) {
  if (wait.cancellation && wait.cancellation->IsCancelled()) {
    return errors::Cancelled("Dequeue operation was cancelled");
  }
  {
    Element out;
    for (int spin = 0;; ++spin) {
      const FastResult r = TryDequeueFast(&out);
      if (r == FastResult::kDone) return Result<Element>(std::move(out));
      if (r == FastResult::kBusy || !FastBackoff(spin, kFastSpins)) break;
    }
  }
  {
    // Fast path: nobody waits ahead and an element may be taken. The result
    // is built straight from PopLocked's element: two Element moves (~160
    // bytes each) instead of three through an optional.
    // `wake` is declared before `lock`, so it runs after unlocking.
    WakeList completed;
    WakeOnExit wake{&completed};
    StorageLock lock(this);
    if (dequeuers_.empty() && TakeableLocked() > 0) {
      Result<Element> out(PopLocked());
      ++dequeued_;
      if (!enqueuers_.empty()) FlushLocked(&completed);
      return out;
    }
  }
  Attempt a(Attempt::kDequeue);
  a.requested = 1;
  Run(&a, wait);
  if (!a.status.ok()) return std::move(a.status);
  if (!a.held[0].batched) return std::move(a.held[0].data);
  return PieceRow(a.held[0], 0);
}

Result<Element> QueueBase::DequeueMany(int64_t n, const WaitOptions& wait) {
  if (n < 0) return errors::InvalidArgument("DequeueManyOp requested ", n, " < 0 elements");
  return DequeueImpl(n, /*up_to=*/false, wait);
}

Result<Element> QueueBase::DequeueUpTo(int64_t n, const WaitOptions& wait) {
  if (n < 0) return errors::InvalidArgument("DequeueUpToOp requested ", n, " < 0 elements");
  return DequeueImpl(n, /*up_to=*/true, wait);
}

Result<Element> QueueBase::DequeueImpl(int64_t n, bool up_to, const WaitOptions& wait) {
  if (shapes().empty()) return errors::InvalidArgument(NoShapesMessage());
  if (n == 0) return EmptyBatch();
  if (wait.cancellation && wait.cancellation->IsCancelled()) {
    return errors::Cancelled("Dequeue operation was cancelled");
  }
  {
    Element out;
    for (int spin = 0;; ++spin) {
      const FastResult r = TryDequeueManyFast(n, &out);
      if (r == FastResult::kDone) return Result<Element>(std::move(out));
      if (r == FastResult::kBusy || !FastBackoff(spin, kFastSpinsMany)) break;
    }
  }
  {
    // Fast path: nobody waits ahead and n elements may be taken now (what the
    // attempt would do in one step). The pieces go into a per-thread vector
    // that keeps its capacity, so the call allocates nothing of its own; the
    // batch is assembled after unlocking.
    thread_local std::vector<Piece> pieces;
    WakeList completed;
    bool taken = false;
    {
      StorageLock lock(this);
      if (dequeuers_.empty() && TakeableLocked() >= n) {
        TakeLocked(n, &pieces);
        dequeued_ += n;
        if (!enqueuers_.empty()) FlushLocked(&completed);
        taken = true;
      }
    }
    if (taken) {
      Wake(completed, nullptr);
      struct ClearOnExit {  // drops the pieces' references, even if assembly throws
        std::vector<Piece>& v;
        ~ClearOnExit() { v.clear(); }
      } clear{pieces};
      return AssembleBatch(std::move(pieces), n);
    }
  }
  Attempt a(Attempt::kDequeue);
  a.requested = n;
  a.up_to = up_to;
  Run(&a, wait);
  if (!a.status.ok()) return std::move(a.status);
  return AssembleBatch(std::move(a.held), a.held_count);
}

Status QueueBase::Close(bool cancel_pending_enqueues, const WaitOptions& wait) {
  if (!cancel_pending_enqueues) {
    if (wait.cancellation && wait.cancellation->IsCancelled()) {
      return errors::Cancelled("Enqueue operation was cancelled");
    }
    Attempt a(Attempt::kClose);
    Run(&a, wait);
    return std::move(a.status);
  }
  WakeList completed;
  {
    StorageLock lock(this);
    closed_ = true;
    while (!enqueuers_.empty()) {
      Attempt* a = enqueuers_.head;
      Remove(&enqueuers_, a);
      CompleteLocked(a, errors::Cancelled("Enqueue operation was cancelled"), &completed);
    }
    FlushLocked(&completed);
  }
  Wake(completed, nullptr);
  return Status();
}

bool QueueBase::is_closed() const {
  MutexLock lock(&mu_);
  return closed_;
}

int32_t QueueBase::size() const {
  MutexLock lock(&mu_);
  return static_cast<int32_t>(StoredLocked());
}

QueueStats QueueBase::stats() const {
  QueueStats s;
  s.id = id_;
  s.name = name();
  s.type = std::string(type_name());
  s.capacity = capacity();
  s.min_after_dequeue = min_after_dequeue();
  // StorageLock: a subclass's lock-free path is stopped for the moment, so
  // that size and counters come from one state and agree. (Freezing and
  // thawing change no logical state: hence the const_cast.)
  StorageLock lock(const_cast<QueueBase*>(this));
  s.size = static_cast<int32_t>(StoredLocked());
  s.closed = closed_;
  int64_t fast_enqueued = 0, fast_dequeued = 0;
  FastCountsLocked(&fast_enqueued, &fast_dequeued);
  s.enqueued = enqueued_ + fast_enqueued;
  s.dequeued = dequeued_ + fast_dequeued;
  return s;
}

// ---------------------------------------------------------------------------
// The attempt machinery

void QueueBase::Run(Attempt* a, const WaitOptions& wait) {
  WakeList completed;
  bool done;
  {
    StorageLock lock(this);
    Append(a->is_dequeue() ? &dequeuers_ : &enqueuers_, a);
    FlushLocked(&completed);
    done = a->completed;
  }
  Wake(completed, a);
  if (!done) Wait(a, wait);
}

void QueueBase::Wait(Attempt* a, const WaitOptions& wait) {
  {
    const Clock::time_point start = Clock::now();
    const Clock::time_point yield_from = start + kSpinTime / 3;
    const Clock::time_point spin_until = start + kSpinTime;
    for (int i = 1;; ++i) {
      if (a->state.load(std::memory_order_acquire) == Attempt::kDone) return;
      if (i % 32 != 0) {
        CpuRelax();
        continue;
      }
      const Clock::time_point now = Clock::now();
      if (now >= spin_until) break;
      // Past the first stretch, let a thread of ours that is runnable on
      // this CPU (maybe the one that will complete the attempt) go first.
      if (now >= yield_from) std::this_thread::yield();
    }
  }
  CancellationManager* cm = wait.cancellation;
  CancellationManager::Token token = CancellationManager::kInvalidToken;
  if (cm != nullptr) {
    token = cm->NewToken();
    const char* message = a->is_dequeue() ? "Dequeue operation was cancelled" : "Enqueue operation was cancelled";
    if (!cm->RegisterCallback(token, [this, a, message] { Abandon(a, errors::Cancelled(message)); })) {
      token = CancellationManager::kInvalidToken;
      Abandon(a, errors::Cancelled(message));
    }
  }
  bool has_deadline = wait.deadline.has_value();
  const Clock::time_point deadline = wait.deadline.value_or(Clock::time_point::max());
  const bool checks = static_cast<bool>(wait.interrupt_check);
  Clock::time_point next_check = Clock::now() + wait.interrupt_check_interval;
  // From here on the owner sleeps: announce it, unless already done.
  uint32_t expected = Attempt::kPending;
  a->state.compare_exchange_strong(expected, Attempt::kSleeping, std::memory_order_acq_rel);
  while (a->state.load(std::memory_order_acquire) != Attempt::kDone) {
    if (!has_deadline && !checks) {
      FutexWait(&a->state, Attempt::kSleeping, nullptr);
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (has_deadline && now >= deadline) {
      has_deadline = false;
      Abandon(a, errors::DeadlineExceeded("Timed out waiting for notification"));
      continue;
    }
    if (checks && now >= next_check) {
      next_check = now + wait.interrupt_check_interval;
      Status s = wait.interrupt_check();
      if (!s.ok()) Abandon(a, std::move(s));
      continue;
    }
    Clock::time_point wake_at = checks ? next_check : deadline;
    if (has_deadline && deadline < wake_at) wake_at = deadline;
    const timespec rel = ToTimespec(wake_at - now);
    FutexWait(&a->state, Attempt::kSleeping, &rel);
  }
  // Waits for a cancellation callback that is running right now, so that it
  // is done with `a` before `a` goes away.
  if (token != CancellationManager::kInvalidToken) cm->DeregisterCallback(token);
}

void QueueBase::Abandon(Attempt* a, Status status) {
  WakeList completed;
  {
    StorageLock lock(this);
    if (a->completed) return;  // its completer wakes it
    Remove(a->is_dequeue() ? &dequeuers_ : &enqueuers_, a);
    // Unlike TensorFlow, which drops them, elements held by an abandoned
    // dequeue_many go back to the front, in order.
    if (!a->held.empty()) {
      RestoreLocked(&a->held);
      a->held_count = 0;
    }
    CompleteLocked(a, std::move(status), &completed);
    FlushLocked(&completed);  // the attempts behind it may now proceed
  }
  Wake(completed, nullptr);
}

void QueueBase::CompleteLocked(Attempt* a, Status status, WakeList* completed) {
  a->status = std::move(status);
  a->completed = true;
  completed->push_back(a);
}

void QueueBase::Wake(const WakeList& completed, const Attempt* self) {
  if (completed.empty()) return;
  completed.ForEach([self](Attempt* a) {
    if (a == self) return;
    // Only a sleeping owner needs the system call. `a` may be gone once the
    // exchange is done: see FutexWake.
    if (a->state.exchange(Attempt::kDone, std::memory_order_acq_rel) == Attempt::kSleeping) {
      FutexWake(&a->state);
    }
  });
}

void QueueBase::FlushLocked(WakeList* completed) {
  mu_.AssertHeld();
  bool progress = true;
  while (progress) {
    progress = false;
    if (!enqueuers_.empty()) {
      Attempt* a = enqueuers_.head;
      bool complete = false;
      progress |= RunEnqueueLocked(a, &complete);
      if (complete) {
        Remove(&enqueuers_, a);
        completed->push_back(a);
      }
    }
    if (!dequeuers_.empty()) {
      Attempt* a = dequeuers_.head;
      bool complete = false;
      progress |= RunDequeueLocked(a, &complete);
      if (complete) {
        Remove(&dequeuers_, a);
        completed->push_back(a);
      }
    }
  }
}

bool QueueBase::RunEnqueueLocked(Attempt* a, bool* complete) {
  mu_.AssertHeld();
  auto finish = [&](Status s) {
    a->status = std::move(s);
    a->completed = true;
    *complete = true;
    return true;
  };
  if (a->kind == Attempt::kClose) {
    if (closed_) return finish(errors::Cancelled("Queue '", name(), "' is already closed."));
    closed_ = true;
    return finish(Status());
  }
  if (closed_) return finish(errors::Cancelled(type_name(), " '", name(), "' is closed."));
  const int64_t cap = capacity();
  if (a->kind == Attempt::kEnqueue) {
    if (StoredLocked() >= cap) return false;
    PushLocked(std::move(a->input));
    ++enqueued_;
    return finish(Status());
  }
  const int64_t room = cap - StoredLocked();
  if (room <= 0) return false;
  const int64_t rows = std::min(room, a->batch - a->next_row);
  PushRowsLocked(a->input, a->next_row, rows);
  a->next_row += rows;
  enqueued_ += rows;
  if (a->next_row == a->batch) return finish(Status());
  return true;
}

bool QueueBase::RunDequeueLocked(Attempt* a, bool* complete) {
  mu_.AssertHeld();
  auto finish = [&](Status s) {
    mu_.AssertHeld();  // clang does not carry REQUIRES into lambdas
    if (s.ok()) dequeued_ += a->held_count;
    a->status = std::move(s);
    a->completed = true;
    *complete = true;
    return true;
  };
  auto take = [&](int64_t n) {
    mu_.AssertHeld();
    if (a->held.empty()) a->held.reserve(static_cast<size_t>(std::min<int64_t>(n, 1024)));
    TakeLocked(n, &a->held);
    a->held_count += n;
  };
  auto insufficient = [&](int64_t missing, int64_t stored) {
    return errors::OutOfRange(type_name(), " '", name(), "' is closed and has insufficient elements (requested ",
                              missing, ", current size ", stored, ")");
  };

  if (!dequeue_holds_partial()) {
    const int64_t stored = StoredLocked();
    if (stored >= a->requested) {
      take(a->requested);
      return finish(Status());
    }
    if (!closed_) return false;
    if (a->up_to && stored > 0) {
      take(stored);
      return finish(Status());
    }
    if (a->up_to && !enqueuers_.empty()) return false;
    return finish(insufficient(a->requested, stored));
  }

  bool progress = false;
  while (true) {
    const int64_t missing = a->requested - a->held_count;
    if (missing == 0) return finish(Status());
    const int64_t stored = StoredLocked();
    if (closed_ && stored < missing) {
      Status out_of_range = insufficient(missing, stored);
      if (!a->held.empty()) {
        RestoreLocked(&a->held);
        a->held_count = 0;
        progress = true;
      }
      const int64_t left = StoredLocked();
      if (a->up_to && left > 0) {
        take(left);
        return finish(Status());
      }
      if (a->up_to && !enqueuers_.empty()) return progress;
      return finish(std::move(out_of_range));
    }
    const int64_t takeable = TakeableLocked();
    if (takeable == 0) return progress;
    take(std::min(takeable, missing));
    progress = true;
  }
}

// ---------------------------------------------------------------------------
// Defaults for batch assembly

void QueueBase::PushRowsLocked(const Element& batch, int64_t begin, int64_t count) {
  for (int64_t r = begin; r < begin + count; ++r) {
    Element row;
    for (const Tensor& component : batch) row.push_back(component.Slice(r));
    PushLocked(std::move(row));
  }
}

void QueueBase::TakeLocked(int64_t n, std::vector<Piece>* out) {
  for (int64_t i = 0; i < n; ++i) out->push_back(Piece{PopLocked(), 1, false});
}

Element QueueBase::PieceRow(const Piece& piece, int64_t i) {
  if (!piece.batched) return piece.data;
  Element row;
  for (const Tensor& component : piece.data) row.push_back(component.Slice(i));
  return row;
}

Result<Element> QueueBase::AssembleBatch(std::vector<Piece>&& pieces, int64_t n) const {
  if (pieces.size() == 1 && pieces[0].batched) return std::move(pieces[0].data);  // zero-copy
  Element out;
  for (size_t c = 0; c < dtypes().size(); ++c) {
    const DType dtype = dtypes()[c];
    Tensor batch(dtype, exact_shapes_[c].WithFirstDim(n));
    if (dtype == DType::kString) {
      int64_t row = 0;
      for (const Piece& p : pieces) {
        p.data[c].CopyTo(batch.Slice(row, row + p.rows));
        row += p.rows;
      }
    } else {
      // The one copy of each element: straight into the batch buffer.
      char* dst = static_cast<char*>(batch.raw_data());
      for (const Piece& p : pieces) {
        const size_t bytes = p.data[c].TotalBytes();
        internal::BulkCopy(dst, p.data[c].raw_data(), bytes);  // large rows bypass the cache
        dst += bytes;
      }
    }
    out.push_back(std::move(batch));
  }
  return out;
}

Element QueueBase::EmptyBatch() const {
  Element out;
  for (size_t c = 0; c < dtypes().size(); ++c) {
    std::vector<int64_t> dims = shapes()[c].dims();
    for (int64_t& d : dims) d = std::max<int64_t>(d, 0);
    dims.insert(dims.begin(), 0);
    out.push_back(Tensor::Zeros(dtypes()[c], TensorShape(std::span<const int64_t>(dims))));
  }
  return out;
}

std::string QueueBase::NoShapesMessage() const {
  return StrCat(type_name(), "'s DequeueMany and DequeueUpTo require the components to have specified shapes.");
}

}  // namespace sluice::queue
