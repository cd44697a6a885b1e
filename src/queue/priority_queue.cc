// PriorityQueue: component 0 is an int64 scalar priority; the smallest
// priority leaves first. A dequeue_many waits until n elements are stored and
// takes them at once, in ascending order.
#include <algorithm>

#include "queue/queue_base.h"
#include "queue/shared_queues.h"

namespace sluice::queue {
namespace {

struct Prioritized {
  int64_t priority = 0;
  Element element;
};

// std heap functions build a max-heap: "less" means larger priority.
struct LaterFirst {
  bool operator()(const Prioritized& a, const Prioritized& b) const { return a.priority > b.priority; }
};

class PriorityQueue : public QueueBase {
 public:
  PriorityQueue(std::string name, int32_t capacity, std::vector<DType> dtypes, std::vector<PartialShape> shapes,
                std::vector<std::string> names)
      : QueueBase(std::move(name), capacity, std::move(dtypes), std::move(shapes), std::move(names)) {}

  std::string_view type_name() const override { return "PriorityQueue"; }

 protected:
  int64_t StoredLocked() const override SLUICE_REQUIRES(mu_) { return static_cast<int64_t>(heap_.size()); }
  void PushLocked(Element&& element) override SLUICE_REQUIRES(mu_) {
    const int64_t priority = element[0].scalar<int64_t>();
    heap_.push_back(Prioritized{priority, std::move(element)});
    std::push_heap(heap_.begin(), heap_.end(), LaterFirst());
  }
  Element PopLocked() override SLUICE_REQUIRES(mu_) {
    std::pop_heap(heap_.begin(), heap_.end(), LaterFirst());
    Element out = std::move(heap_.back().element);
    heap_.pop_back();
    return out;
  }
  void RestoreLocked(std::vector<Piece>* held) override SLUICE_REQUIRES(mu_) {
    for (Piece& p : *held) {
      for (int64_t i = 0; i < p.rows; ++i) PushLocked(PieceRow(p, i));
    }
    held->clear();
  }
  bool dequeue_holds_partial() const override { return false; }

  Status ValidateExtra(const Element& element, bool many) const override {
    const TensorShape& s = element[0].shape();
    if (!many && s.rank() != 0) {
      return errors::InvalidArgument("Expected the priority element to be a scalar, but received shape: ",
                                     s.DebugString());
    }
    if (many && s.rank() != 1) {
      return errors::InvalidArgument("Expected the priority element to be a vector, but received shape: ",
                                     s.DebugString());
    }
    return Status();
  }

  std::string NoShapesMessage() const override {
    return "PriorityQueue's DequeueMany requires the components to have specified shapes.";
  }

 private:
  std::vector<Prioritized> heap_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace

Result<std::shared_ptr<Queue>> NewPriorityQueue(QueueOptions o) {
  for (const PartialShape& s : o.shapes) {
    if (!s.fully_defined()) {
      return errors::InvalidArgument("All shapes must be fully defined for PriorityQueue; got ", s.DebugString());
    }
  }
  o.dtypes.insert(o.dtypes.begin(), DType::kInt64);
  if (!o.shapes.empty()) o.shapes.insert(o.shapes.begin(), PartialShape(TensorShape{}));
  QueueSignature sig{"PriorityQueue", o.capacity < 0 ? Queue::kUnbounded : o.capacity, o.dtypes, o.shapes};
  return CreateOrShare(o.shared_name, sig, [&]() -> Result<std::shared_ptr<Queue>> {
    auto q = std::make_shared<PriorityQueue>(o.name.empty() ? "priority_queue" : o.name, o.capacity, o.dtypes,
                                             o.shapes, o.names);
    SLUICE_RETURN_IF_ERROR(q->Initialize());
    return std::shared_ptr<Queue>(std::move(q));
  });
}

}  // namespace sluice::queue
