#include "sluice/data/dataset.h"

#include <algorithm>
#include <thread>

#include "data/dataset_util.h"

namespace sluice::data {
namespace {

// The iterator MakeIterator returns: owns the tree's CancellationManager and
// cancels it before destroying the tree, so every blocked worker wakes.
class RootIterator : public IteratorBase {
 public:
  RootIterator(const IteratorContext& ctx, std::unique_ptr<IteratorBase> inner)
      : cm_(ctx.cancellation), skipped_errors_(ctx.skipped_errors), inner_(std::move(inner)) {}
  ~RootIterator() override {
    cm_->StartCancel();
    inner_.reset();
  }

  Status GetNext(Element* out, bool* end_of_sequence) override {
    Status s = inner_->GetNext(out, end_of_sequence);
    if (errors::IsOutOfRange(s)) {
      // OutOfRange would read as the end of the sequence to a caller.
      return Status(Code::kInternal, "an iterator returned OutOfRange instead of end_of_sequence: " + s.message());
    }
    return s;
  }

  int64_t skipped_errors() const override { return skipped_errors_->load(std::memory_order_relaxed); }
  const ElementOrigin* origin() const override { return inner_->origin(); }

 private:
  std::shared_ptr<CancellationManager> cm_;
  std::shared_ptr<std::atomic<int64_t>> skipped_errors_;
  std::unique_ptr<IteratorBase> inner_;
};

}  // namespace

int64_t AutotuneParallelism() {
  return std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
}

std::string ElementSpec::DebugString() const {
  std::string s = "(";
  for (size_t i = 0; i < size(); ++i) {
    if (i > 0) s += ", ";
    if (!names.empty()) s += names[i] + ": ";
    s += std::string(dtypes[i] == DType::kInvalid ? "?" : DTypeName(dtypes[i])) + shapes[i].DebugString();
  }
  return s + ")";
}

namespace {

std::unique_ptr<IteratorBase> MakeRootIterator(const DatasetBase& dataset, bool probe) {
  IteratorContext ctx{std::make_shared<CancellationManager>(), std::make_shared<std::atomic<int64_t>>(0), probe};
  std::unique_ptr<IteratorBase> inner = dataset.MakeIteratorInternal(ctx);
  return std::make_unique<RootIterator>(ctx, std::move(inner));
}

}  // namespace

std::unique_ptr<IteratorBase> DatasetBase::MakeIterator() const { return MakeRootIterator(*this, false); }

std::unique_ptr<IteratorBase> DatasetBase::MakeProbeIterator() const { return MakeRootIterator(*this, true); }

CancelRegistration::CancelRegistration(const IteratorContext& ctx, std::function<void()> on_cancel)
    : cm_(ctx.cancellation) {
  if (!cm_) return;
  token_ = cm_->NewToken();
  if (!cm_->RegisterCallback(token_, on_cancel)) {
    token_ = CancellationManager::kInvalidToken;
    on_cancel();
  }
}

CancelRegistration::~CancelRegistration() {
  if (token_ != CancellationManager::kInvalidToken) cm_->DeregisterCallback(token_);
}

Status CheckInput(const DatasetPtr& input, std::string_view op) {
  if (!input) return InvalidArgument(std::string(op) + ": the input dataset is null");
  return Status();
}

}  // namespace sluice::data
