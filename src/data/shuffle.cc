// Shuffle: a buffer of buffer_size elements; each GetNext hands out a
// uniformly chosen one and refills its place from the input.
#include <atomic>
#include <random>
#include <utility>

#include "data/dataset_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// SplitMix64's finaliser: seeds of (seed, epoch) that differ in one bit give
// unrelated streams.
uint64_t Mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class ShuffleDataset : public DatasetBase {
 public:
  ShuffleDataset(DatasetPtr input, int64_t buffer_size, uint64_t seed, bool reshuffle)
      : DatasetBase(input->element_spec()),
        input_(std::move(input)),
        buffer_size_(buffer_size),
        seed_(seed),
        reshuffle_(reshuffle) {}

  int64_t cardinality() const override { return input_->cardinality(); }
  std::string DebugName() const override { return "Shuffle"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    // Each iterator is one epoch; the epoch counter is the only mutable state.
    const uint64_t epoch = reshuffle_ ? epochs_.fetch_add(1, std::memory_order_relaxed) : 0;
    return std::make_unique<Iterator>(this, ctx, Mix(Mix(seed_) ^ epoch));
  }

 private:
  class Iterator : public DatasetIterator<ShuffleDataset> {
   public:
    Iterator(const ShuffleDataset* d, const IteratorContext& ctx, uint64_t seed)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), rng_(seed) {}

    Status GetNext(Element* out, bool* end_of_sequence) override {
      while (!input_done_ && static_cast<int64_t>(buffer_.size()) < dataset_->buffer_size_) {
        Element e;
        bool end = false;
        SLUICE_RETURN_IF_ERROR(input_->GetNext(&e, &end));
        if (end) {
          input_done_ = true;
          break;
        }
        buffer_.push_back(std::move(e));
      }
      if (buffer_.empty()) {
        *end_of_sequence = true;
        return Status();
      }
      const size_t i = static_cast<size_t>(rng_() % buffer_.size());
      std::swap(buffer_[i], buffer_.back());
      *out = std::move(buffer_.back());
      buffer_.pop_back();
      *end_of_sequence = false;
      return Status();
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    std::mt19937_64 rng_;
    std::vector<Element> buffer_;
    bool input_done_ = false;
  };

  const DatasetPtr input_;
  const int64_t buffer_size_;
  const uint64_t seed_;
  const bool reshuffle_;
  mutable std::atomic<uint64_t> epochs_{0};
};

}  // namespace

Result<DatasetPtr> Shuffle(DatasetPtr input, int64_t buffer_size, std::optional<uint64_t> seed,
                           bool reshuffle_each_iteration) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "shuffle"));
  if (buffer_size < 1) return InvalidArgument("buffer_size must be greater than zero.");
  const uint64_t s = seed ? *seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  return DatasetPtr(std::make_shared<ShuffleDataset>(std::move(input), buffer_size, s, reshuffle_each_iteration));
}

}  // namespace sluice::data
