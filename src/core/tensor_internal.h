// Tensor operations for the library's own containers, kept out of the
// public Tensor interface (the attorney-client idiom): a layer above core
// includes "core/tensor_internal.h" (an INTERNAL header, never installed).
//
// Thread-safety: as Tensor's: const operations on one tensor may run on
// several threads at once.
#ifndef SLUICE_CORE_TENSOR_INTERNAL_H_
#define SLUICE_CORE_TENSOR_INTERNAL_H_

#include <cassert>
#include <cstdint>
#include <utility>

#include "sluice/core/tensor.h"

namespace sluice::internal {

class TensorAttorney {
 public:
  // As t.Slice, but the view takes over one reference on t.buffer() that
  // the caller added beforehand (TensorBuffer::Ref) instead of adding one:
  // no atomic operation. For a container that pays for its views'
  // references in bulk, off the line its readers share (RowRing: one
  // Ref(64) per batch of rows instead of one contended increment per row).
  // REQUIRES: as Slice's, and one reference paid per view.
  static Tensor SliceAdoptingRef(const Tensor& t, int64_t i) { return t.SliceAdoptingRef(i); }
  static Tensor SliceAdoptingRef(const Tensor& t, int64_t begin, int64_t end) {
    return t.SliceAdoptingRef(begin, end);
  }
  // t's values viewed with `shape`, sharing t's buffer (one more reference,
  // as a copy of t): the buffer's reference count still tells whether anyone
  // else can see the bytes, which a wrapper buffer would hide.
  // REQUIRES: t.dtype() is not kString; shape.num_elements() == t.num_elements().
  static Tensor Reshaped(const Tensor& t, TensorShape shape) {
    assert(shape.num_elements() == t.num_elements());
    if (t.buffer_ != nullptr) t.buffer_->Ref();
    return Tensor(t.dtype_, std::move(shape), t.buffer_, t.data_);
  }
};

}  // namespace sluice::internal

#endif  // SLUICE_CORE_TENSOR_INTERNAL_H_
