#include "queue/fifo_queue.h"

#include "queue/shared_queues.h"

namespace sluice::queue {

Result<std::shared_ptr<Queue>> NewFIFOQueue(QueueOptions o) {
  for (const PartialShape& s : o.shapes) {
    if (!s.fully_defined()) {
      return errors::InvalidArgument("All shapes must be fully defined for FIFOQueue; got ", s.DebugString());
    }
  }
  QueueSignature sig{"FIFOQueue", o.capacity < 0 ? Queue::kUnbounded : o.capacity, o.dtypes, o.shapes};
  return CreateOrShare(o.shared_name, sig, [&]() -> Result<std::shared_ptr<Queue>> {
    auto q = std::make_shared<FIFOQueue>(o.name.empty() ? "fifo_queue" : o.name, o.capacity, o.dtypes, o.shapes,
                                         o.names);
    SLUICE_RETURN_IF_ERROR(q->Initialize());
    return std::shared_ptr<Queue>(std::move(q));
  });
}

}  // namespace sluice::queue
