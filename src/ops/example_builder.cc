// Serialising tf.train.Example / SequenceExample (see example_builder.h).
//
// Sizes first, bytes second: FeatureData computes its list and Feature
// message sizes when it is built, the builders sum them (plus tags and length
// prefixes), the output string is resized once, and the Write* functions fill
// it front to back through a raw pointer. Every length prefix written is a
// size computed by the same functions, so the two passes cannot disagree.
#include "sluice/ops/example_builder.h"

#include <bit>
#include <cassert>
#include <cstring>
#include <utility>

namespace sluice::ops {
namespace {

// Tags, (field << 3) | wire type; all one byte.
constexpr char kTagLengthDelimited1 = (1 << 3) | 2;  // field 1, length-delimited
constexpr char kTagLengthDelimited2 = (2 << 3) | 2;  // field 2, length-delimited

size_t VarintSize(uint64_t v) {
  // 1 + floor(log2(v) / 7), with v = 0 taking one byte.
  const int bits = 64 - std::countl_zero(v | 1);
  return static_cast<size_t>((bits + 6) / 7);
}

// A length-delimited field with a one-byte tag and `size` bytes of payload.
size_t FieldSize(size_t size) { return 1 + VarintSize(size) + size; }

char* WriteVarint(char* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

char* WriteFieldHeader(char* out, char tag, size_t size) {
  *out++ = tag;
  return WriteVarint(out, size);
}

char* WriteBytesField(char* out, char tag, std::string_view bytes) {
  out = WriteFieldHeader(out, tag, bytes.size());
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  return out + bytes.size();
}

// Resizes *out to `size` bytes and has `write` fill them.
template <class Write>
void SerializeInto(std::string* out, size_t size, Write&& write) {
  out->resize(size);
  [[maybe_unused]] char* end = write(out->data());
  assert(end == out->data() + size);
}

template <class Builder>
void AppendWith(const Builder& builder, std::string* out) {
  const size_t old = out->size();
  out->resize(old + builder.ByteSize());
  [[maybe_unused]] char* end = builder.WriteTo(out->data() + old);
  assert(end == out->data() + out->size());
}

// A map entry { key = 1; value = 2; } whose value message has `value_size`
// bytes.
size_t MapEntrySize(std::string_view key, size_t value_size) { return FieldSize(key.size()) + FieldSize(value_size); }

}  // namespace

// ---- FeatureData -----------------------------------------------------------

FeatureData FeatureData::Int64s(std::span<const int64_t> values) {
  FeatureData f;
  f.values_.emplace<std::vector<int64_t>>(values.begin(), values.end());
  f.ComputeSizes();
  return f;
}

FeatureData FeatureData::Floats(std::span<const float> values) {
  FeatureData f;
  f.values_.emplace<std::vector<float>>(values.begin(), values.end());
  f.ComputeSizes();
  return f;
}

FeatureData FeatureData::Bytes(std::span<const std::string_view> values) {
  FeatureData f;
  auto& v = f.values_.emplace<std::vector<std::string>>();
  v.reserve(values.size());
  for (std::string_view s : values) v.emplace_back(s);
  f.ComputeSizes();
  return f;
}

FeatureData FeatureData::Bytes(std::span<const std::string> values) {
  FeatureData f;
  f.values_.emplace<std::vector<std::string>>(values.begin(), values.end());
  f.ComputeSizes();
  return f;
}

FeatureData FeatureData::Bytes(std::vector<std::string>&& values) {
  FeatureData f;
  f.values_.emplace<std::vector<std::string>>(std::move(values));
  f.ComputeSizes();
  return f;
}

std::span<const int64_t> FeatureData::int64s() const {
  const auto* v = std::get_if<std::vector<int64_t>>(&values_);
  return v ? std::span<const int64_t>(*v) : std::span<const int64_t>();
}

std::span<const float> FeatureData::floats() const {
  const auto* v = std::get_if<std::vector<float>>(&values_);
  return v ? std::span<const float>(*v) : std::span<const float>();
}

std::span<const std::string> FeatureData::bytes() const {
  const auto* v = std::get_if<std::vector<std::string>>(&values_);
  return v ? std::span<const std::string>(*v) : std::span<const std::string>();
}

namespace {

// Bytes of the packed int64 payload (negative numbers take ten bytes, as
// int64 fields are written as their two's-complement uint64).
size_t PackedInt64Size(std::span<const int64_t> values) {
  size_t n = 0;
  for (int64_t v : values) n += VarintSize(static_cast<uint64_t>(v));
  return n;
}

}  // namespace

void FeatureData::ComputeSizes() {
  switch (kind()) {
    case FeatureKind::kNone:
      list_size_ = 0;
      break;
    case FeatureKind::kBytes:
      list_size_ = 0;
      for (const std::string& s : bytes()) list_size_ += FieldSize(s.size());
      break;
    case FeatureKind::kFloat:
      list_size_ = floats().empty() ? 0 : FieldSize(floats().size() * sizeof(float));
      break;
    case FeatureKind::kInt64:
      list_size_ = int64s().empty() ? 0 : FieldSize(PackedInt64Size(int64s()));
      break;
  }
  // The oneof field (number = kind, so its tag fits one byte).
  feature_size_ = kind() == FeatureKind::kNone ? 0 : FieldSize(list_size_);
}

char* FeatureData::WriteTo(char* out) const {
  if (kind() == FeatureKind::kNone) return out;
  out = WriteFieldHeader(out, static_cast<char>((static_cast<int>(kind()) << 3) | 2), list_size_);
  switch (kind()) {
    case FeatureKind::kNone:
      break;
    case FeatureKind::kBytes:
      for (const std::string& s : bytes()) out = WriteBytesField(out, kTagLengthDelimited1, s);
      break;
    case FeatureKind::kFloat: {
      std::span<const float> v = floats();
      if (v.empty()) break;
      out = WriteFieldHeader(out, kTagLengthDelimited1, v.size() * sizeof(float));
      if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(out, v.data(), v.size() * sizeof(float));
        out += v.size() * sizeof(float);
      } else {
        for (float x : v) {
          const auto bits = std::bit_cast<uint32_t>(x);
          for (int i = 0; i < 4; ++i) *out++ = static_cast<char>(bits >> (8 * i));
        }
      }
      break;
    }
    case FeatureKind::kInt64: {
      std::span<const int64_t> v = int64s();
      if (v.empty()) break;
      out = WriteFieldHeader(out, kTagLengthDelimited1, PackedInt64Size(v));
      for (int64_t x : v) out = WriteVarint(out, static_cast<uint64_t>(x));
      break;
    }
  }
  return out;
}

void FeatureData::AppendTo(std::string* out) const { AppendWith(*this, out); }

// ---- FeaturesBuilder ---------------------------------------------------------

FeaturesBuilder& FeaturesBuilder::Add(std::string_view key, FeatureData feature) {
  auto it = features_.find(key);
  if (it == features_.end()) {
    features_.emplace(std::string(key), std::move(feature));
  } else {
    it->second = std::move(feature);
  }
  return *this;
}

FeaturesBuilder& FeaturesBuilder::AddInt64s(std::string_view key, std::span<const int64_t> values) {
  return Add(key, FeatureData::Int64s(values));
}
FeaturesBuilder& FeaturesBuilder::AddInt64s(std::string_view key, std::initializer_list<int64_t> values) {
  return Add(key, FeatureData::Int64s(std::span<const int64_t>(values.begin(), values.size())));
}
FeaturesBuilder& FeaturesBuilder::AddFloats(std::string_view key, std::span<const float> values) {
  return Add(key, FeatureData::Floats(values));
}
FeaturesBuilder& FeaturesBuilder::AddFloats(std::string_view key, std::initializer_list<float> values) {
  return Add(key, FeatureData::Floats(std::span<const float>(values.begin(), values.size())));
}
FeaturesBuilder& FeaturesBuilder::AddBytes(std::string_view key, std::span<const std::string_view> values) {
  return Add(key, FeatureData::Bytes(values));
}
FeaturesBuilder& FeaturesBuilder::AddBytes(std::string_view key, std::span<const std::string> values) {
  return Add(key, FeatureData::Bytes(values));
}
FeaturesBuilder& FeaturesBuilder::AddBytes(std::string_view key, std::initializer_list<std::string_view> values) {
  return Add(key, FeatureData::Bytes(std::span<const std::string_view>(values.begin(), values.size())));
}
FeaturesBuilder& FeaturesBuilder::AddBytes(std::string_view key, std::vector<std::string>&& values) {
  return Add(key, FeatureData::Bytes(std::move(values)));
}
FeaturesBuilder& FeaturesBuilder::AddEmpty(std::string_view key) { return Add(key, FeatureData()); }

bool FeaturesBuilder::Remove(std::string_view key) {
  auto it = features_.find(key);
  if (it == features_.end()) return false;
  features_.erase(it);
  return true;
}

const FeatureData* FeaturesBuilder::Find(std::string_view key) const {
  auto it = features_.find(key);
  return it == features_.end() ? nullptr : &it->second;
}

size_t FeaturesBuilder::ByteSize() const {
  size_t n = 0;
  for (const auto& [key, feature] : features_) n += FieldSize(MapEntrySize(key, feature.ByteSize()));
  return n;
}

char* FeaturesBuilder::WriteTo(char* out) const {
  // std::map orders std::string keys bytewise (char_traits<char>::compare
  // compares as unsigned char), protobuf's deterministic order.
  for (const auto& [key, feature] : features_) {
    out = WriteFieldHeader(out, kTagLengthDelimited1, MapEntrySize(key, feature.ByteSize()));
    out = WriteBytesField(out, kTagLengthDelimited1, key);
    out = WriteFieldHeader(out, kTagLengthDelimited2, feature.ByteSize());
    out = feature.WriteTo(out);
  }
  return out;
}

void FeaturesBuilder::AppendTo(std::string* out) const { AppendWith(*this, out); }

// ---- ExampleBuilder ----------------------------------------------------------

size_t ExampleBuilder::ByteSize() const {
  if (features_.empty() && !write_empty_features_) return 0;
  return FieldSize(features_.ByteSize());
}

std::string ExampleBuilder::Serialize() const {
  std::string out;
  SerializeTo(&out);
  return out;
}

void ExampleBuilder::SerializeTo(std::string* out) const {
  SerializeInto(out, ByteSize(), [&](char* p) {
    if (features_.empty() && !write_empty_features_) return p;
    p = WriteFieldHeader(p, kTagLengthDelimited1, features_.ByteSize());
    return features_.WriteTo(p);
  });
}

// ---- FeatureListBuilder --------------------------------------------------------

FeatureListBuilder& FeatureListBuilder::Add(FeatureData feature) {
  rows_.push_back(std::move(feature));
  return *this;
}

size_t FeatureListBuilder::ByteSize() const {
  size_t n = 0;
  for (const FeatureData& row : rows_) n += FieldSize(row.ByteSize());
  return n;
}

char* FeatureListBuilder::WriteTo(char* out) const {
  for (const FeatureData& row : rows_) {
    out = WriteFieldHeader(out, kTagLengthDelimited1, row.ByteSize());
    out = row.WriteTo(out);
  }
  return out;
}

void FeatureListBuilder::AppendTo(std::string* out) const { AppendWith(*this, out); }

// ---- SequenceExampleBuilder ------------------------------------------------------

FeatureListBuilder& SequenceExampleBuilder::feature_list(std::string_view key) {
  auto it = feature_lists_.find(key);
  if (it == feature_lists_.end()) it = feature_lists_.emplace(std::string(key), FeatureListBuilder()).first;
  return it->second;
}

const FeatureListBuilder* SequenceExampleBuilder::FindFeatureList(std::string_view key) const {
  auto it = feature_lists_.find(key);
  return it == feature_lists_.end() ? nullptr : &it->second;
}

bool SequenceExampleBuilder::RemoveFeatureList(std::string_view key) {
  auto it = feature_lists_.find(key);
  if (it == feature_lists_.end()) return false;
  feature_lists_.erase(it);
  return true;
}

size_t SequenceExampleBuilder::FeatureListsByteSize() const {
  size_t n = 0;
  for (const auto& [key, list] : feature_lists_) n += FieldSize(MapEntrySize(key, list.ByteSize()));
  return n;
}

size_t SequenceExampleBuilder::ByteSize() const {
  size_t n = 0;
  if (WritesContext()) n += FieldSize(context_.ByteSize());
  if (WritesFeatureLists()) n += FieldSize(FeatureListsByteSize());
  return n;
}

std::string SequenceExampleBuilder::Serialize() const {
  std::string out;
  SerializeTo(&out);
  return out;
}

void SequenceExampleBuilder::SerializeTo(std::string* out) const {
  SerializeInto(out, ByteSize(), [&](char* p) {
    if (WritesContext()) {
      p = WriteFieldHeader(p, kTagLengthDelimited1, context_.ByteSize());
      p = context_.WriteTo(p);
    }
    if (WritesFeatureLists()) {
      p = WriteFieldHeader(p, kTagLengthDelimited2, FeatureListsByteSize());
      for (const auto& [key, list] : feature_lists_) {
        p = WriteFieldHeader(p, kTagLengthDelimited1, MapEntrySize(key, list.ByteSize()));
        p = WriteBytesField(p, kTagLengthDelimited1, key);
        p = WriteFieldHeader(p, kTagLengthDelimited2, list.ByteSize());
        p = list.WriteTo(p);
      }
    }
    return p;
  });
}

}  // namespace sluice::ops
