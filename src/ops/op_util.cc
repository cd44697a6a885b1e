#include "op_util.h"

namespace sluice::ops::internal {

Result<std::vector<std::string_view>> StringViews(const Tensor& t, std::string_view what, bool require_rank1) {
  if (t.dtype() != DType::kString || (require_rank1 && t.rank() != 1)) {
    return errors::InvalidArgument(what, " must be a ", require_rank1 ? "rank-1 " : "", "string tensor, not ",
                                   DTypeName(t.dtype()), " ", t.shape().DebugString());
  }
  const std::string* s = t.data<std::string>();
  std::vector<std::string_view> views(s, s + t.num_elements());
  return views;
}

}  // namespace sluice::ops::internal
