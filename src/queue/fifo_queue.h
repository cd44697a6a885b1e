// FIFOQueue: elements leave in the order they were admitted. Private to the
// queue layer (users call NewFIFOQueue); PaddingFIFOQueue derives from it.
#ifndef SLUICE_QUEUE_FIFO_QUEUE_H_
#define SLUICE_QUEUE_FIFO_QUEUE_H_

#include "queue/queue_base.h"
#include "queue/ring_buffer.h"

namespace sluice::queue {

class FIFOQueue : public QueueBase {
 public:
  FIFOQueue(std::string name, int32_t capacity, std::vector<DType> dtypes, std::vector<PartialShape> shapes,
            std::vector<std::string> names)
      : QueueBase(std::move(name), capacity, std::move(dtypes), std::move(shapes), std::move(names)) {}

  std::string_view type_name() const override { return "FIFOQueue"; }

 protected:
  int64_t StoredLocked() const override REQUIRES(mu_) { return static_cast<int64_t>(elements_.size()); }
  void PushLocked(Element&& element) override REQUIRES(mu_) { elements_.push_back(std::move(element)); }
  Element PopLocked() override REQUIRES(mu_) { return elements_.pop_front(); }
  void RestoreLocked(std::vector<Element>* held) override REQUIRES(mu_) {
    for (auto it = held->rbegin(); it != held->rend(); ++it) elements_.push_front(std::move(*it));
    held->clear();
  }

 private:
  RingBuffer<Element> elements_ GUARDED_BY(mu_){64};
};

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_FIFO_QUEUE_H_
