// Small helpers shared by the ops (private to the ops layer).
#ifndef SLUICE_SRC_OPS_OP_UTIL_H_
#define SLUICE_SRC_OPS_OP_UTIL_H_

#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::ops::internal {

// Views of the strings of a string tensor of any shape, in row-major order.
// InvalidArgument (naming the argument `what`) for another dtype, or, with
// require_rank1, another rank. The views live as long as the tensor's buffer.
Result<std::vector<std::string_view>> StringViews(const Tensor& t, std::string_view what, bool require_rank1);

}  // namespace sluice::ops::internal

#endif  // SLUICE_SRC_OPS_OP_UTIL_H_
