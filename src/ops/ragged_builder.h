// Building RaggedFeature results (private to the ops layer).
//
// A RaggedFeature's values are cut into rows by its partitions, innermost
// (last) first, as tf.io.RaggedFeature does. RaggedBuilder does that for one
// unit at a time (a record, or a feature-list row), checks that each
// partition fits the level below it, and appends the unit's splits to the
// splits of the units before it. The batch (and, for feature lists, the rows)
// then add outer splits over the units' outermost item counts.
#ifndef SLUICE_SRC_OPS_RAGGED_BUILDER_H_
#define SLUICE_SRC_OPS_RAGGED_BUILDER_H_

#include <cstdint>
#include <span>
#include <vector>

#include "example_plan.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::ops::internal {

// A ValueRowIds partition may imply empty rows beyond its values, up to this
// many more than there are values (a guard against huge allocations).
inline constexpr int64_t kMaxImpliedEmptyRows = int64_t{1} << 24;

class RaggedBuilder {
 public:
  explicit RaggedBuilder(std::span<const PartitionPlan> partitions);

  // Adds a unit of `num_values` values; parts[p] holds partition p's values
  // in that unit (ignored for a uniform row length). Sets *top to the unit's
  // number of outermost items (num_values without partitions).
  // InvalidArgument, with a message describing the mismatch, when a
  // partition does not fit.
  Status AddUnit(int64_t num_values, std::span<const std::span<const int64_t>> parts, int64_t* top);

  // One splits vector per partition, outermost first, over all units so far.
  const std::vector<std::vector<int64_t>>& levels() const { return levels_; }

 private:
  std::span<const PartitionPlan> partitions_;
  std::vector<std::vector<int64_t>> levels_;
  std::vector<std::vector<int64_t>> local_;  // scratch: this unit's splits
};

// Splits [0, c0, c0 + c1, ...] from item counts.
std::vector<int64_t> SplitsFromCounts(std::span<const int64_t> counts);

// `splits` as a tensor of `dtype` (kInt32 or kInt64). InvalidArgument if a
// value does not fit int32.
Result<Tensor> SplitsTensor(std::span<const int64_t> splits, DType dtype);

}  // namespace sluice::ops::internal

#endif  // SLUICE_SRC_OPS_RAGGED_BUILDER_H_
