// The peer queues that sluice's FIFOQueue is measured against, each bounded
// to the same capacity and each with the same four operations the benchmark
// uses: Push / Pop (one element, blocking) and PushMany / PopMany (exactly n
// elements, blocking, with partial progress).
//
//   MutexQueue     std::mutex + two std::condition_variable + std::deque: the
//                  plain textbook queue.
//   TbbQueue       tbb::concurrent_bounded_queue (capacity set with
//                  set_capacity). It has no bulk operations, so PushMany /
//                  PopMany loop over push / pop.
//   MoodycamelQueue moodycamel::BlockingConcurrentQueue made bounded with a
//                  LightweightSemaphore of free slots (the idiom the library
//                  suggests): producers take slots before enqueueing,
//                  consumers give them back after dequeueing. Uses a
//                  ProducerToken / ConsumerToken per thread and
//                  enqueue_bulk / wait_dequeue_bulk for the bulk calls.
#ifndef SLUICE_BENCH_PEER_QUEUES_H_
#define SLUICE_BENCH_PEER_QUEUES_H_

#include <concurrentqueue/blockingconcurrentqueue.h>
#include <concurrentqueue/lightweightsemaphore.h>
#include <tbb/concurrent_queue.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <iterator>
#include <memory>
#include <mutex>

namespace sluice_bench {

template <class T>
class MutexQueue {
 public:
  explicit MutexQueue(size_t capacity) : capacity_(capacity) {}

  struct ProducerState {
    explicit ProducerState(MutexQueue&) {}
  };
  struct ConsumerState {
    explicit ConsumerState(MutexQueue&) {}
  };

  void Push(ProducerState&, T item) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      not_full_.wait(lock, [&] { return items_.size() < capacity_; });
      items_.push_back(std::move(item));
    }
    not_empty_.notify_one();
  }

  T Pop(ConsumerState&) {
    T item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      not_empty_.wait(lock, [&] { return !items_.empty(); });
      item = std::move(items_.front());
      items_.pop_front();
    }
    not_full_.notify_one();
    return item;
  }

  // Admits what fits, waits for room for the rest.
  void PushMany(ProducerState&, T* items, size_t n) {
    size_t done = 0;
    while (done < n) {
      size_t pushed = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        not_full_.wait(lock, [&] { return items_.size() < capacity_; });
        while (done < n && items_.size() < capacity_) {
          items_.push_back(std::move(items[done++]));
          ++pushed;
        }
      }
      if (pushed == 1) {
        not_empty_.notify_one();
      } else {
        not_empty_.notify_all();
      }
    }
  }

  // Takes what is there, waits for the rest.
  void PopMany(ConsumerState&, T* out, size_t n) {
    size_t done = 0;
    while (done < n) {
      size_t popped = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        not_empty_.wait(lock, [&] { return !items_.empty(); });
        while (done < n && !items_.empty()) {
          out[done++] = std::move(items_.front());
          items_.pop_front();
          ++popped;
        }
      }
      if (popped == 1) {
        not_full_.notify_one();
      } else {
        not_full_.notify_all();
      }
    }
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
};

template <class T>
class TbbQueue {
 public:
  explicit TbbQueue(size_t capacity) { q_.set_capacity(static_cast<std::ptrdiff_t>(capacity)); }

  struct ProducerState {
    explicit ProducerState(TbbQueue&) {}
  };
  struct ConsumerState {
    explicit ConsumerState(TbbQueue&) {}
  };

  void Push(ProducerState&, T item) { q_.push(std::move(item)); }
  T Pop(ConsumerState&) {
    T item;
    q_.pop(item);
    return item;
  }
  void PushMany(ProducerState&, T* items, size_t n) {
    for (size_t i = 0; i < n; ++i) q_.push(std::move(items[i]));
  }
  void PopMany(ConsumerState&, T* out, size_t n) {
    for (size_t i = 0; i < n; ++i) q_.pop(out[i]);
  }

 private:
  tbb::concurrent_bounded_queue<T> q_;
};

template <class T>
class MoodycamelQueue {
 public:
  explicit MoodycamelQueue(size_t capacity)
      : q_(capacity), free_slots_(static_cast<moodycamel::LightweightSemaphore::ssize_t>(capacity)) {}

  struct ProducerState {
    explicit ProducerState(MoodycamelQueue& q) : token(q.q_) {}
    moodycamel::ProducerToken token;
  };
  struct ConsumerState {
    explicit ConsumerState(MoodycamelQueue& q) : token(q.q_) {}
    moodycamel::ConsumerToken token;
  };

  void Push(ProducerState& p, T item) {
    while (!free_slots_.wait()) {
    }
    q_.enqueue(p.token, std::move(item));
  }
  T Pop(ConsumerState& c) {
    T item;
    q_.wait_dequeue(c.token, item);
    free_slots_.signal();
    return item;
  }
  // Enqueues as soon as some slots are free, in as many pieces as needed.
  void PushMany(ProducerState& p, T* items, size_t n) {
    size_t done = 0;
    while (done < n) {
      const auto got = free_slots_.waitMany(static_cast<moodycamel::LightweightSemaphore::ssize_t>(n - done));
      q_.enqueue_bulk(p.token, std::make_move_iterator(items + done), static_cast<size_t>(got));
      done += static_cast<size_t>(got);
    }
  }
  void PopMany(ConsumerState& c, T* out, size_t n) {
    size_t done = 0;
    while (done < n) {
      const size_t got = q_.wait_dequeue_bulk(c.token, out + done, n - done);
      free_slots_.signal(static_cast<moodycamel::LightweightSemaphore::ssize_t>(got));
      done += got;
    }
  }

 private:
  moodycamel::BlockingConcurrentQueue<T> q_;
  moodycamel::LightweightSemaphore free_slots_;
};

}  // namespace sluice_bench

#endif  // SLUICE_BENCH_PEER_QUEUES_H_
