// RingBuffer<T>: a growable circular buffer with O(1) push/pop at both ends.
// std::deque allocates a block every few hundred bytes, so a queue of
// Elements (about 170 bytes each) would allocate every third push; this
// buffer allocates only when it grows. Not synchronised.
#ifndef SLUICE_QUEUE_RING_BUFFER_H_
#define SLUICE_QUEUE_RING_BUFFER_H_

#include <cassert>
#include <cstddef>
#include <memory>
#include <utility>

namespace sluice::queue {

template <class T>
class RingBuffer {
 public:
  explicit RingBuffer(size_t initial_capacity = 16) {
    size_t cap = 1;
    while (cap < initial_capacity) cap <<= 1;
    slots_ = std::make_unique<T[]>(cap);
    mask_ = cap - 1;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  void push_back(T&& value) {
    if (size_ > mask_) Grow();
    slots_[(head_ + size_) & mask_] = std::move(value);
    ++size_;
  }
  // Appends a slot and returns it, holding whatever it last held (moved-from
  // or default): the caller assigns every field. Saves a move of T.
  T& append_slot() {
    if (size_ > mask_) Grow();
    T& slot = slots_[(head_ + size_) & mask_];
    ++size_;
    return slot;
  }
  void push_front(T&& value) {
    if (size_ > mask_) Grow();
    head_ = (head_ - 1) & mask_;
    slots_[head_] = std::move(value);
    ++size_;
  }
  // REQUIRES: !empty().
  T& front() { return slots_[head_]; }
  // REQUIRES: !empty().
  T& back() { return slots_[(head_ + size_ - 1) & mask_]; }
  // Drops the front slot (left as it is: moved-from, or overwritten later).
  // REQUIRES: !empty().
  void drop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  // REQUIRES: !empty().
  T pop_front() {
    assert(size_ > 0);
    T out = std::move(slots_[head_]);
    head_ = (head_ + 1) & mask_;
    --size_;
    return out;
  }

 private:
  void Grow() {
    const size_t cap = (mask_ + 1) * 2;
    auto fresh = std::make_unique<T[]>(cap);
    for (size_t i = 0; i < size_; ++i) fresh[i] = std::move(slots_[(head_ + i) & mask_]);
    slots_ = std::move(fresh);
    head_ = 0;
    mask_ = cap - 1;
  }

  std::unique_ptr<T[]> slots_;
  size_t mask_ = 0;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_RING_BUFFER_H_
