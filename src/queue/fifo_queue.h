// FIFOQueue: elements leave in the order they were admitted. Private to the
// queue layer (users call NewFIFOQueue); PaddingFIFOQueue derives from it.
#ifndef SLUICE_QUEUE_FIFO_QUEUE_H_
#define SLUICE_QUEUE_FIFO_QUEUE_H_

#include "queue/queue_base.h"
#include "queue/ring_buffer.h"

#include <algorithm>

namespace sluice::queue {

class FIFOQueue : public QueueBase {
 public:
  FIFOQueue(std::string name, int32_t capacity, std::vector<DType> dtypes, std::vector<PartialShape> shapes,
            std::vector<std::string> names)
      : QueueBase(std::move(name), capacity, std::move(dtypes), std::move(shapes), std::move(names)) {}

  std::string_view type_name() const override { return "FIFOQueue"; }

 protected:
  int64_t StoredLocked() const override REQUIRES(mu_) { return stored_; }
  void PushLocked(Element&& element) override REQUIRES(mu_) {
    Chunk& slot = chunks_.append_slot();
    slot.data = std::move(element);
    slot.begin = 0;
    slot.end = 1;
    slot.batched = false;
    ++stored_;
  }
  // An enqueue_many batch is stored as one chunk sharing the batch's
  // buffers, not as one element per row.
  void PushRowsLocked(const Element& batch, int64_t begin, int64_t count) override REQUIRES(mu_) {
    chunks_.push_back(Chunk{batch, begin, begin + count, true});
    stored_ += count;
  }
  Element PopLocked() override REQUIRES(mu_) {
    Chunk& front = chunks_.front();
    --stored_;
    if (!front.batched) {
      Element out(std::move(front.data));
      chunks_.drop_front();
      return out;
    }
    Element row;
    for (const Tensor& component : front.data) row.push_back(component.Slice(front.begin));
    if (++front.begin == front.end) chunks_.pop_front();
    return row;
  }
  void TakeLocked(int64_t n, std::vector<Piece>* out) override REQUIRES(mu_) {
    stored_ -= n;
    while (n > 0) {
      Chunk& front = chunks_.front();
      if (!front.batched) {
        out->push_back(Piece{std::move(front.data), 1, false});
        chunks_.drop_front();
        --n;
        continue;
      }
      const int64_t k = std::min(n, front.end - front.begin);
      Element rows;
      for (const Tensor& component : front.data) rows.push_back(component.Slice(front.begin, front.begin + k));
      out->push_back(Piece{std::move(rows), k, true});
      front.begin += k;
      n -= k;
      if (front.begin == front.end) chunks_.pop_front();
    }
  }
  void RestoreLocked(std::vector<Piece>* held) override REQUIRES(mu_) {
    for (auto it = held->rbegin(); it != held->rend(); ++it) {
      stored_ += it->rows;
      chunks_.push_front(Chunk{std::move(it->data), 0, it->rows, it->batched});
    }
    held->clear();
  }

 private:
  // One element, or rows [begin, end) of a batch.
  struct Chunk {
    Element data;
    int64_t begin = 0;
    int64_t end = 0;
    bool batched = false;
  };
  RingBuffer<Chunk> chunks_ GUARDED_BY(mu_){64};
  int64_t stored_ GUARDED_BY(mu_) = 0;  // elements in chunks_
};

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_FIFO_QUEUE_H_
