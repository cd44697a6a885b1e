// TakeWhile: the elements before the first one a predicate rejects.
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class TakeWhileDataset : public DatasetBase {
 public:
  TakeWhileDataset(DatasetPtr input, PredicateFn predicate)
      : DatasetBase(input->element_spec()), input_(std::move(input)), predicate_(std::move(predicate)) {}
  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "TakeWhile"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<TakeWhileDataset> {
   public:
    Iterator(const TakeWhileDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "TakeWhile")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      if (ended_) {
        *end_of_sequence = true;
        return Status();
      }
      SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
      if (*end_of_sequence) return Status();
      Result<bool> keep = dataset_->predicate_(*out);
      if (!keep.ok()) return keep.status();
      if (!*keep) {
        ended_ = true;  // nothing more is read from the input
        *end_of_sequence = true;
      }
      return timer.Finish(Status(), *out, *end_of_sequence);
    }

    // The input is saved also after the end (its passes number the next
    // epoch's).
    Status Save(IteratorStateWriter* w) override {
      w->WriteBool("ended", ended_);
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      SLUICE_RETURN_IF_ERROR(r->ReadBool("ended", &ended_));
      return RestoreInput(*input_, r);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    bool ended_ = false;  // the predicate has rejected an element
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
  const PredicateFn predicate_;
};

}  // namespace

Result<DatasetPtr> TakeWhile(DatasetPtr input, PredicateFn predicate) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "take_while"));
  if (!predicate) return InvalidArgument("take_while: predicate is empty");
  return DatasetPtr(std::make_shared<TakeWhileDataset>(std::move(input), std::move(predicate)));
}

}  // namespace sluice::data
