// Building and serialising tf.train.Example and tf.train.SequenceExample
// records without libprotobuf: the writing side of parse_example.h.
//
// The output is protobuf wire format, byte-compatible with TensorFlow's
// example.proto (see proto/example.proto and src/ops/wire_format.h):
//   - map entries (Features.feature, FeatureLists.feature_list) are written
//     in ascending bytewise key order, as protobuf's deterministic
//     serialization does (SerializeToString(deterministic=True) in Python,
//     SetSerializationDeterministic in C++), so equal content gives equal
//     bytes;
//   - every map entry writes its key and value fields, even when empty;
//   - Int64List and FloatList values are packed; an empty list is written
//     as an empty list message, so the Feature still says which kind it is;
//   - a Feature with no list set (AddEmpty) is an empty Feature message.
// Serialize computes every message length once (the lengths of a feature are
// computed when it is added), sizes the output buffer, and writes it in one
// pass.
//
// Keys: adding a key that is already present replaces its Feature (as
// assigning to a protobuf map does). Values are copied in; the caller's
// buffers need not outlive the call.
//
// Thread-safety: a builder is a plain value. Concurrent const calls
// (Serialize, ByteSize) are safe; anything else needs external
// synchronisation.
#ifndef SLUICE_OPS_EXAMPLE_BUILDER_H_
#define SLUICE_OPS_EXAMPLE_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sluice/ops/example_view.h"

namespace sluice::ops {

// The content of one tf.train.Feature: no list, or an Int64List, FloatList or
// BytesList. Plain value.
class FeatureData {
 public:
  FeatureData() = default;  // no list set (kind kNone)
  static FeatureData Int64s(std::span<const int64_t> values);
  static FeatureData Floats(std::span<const float> values);
  static FeatureData Bytes(std::span<const std::string_view> values);
  static FeatureData Bytes(std::span<const std::string> values);
  static FeatureData Bytes(std::vector<std::string>&& values);

  FeatureKind kind() const { return static_cast<FeatureKind>(values_.index()); }
  // The values of the list of kind(); empty for another kind.
  std::span<const int64_t> int64s() const;
  std::span<const float> floats() const;
  std::span<const std::string> bytes() const;

  // Size of the serialized Feature message (without its own tag and length).
  size_t ByteSize() const { return feature_size_; }
  // Appends the serialized Feature message.
  void AppendTo(std::string* out) const;
  // Writes the ByteSize() bytes of the Feature message at `out`; returns the
  // end. For the builders below.
  char* WriteTo(char* out) const;

 private:
  void ComputeSizes();

  // Index = FeatureKind: 0 none, 1 bytes, 2 float, 3 int64.
  std::variant<std::monostate, std::vector<std::string>, std::vector<float>, std::vector<int64_t>> values_;
  size_t list_size_ = 0;     // the list message
  size_t feature_size_ = 0;  // the Feature message
};

// tf.train.Features: key -> Feature, written in ascending key order.
class FeaturesBuilder {
 public:
  // Each sets the Feature of `key` (replacing any earlier one) and returns
  // *this, so that calls chain.
  FeaturesBuilder& AddInt64s(std::string_view key, std::span<const int64_t> values);
  FeaturesBuilder& AddInt64s(std::string_view key, std::initializer_list<int64_t> values);
  FeaturesBuilder& AddFloats(std::string_view key, std::span<const float> values);
  FeaturesBuilder& AddFloats(std::string_view key, std::initializer_list<float> values);
  FeaturesBuilder& AddBytes(std::string_view key, std::span<const std::string_view> values);
  FeaturesBuilder& AddBytes(std::string_view key, std::span<const std::string> values);
  FeaturesBuilder& AddBytes(std::string_view key, std::initializer_list<std::string_view> values);
  FeaturesBuilder& AddBytes(std::string_view key, std::vector<std::string>&& values);  // moves the strings in
  FeaturesBuilder& AddEmpty(std::string_view key);  // a Feature with no list
  FeaturesBuilder& Add(std::string_view key, FeatureData feature);

  // Removes `key`; false if it was absent.
  bool Remove(std::string_view key);
  void Clear() { features_.clear(); }
  bool Contains(std::string_view key) const { return features_.find(key) != features_.end(); }
  // nullptr if absent. Valid until the key is replaced or removed.
  const FeatureData* Find(std::string_view key) const;
  size_t size() const { return features_.size(); }
  bool empty() const { return features_.empty(); }
  const std::map<std::string, FeatureData, std::less<>>& features() const { return features_; }

  // Size of the serialized Features message body.
  size_t ByteSize() const;
  // Appends the serialized Features message body.
  void AppendTo(std::string* out) const;
  // Writes the ByteSize() bytes of the body at `out`; returns the end.
  char* WriteTo(char* out) const;

 private:
  std::map<std::string, FeatureData, std::less<>> features_;
};

// tf.train.Example { Features features = 1; }. The features field is always
// written (an Example with no features serializes to "\n\0", as
// Example(features=Features()) does) unless set_write_empty_features(false).
class ExampleBuilder {
 public:
  ExampleBuilder& AddInt64s(std::string_view key, std::span<const int64_t> values) {
    features_.AddInt64s(key, values);
    return *this;
  }
  ExampleBuilder& AddInt64s(std::string_view key, std::initializer_list<int64_t> values) {
    features_.AddInt64s(key, values);
    return *this;
  }
  ExampleBuilder& AddFloats(std::string_view key, std::span<const float> values) {
    features_.AddFloats(key, values);
    return *this;
  }
  ExampleBuilder& AddFloats(std::string_view key, std::initializer_list<float> values) {
    features_.AddFloats(key, values);
    return *this;
  }
  ExampleBuilder& AddBytes(std::string_view key, std::span<const std::string_view> values) {
    features_.AddBytes(key, values);
    return *this;
  }
  ExampleBuilder& AddBytes(std::string_view key, std::span<const std::string> values) {
    features_.AddBytes(key, values);
    return *this;
  }
  ExampleBuilder& AddBytes(std::string_view key, std::initializer_list<std::string_view> values) {
    features_.AddBytes(key, values);
    return *this;
  }
  ExampleBuilder& AddBytes(std::string_view key, std::vector<std::string>&& values) {
    features_.AddBytes(key, std::move(values));
    return *this;
  }
  ExampleBuilder& AddEmpty(std::string_view key) {
    features_.AddEmpty(key);
    return *this;
  }

  FeaturesBuilder& features() { return features_; }
  const FeaturesBuilder& features() const { return features_; }
  void Clear() { features_.Clear(); }

  // False: an Example without features serializes to "" (as Example() does).
  void set_write_empty_features(bool write) { write_empty_features_ = write; }

  size_t ByteSize() const;
  std::string Serialize() const;
  // Replaces *out with the serialized Example (reusing its capacity).
  void SerializeTo(std::string* out) const;

 private:
  FeaturesBuilder features_;
  bool write_empty_features_ = true;
};

// tf.train.FeatureList: a sequence of Features (rows), in the order added.
class FeatureListBuilder {
 public:
  FeatureListBuilder& AddInt64s(std::span<const int64_t> values) { return Add(FeatureData::Int64s(values)); }
  FeatureListBuilder& AddInt64s(std::initializer_list<int64_t> values) {
    return Add(FeatureData::Int64s(std::span<const int64_t>(values.begin(), values.size())));
  }
  FeatureListBuilder& AddFloats(std::span<const float> values) { return Add(FeatureData::Floats(values)); }
  FeatureListBuilder& AddFloats(std::initializer_list<float> values) {
    return Add(FeatureData::Floats(std::span<const float>(values.begin(), values.size())));
  }
  FeatureListBuilder& AddBytes(std::span<const std::string_view> values) { return Add(FeatureData::Bytes(values)); }
  FeatureListBuilder& AddBytes(std::span<const std::string> values) { return Add(FeatureData::Bytes(values)); }
  FeatureListBuilder& AddBytes(std::initializer_list<std::string_view> values) {
    return Add(FeatureData::Bytes(std::span<const std::string_view>(values.begin(), values.size())));
  }
  FeatureListBuilder& AddEmpty() { return Add(FeatureData()); }
  FeatureListBuilder& Add(FeatureData feature);

  const std::vector<FeatureData>& rows() const { return rows_; }
  size_t size() const { return rows_.size(); }
  void Clear() { rows_.clear(); }

  // Size of the serialized FeatureList message body.
  size_t ByteSize() const;
  void AppendTo(std::string* out) const;
  // Writes the ByteSize() bytes of the body at `out`; returns the end.
  char* WriteTo(char* out) const;

 private:
  std::vector<FeatureData> rows_;
};

// tf.train.SequenceExample { Features context = 1; FeatureLists feature_lists
// = 2; }. Each field is written when it has an entry, or when marked present
// with set_write_empty_context / set_write_empty_feature_lists (the default
// writes neither when empty, as SequenceExample() does).
class SequenceExampleBuilder {
 public:
  FeaturesBuilder& context() { return context_; }
  const FeaturesBuilder& context() const { return context_; }

  // The feature list of `key`, created empty on first use; rows are appended
  // to it. The reference stays valid until the list is removed or Clear().
  FeatureListBuilder& feature_list(std::string_view key);
  // nullptr if absent.
  const FeatureListBuilder* FindFeatureList(std::string_view key) const;
  bool RemoveFeatureList(std::string_view key);
  const std::map<std::string, FeatureListBuilder, std::less<>>& feature_lists() const { return feature_lists_; }

  void Clear() {
    context_.Clear();
    feature_lists_.clear();
  }
  void set_write_empty_context(bool write) { write_empty_context_ = write; }
  void set_write_empty_feature_lists(bool write) { write_empty_feature_lists_ = write; }

  size_t ByteSize() const;
  std::string Serialize() const;
  // Replaces *out with the serialized SequenceExample.
  void SerializeTo(std::string* out) const;

 private:
  size_t FeatureListsByteSize() const;
  bool WritesContext() const { return write_empty_context_ || !context_.empty(); }
  bool WritesFeatureLists() const { return write_empty_feature_lists_ || !feature_lists_.empty(); }

  FeaturesBuilder context_;
  std::map<std::string, FeatureListBuilder, std::less<>> feature_lists_;
  bool write_empty_context_ = false;
  bool write_empty_feature_lists_ = false;
};

}  // namespace sluice::ops

#endif  // SLUICE_OPS_EXAMPLE_BUILDER_H_
