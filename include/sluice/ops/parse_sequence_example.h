// Parsing serialized tf.train.SequenceExample records, as
// tf.io.parse_single_sequence_example and tf.io.parse_sequence_example do.
//
// A SequenceExample has `context` (a Features map, parsed like an Example)
// and `feature_lists` (name -> FeatureList, a list of Feature rows). The
// decoder works on the wire format directly, with the same protobuf rules as
// parse_example.h (any field order, unknown fields skipped, last value wins
// for a repeated key).
//
// context features:  FixedLenFeature, VarLenFeature, RaggedFeature.
// sequence features: FixedLenSequenceFeature, VarLenFeature, RaggedFeature.
// Sequence outputs (single record; a batch adds a leading dimension):
//   FixedLenSequenceFeature -> Tensor [rows] + shape; row count in `lengths`
//   VarLenFeature           -> SparseTensor, indices [n, 2] (row, position),
//                              dense_shape [rows, max values in a row]
//   RaggedFeature           -> RaggedTensor [rows, (values)], plus one ragged
//                              dimension per partition (partition keys are
//                              feature lists too)
//
// Errors: InvalidArgument naming the record (payload "record") and the
// feature, as for Examples; for feature lists:
//   "Name: <unknown>, Feature list: s, Index: 2.  Data types don't match.
//    Expected type: string"                       (Index: the row)
//   "Name: <unknown>, Key: s, Index: 2.  Number of values != expected.
//    values size: 3 but output shape: [4]"        (Index: the row)
//   "Name: <unknown>, Index: 0, Feature list 's' is required but could not be
//    found.  Did you mean to include it in feature_list_dense_missing_assumed_
//    empty or feature_list_dense_defaults?"       (allow_missing false)
//   "Name: <unknown>, Index: 0.  Could not parse example input, value: '...'"
//
// Difference from TensorFlow: a context FixedLenFeature given as an empty
// Feature (no list set) takes its default, as in an Example; TF's sequence
// parser reports a count mismatch there.
#ifndef SLUICE_OPS_PARSE_SEQUENCE_EXAMPLE_H_
#define SLUICE_OPS_PARSE_SEQUENCE_EXAMPLE_H_

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/feature_spec.h"

namespace sluice::ops {

namespace internal {
struct SequencePlan;
}  // namespace internal

struct ParsedSequenceExample {
  ParsedFeatures context;
  ParsedFeatures feature_lists;
  // For each FixedLenSequenceFeature: its row count, int64 scalar for one
  // record, [batch] for a batch (TF's third result of parse_sequence_example).
  std::map<std::string, Tensor, std::less<>> lengths;
};

// A validated pair of specs, reusable and immutable: thread-safe, cheap to
// copy (copies share the plan).
class SequenceExampleParser {
 public:
  // InvalidArgument for an unsupported feature kind or an invalid config.
  static Result<SequenceExampleParser> Create(FeatureSpec context_features, FeatureSpec sequence_features);

  // One record, without a batch dimension. Thread-safe.
  Result<ParsedSequenceExample> ParseSingle(std::string_view serialized) const;
  // A batch; `names` as in ExampleParser::Parse. Thread-safe.
  Result<ParsedSequenceExample> Parse(std::span<const std::string_view> serialized,
                                      std::span<const std::string> names = {}) const;

 private:
  explicit SequenceExampleParser(std::shared_ptr<const internal::SequencePlan> plan) : plan_(std::move(plan)) {}
  std::shared_ptr<const internal::SequencePlan> plan_;
};

Result<ParsedSequenceExample> ParseSingleSequenceExample(std::string_view serialized,
                                                         const FeatureSpec& context_features,
                                                         const FeatureSpec& sequence_features);
Result<ParsedSequenceExample> ParseSequenceExample(std::span<const std::string_view> serialized,
                                                   const FeatureSpec& context_features,
                                                   const FeatureSpec& sequence_features,
                                                   std::span<const std::string> names = {});

}  // namespace sluice::ops

#endif  // SLUICE_OPS_PARSE_SEQUENCE_EXAMPLE_H_
