#include "sluice/data/dataset.h"

#include <algorithm>
#include <thread>

#include "data/dataset_util.h"
#include "data/model.h"

namespace sluice::data {
namespace {

// The iterator MakeIterator returns: owns the tree's CancellationManager and
// cancels it before destroying the tree, so every blocked worker wakes; owns
// the tree's Model, whose tuner it starts on the first GetNext and stops
// before the tree goes. Its node ("Root") times the consumer: busy between
// calls, waiting inside them (sampled).
class RootIterator : public IteratorBase {
 public:
  RootIterator(const IteratorContext& ctx, std::unique_ptr<IteratorBase> inner)
      : cm_(ctx.cancellation),
        skipped_errors_(ctx.skipped_errors),
        model_(ctx.model),
        node_(std::make_shared<Node>("Root", false, 1)),
        inner_(std::move(inner)) {
    model_->SetRootNode(node_);
  }
  ~RootIterator() override {
    cm_->StartCancel();
    model_->Stop();
    inner_.reset();
  }

  std::shared_ptr<Model> model() const override { return model_; }

  // One call in Node::kSampleEvery is timed, with the consumer's time
  // after it.
  Status GetNext(Element* out, bool* end_of_sequence) override {
    if (!started_) {
      started_ = true;
      model_->Start();
    }
    const bool sample = calls_++ % Node::kSampleEvery == 0;
    const int64_t start = sample || gap_start_ns_ != 0 ? NowNanos() : 0;
    if (gap_start_ns_ != 0) {
      Node::Bump(node_->busy_ns, (start - gap_start_ns_) * Node::kSampleEvery);
      gap_start_ns_ = 0;
    }
    Status s = inner_->GetNext(out, end_of_sequence);
    if (sample) {
      gap_start_ns_ = NowNanos();
      Node::Bump(node_->wait_ns, (gap_start_ns_ - start) * Node::kSampleEvery);
    }
    if (s.ok() && !*end_of_sequence) Node::Bump(node_->elements, 1);
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
  const std::shared_ptr<Model> model_;
  const std::shared_ptr<Node> node_;
  std::unique_ptr<IteratorBase> inner_;
  bool started_ = false;
  uint64_t calls_ = 0;
  int64_t gap_start_ns_ = 0;  // the return of a timed call; 0 if the last was not timed
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
  IteratorContext ctx{std::make_shared<CancellationManager>(), std::make_shared<std::atomic<int64_t>>(0), probe,
                      std::make_shared<Model>()};
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
