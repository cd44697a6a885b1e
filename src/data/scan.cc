// Scan: a function carries a state from element to element.
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class ScanDataset : public DatasetBase {
 public:
  ScanDataset(DatasetPtr input, Element initial_state, ScanFn fn, ElementSpec out_spec)
      : DatasetBase(std::move(out_spec)),
        input_(std::move(input)),
        initial_state_(std::move(initial_state)),
        fn_(std::move(fn)) {}
  int64_t cardinality() const override { return input_->cardinality(); }
  std::string DebugName() const override { return "Scan"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<ScanDataset> {
   public:
    Iterator(const ScanDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d),
          input_(d->input_->MakeIteratorInternal(ctx)),
          state_(d->initial_state_),
          node_(NewNode(ctx, "Scan")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      Element e;
      SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), &e, end_of_sequence));
      if (*end_of_sequence) return Status();
      Result<std::pair<Element, Element>> r = dataset_->fn_(state_, std::move(e));
      if (!r.ok()) {
        // As map: a function's OutOfRange must not end the sequence.
        if (errors::IsOutOfRange(r.status())) {
          return InvalidArgument("Function invocation produced OutOfRangeError: " + r.status().message());
        }
        return r.status();
      }
      SLUICE_RETURN_IF_ERROR(CheckState(r->first));
      state_ = std::move(r->first);
      *out = std::move(r->second);
      return timer.Finish(Status(), *out, false);
    }

    Status Save(IteratorStateWriter* w) override {
      w->WriteElement("state", state_);
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      SLUICE_RETURN_IF_ERROR(r->ReadElement("state", &state_));
      SLUICE_RETURN_IF_ERROR(CheckState(state_));
      return RestoreInput(*input_, r);
    }

   private:
    Status CheckState(const Element& next) const {
      const Element& initial = dataset_->initial_state_;
      bool same = next.size() == initial.size();
      for (size_t i = 0; same && i < next.size(); ++i) same = next[i].dtype() == initial[i].dtype();
      if (same) return Status();
      auto dtypes = [](const Element& e) {
        std::string s = "(";
        for (size_t i = 0; i < e.size(); ++i) s += std::string(i > 0 ? ", " : "") + std::string(DTypeName(e[i].dtype()));
        return s + ")";
      };
      return InvalidArgument("Invalid `scan_func`. The element types for the new state must match the initial "
                             "state. Expected " + dtypes(initial) + ", got " + dtypes(next) + ".");
    }

    std::unique_ptr<IteratorBase> input_;
    Element state_;
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
  const Element initial_state_;
  const ScanFn fn_;
};

}  // namespace

Result<DatasetPtr> Scan(DatasetPtr input, Element initial_state, ScanFn fn, ElementSpec out_spec) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "scan"));
  if (!fn) return InvalidArgument("scan: scan_func is empty");
  return DatasetPtr(
      std::make_shared<ScanDataset>(std::move(input), std::move(initial_state), std::move(fn), std::move(out_spec)));
}

}  // namespace sluice::data
