// ExampleView: zero-copy access to the features of one serialized
// tf.train.Example, for callers that want the values without building tensors
// (benchmarks, custom decoders, filters on one key).
//
// ExampleView::Parse checks the Example, Features and map-entry levels and
// records where each feature sits; a FeatureView decodes its values on
// demand. Bytes values come back as string_views into the record.
//
// Lifetime: views point into the serialized record, which must outlive them.
// Thread-safety: immutable after Parse; safe to read from many threads.
#ifndef SLUICE_OPS_EXAMPLE_VIEW_H_
#define SLUICE_OPS_EXAMPLE_VIEW_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::ops {

// Which list a tf.train.Feature holds (the oneof's field numbers).
enum class FeatureKind : uint8_t { kNone = 0, kBytes = 1, kFloat = 2, kInt64 = 3 };

// One tf.train.Feature message inside a record.
class FeatureView {
 public:
  FeatureView() = default;
  // InvalidArgument if `serialized` is not a valid Feature message.
  static Result<FeatureView> Parse(std::string_view serialized);

  // kNone for a Feature with no list set.
  FeatureKind kind() const { return kind_; }
  std::string_view serialized() const { return data_; }

  // Append the values. InvalidArgument if the list is malformed or of another
  // kind (appending from a kNone feature adds nothing).
  Status AppendBytes(std::vector<std::string_view>* out) const;
  Status AppendFloats(std::vector<float>* out) const;
  Status AppendInt64s(std::vector<int64_t>* out) const;
  // Number of values; InvalidArgument if malformed.
  Result<int64_t> NumValues() const;

 private:
  friend class ExampleView;
  std::string_view data_;
  FeatureKind kind_ = FeatureKind::kNone;
  uint32_t run_start_ = 0;  // first field of the oneof's final run
};

class ExampleView {
 public:
  // InvalidArgument "Could not parse example input" when `serialized` is not
  // an Example (a malformed Feature inside is reported here too).
  static Result<ExampleView> Parse(std::string_view serialized);

  // The feature of `key`: the last one in the record when the key repeats.
  std::optional<FeatureView> Find(std::string_view key) const;
  // Every map entry in wire order, repeats included.
  const std::vector<std::pair<std::string_view, FeatureView>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string_view, FeatureView>> entries_;
};

}  // namespace sluice::ops

#endif  // SLUICE_OPS_EXAMPLE_VIEW_H_
