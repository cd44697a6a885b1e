// QueueMonitor: samples every queue of the process over time, to show which
// stage of an input pipeline starves the next (TF's fraction_of_N_full
// summaries, plus enqueue and dequeue rates).
//
// Each sample reads queue::AllQueueStats() (or options.source) and appends
// one point per queue to that queue's series, keeping the last
// options.history points. From a series come the fill fraction over time and
// the enqueue/dequeue rates (elements per second over the retained window).
// A queue that has been destroyed drops out at the next sample.
//
// Sampling is driven either by the monitor's own thread (Start(): a
// LooperThread sampling every options.interval, the first sample at once), or
// by the caller (Sample(), SampleAt()); both may be mixed.
//
// Thread-safety: every method is thread-safe. The source runs without the
// monitor's lock held. Ownership: the monitor owns its thread; the
// destructor stops and joins it. Sampling never keeps a queue alive beyond
// the sample.
#ifndef SLUICE_TRAIN_QUEUE_MONITOR_H_
#define SLUICE_TRAIN_QUEUE_MONITOR_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/mutex.h"
#include "sluice/core/status.h"
#include "sluice/queue/queue.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/thread.h"

namespace sluice::train {

struct QueueMonitorOptions {
  // Time between samples of the monitor's thread. > 0.
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  // Points kept per queue. >= 2 (two points make a rate).
  size_t history = 60;
  // Where a sample comes from; empty: queue::AllQueueStats. Called on the
  // sampling thread, without the monitor's lock.
  std::function<std::vector<queue::QueueStats>()> source;
  // The sampling thread's name.
  std::string name = "QueueMonitor";
};

// One queue over time.
struct QueueSeries {
  using Clock = std::chrono::steady_clock;
  struct Point {
    Clock::time_point time;
    int32_t size = 0;
    double fraction_full = 0;  // QueueStats::fraction_full()
    int64_t enqueued = 0;
    int64_t dequeued = 0;
    bool closed = false;
  };

  // From the queue's latest stats.
  uint64_t id = 0;
  std::string name;
  std::string type;
  int32_t capacity = 0;
  int32_t min_after_dequeue = 0;
  // Oldest first; at most QueueMonitorOptions::history.
  std::deque<Point> points;

  // Elements per second admitted / handed out between the first and the last
  // point; 0 with fewer than two points or no time between them.
  double enqueue_rate() const;
  double dequeue_rate() const;
  // The mean of the points' fraction_full; 0 without points.
  double mean_fraction_full() const;
};

class QueueMonitor {
 public:
  using Clock = std::chrono::steady_clock;

  // InvalidArgument for interval <= 0 or history < 2.
  static Result<std::unique_ptr<QueueMonitor>> Create(QueueMonitorOptions options = {});

  QueueMonitor(const QueueMonitor&) = delete;
  QueueMonitor& operator=(const QueueMonitor&) = delete;
  // Stops and joins the sampling thread.
  ~QueueMonitor();

  // Takes one sample now / stamped `now` (for deterministic tests). Never
  // blocks for long.
  void Sample() SLUICE_EXCLUDES(mu_);
  void SampleAt(Clock::time_point now) SLUICE_EXCLUDES(mu_);

  // Starts the sampling thread. FailedPrecondition if it was started before.
  // Throws std::system_error only if the OS cannot create a thread.
  Status Start() SLUICE_EXCLUDES(mu_);
  // Stops the sampling thread and waits for it. Does nothing if it is not
  // running. Blocks at most for one sample.
  void Stop() SLUICE_EXCLUDES(mu_);

  // The series of the queues present in the latest sample, in creation order.
  std::vector<QueueSeries> Series() const SLUICE_EXCLUDES(mu_);
  // A table, one line per queue: name, type, size/capacity, fill fraction,
  // enqueue and dequeue rates, closed.
  std::string Report() const SLUICE_EXCLUDES(mu_);

 private:
  explicit QueueMonitor(QueueMonitorOptions options);

  // Constant after construction.
  const QueueMonitorOptions options_;

  mutable Mutex mu_;
  // Protected by mu_: keyed by QueueStats::id (creation order).
  std::map<uint64_t, QueueSeries> series_ SLUICE_GUARDED_BY(mu_);
  std::shared_ptr<Coordinator> coord_ SLUICE_GUARDED_BY(mu_);
  std::shared_ptr<Thread> thread_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice::train

#endif  // SLUICE_TRAIN_QUEUE_MONITOR_H_
