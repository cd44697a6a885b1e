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
// Parse/ParseSingle copy bytes values into the std::string elements of the
// output tensors. ParseViews/ParseSingleViews return the same outputs but
// leave bytes values in the records: each is a std::string_view into the
// serialized record it came from (see ParsedFeatureViews for the lifetime
// rule). For lazy access to one record without a spec see example_view.h.
//
// Scratch memory: each thread keeps the working buffers of its last parse
// (up to 1 MiB) for the next one, so that parsing record by record does not
// allocate them again. They are freed when the thread exits.
#ifndef SLUICE_OPS_PARSE_EXAMPLE_H_
#define SLUICE_OPS_PARSE_EXAMPLE_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/feature_spec.h"

namespace sluice::ops {

namespace internal {
struct ExamplePlan;
// Where output i's views sit in ParsedFeatureViews's pool.
struct StringsRange {
  bool present = false;  // output i holds bytes
  TensorShape shape;     // the kString tensor's shape
  size_t begin = 0;
  size_t end = 0;
};
}  // namespace internal

// The result of ExampleParser::ParseViews / ParseSingleViews: every output of
// the spec, built as Parse / ParseSingle build it, except that bytes values
// are not copied. Where Parse returns a kString tensor (a dense bytes output,
// or the `values` of a SparseTensor or RaggedTensor of bytes) this holds an
// invalid Tensor(), and the values are strings(i): string_views, row-major,
// of the shape strings_shape(i). Numeric outputs, and the indices,
// dense_shape and row splits of composites, are ordinary Tensors.
//
// Outputs are indexed 0..size()-1 in an order fixed by the parser (name(i);
// Find(name) looks one up). Indexed rather than a map because a map costs
// two allocations per output (docs/perf/example-parsing.md).
//
// Lifetime: a view points either into a serialized record that was parsed,
// or into a default or padding value of the parser's FeatureSpec. The caller
// keeps the records alive and unmodified for as long as it uses the views;
// the spec's values (and the names) are kept alive by the result itself, so
// a result may outlive its parser. Copies share that hold and have their own
// views (equal to the original's).
// Thread-safety: a plain value; read-only use from many threads is safe.
class ParsedFeatureViews {
 public:
  ParsedFeatureViews() = default;  // no outputs

  size_t size() const { return values_.size(); }
  // The output's name (its FeatureSpec key). REQUIRES: i < size().
  const std::string& name(size_t i) const;
  // The output, with kString tensors left invalid. REQUIRES: i < size().
  const FeatureValue& value(size_t i) const { return values_[i]; }
  // True if output i's values are bytes (then in strings(i)).
  bool has_strings(size_t i) const { return strings_[i].present; }
  // Output i's bytes values; empty when !has_strings(i).
  std::span<const std::string_view> strings(size_t i) const {
    return std::span<const std::string_view>(pool_).subspan(strings_[i].begin, strings_[i].end - strings_[i].begin);
  }
  // The shape of the kString tensor strings(i) stands for.
  const TensorShape& strings_shape(size_t i) const { return strings_[i].shape; }
  // The index of the output named `name`, or -1.
  int Find(std::string_view name) const;

  // What Parse / ParseSingle would have returned: the bytes copied into
  // kString tensors.
  ParsedFeatures ToParsedFeatures() const;

 private:
  friend class ExampleParser;

  std::shared_ptr<const internal::ExamplePlan> plan_;  // names, default values
  std::vector<FeatureValue> values_;
  std::vector<internal::StringsRange> strings_;  // one per output
  std::vector<std::string_view> pool_;           // every output's views
};

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

  // Zero-copy forms of ParseSingle and Parse: the same outputs, the same
  // errors, but bytes values are string_views into `serialized` (see
  // ParsedFeatureViews). REQUIRES: the records outlive every use of the
  // returned views. Cheaper than the copying forms by the bytes copied,
  // one allocation per bytes value and two per output. Thread-safe.
  Result<ParsedFeatureViews> ParseSingleViews(std::string_view serialized) const;
  Result<ParsedFeatureViews> ParseViews(std::span<const std::string_view> serialized,
                                        std::span<const std::string> names = {}) const;
  // As above, into *out, reusing its memory (as a reused protobuf message
  // does): parsing record after record into one result allocates only the
  // output tensors. Tensors and views taken from *out earlier stay valid
  // (tensors are shared, views point into the records). On error *out is
  // empty. Thread-safe for distinct *out.
  [[nodiscard]] Status ParseSingleViews(std::string_view serialized, ParsedFeatureViews* out) const;
  [[nodiscard]] Status ParseViews(std::span<const std::string_view> serialized, ParsedFeatureViews* out,
                                  std::span<const std::string> names = {}) const;

  const FeatureSpec& features() const;

 private:
  explicit ExampleParser(std::shared_ptr<const internal::ExamplePlan> plan) : plan_(std::move(plan)) {}
  Status ParseRecordViews(std::span<const std::string_view> records, std::span<const std::string> names,
                          bool batched, ParsedFeatureViews* out) const;
  std::shared_ptr<const internal::ExamplePlan> plan_;
};

// One-shot forms (they build the parser each call).
Result<ParsedFeatures> ParseSingleExample(std::string_view serialized, const FeatureSpec& features);
Result<ParsedFeatures> ParseExample(std::span<const std::string_view> serialized, const FeatureSpec& features,
                                    std::span<const std::string> names = {});
Result<ParsedFeatures> ParseExample(const Tensor& serialized, const FeatureSpec& features);

}  // namespace sluice::ops

#endif  // SLUICE_OPS_PARSE_EXAMPLE_H_
