// Element: a tuple of tensors — one queue entry, one dataset element.
//
// Up to kInlineComponents tensors are stored without a heap allocation, since
// an Element is built for every record that flows through a pipeline.
// Component names (for the dict view in Python) belong to the queue or
// dataset that declares them, not to each element. A value type: not
// synchronised.
#ifndef SLUICE_CORE_ELEMENT_H_
#define SLUICE_CORE_ELEMENT_H_

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "sluice/core/tensor.h"

namespace sluice {

class Element {
 public:
  static constexpr size_t kInlineComponents = 2;

  Element() = default;
  Element(std::initializer_list<Tensor> components);
  explicit Element(std::vector<Tensor> components);
  Element(const Element& other);
  Element& operator=(const Element& other);
  Element(Element&& other) noexcept { MoveFrom(std::move(other)); }
  Element& operator=(Element&& other) noexcept {
    if (this != &other) {
      clear();
      if (on_heap()) {
        ::operator delete(heap_);
        heap_ = nullptr;
        capacity_ = kInlineComponents;
      }
      MoveFrom(std::move(other));
    }
    return *this;
  }
  ~Element() {
    clear();
    if (on_heap()) ::operator delete(heap_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Tensor& operator[](size_t i) { return data()[i]; }
  const Tensor& operator[](size_t i) const { return data()[i]; }
  Tensor* begin() { return data(); }
  Tensor* end() { return data() + size_; }
  const Tensor* begin() const { return data(); }
  const Tensor* end() const { return data() + size_; }

  void push_back(Tensor t);
  void resize(size_t n);
  void clear() {
    Tensor* d = data();
    for (uint32_t i = 0; i < size_; ++i) d[i].~Tensor();
    size_ = 0;
  }
  std::vector<Tensor> ToVector() const { return {begin(), end()}; }

  std::string DebugString() const;

 private:
  bool on_heap() const { return capacity_ > kInlineComponents; }
  Tensor* data() { return on_heap() ? heap_ : reinterpret_cast<Tensor*>(inline_); }
  const Tensor* data() const { return on_heap() ? heap_ : reinterpret_cast<const Tensor*>(inline_); }
  void Reserve(size_t n);
  // REQUIRES: this is empty and inline.
  void MoveFrom(Element&& other) noexcept {
    if (other.on_heap()) {
      heap_ = other.heap_;
      capacity_ = other.capacity_;
      other.heap_ = nullptr;
      other.capacity_ = kInlineComponents;
    } else {
      Tensor* src = other.data();
      for (uint32_t i = 0; i < other.size_; ++i) {
        new (data() + i) Tensor(std::move(src[i]));
        src[i].~Tensor();
      }
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  // Raw storage: only the first size_ tensors are constructed, so an empty
  // or one-component Element costs almost nothing to create, move or destroy.
  alignas(Tensor) unsigned char inline_[kInlineComponents * sizeof(Tensor)];
  Tensor* heap_ = nullptr;  // owned when capacity_ > kInlineComponents
  uint32_t size_ = 0;
  uint32_t capacity_ = kInlineComponents;
};

}  // namespace sluice

#endif  // SLUICE_CORE_ELEMENT_H_
