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
#include "data/record_source.h"
#include "data/model.h"
#include "data/stage_timer.h"
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
    // A probe wants one element of the input, not a filled buffer.
    if (ctx.probe) return input_->MakeIteratorInternal(ctx);
    return std::make_unique<Iterator>(this, ctx, reshuffle_ ? NextPass(epochs_, ctx) : 0);
  }

 private:
  // The seeds of iterator `k`.
  std::pair<uint64_t, uint64_t> SeedsOf(uint64_t k) const {
    uint64_t s = static_cast<uint64_t>(seed_), s2 = static_cast<uint64_t>(seed2_);
    if (reshuffle_) {
      // The iterator's seeds: the next two samples of the dataset's generator.
      Philox4x32 generator(s, s2);
      generator.Skip(k / 2);  // two samples per iterator, four per block
      if (k % 2 == 1) {
        generator.Next();
        generator.Next();
      }
      s = generator.Next();
      s2 = generator.Next();
    }
    return {s, s2};
  }

  class Iterator : public DatasetIterator<ShuffleDataset> {
   public:
    Iterator(const ShuffleDataset* d, const IteratorContext& ctx, uint64_t pass)
        : DatasetIterator(d),
          input_(d->input_->MakeIteratorInternal(ctx)),
          pass_(pass),
          rng_(d->SeedsOf(pass).first, d->SeedsOf(pass).second),
          buffer_(static_cast<size_t>(d->buffer_size_)),
          node_(NewNode(ctx, "Shuffle")),
          account_(ctx.model ? ctx.model->memory() : nullptr, "Shuffle") {
      Node::Set(node_->buffer_size, d->buffer_size_);
    }

    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      const int64_t n = dataset_->buffer_size_;
      // Under a memory budget without room, the buffer fills only as far
      // as the budget allows (at least one element).
      while (!input_done_ && end_ - start_ < n && (end_ == start_ || account_.HasRoom())) {
        bool end = false;
        Element& slot = buffer_[static_cast<size_t>(end_ % n)];
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), &slot, &end));
        if (end) {
          input_done_ = true;
          break;
        }
        Status charged = account_.ChargeNoWait(ElementBytes(slot));
        if (!charged.ok()) {
          slot.clear();
          return charged;
        }
        KeepOrigin(static_cast<size_t>(end_ % n));
        ++end_;
      }
      if (end_ == start_) {
        *end_of_sequence = true;
        return Status();
      }
      const int64_t offset = static_cast<int64_t>(rng_.Next()) % (end_ - start_);
      ++draws_;
      const size_t index = static_cast<size_t>((start_ + offset) % n);
      *out = std::move(buffer_[index]);
      account_.Release(ElementBytes(*out));
      std::swap(buffer_[index], buffer_[static_cast<size_t>(start_ % n)]);
      if (!origins_.empty()) std::swap(origins_[index], origins_[static_cast<size_t>(start_ % n)]);
      ++start_;
      *end_of_sequence = false;
      Node::Set(node_->buffer_fill, end_ - start_);
      return timer.Finish(Status(), *out, false);
    }

    // The live elements are saved in order, from start_ (a record a reader
    // read as its origin, to be re-read on restore); the RNG as its pass and
    // the number of samples drawn.
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("pass", static_cast<int64_t>(pass_));
      w->WriteInt("draws", static_cast<int64_t>(draws_));
      w->WriteBool("input_done", input_done_);
      const int64_t n = dataset_->buffer_size_;
      std::vector<const Element*> live;
      std::vector<const ElementOrigin*> origins;
      for (int64_t i = start_; i < end_; ++i) {
        const auto slot = static_cast<size_t>(i % n);
        live.push_back(&buffer_[slot]);
        origins.push_back(origins_.empty() ? nullptr : &origins_[slot]);
      }
      WriteBufferedElements(w, "buffer", live, origins);
      // The input is saved even once done: its passes (an inner shuffle's
      // seeds) decide the next epochs' orders.
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t pass = 0, draws = 0, live = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("pass", &pass));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("draws", &draws));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("input_done", &input_done_));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("buffer.size", &live));
      if (live < 0 || live > dataset_->buffer_size_) {
        return InvalidArgument("shuffle checkpoint holds " + std::to_string(live) +
                               " elements, more than this shuffle's buffer_size " +
                               std::to_string(dataset_->buffer_size_));
      }
      pass_ = static_cast<uint64_t>(pass);
      if (dataset_->reshuffle_) RestorePass(dataset_->epochs_, pass_);
      const auto [seed, seed2] = dataset_->SeedsOf(pass_);
      rng_ = Philox4x32(seed, seed2);
      draws_ = static_cast<uint64_t>(draws);
      rng_.Skip(draws_ / 4);
      for (uint64_t i = 0; i < draws_ % 4; ++i) rng_.Next();
      std::vector<Element> elements;
      std::vector<ElementOrigin> origins;
      SLUICE_RETURN_IF_ERROR(ReadBufferedElements(*r, "buffer", &elements, &origins));
      start_ = 0;
      end_ = live;
      origins_.clear();
      for (size_t i = 0; i < elements.size(); ++i) {
        buffer_[i] = std::move(elements[i]);
        SLUICE_RETURN_IF_ERROR(account_.ChargeNoWait(ElementBytes(buffer_[i])));  // released as handed out
        if (origins[i].source == nullptr) continue;
        if (origins_.empty()) origins_.resize(buffer_.size());
        origins_[i] = std::move(origins[i]);
      }
      return RestoreInput(*input_, r);
    }

   private:
    // Keeps the origin of the element just read into `slot` where it can be
    // re-read (checkpoints save it instead of the element); the origins are
    // allocated with the first such element.
    void KeepOrigin(size_t slot) {
      const ElementOrigin* o = input_->origin();
      if (o != nullptr && o->source != nullptr) {
        if (origins_.empty()) origins_.resize(buffer_.size());
        origins_[slot] = *o;
      } else if (!origins_.empty()) {
        origins_[slot] = ElementOrigin();
      }
    }

    std::unique_ptr<IteratorBase> input_;
    uint64_t pass_;
    uint64_t draws_ = 0;
    Philox4x32 rng_;
    std::vector<Element> buffer_;  // a ring: the live elements are [start_, end_) mod size
    std::vector<ElementOrigin> origins_;  // beside buffer_, or empty: no element had a re-readable origin
    int64_t start_ = 0;
    int64_t end_ = 0;
    bool input_done_ = false;
    const std::shared_ptr<Node> node_;
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
