// The process-wide table of shared queues (TensorFlow's shared_name): queues
// created with the same non-empty shared_name are one queue, kept alive by
// their users (the table holds weak references). Also the registry of live
// queues that AllQueueStats() reads (weak references too). Thread-safe.
#ifndef SLUICE_QUEUE_SHARED_QUEUES_H_
#define SLUICE_QUEUE_SHARED_QUEUES_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sluice/queue/queue.h"

namespace sluice::queue {

// What must agree between two creators of a shared queue.
struct QueueSignature {
  std::string type;
  int32_t capacity = 0;
  std::vector<DType> dtypes;
  std::vector<PartialShape> shapes;
  int32_t min_after_dequeue = 0;
  int64_t seed = 0;
  int64_t seed2 = 0;
};

// Returns the live queue registered under `shared_name` if its signature
// matches (InvalidArgument naming the attribute otherwise), or creates one
// with `create` and registers it. An empty shared_name just creates. Every
// queue created here is also added to the live-queue registry that
// AllQueueStats() reads.
Result<std::shared_ptr<Queue>> CreateOrShare(const std::string& shared_name, const QueueSignature& signature,
                                             const std::function<Result<std::shared_ptr<Queue>>()>& create);

}  // namespace sluice::queue

#endif  // SLUICE_QUEUE_SHARED_QUEUES_H_
