// Parsing serialized tf.train.Example records into tensors, as
// tf.io.parse_single_example and tf.io.parse_example do.
//
// The parser decodes the protocol-buffer wire format straight into the output
// tensors; it builds no message objects and does not need libprotobuf. It
// follows protobuf's parsing rules: fields in any order, unknown fields
// skipped, packed and unpacked repeated numbers, and a feature key that occurs
// more than once (in one `features` map or in repeated `features` fields)
// takes its last value. Like TensorFlow's fast parser it checks the Example,
// Features and map-entry levels of every record, but decodes only the Feature
// values of the keys it was asked for.
//
// Errors (all InvalidArgument, with TensorFlow's message fragments, naming the
// record and, where there is one, the feature key; the status carries payloads
// "record" (the index in the batch) and "feature"):
//   - the record is not a valid Example:
//       "Name: <unknown>, Index: 3.  Could not parse example input, value: '...'"
//   - a feature's values are malformed:
//       "Name: <unknown>, Key: k, Index: 3.  Can't parse serialized Example."
//   - wrong list type:
//       "... Key: k, Index: 3.  Data types don't match. Data type: int64 but
//        expected type: float"  (FixedLen*)
//       "... Data types don't match. Expected type: float, Actual type: int64"
//        (VarLen, SparseFeature, RaggedFeature keys)
//   - wrong number of values for a FixedLenFeature:
//       "... Key: k, Index: 3.  Number of float values != expected.  Values
//        size: 3 but output shape: [4]"
//   - a required FixedLenFeature missing:
//       "... Key: k, Index: 3.  Feature: k (data type: float) is required but
//        could not be found."
//   - SparseFeature indices out of range or not matching the values, ragged
//     partitions inconsistent with the values.
// "Name" is the record's name when the caller passes names, else "<unknown>".
// Invalid configurations (unsupported dtype, bad default, key used both as
// dense and sparse, ...) are InvalidArgument from Create.
//
// Bytes values are copied into the std::string elements of the output
// tensors; for zero-copy access to one record see example_view.h.
#ifndef SLUICE_OPS_PARSE_EXAMPLE_H_
#define SLUICE_OPS_PARSE_EXAMPLE_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/feature_spec.h"

namespace sluice::ops {

namespace internal {
struct ExamplePlan;
}  // namespace internal

// A validated FeatureSpec, ready to parse many records. Create it once (it
// builds the key index) and reuse it; it is immutable, so one parser may be
// used from many threads at once. Copies share the plan.
class ExampleParser {
 public:
  // InvalidArgument for an invalid spec (see above).
  static Result<ExampleParser> Create(FeatureSpec features);

  // One record, TF's parse_single_example: outputs without a batch dimension.
  // Thread-safe.
  Result<ParsedFeatures> ParseSingle(std::string_view serialized) const;

  // A batch, TF's parse_example: dense outputs are [batch] + shape, sparse
  // and ragged ones gain a leading batch dimension. `names`, when not empty,
  // must have one entry per record and names the records in errors.
  // The records must stay alive during the call only. Thread-safe.
  Result<ParsedFeatures> Parse(std::span<const std::string_view> serialized,
                               std::span<const std::string> names = {}) const;
  // As above, for a rank-1 string tensor (InvalidArgument otherwise).
  Result<ParsedFeatures> Parse(const Tensor& serialized) const;

  const FeatureSpec& features() const;

 private:
  explicit ExampleParser(std::shared_ptr<const internal::ExamplePlan> plan) : plan_(std::move(plan)) {}
  std::shared_ptr<const internal::ExamplePlan> plan_;
};

// One-shot forms (they build the parser each call).
Result<ParsedFeatures> ParseSingleExample(std::string_view serialized, const FeatureSpec& features);
Result<ParsedFeatures> ParseExample(std::span<const std::string_view> serialized, const FeatureSpec& features,
                                    std::span<const std::string> names = {});
Result<ParsedFeatures> ParseExample(const Tensor& serialized, const FeatureSpec& features);

}  // namespace sluice::ops

#endif  // SLUICE_OPS_PARSE_EXAMPLE_H_
