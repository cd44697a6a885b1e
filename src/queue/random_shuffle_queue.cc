// RandomShuffleQueue: each dequeue takes a uniformly random stored element
// (index = r mod size, the hole filled by the last element), and while the
// queue is open leaves at least min_after_dequeue elements behind.
#include <random>

#include "core/philox.h"
#include "queue/queue_base.h"
#include "queue/shared_queues.h"

namespace sluice::queue {
namespace {

class RandomShuffleQueue : public QueueBase {
 public:
  RandomShuffleQueue(std::string name, int32_t capacity, int32_t min_after_dequeue, uint64_t seed, uint64_t seed2,
                     std::vector<DType> dtypes, std::vector<PartialShape> shapes, std::vector<std::string> names)
      : QueueBase(std::move(name), capacity, std::move(dtypes), std::move(shapes), std::move(names)),
        min_after_dequeue_(min_after_dequeue),
        rng_(seed, seed2) {}

  std::string_view type_name() const override { return "RandomShuffleQueue"; }
  int32_t min_after_dequeue() const override { return static_cast<int32_t>(min_after_dequeue_); }

 protected:
  int64_t StoredLocked() const override SLUICE_REQUIRES(mu_) { return static_cast<int64_t>(elements_.size()); }
  int64_t TakeableLocked() const override SLUICE_REQUIRES(mu_) {
    const int64_t stored = StoredLocked();
    if (closed_locked()) return stored;
    return stored > min_after_dequeue_ ? stored - min_after_dequeue_ : 0;
  }
  void PushLocked(Element&& element) override SLUICE_REQUIRES(mu_) { elements_.push_back(std::move(element)); }
  Element PopLocked() override SLUICE_REQUIRES(mu_) {
    const size_t i = rng_.Next() % elements_.size();
    Element out = std::move(elements_[i]);
    if (i + 1 != elements_.size()) elements_[i] = std::move(elements_.back());
    elements_.pop_back();
    return out;
  }
  void RestoreLocked(std::vector<Piece>* held) override SLUICE_REQUIRES(mu_) {
    for (Piece& p : *held) {
      for (int64_t i = 0; i < p.rows; ++i) elements_.push_back(PieceRow(p, i));
    }
    held->clear();
  }

 private:
  const int64_t min_after_dequeue_;
  std::vector<Element> elements_ SLUICE_GUARDED_BY(mu_);
  Philox4x32 rng_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace

Result<std::shared_ptr<Queue>> NewRandomShuffleQueue(RandomShuffleQueueOptions o) {
  for (const PartialShape& s : o.shapes) {
    if (!s.fully_defined()) {
      return errors::InvalidArgument("All shapes must be fully defined for RandomShuffleQueue; got ",
                                     s.DebugString());
    }
  }
  if (o.min_after_dequeue < 0) {
    return errors::InvalidArgument("min_after_dequeue ", o.min_after_dequeue, " must be >= 0");
  }
  if (o.capacity >= 0 && o.min_after_dequeue >= o.capacity) {
    return errors::InvalidArgument("min_after_dequeue ", o.min_after_dequeue, " must be < capacity ", o.capacity);
  }
  QueueSignature sig{"RandomShuffleQueue", o.capacity < 0 ? Queue::kUnbounded : o.capacity, o.dtypes, o.shapes,
                     o.min_after_dequeue, o.seed, o.seed2};
  return CreateOrShare(o.shared_name, sig, [&]() -> Result<std::shared_ptr<Queue>> {
    uint64_t seed = static_cast<uint64_t>(o.seed), seed2 = static_cast<uint64_t>(o.seed2);
    if (seed == 0 && seed2 == 0) {
      std::random_device rd;
      seed = (uint64_t{rd()} << 32) | rd();
      seed2 = (uint64_t{rd()} << 32) | rd();
    }
    auto q = std::make_shared<RandomShuffleQueue>(o.name.empty() ? "random_shuffle_queue" : o.name, o.capacity,
                                                  o.min_after_dequeue, seed, seed2, o.dtypes, o.shapes, o.names);
    SLUICE_RETURN_IF_ERROR(q->Initialize());
    return std::shared_ptr<Queue>(std::move(q));
  });
}

}  // namespace sluice::queue
