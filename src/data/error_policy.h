// Error policies (datasets.h, "Error policy"): the per-tree ErrorReport of
// the errors they handled, the per-iterator ErrorHandler a reader or map
// applies to its own errors, and ErrorPolicyDataset, which applies one to
// every error of a dataset (the readers'). Private to src/data.
//
// Thread-safety: ErrorReport and ErrorHandler are thread-safe (a parallel
// map's workers share one handler).
// Ownership: the Model owns the tree's ErrorReport; handlers keep it alive.
#ifndef SLUICE_SRC_DATA_ERROR_POLICY_H_
#define SLUICE_SRC_DATA_ERROR_POLICY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/core/mutex.h"
#include "sluice/data/datasets.h"

namespace sluice::data {

class Model;

// The errors handled in one tree, per kind (stage, code).
class ErrorReport {
 public:
  // Counts `s` under its kind and keeps it as an example while the kind has
  // fewer than kMaxErrorExamples. True the first time the kind is seen (the
  // caller logs it then, once per kind).
  bool Record(const std::string& stage, ErrorPolicy policy, const Status& s) SLUICE_EXCLUDES(mu_);
  std::vector<ErrorKindStats> Snapshot() const SLUICE_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::vector<ErrorKindStats> kinds_ SLUICE_GUARDED_BY(mu_);
};

// True for the errors no policy handles: Cancelled, and the memory
// budget's ResourceExhausted (payload "ram_budget").
bool PassesEveryPolicy(const Status& s);
// The memory budget's errors carry this payload.
inline constexpr char kRamBudgetPayload[] = "ram_budget";

// Zeros of `spec` (unknown dimensions 0, strings empty): kReplace's default
// substitute. InvalidArgument if a dtype is unknown.
Result<Element> ZeroElement(const ElementSpec& spec);

// InvalidArgument if `policy` gives a replacement that does not match
// `spec` (number of components, known dtypes and shapes).
Status CheckReplacement(const StageErrorPolicy& policy, const ElementSpec& spec);

// One stage's policy for one iterator. The policy is resolved at the first
// error: the stage's own, else the tree's Options.error_policy, else kFail.
class ErrorHandler {
 public:
  ErrorHandler(const IteratorContext& ctx, std::string stage, StageErrorPolicy policy, const ElementSpec& spec);

  // What the stage returns for `s`, an error of one of its own elements:
  // kFail (and PassesEveryPolicy errors): `s`. kSkip: OK with *skip = true
  // (counted in skipped_errors and reported). kReplace: OK with *out the
  // substitute (reported); `s` with a note if there is none (no
  // replacement and an unknown dtype). Thread-safe.
  [[nodiscard]] Status Handle(Status s, Element* out, bool* skip);

 private:
  void Resolve();

  const std::string stage_;
  const StageErrorPolicy own_;
  const ElementSpec spec_;
  const std::shared_ptr<Model> model_;  // may be null
  const std::shared_ptr<std::atomic<int64_t>> skipped_;
  std::once_flag resolved_;
  ErrorPolicy policy_ = ErrorPolicy::kFail;  // set once by Resolve
  Result<Element> substitute_ = Element{};   // kReplace's, set once by Resolve
};

// `input` with every error of its elements handled by `policy` as the
// errors of stage `stage` (a reader's DebugName). DebugName and origin()
// are the input's.
DatasetPtr WithErrorPolicy(DatasetPtr input, std::string stage, StageErrorPolicy policy);

// A copy of `map` (a Map dataset) with its own error policy `policy`;
// null if `map` is not a Map (map.cc).
DatasetPtr MapWithErrorPolicy(const DatasetPtr& map, StageErrorPolicy policy);

}  // namespace sluice::data

#endif  // SLUICE_SRC_DATA_ERROR_POLICY_H_
