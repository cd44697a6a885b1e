// Interleave: TF's InterleaveDataset order (cycle_length open datasets,
// block_length elements from each in turn, a finished one replaced by the
// next input element in its place). With num_parallel_calls each open
// dataset is read ahead by a prefetching iterator on its own thread; the
// order stays the deterministic one. A checkpoint holds the cycle's
// counters and, per open input, the element that opened it (the function
// makes its dataset again on restore) and that input's own position.
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/prefetch.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class InterleaveDataset : public DatasetBase {
 public:
  InterleaveDataset(DatasetPtr input, InterleaveFn fn, ElementSpec spec, InterleaveOptions options)
      : DatasetBase(std::move(spec)), input_(std::move(input)), fn_(std::move(fn)), options_(options) {}

  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return options_.num_parallel_calls ? "ParallelInterleave" : "Interleave"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<InterleaveDataset> {
   public:
    Iterator(const InterleaveDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d),
          ctx_(ctx),
          input_(d->input_->MakeIteratorInternal(ctx)),
          current_(static_cast<size_t>(d->options_.cycle_length == kAutotune ? AutotuneParallelism()
                                                                             : d->options_.cycle_length)),
          opened_by_(current_.size()),
          node_(NewNode(ctx, d->DebugName(), false,
                        d->options_.num_parallel_calls ? static_cast<int64_t>(current_.size()) : 1)) {}

    Status GetNext(Element* out, bool* end_of_sequence) override {
      last_ = nullptr;
      const int64_t block_length = dataset_->options_.block_length;
      while (!end_of_input_ || num_open_ > 0) {
        std::unique_ptr<IteratorBase>& slot = current_[cycle_index_];
        if (slot) {
          bool end = false;
          SLUICE_RETURN_IF_ERROR(slot->GetNext(out, &end));
          if (!end) {
            last_ = slot.get();
            Node::Bump(node_->elements, 1);
            if (++block_index_ == block_length) Advance();
            *end_of_sequence = false;
            return Status();
          }
          slot.reset();
          --num_open_;
          Advance();
        } else if (!end_of_input_) {
          Element e;
          SLUICE_RETURN_IF_ERROR(input_->GetNext(&e, &end_of_input_));
          if (!end_of_input_) {
            SLUICE_RETURN_IF_ERROR(Open(e, &slot));
            opened_by_[cycle_index_] = std::move(e);
            ++num_open_;
          }
        } else {
          Advance();
        }
      }
      *end_of_sequence = true;
      return Status();
    }

    // The origin of the element from the cycle's iterator that returned it.
    const ElementOrigin* origin() const override { return last_ ? last_->origin() : nullptr; }
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("cycle_length", static_cast<int64_t>(current_.size()));
      w->WriteInt("cycle_index", static_cast<int64_t>(cycle_index_));
      w->WriteInt("block_index", block_index_);
      w->WriteInt("num_open", num_open_);
      w->WriteBool("end_of_input", end_of_input_);
      for (size_t i = 0; i < current_.size(); ++i) {
        const std::string key = "slot." + std::to_string(i);
        w->WriteBool(key + ".open", current_[i] != nullptr);
        if (!current_[i]) continue;
        w->WriteElement(key + ".opened_by", opened_by_[i]);
        IteratorStateWriter slot = w->Child("slot_" + std::to_string(i));
        SLUICE_RETURN_IF_ERROR(current_[i]->Save(&slot));
      }
      // Saved even once ended: its passes decide the next epochs' orders.
      return SaveInput(*input_, w);
    }

    // The cycle takes the saved length (an AUTOTUNE cycle_length may differ
    // on this machine); each open input is made again from its element.
    Status Restore(IteratorStateReader* r) override {
      int64_t cycle_length = 0, cycle_index = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("cycle_length", &cycle_length));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("cycle_index", &cycle_index));
      if (cycle_length < 1 || cycle_index < 0 || cycle_index >= cycle_length) {
        return InvalidArgument("interleave checkpoint: cycle index " + std::to_string(cycle_index) +
                               " outside a cycle of " + std::to_string(cycle_length));
      }
      SLUICE_RETURN_IF_ERROR(r->ReadInt("block_index", &block_index_));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("num_open", &num_open_));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("end_of_input", &end_of_input_));
      cycle_index_ = static_cast<size_t>(cycle_index);
      current_.clear();
      current_.resize(static_cast<size_t>(cycle_length));
      opened_by_.assign(current_.size(), Element());
      for (size_t i = 0; i < current_.size(); ++i) {
        const std::string key = "slot." + std::to_string(i);
        bool open = false;
        SLUICE_RETURN_IF_ERROR(r->ReadBool(key + ".open", &open));
        if (!open) continue;
        SLUICE_RETURN_IF_ERROR(r->ReadElement(key + ".opened_by", &opened_by_[i]));
        SLUICE_RETURN_IF_ERROR(Open(opened_by_[i], &current_[i]));
        IteratorStateReader slot = r->Child("slot_" + std::to_string(i));
        SLUICE_RETURN_IF_ERROR(current_[i]->Restore(&slot));
      }
      last_ = nullptr;
      return RestoreInput(*input_, r);
    }

   private:
    void Advance() {
      block_index_ = 0;
      cycle_index_ = (cycle_index_ + 1) % current_.size();
    }

    Status Open(Element e, std::unique_ptr<IteratorBase>* slot) {
      Result<DatasetPtr> ds = dataset_->fn_(std::move(e));
      if (!ds.ok()) return ds.status();
      if (!*ds) return InvalidArgument("interleave: the function returned no dataset");
      // The iterator keeps its dataset alive.
      std::unique_ptr<IteratorBase> it = (*ds)->MakeIteratorInternal(ctx_);
      if (dataset_->options_.num_parallel_calls) {
        const size_t ahead = static_cast<size_t>(std::max<int64_t>(dataset_->options_.block_length, 2));
        it = MakePrefetchIterator(std::move(it), ahead, ctx_, *ds);
      }
      *slot = std::move(it);
      return Status();
    }

    const IteratorContext ctx_;
    std::unique_ptr<IteratorBase> input_;
    std::vector<std::unique_ptr<IteratorBase>> current_;
    std::vector<Element> opened_by_;  // the input element that opened current_[i]
    size_t cycle_index_ = 0;
    int64_t block_index_ = 0;
    int64_t num_open_ = 0;
    bool end_of_input_ = false;
    const std::shared_ptr<Node> node_;
    IteratorBase* last_ = nullptr;  // the iterator of the element GetNext returned last
  };

  const DatasetPtr input_;
  const InterleaveFn fn_;
  const InterleaveOptions options_;
};

}  // namespace

Result<DatasetPtr> Interleave(DatasetPtr input, InterleaveFn fn, ElementSpec out_spec, InterleaveOptions options) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "interleave"));
  if (!fn) return InvalidArgument("interleave: the function is empty");
  if (options.cycle_length != kAutotune && options.cycle_length < 1) {
    return InvalidArgument("cycle_length must be positive or AUTOTUNE");
  }
  if (options.block_length < 1) return InvalidArgument("block_length must be positive");
  if (options.num_parallel_calls && *options.num_parallel_calls != kAutotune && *options.num_parallel_calls < 1) {
    return InvalidArgument("num_parallel_calls must be positive or AUTOTUNE");
  }
  return DatasetPtr(std::make_shared<InterleaveDataset>(std::move(input), std::move(fn), std::move(out_spec), options));
}

}  // namespace sluice::data
