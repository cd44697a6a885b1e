#include "sluice/core/element.h"

#include <new>
#include <utility>

namespace sluice {

Element::Element(std::initializer_list<Tensor> components) {
  Reserve(components.size());
  for (const Tensor& t : components) new (data() + size_++) Tensor(t);
}

Element::Element(std::vector<Tensor> components) {
  Reserve(components.size());
  for (Tensor& t : components) new (data() + size_++) Tensor(std::move(t));
}

Element::Element(const Element& other) {
  Reserve(other.size_);
  for (const Tensor& t : other) new (data() + size_++) Tensor(t);
}

Element& Element::operator=(const Element& other) {
  if (this != &other) {
    clear();
    Reserve(other.size_);
    for (const Tensor& t : other) new (data() + size_++) Tensor(t);
  }
  return *this;
}

void Element::Reserve(size_t n) {
  if (n <= capacity_) return;
  size_t cap = capacity_;
  while (cap < n) cap *= 2;
  auto* fresh = static_cast<Tensor*>(::operator new(cap * sizeof(Tensor)));
  Tensor* old = data();
  for (uint32_t i = 0; i < size_; ++i) {
    new (fresh + i) Tensor(std::move(old[i]));
    old[i].~Tensor();
  }
  if (on_heap()) ::operator delete(heap_);
  heap_ = fresh;
  capacity_ = static_cast<uint32_t>(cap);
}

void Element::push_back(Tensor t) {
  Reserve(size_ + 1);
  new (data() + size_++) Tensor(std::move(t));
}

void Element::resize(size_t n) {
  if (n < size_) {
    for (size_t i = n; i < size_; ++i) data()[i].~Tensor();
  } else {
    Reserve(n);
    for (size_t i = size_; i < n; ++i) new (data() + i) Tensor();
  }
  size_ = static_cast<uint32_t>(n);
}

std::string Element::DebugString() const {
  std::string s = "(";
  for (size_t i = 0; i < size_; ++i) {
    if (i) s += ", ";
    s += data()[i].DebugString();
  }
  return s + ")";
}

}  // namespace sluice
