#include "sluice/train/queue_monitor.h"

#include <cstdio>
#include <utility>

#include "sluice/train/looper_thread.h"

namespace sluice::train {
namespace {

double Rate(const std::deque<QueueSeries::Point>& points, int64_t QueueSeries::Point::*counter) {
  if (points.size() < 2) return 0;
  const std::chrono::duration<double> dt = points.back().time - points.front().time;
  if (dt.count() <= 0) return 0;
  return static_cast<double>(points.back().*counter - points.front().*counter) / dt.count();
}

}  // namespace

double QueueSeries::enqueue_rate() const { return Rate(points, &Point::enqueued); }
double QueueSeries::dequeue_rate() const { return Rate(points, &Point::dequeued); }

double QueueSeries::mean_fraction_full() const {
  if (points.empty()) return 0;
  double sum = 0;
  for (const Point& p : points) sum += p.fraction_full;
  return sum / static_cast<double>(points.size());
}

Result<std::unique_ptr<QueueMonitor>> QueueMonitor::Create(QueueMonitorOptions options) {
  if (options.interval <= std::chrono::nanoseconds::zero()) {
    return errors::InvalidArgument("QueueMonitor: interval must be > 0");
  }
  if (options.history < 2) {
    return errors::InvalidArgument("QueueMonitor: history must be >= 2 not ", options.history);
  }
  if (!options.source) options.source = &queue::AllQueueStats;
  return std::unique_ptr<QueueMonitor>(new QueueMonitor(std::move(options)));
}

QueueMonitor::QueueMonitor(QueueMonitorOptions options) : options_(std::move(options)) {}

QueueMonitor::~QueueMonitor() { Stop(); }

void QueueMonitor::Sample() { SampleAt(Clock::now()); }

void QueueMonitor::SampleAt(Clock::time_point now) {
  std::vector<queue::QueueStats> stats = options_.source();
  MutexLock lock(&mu_);
  std::map<uint64_t, QueueSeries> next;
  for (queue::QueueStats& s : stats) {
    QueueSeries& series = next[s.id];
    auto old = series_.find(s.id);
    if (old != series_.end()) series = std::move(old->second);
    series.id = s.id;
    series.name = std::move(s.name);
    series.type = std::move(s.type);
    series.capacity = s.capacity;
    series.min_after_dequeue = s.min_after_dequeue;
    series.points.push_back({now, s.size, s.fraction_full(), s.enqueued, s.dequeued, s.closed});
    while (series.points.size() > options_.history) series.points.pop_front();
  }
  series_.swap(next);
}

Status QueueMonitor::Start() {
  MutexLock lock(&mu_);
  if (thread_ != nullptr) return errors::FailedPrecondition("QueueMonitor was already started");
  coord_ = std::make_shared<Coordinator>();
  LooperThreadOptions lo;
  lo.timer_interval = options_.interval;
  lo.name = options_.name;
  lo.run_loop = [this]() -> Status {
    Sample();
    return Status();
  };
  SLUICE_ASSIGN_OR_RETURN(thread_, NewLooperThread(coord_, std::move(lo)));
  thread_->Start();
  return Status();
}

void QueueMonitor::Stop() {
  std::shared_ptr<Coordinator> coord;
  std::shared_ptr<Thread> thread;
  {
    MutexLock lock(&mu_);
    coord = coord_;
    thread = thread_;
  }
  if (coord == nullptr) return;
  coord->RequestStop();
  thread->Join();  // the loop body takes mu_, so not under it
}

std::vector<QueueSeries> QueueMonitor::Series() const {
  MutexLock lock(&mu_);
  std::vector<QueueSeries> out;
  out.reserve(series_.size());
  for (const auto& [id, series] : series_) out.push_back(series);
  return out;
}

std::string QueueMonitor::Report() const {
  std::string out = "queue                                     type                size/capacity  full   enq/s      deq/s      closed\n";
  for (const QueueSeries& s : Series()) {
    const QueueSeries::Point last = s.points.empty() ? QueueSeries::Point{} : s.points.back();
    char line[256];
    std::snprintf(line, sizeof(line), "%-41s %-19s %6d/%-7d %5.1f%% %-10.1f %-10.1f %s\n", s.name.c_str(),
                  s.type.c_str(), last.size, s.capacity, 100.0 * last.fraction_full, s.enqueue_rate(),
                  s.dequeue_rate(), last.closed ? "yes" : "no");
    out += line;
  }
  return out;
}

}  // namespace sluice::train
