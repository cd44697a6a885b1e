// IgnoreErrors: elements whose GetNext fails are skipped and counted.
#include <string>
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/core/logging.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// TF's warning, with the status's context payloads (a reader's file, record
// and offset) appended.
std::string WarningOf(const Status& s) {
  std::string out = "Error raised with error message " + s.ToString();
  for (const auto& [key, value] : s.payloads()) out += " [" + key + ": " + value + "]";
  return out;
}

class IgnoreErrorsDataset : public DatasetBase {
 public:
  IgnoreErrorsDataset(DatasetPtr input, bool log_warning)
      : DatasetBase(input->element_spec()), input_(std::move(input)), log_warning_(log_warning) {}
  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "IgnoreErrors"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<IgnoreErrorsDataset> {
   public:
    Iterator(const IgnoreErrorsDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d),
          input_(d->input_->MakeIteratorInternal(ctx)),
          skipped_(ctx.skipped_errors),
          node_(NewNode(ctx, "IgnoreErrors")),
          model_(ctx.model) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      while (true) {
        Status s = timer.Input(input_.get(), out, end_of_sequence);
        if (s.ok() || errors::IsCancelled(s)) return timer.Finish(std::move(s), *out, *end_of_sequence);
        if (skipped_) skipped_->fetch_add(1, std::memory_order_relaxed);
        if (model_) model_->errors()->Record("IgnoreErrors", ErrorPolicy::kSkip, s);
        if (dataset_->log_warning_) LogWarning(WarningOf(s));
      }
    }

    // The skipped count is the root's (it saves it).
    Status Save(IteratorStateWriter* w) override { return SaveInput(*input_, w); }
    Status Restore(IteratorStateReader* r) override { return RestoreInput(*input_, r); }

   private:
    std::unique_ptr<IteratorBase> input_;
    const std::shared_ptr<std::atomic<int64_t>> skipped_;
    const std::shared_ptr<Node> node_;
    const std::shared_ptr<Model> model_;  // its error report; may be null
  };

  const DatasetPtr input_;
  const bool log_warning_;
};

}  // namespace

Result<DatasetPtr> IgnoreErrors(DatasetPtr input, bool log_warning) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "ignore_errors"));
  return DatasetPtr(std::make_shared<IgnoreErrorsDataset>(std::move(input), log_warning));
}

}  // namespace sluice::data
