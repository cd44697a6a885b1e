// The prefetching iterator behind Prefetch, also used by parallel
// Interleave to read each open dataset ahead. Private to src/data.
#ifndef SLUICE_SRC_DATA_PREFETCH_H_
#define SLUICE_SRC_DATA_PREFETCH_H_

#include <cstddef>
#include <memory>

#include "sluice/data/dataset.h"

namespace sluice::data {

// Reads `input` ahead on its own thread (started on the first GetNext), up
// to buffer_size (>= 1) elements or errors. Cancelled through ctx; the
// destructor cancels and joins. `keep_alive` holds the dataset `input`
// iterates.
std::unique_ptr<IteratorBase> MakePrefetchIterator(std::unique_ptr<IteratorBase> input, size_t buffer_size,
                                                   const IteratorContext& ctx, DatasetPtr keep_alive);

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_PREFETCH_H_
