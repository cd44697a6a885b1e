// Error policies: ParseErrorPolicy, ErrorReport, ErrorHandler,
// ErrorPolicyDataset (error_policy.h) and IteratorErrors (datasets.h).
#include "data/error_policy.h"

#include <cstdlib>
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "sluice/core/logging.h"
#include "sluice/data/checkpoint.h"

namespace sluice::data {

Result<ErrorPolicy> ParseErrorPolicy(std::string_view name) {
  if (name == "fail") return ErrorPolicy::kFail;
  if (name == "skip") return ErrorPolicy::kSkip;
  if (name == "replace") return ErrorPolicy::kReplace;
  return InvalidArgument("error_policy must be 'fail', 'skip' or 'replace', not '" + std::string(name) + "'");
}

std::string_view ErrorPolicyName(ErrorPolicy policy) {
  switch (policy) {
    case ErrorPolicy::kFail:
      return "fail";
    case ErrorPolicy::kSkip:
      return "skip";
    case ErrorPolicy::kReplace:
      return "replace";
  }
  return "fail";
}

bool PassesEveryPolicy(const Status& s) {
  return errors::IsCancelled(s) || (errors::IsResourceExhausted(s) && s.GetPayload(kRamBudgetPayload));
}

Result<Element> ZeroElement(const ElementSpec& spec) {
  Element out;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec.dtypes[i] == DType::kInvalid) {
      return InvalidArgument("error_policy 'replace': component " + std::to_string(i) +
                             " has no known dtype; give a replacement element");
    }
    TensorShape shape;
    if (spec.shapes[i].rank_known()) {
      for (int64_t d : spec.shapes[i].dims()) shape.AddDim(d < 0 ? 0 : d);
    }
    out.push_back(Tensor::Zeros(spec.dtypes[i], shape));
  }
  return out;
}

Status CheckReplacement(const StageErrorPolicy& policy, const ElementSpec& spec) {
  if (!policy.replacement) return Status();
  const Element& r = *policy.replacement;
  if (r.size() != spec.size()) {
    return InvalidArgument("error_policy: the replacement has " + std::to_string(r.size()) +
                           " components, the elements " + std::to_string(spec.size()));
  }
  for (size_t i = 0; i < r.size(); ++i) {
    if ((spec.dtypes[i] != DType::kInvalid && r[i].dtype() != spec.dtypes[i]) ||
        !spec.shapes[i].IsCompatibleWith(r[i].shape())) {
      return InvalidArgument("error_policy: the replacement's component " + std::to_string(i) + " (" +
                             std::string(DTypeName(r[i].dtype())) + r[i].shape().DebugString() +
                             ") does not match the elements' " + spec.DebugString());
    }
  }
  return Status();
}

// ---- ErrorReport ----------------------------------------------------------------------

namespace {

int64_t PayloadInt(const Status& s, std::string_view key) {
  std::optional<std::string> v = s.GetPayload(key);
  return v ? std::strtoll(v->c_str(), nullptr, 10) : -1;
}

ErrorExample ExampleOf(const Status& s) {
  ErrorExample e;
  e.file = s.GetPayload("file").value_or("");
  e.record = PayloadInt(s, "record");
  e.offset = PayloadInt(s, "offset");
  e.element = PayloadInt(s, "element");
  e.message = s.message();
  return e;
}

}  // namespace

bool ErrorReport::Record(const std::string& stage, ErrorPolicy policy, const Status& s) {
  MutexLock lock(&mu_);
  for (ErrorKindStats& k : kinds_) {
    if (k.stage != stage || k.code != s.code()) continue;
    ++k.count;
    if (k.examples.size() < kMaxErrorExamples) k.examples.push_back(ExampleOf(s));
    return false;
  }
  kinds_.push_back(ErrorKindStats{stage, s.code(), policy, 1, {ExampleOf(s)}});
  return true;
}

std::vector<ErrorKindStats> ErrorReport::Snapshot() const {
  MutexLock lock(&mu_);
  return kinds_;
}

std::vector<ErrorKindStats> IteratorErrors(const IteratorBase& root) {
  std::shared_ptr<Model> m = root.model();
  return m ? m->errors()->Snapshot() : std::vector<ErrorKindStats>{};
}

// ---- ErrorHandler ---------------------------------------------------------------------

ErrorHandler::ErrorHandler(const IteratorContext& ctx, std::string stage, StageErrorPolicy policy,
                           const ElementSpec& spec)
    : stage_(std::move(stage)),
      own_(std::move(policy)),
      spec_(spec),
      model_(ctx.model),
      skipped_(ctx.skipped_errors) {}

void ErrorHandler::Resolve() {
  std::optional<ErrorPolicy> p = own_.policy;
  if (!p && model_) p = model_->options().error_policy;
  policy_ = p.value_or(ErrorPolicy::kFail);
  if (policy_ == ErrorPolicy::kReplace) {
    substitute_ = own_.replacement ? Result<Element>(*own_.replacement) : ZeroElement(spec_);
  }
}

Status ErrorHandler::Handle(Status s, Element* out, bool* skip) {
  *skip = false;
  if (s.ok() || PassesEveryPolicy(s)) return s;
  std::call_once(resolved_, [this] { Resolve(); });
  if (policy_ == ErrorPolicy::kFail) return s;
  if (policy_ == ErrorPolicy::kReplace && !substitute_.ok()) {
    return Status(s.code(), s.message() + " (" + substitute_.status().message() + ")");
  }
  const bool first = !model_ || model_->errors()->Record(stage_, policy_, s);
  if (first) {
    std::string text = "sluice.data: error_policy '" + std::string(ErrorPolicyName(policy_)) + "' in " + stage_ +
                       ": " + s.ToString();
    for (const auto& [key, value] : s.payloads()) text += " [" + key + ": " + value + "]";
    LogWarning(text + " (further errors of this kind are counted, not logged: see the iterator's stats)");
  }
  if (policy_ == ErrorPolicy::kSkip) {
    if (skipped_) skipped_->fetch_add(1, std::memory_order_relaxed);
    *skip = true;
    return Status();
  }
  *out = *substitute_;
  return Status();
}

// ---- ErrorPolicyDataset ---------------------------------------------------------------

namespace {

class ErrorPolicyDataset : public DatasetBase {
 public:
  ErrorPolicyDataset(DatasetPtr input, std::string stage, StageErrorPolicy policy)
      : DatasetBase(input->element_spec()),
        input_(std::move(input)),
        stage_(std::move(stage)),
        policy_(std::move(policy)) {}
  int64_t cardinality() const override {
    return policy_.policy == ErrorPolicy::kSkip ? kUnknownCardinality : input_->cardinality();
  }
  std::string DebugName() const override { return input_->DebugName(); }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }
  const DatasetPtr& input() const { return input_; }
  const std::string& stage() const { return stage_; }

 private:
  class Iterator : public DatasetIterator<ErrorPolicyDataset> {
   public:
    Iterator(const ErrorPolicyDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d),
          input_(d->input_->MakeIteratorInternal(ctx)),
          handler_(ctx, d->stage_, d->policy_, d->element_spec()) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      while (true) {
        Status s = input_->GetNext(out, end_of_sequence);
        if (s.ok()) return s;
        bool skip = false;
        SLUICE_RETURN_IF_ERROR(handler_.Handle(std::move(s), out, &skip));
        if (!skip) {
          *end_of_sequence = false;
          return Status();
        }
      }
    }
    const ElementOrigin* origin() const override { return input_->origin(); }
    // No state of its own: the input's, as if this stage were not there.
    Status Save(IteratorStateWriter* w) override { return input_->Save(w); }
    Status Restore(IteratorStateReader* r) override { return input_->Restore(r); }

   private:
    std::unique_ptr<IteratorBase> input_;
    ErrorHandler handler_;
  };

  const DatasetPtr input_;
  const std::string stage_;
  const StageErrorPolicy policy_;
};

}  // namespace

Result<DatasetPtr> WithStageErrorPolicy(const DatasetPtr& stage, StageErrorPolicy policy) {
  SLUICE_RETURN_IF_ERROR(CheckInput(stage, "error_policy"));
  SLUICE_RETURN_IF_ERROR(CheckReplacement(policy, stage->element_spec()));
  if (DatasetPtr map = MapWithErrorPolicy(stage, policy)) return map;
  if (const auto* own = dynamic_cast<const ErrorPolicyDataset*>(stage.get())) {
    return WithErrorPolicy(own->input(), own->stage(), std::move(policy));
  }
  return WithErrorPolicy(stage, stage->DebugName(), std::move(policy));
}

DatasetPtr WithErrorPolicy(DatasetPtr input, std::string stage, StageErrorPolicy policy) {
  return std::make_shared<ErrorPolicyDataset>(std::move(input), std::move(stage), std::move(policy));
}

}  // namespace sluice::data
