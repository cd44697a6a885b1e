// QueueRunner: threads that keep a queue filled (tf.train.QueueRunner;
// docs/spec/tf-queues.md sections 8 and 12).
//
// A runner holds a queue and a list of enqueue ops. CreateThreads() makes one
// thread per op (list an op twice for two threads); each thread runs its op
// over and over, one call per step, until the op returns an error:
//  * a "queue closed" code (default OutOfRange: the input is exhausted) ends
//    that thread quietly; the last op thread to end that way runs the close
//    op (default queue->Close(false): later dequeues drain what is left, then
//    get OutOfRange), so the queue is closed exactly once, after every
//    producer has finished;
//  * any other error requests a stop of the coordinator with it (so its Join
//    returns it); without a coordinator it is kept in exceptions_raised().
// With a coordinator, the op threads also end once it should stop, and one
// more thread waits for the stop and then runs the cancel op (default
// queue->Close(true), which fails the enqueues blocked on a full queue), so a
// stop never leaves producers blocked. Errors from the close and cancel ops
// are ignored (the queue may already be closed).
//
// Enqueue ops are functions returning Status; they usually enqueue into
// queue(), and may read from other queues (then add Cancelled to the closed
// codes when those may be cancelled). They run on the runner's threads only.
//
// Thread-safety: every method is thread-safe.
//
// Ownership: the threads share the runner's queue and ops, and hold their
// coordinator while they run, so they never touch freed memory. The
// destructor stops and joins the threads this runner created that are
// running: it makes them stop after their current step, runs the cancel op
// if an op thread is running (to unblock enqueues), wakes the close-on-stop
// threads, and waits until every op body has returned; threads started later
// do nothing. It blocks for as long as an op keeps blocking on something other
// than this queue. Once it has returned, no op of the runner runs again, but a
// thread's handle may report is_alive() for a moment longer while the thread
// itself exits (join the handles, e.g. Thread::JoinFor, to wait for that).
// In a fork() child, destroying a runner whose threads were made before the
// fork neither waits nor runs the cancel op: those threads, and whatever locks
// they held, are the parent's (the runner's state is leaked instead).
#ifndef SLUICE_TRAIN_QUEUE_RUNNER_H_
#define SLUICE_TRAIN_QUEUE_RUNNER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/queue/queue.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/thread.h"

namespace sluice::train {

struct QueueRunnerOptions {
  // The queue the ops fill. Required.
  std::shared_ptr<queue::Queue> queue;
  // One thread per op; each call is one step. Required, non-empty, none empty.
  std::vector<std::function<Status()>> enqueue_ops;
  // Names for thread names ("QueueRunnerThread-<queue name>-<op name>"): empty
  // (then "enqueue", "enqueue_1", ...) or one per op.
  std::vector<std::string> enqueue_op_names;
  // Empty: queue->Close(false).
  std::function<Status()> close_op;
  // Empty: queue->Close(true).
  std::function<Status()> cancel_op;
  // Codes meaning "the input is exhausted / the queue is closed". Non-empty.
  std::vector<Code> queue_closed_codes = {Code::kOutOfRange};
};

class QueueRunner {
 public:
  // InvalidArgument: "Must provide queue and enqueue_ops." (no queue, no ops),
  // an empty op, names not one per op, no queue_closed_codes.
  static Result<std::shared_ptr<QueueRunner>> Create(QueueRunnerOptions options);

  QueueRunner(const QueueRunner&) = delete;
  QueueRunner& operator=(const QueueRunner&) = delete;
  // Stops this runner's running threads and waits for their ops to return;
  // see the file comment.
  ~QueueRunner();

  // Creates one thread per enqueue op, plus, when `coord` is given, a
  // close-on-stop thread; names "QueueRunnerThread-<queue name>-<op name>"
  // and "QueueRunnerThread-<queue name>-close_on_stop". Registers them all
  // with `coord` and starts them if `start`. Clears exceptions_raised().
  // Returns {} and creates nothing while the op threads of an earlier call
  // are not all finished (threads created but never started count as
  // running). Never blocks. Throws std::system_error only if the OS cannot
  // create a thread.
  std::vector<std::shared_ptr<Thread>> CreateThreads(std::shared_ptr<Coordinator> coord = nullptr,
                                                     bool start = false);

  // True while op threads of the latest CreateThreads have not all ended
  // (created and not started counts). Thread-safe.
  bool running() const;
  // True once CreateThreads has made threads (they may have ended since).
  // Thread-safe.
  bool has_run() const;
  // True if the latest set of op threads ended because the input was
  // exhausted (the last one ran the close op), not by a stop or an error.
  // Thread-safe.
  bool input_exhausted() const;

  // Errors from op threads that had no coordinator to report to (or whose
  // coordinator was already joined), in order. Thread-safe.
  std::vector<Status> exceptions_raised() const;

  // Constant after construction.
  const std::shared_ptr<queue::Queue>& queue() const;
  // The queue's name.
  const std::string& name() const;
  size_t num_enqueue_ops() const;
  const std::vector<std::string>& enqueue_op_names() const;
  const std::vector<Code>& queue_closed_codes() const;

 private:
  struct Shared;
  explicit QueueRunner(std::shared_ptr<Shared> shared);

  // Shared with the threads.
  const std::shared_ptr<Shared> shared_;
};

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_QUEUE_RUNNER_H_
