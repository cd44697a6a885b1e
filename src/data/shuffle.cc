// Shuffle: TensorFlow's ShuffleDataset algorithm and random stream, so that
// seeded shuffles give TF's orders. The buffer is a ring of buffer_size
// elements holding the live slice [start, end); each GetNext first refills
// it from the input, then takes the element at start + (sample % size) and
// moves the element at start into its place. Samples come from Philox
// seeded per iterator by the dataset's seed generator: with
// reshuffle_each_iteration, iterator k (each epoch under Repeat) gets samples
// 2k and 2k+1 of Philox(seed, seed2) as its seeds (TF's RandomSeedGenerator);
// otherwise every iterator uses (seed, seed2) (FixedSeedGenerator).
#include <atomic>
#include <random>
#include <utility>

#include "core/philox.h"
#include "data/dataset_util.h"
#include "data/memory_budget.h"
#include "data/model.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class ShuffleDataset : public DatasetBase {
 public:
  ShuffleDataset(DatasetPtr input, int64_t buffer_size, int64_t seed, int64_t seed2, bool reshuffle)
      : DatasetBase(input->element_spec()),
        input_(std::move(input)),
        buffer_size_(buffer_size),
        seed_(seed),
        seed2_(seed2),
        reshuffle_(reshuffle) {}

  int64_t cardinality() const override { return input_->cardinality(); }
  std::string DebugName() const override { return "Shuffle"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    uint64_t s = static_cast<uint64_t>(seed_), s2 = static_cast<uint64_t>(seed2_);
    if (reshuffle_) {
      // The iterator's seeds: the next two samples of the dataset's generator.
      const uint64_t k = NextPass(epochs_, ctx);
      Philox4x32 generator(s, s2);
      generator.Skip(k / 2);  // two samples per iterator, four per block
      if (k % 2 == 1) {
        generator.Next();
        generator.Next();
      }
      s = generator.Next();
      s2 = generator.Next();
    }
    return std::make_unique<Iterator>(this, ctx, s, s2);
  }

 private:
  class Iterator : public DatasetIterator<ShuffleDataset> {
   public:
    Iterator(const ShuffleDataset* d, const IteratorContext& ctx, uint64_t seed, uint64_t seed2)
        : DatasetIterator(d),
          input_(d->input_->MakeIteratorInternal(ctx)),
          rng_(seed, seed2),
          buffer_(static_cast<size_t>(d->buffer_size_)),
          account_(ctx.model ? ctx.model->memory() : nullptr, "Shuffle") {}

    Status GetNext(Element* out, bool* end_of_sequence) override {
      const int64_t n = dataset_->buffer_size_;
      // Under a memory budget without room, the buffer fills only as far
      // as the budget allows (at least one element).
      while (!input_done_ && end_ - start_ < n && (end_ == start_ || account_.HasRoom())) {
        bool end = false;
        Element& slot = buffer_[static_cast<size_t>(end_ % n)];
        SLUICE_RETURN_IF_ERROR(input_->GetNext(&slot, &end));
        if (end) {
          input_done_ = true;
          break;
        }
        Status charged = account_.ChargeNoWait(ElementBytes(slot));
        if (!charged.ok()) {
          slot.clear();
          return charged;
        }
        ++end_;
      }
      if (end_ == start_) {
        *end_of_sequence = true;
        return Status();
      }
      const int64_t offset = static_cast<int64_t>(rng_.Next()) % (end_ - start_);
      const size_t index = static_cast<size_t>((start_ + offset) % n);
      *out = std::move(buffer_[index]);
      account_.Release(ElementBytes(*out));
      std::swap(buffer_[index], buffer_[static_cast<size_t>(start_ % n)]);
      ++start_;
      *end_of_sequence = false;
      return Status();
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    Philox4x32 rng_;
    std::vector<Element> buffer_;  // a ring: the live elements are [start_, end_) mod size
    int64_t start_ = 0;
    int64_t end_ = 0;
    bool input_done_ = false;
    BudgetAccount account_;
  };

  const DatasetPtr input_;
  const int64_t buffer_size_;
  const int64_t seed_, seed2_;
  const bool reshuffle_;
  mutable std::atomic<uint64_t> epochs_{0};  // iterators made so far
};

}  // namespace

Result<DatasetPtr> Shuffle(DatasetPtr input, int64_t buffer_size, int64_t seed, int64_t seed2,
                           bool reshuffle_each_iteration) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "shuffle"));
  if (buffer_size == kAutotune) buffer_size = 1 << 20;  // TF: an unbounded buffer; here a large one
  if (buffer_size < 1) return InvalidArgument("buffer_size must be greater than zero.");
  if (seed == 0 && seed2 == 0) {  // TF's convention: both 0 means nondeterministic
    std::random_device rd;
    seed = static_cast<int64_t>((uint64_t{rd()} << 32) | rd());
    seed2 = static_cast<int64_t>((uint64_t{rd()} << 32) | rd());
  }
  return DatasetPtr(
      std::make_shared<ShuffleDataset>(std::move(input), buffer_size, seed, seed2, reshuffle_each_iteration));
}

}  // namespace sluice::data
