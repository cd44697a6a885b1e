// Thread: a named thread that can be joined with a deadline and asked whether
// it is still running: the handle a Coordinator registers and joins
// (Python's threading.Thread, as tf.train.Coordinator uses it).
//
// std::thread cannot be joined with a timeout, so a Thread records "finished"
// under its own lock when its body returns, and joiners wait on a condition
// variable for that. The body runs once, on a new OS thread, from Start()
// (Python's daemon flag has no meaning here; see the destructor).
//
// Ownership: Threads are shared (std::shared_ptr<Thread>): a Coordinator, a
// QueueRunner and the caller may all hold the same one. The body is owned by
// the thread and destroyed on it as soon as it returns, so whatever it
// captured is released then, before the thread counts as finished. The
// bookkeeping the OS thread touches is shared with it, so no handle's
// destruction leaves it touching freed memory. A thread whose last handle is
// dropped while it runs goes on as a daemon (Python's daemon threads; a
// Coordinator's stragglers); owners that need it finished join it first, as
// QueueRunner's destructor does. The body must then own what it uses.
//
// Thread-safety: every method is thread-safe. The body must report errors by
// other means (a Status to a Coordinator); it must not throw.
#ifndef SLUICE_TRAIN_THREAD_H_
#define SLUICE_TRAIN_THREAD_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace sluice::train {

class Thread {
 public:
  using Clock = std::chrono::steady_clock;

  // A thread that will run `body` once Start() is called. `name` labels it in
  // messages (Coordinator stragglers) and, truncated to 15 characters, in the
  // OS (top -H). REQUIRES: `body` is callable.
  static std::shared_ptr<Thread> Create(std::string name, std::function<void()> body);

  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;

  // Reaps a finished thread. A thread still running (or dropping its own last
  // handle) is detached: it finishes on its own, touching only what it owns.
  // Never blocks for long.
  ~Thread();

  // Starts the OS thread running the body. Returns false, doing nothing, if
  // the thread was already started. Never blocks. Throws std::system_error
  // when the OS cannot create a thread (as std::thread does). Thread-safe.
  bool Start();

  // Waits until the body has returned. Returns at once if the thread was never
  // started (like Coordinator.join in TF, a thread that is not alive counts as
  // done). REQUIRES: not called from this thread itself. Thread-safe.
  void Join();
  // As Join, but gives up at `deadline`. Returns true if the thread is not
  // alive (finished or never started). Thread-safe.
  bool JoinUntil(Clock::time_point deadline);
  bool JoinFor(std::chrono::nanoseconds timeout);

  // Runs `callback` once the body has returned: on this thread, right after
  // it, holding no lock; or at once on the caller if it already has (or if
  // the thread finished). Not run if the thread is never started. Callbacks
  // must be short and must not block: a Coordinator uses one to wake its
  // join. Thread-safe.
  void AddExitCallback(std::function<void()> callback);

  // Constant after construction.
  const std::string& name() const { return name_; }
  // Started, and the body has not returned yet. In a fork() child, a thread
  // started before the fork is not alive (it does not exist there), and
  // Join/JoinUntil return at once for it. Thread-safe.
  bool is_alive() const;
  bool started() const;
  // The body has returned. Thread-safe.
  bool finished() const;
  // True when called from this very thread. Thread-safe.
  bool is_current_thread() const;

 private:
  struct State;
  Thread(std::string name, std::function<void()> body);

  const std::string name_;
  // Shared with the running OS thread; holds the body until Start() and the
  // std::thread object after it.
  const std::shared_ptr<State> state_;
};

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_THREAD_H_
