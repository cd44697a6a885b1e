#include "queue/shared_queues.h"

#include <algorithm>
#include <map>
#include <vector>

#include "sluice/core/mutex.h"

namespace sluice::queue {
namespace {

struct Entry {
  QueueSignature signature;
  std::weak_ptr<Queue> queue;
};

struct Table {
  Mutex mu;
  std::map<std::string, Entry> entries SLUICE_GUARDED_BY(mu);
};

Table& GlobalTable() {
  static Table* table = new Table();
  return *table;
}

// Every queue the factories made, as weak references, in creation order.
// Expired entries are pruned when the list has doubled since the last
// prune, so registering stays amortised O(1).
struct LiveQueues {
  Mutex mu;
  std::vector<std::weak_ptr<Queue>> queues SLUICE_GUARDED_BY(mu);
  size_t prune_at SLUICE_GUARDED_BY(mu) = 16;
};

LiveQueues& GlobalLiveQueues() {
  static LiveQueues* live = new LiveQueues();  // never destroyed
  return *live;
}

void RegisterLiveQueue(const std::shared_ptr<Queue>& queue) {
  LiveQueues& live = GlobalLiveQueues();
  MutexLock lock(&live.mu);
  if (live.queues.size() >= live.prune_at) {
    std::erase_if(live.queues, [](const std::weak_ptr<Queue>& q) { return q.expired(); });
    live.prune_at = std::max<size_t>(16, 2 * live.queues.size());
  }
  live.queues.push_back(queue);
}

Result<std::shared_ptr<Queue>> CreateAndRegister(
    const std::function<Result<std::shared_ptr<Queue>>()>& create) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<Queue> queue, create());
  RegisterLiveQueue(queue);
  return queue;
}

std::string TypesString(const std::vector<DType>& dtypes) {
  std::string s;
  for (size_t i = 0; i < dtypes.size(); ++i) s += (i ? ", " : "") + std::string(DTypeName(dtypes[i]));
  return s;
}

std::string ShapesString(const std::vector<PartialShape>& shapes) {
  std::string s;
  for (size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + shapes[i].DebugString();
  return s;
}

Status Compare(const std::string& name, const QueueSignature& have, const QueueSignature& want) {
  const std::string prefix = StrCat("Shared queue '", name, "' has ");
  if (have.type != want.type) {
    return errors::InvalidArgument(prefix, "type ", have.type, " but requested type was ", want.type);
  }
  if (have.capacity != want.capacity) {
    return errors::InvalidArgument(prefix, "capacity ", have.capacity, " but requested capacity was ",
                                   want.capacity);
  }
  if (have.dtypes != want.dtypes) {
    return errors::InvalidArgument(prefix, "component types ", TypesString(have.dtypes),
                                   " but requested component types were ", TypesString(want.dtypes));
  }
  if (have.shapes != want.shapes) {
    return errors::InvalidArgument(prefix, "component shapes ", ShapesString(have.shapes),
                                   " but requested component shapes were ", ShapesString(want.shapes));
  }
  if (have.min_after_dequeue != want.min_after_dequeue) {
    return errors::InvalidArgument(prefix, "min_after_dequeue ", have.min_after_dequeue,
                                   " but requested min_after_dequeue was ", want.min_after_dequeue);
  }
  const bool any_seed = want.seed == 0 && want.seed2 == 0;
  if (!any_seed && (have.seed != want.seed || have.seed2 != want.seed2)) {
    return errors::InvalidArgument(prefix, "random seeds (", have.seed, ", ", have.seed2,
                                   ") but requested seeds are (", want.seed, ", ", want.seed2, ")");
  }
  return Status();
}

}  // namespace

Result<std::shared_ptr<Queue>> CreateOrShare(const std::string& shared_name, const QueueSignature& signature,
                                             const std::function<Result<std::shared_ptr<Queue>>()>& create) {
  if (shared_name.empty()) return CreateAndRegister(create);
  Table& table = GlobalTable();
  MutexLock lock(&table.mu);
  auto it = table.entries.find(shared_name);
  if (it != table.entries.end()) {
    if (std::shared_ptr<Queue> live = it->second.queue.lock()) {
      SLUICE_RETURN_IF_ERROR(Compare(shared_name, it->second.signature, signature));
      return live;
    }
  }
  // Creating a queue runs no user code, so it may run under the table lock.
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<Queue> queue, CreateAndRegister(create));
  table.entries[shared_name] = Entry{signature, queue};
  return queue;
}

std::vector<QueueStats> AllQueueStats() {
  std::vector<std::shared_ptr<Queue>> queues;
  {
    LiveQueues& live = GlobalLiveQueues();
    MutexLock lock(&live.mu);
    queues.reserve(live.queues.size());
    for (const auto& weak : live.queues) {
      if (std::shared_ptr<Queue> q = weak.lock()) queues.push_back(std::move(q));
    }
  }
  // Sampled without the registry lock: a queue's destructor (run here if
  // this holds its last reference) must not wait for it.
  std::vector<QueueStats> stats;
  stats.reserve(queues.size());
  for (const auto& q : queues) stats.push_back(q->stats());
  return stats;
}

}  // namespace sluice::queue
