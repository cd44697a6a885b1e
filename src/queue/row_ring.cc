#include "queue/row_ring.h"

#include "queue/row_ring_impl.h"

namespace sluice::queue {

template class BasicRowRing<RingAtomics>;

}  // namespace sluice::queue
