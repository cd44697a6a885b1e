// BulkCopy: memcpy for rows that go into a batch buffer.
//
// Rows of 256 KiB and more (a decoded image, for example) are written with
// non-temporal stores: the batch is read later, often by another thread or
// a device copy, so caching its lines on the way in only evicts the
// producer's working set and costs a read for ownership of every line
// (docs/perf/bulk-copy.md). Smaller rows use memcpy. Hand-written because no
// library call gives the choice.
//
// Thread-safety: a pure function.
#ifndef SLUICE_CORE_BULK_COPY_H_
#define SLUICE_CORE_BULK_COPY_H_

#include <cstddef>

namespace sluice::internal {

inline constexpr size_t kStreamingCopyMinBytes = size_t{256} << 10;

// Copies `n` bytes from `src` to `dst` (not overlapping). The stores may be
// weakly ordered until the function returns; it returns after a fence, so
// the usual happens-before (a queue's lock) publishes the bytes.
void BulkCopy(void* dst, const void* src, size_t n);

}  // namespace sluice::internal

#endif  // SLUICE_CORE_BULK_COPY_H_
