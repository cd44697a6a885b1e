// Process-wide unique name scopes, as TensorFlow makes name scopes unique in
// a graph: the first "batch" is "batch", the next "batch_1", then "batch_2".
// The input builders name their queues after them, so AllQueueStats() can
// tell the stages of a pipeline apart. Private to the train layer.
#ifndef SLUICE_SRC_TRAIN_NAME_SCOPE_H_
#define SLUICE_SRC_TRAIN_NAME_SCOPE_H_

#include <string>
#include <string_view>

namespace sluice::train::internal {

// `base`, or `base`_<n> if `base` was handed out before. Thread-safe.
std::string UniqueScope(std::string_view base);

}  // namespace sluice::train::internal

#endif  // SLUICE_SRC_TRAIN_NAME_SCOPE_H_
