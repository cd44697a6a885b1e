#include "sluice/data/dataset.h"

#include <algorithm>
#include <thread>

#include "data/dataset_util.h"
#include "data/model.h"
#include "sluice/data/checkpoint.h"

namespace sluice::data {
namespace {

// The context of a new iterator tree: its own cancellation, error count and
// model.
IteratorContext NewRootContext(bool probe) {
  return IteratorContext{std::make_shared<CancellationManager>(), std::make_shared<std::atomic<int64_t>>(0), probe,
                         std::make_shared<Model>()};
}

// The iterator MakeIterator returns: owns the tree's CancellationManager and
// cancels it before destroying the tree, so every blocked worker wakes; owns
// the tree's Model, whose tuner it starts on the first GetNext and stops
// before the tree goes. Its node ("Root") times the consumer: busy between
// calls, waiting inside them (sampled).
class RootIterator : public IteratorBase {
 public:
  RootIterator(const DatasetBase& dataset, const IteratorContext& ctx, std::unique_ptr<IteratorBase> inner)
      : dataset_(dataset.shared_from_this()),
        probe_(ctx.probe),
        cm_(ctx.cancellation),
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

  Status Save(IteratorStateWriter* w) override {
    w->WriteBytes("pipeline", Fingerprint());
    w->WriteInt("skipped_errors", skipped_errors());
    IteratorStateWriter input = w->Child("input");
    return inner_->Save(&input);
  }

  // Rebuilds the tree (with a fresh context) if this iterator has run, then
  // restores it.
  Status Restore(IteratorStateReader* r) override {
    std::string pipeline;
    SLUICE_RETURN_IF_ERROR(r->ReadBytes("pipeline", &pipeline));
    if (pipeline != Fingerprint()) {
      return Status(Code::kInvalidArgument, "the iterator checkpoint was saved from the pipeline " + pipeline +
                                                ", not from this one: " + Fingerprint());
    }
    if (started_ || dirty_) Rebuild();
    dirty_ = true;
    int64_t skipped = 0;
    SLUICE_RETURN_IF_ERROR(r->ReadInt("skipped_errors", &skipped));
    IteratorStateReader input = r->Child("input");
    Status s = inner_->Restore(&input);
    if (!s.ok()) {
      Rebuild();
      return s;
    }
    skipped_errors_->store(skipped, std::memory_order_relaxed);
    return Status();
  }

 private:
  std::string Fingerprint() const { return dataset_->DebugName() + " " + dataset_->element_spec().DebugString(); }

  void Rebuild() {
    cm_->StartCancel();
    model_->Stop();
    inner_.reset();
    IteratorContext ctx = NewRootContext(probe_);
    cm_ = ctx.cancellation;
    skipped_errors_ = ctx.skipped_errors;
    model_ = ctx.model;
    node_ = std::make_shared<Node>("Root", false, 1);
    model_->SetRootNode(node_);
    inner_ = dataset_->MakeIteratorInternal(ctx);
    started_ = false;
    calls_ = 0;
    gap_start_ns_ = 0;
  }

  const std::shared_ptr<const DatasetBase> dataset_;
  const bool probe_;
  std::shared_ptr<CancellationManager> cm_;
  std::shared_ptr<std::atomic<int64_t>> skipped_errors_;
  std::shared_ptr<Model> model_;
  std::shared_ptr<Node> node_;
  std::unique_ptr<IteratorBase> inner_;
  bool started_ = false;
  bool dirty_ = false;  // restored once: a second Restore rebuilds first
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
  IteratorContext ctx = NewRootContext(probe);
  std::unique_ptr<IteratorBase> inner = dataset.MakeIteratorInternal(ctx);
  return std::make_unique<RootIterator>(dataset, ctx, std::move(inner));
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

Status IteratorBase::Save(IteratorStateWriter*) { return CannotCheckpoint("this iterator"); }
Status IteratorBase::Restore(IteratorStateReader*) { return CannotCheckpoint("this iterator"); }

Status CannotCheckpoint(std::string_view name) {
  return Status(Code::kUnimplemented, std::string(name) +
                                          " cannot be checkpointed: its position cannot be saved and restored");
}

Tensor IntScalarOf(DType dtype, int64_t v) {
  Tensor t(dtype, TensorShape{});
  switch (dtype) {
    case DType::kInt32: t.scalar<int32_t>() = static_cast<int32_t>(v); break;
    case DType::kInt16: t.scalar<int16_t>() = static_cast<int16_t>(v); break;
    case DType::kInt8: t.scalar<int8_t>() = static_cast<int8_t>(v); break;
    case DType::kUInt8: t.scalar<uint8_t>() = static_cast<uint8_t>(v); break;
    case DType::kUInt16: t.scalar<uint16_t>() = static_cast<uint16_t>(v); break;
    case DType::kUInt32: t.scalar<uint32_t>() = static_cast<uint32_t>(v); break;
    case DType::kUInt64: t.scalar<uint64_t>() = static_cast<uint64_t>(v); break;
    case DType::kFloat32: t.scalar<float>() = static_cast<float>(v); break;
    case DType::kFloat64: t.scalar<double>() = static_cast<double>(v); break;
    default: t.scalar<int64_t>() = v; break;
  }
  return t;
}

Status CheckInput(const DatasetPtr& input, std::string_view op) {
  if (!input) return InvalidArgument(std::string(op) + ": the input dataset is null");
  return Status();
}

}  // namespace sluice::data
