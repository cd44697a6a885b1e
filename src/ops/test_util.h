// Helpers for the ops tests: a tiny protobuf wire writer to build Examples
// and SequenceExamples byte by byte (no libprotobuf needed, and malformed or
// unusual encodings are easy), TFRecord framing, testdata paths, and
// accessors for parsed outputs.
#ifndef SLUICE_SRC_OPS_TEST_UTIL_H_
#define SLUICE_SRC_OPS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/ops/decode_compressed.h"
#include "sluice/ops/feature_spec.h"
#include "sluice/ops/parse_example.h"

namespace sluice::ops::testing {

// ---------------------------------------------------------------------------
// Wire writer.

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
inline void PutTag(std::string* out, uint32_t field, uint32_t wire_type) { PutVarint(out, (field << 3) | wire_type); }
inline void PutBytes(std::string* out, uint32_t field, std::string_view bytes) {
  PutTag(out, field, 2);
  PutVarint(out, bytes.size());
  out->append(bytes);
}
inline void PutFixed32(std::string* out, uint32_t field, uint32_t v) {
  PutTag(out, field, 5);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
inline std::string FloatBytes(const std::vector<float>& v) {
  std::string s;
  for (float f : v) {
    const auto bits = std::bit_cast<uint32_t>(f);
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(bits >> (8 * i)));
  }
  return s;
}

// Feature messages.
inline std::string Int64Feature(const std::vector<int64_t>& v, bool packed = true) {
  std::string list;
  if (packed) {
    std::string p;
    for (int64_t x : v) PutVarint(&p, static_cast<uint64_t>(x));
    if (!v.empty()) PutBytes(&list, 1, p);
  } else {
    for (int64_t x : v) {
      PutTag(&list, 1, 0);
      PutVarint(&list, static_cast<uint64_t>(x));
    }
  }
  std::string f;
  PutBytes(&f, 3, list);
  return f;
}
inline std::string FloatFeature(const std::vector<float>& v, bool packed = true) {
  std::string list;
  if (packed) {
    if (!v.empty()) PutBytes(&list, 1, FloatBytes(v));
  } else {
    for (float x : v) PutFixed32(&list, 1, std::bit_cast<uint32_t>(x));
  }
  std::string f;
  PutBytes(&f, 2, list);
  return f;
}
inline std::string BytesFeature(const std::vector<std::string>& v) {
  std::string list;
  for (const std::string& x : v) PutBytes(&list, 1, x);
  std::string f;
  PutBytes(&f, 1, list);
  return f;
}
inline std::string EmptyFeature() { return ""; }

using Entries = std::vector<std::pair<std::string, std::string>>;

// A map<string, Message> message (Features, FeatureLists) from key -> value bytes.
inline std::string MapMessage(const Entries& entries) {
  std::string m;
  for (const auto& [k, v] : entries) {
    std::string e;
    PutBytes(&e, 1, k);
    PutBytes(&e, 2, v);
    PutBytes(&m, 1, e);
  }
  return m;
}
inline std::string MakeExample(const Entries& features) {
  std::string ex;
  PutBytes(&ex, 1, MapMessage(features));
  return ex;
}
inline std::string MakeFeatureList(const std::vector<std::string>& features) {
  std::string l;
  for (const std::string& f : features) PutBytes(&l, 1, f);
  return l;
}
inline std::string MakeSequenceExample(const Entries& context, const Entries& feature_lists) {
  std::string ex;
  if (!context.empty()) PutBytes(&ex, 1, MapMessage(context));
  if (!feature_lists.empty()) PutBytes(&ex, 2, MapMessage(feature_lists));
  return ex;
}

// ---------------------------------------------------------------------------
// Files.

inline std::string TestdataPath(std::string_view relative) {
  return std::string(SLUICE_TESTDATA_DIR) + "/" + std::string(relative);
}

inline std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The payloads of a TFRecord file (u64le length, u32 length CRC, payload,
// u32 payload CRC; CRCs not checked here: the io layer's job). A ".gz" file
// is gunzipped first.
inline std::vector<std::string> ReadTFRecords(const std::string& path) {
  std::string data = ReadFileOrDie(path);
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    Result<std::string> plain = DecompressString(data, "GZIP");
    EXPECT_TRUE(plain.ok()) << plain.status();
    data = plain.ok() ? *plain : "";
  }
  std::vector<std::string> records;
  size_t pos = 0;
  while (pos + 12 <= data.size()) {
    uint64_t len;
    std::memcpy(&len, data.data() + pos, 8);
    pos += 12;
    if (pos + len + 4 > data.size()) {
      ADD_FAILURE() << "truncated record in " << path;
      break;
    }
    records.push_back(data.substr(pos, len));
    pos += len + 4;
  }
  EXPECT_EQ(pos, data.size()) << path;
  return records;
}

inline std::vector<std::string_view> Views(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// ---------------------------------------------------------------------------
// Results.

template <class T>
std::vector<T> Values(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DTypeOf<T>());
  if (t.dtype() != DTypeOf<T>()) return {};
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}
inline std::vector<int64_t> Dims(const Tensor& t) { return {t.shape().dims().begin(), t.shape().dims().end()}; }

inline const Tensor& DenseOf(const ParsedFeatures& p, const std::string& name) {
  static const Tensor kNone{};
  auto it = p.find(name);
  if (it == p.end() || !std::holds_alternative<Tensor>(it->second)) {
    ADD_FAILURE() << "no dense output " << name;
    return kNone;
  }
  return std::get<Tensor>(it->second);
}
inline const SparseTensor& SparseOf(const ParsedFeatures& p, const std::string& name) {
  static const SparseTensor kNone{};
  auto it = p.find(name);
  if (it == p.end() || !std::holds_alternative<SparseTensor>(it->second)) {
    ADD_FAILURE() << "no sparse output " << name;
    return kNone;
  }
  return std::get<SparseTensor>(it->second);
}
inline const RaggedTensor& RaggedOf(const ParsedFeatures& p, const std::string& name) {
  static const RaggedTensor kNone{};
  auto it = p.find(name);
  if (it == p.end() || !std::holds_alternative<RaggedTensor>(it->second)) {
    ADD_FAILURE() << "no ragged output " << name;
    return kNone;
  }
  return std::get<RaggedTensor>(it->second);
}

// The values tensor of a parsed output: the Tensor itself, or a composite's
// `values`.
inline const Tensor& ValuesOf(const FeatureValue& v) {
  if (const auto* st = std::get_if<SparseTensor>(&v)) return st->values;
  if (const auto* rt = std::get_if<RaggedTensor>(&v)) return rt->values;
  return std::get<Tensor>(v);
}

// Same outputs, each component equal (dtype, shape, values).
inline void ExpectSameFeatures(const ParsedFeatures& want, const ParsedFeatures& got) {
  ASSERT_EQ(want.size(), got.size());
  const auto same = [](const Tensor& a, const Tensor& b) {
    EXPECT_TRUE(ValuesEqual(a, b)) << a.DebugString() << " vs " << b.DebugString();
  };
  for (const auto& [name, value] : want) {
    SCOPED_TRACE("output " + name);
    auto it = got.find(name);
    ASSERT_NE(it, got.end());
    ASSERT_EQ(value.index(), it->second.index());
    same(ValuesOf(value), ValuesOf(it->second));
    if (const auto* st = std::get_if<SparseTensor>(&value)) {
      same(st->indices, std::get<SparseTensor>(it->second).indices);
      same(st->dense_shape, std::get<SparseTensor>(it->second).dense_shape);
    }
    if (const auto* rt = std::get_if<RaggedTensor>(&value)) {
      const auto& splits = std::get<RaggedTensor>(it->second).nested_row_splits;
      ASSERT_EQ(rt->nested_row_splits.size(), splits.size());
      for (size_t i = 0; i < splits.size(); ++i) same(rt->nested_row_splits[i], splits[i]);
    }
  }
}

// Checks that a zero-copy parse (ParseViews) holds what the copying parse of
// the same records holds: converted back, the same outputs; every kString
// tensor replaced by an invalid one plus views. A view must point into
// `records` unless it equals one of `spec_strings` (the spec's default and
// padding values).
inline void ExpectViewsMatch(const ParsedFeatures& copied, const ParsedFeatureViews& views,
                             std::span<const std::string_view> records,
                             const std::vector<std::string>& spec_strings = {""}) {
  ExpectSameFeatures(copied, views.ToParsedFeatures());
  ASSERT_EQ(views.size(), copied.size());
  for (size_t i = 0; i < views.size(); ++i) {
    SCOPED_TRACE("output " + views.name(i));
    EXPECT_EQ(views.Find(views.name(i)), static_cast<int>(i));
    const Tensor& values = ValuesOf(views.value(i));
    const bool bytes = ValuesOf(copied.at(views.name(i))).dtype() == DType::kString;
    EXPECT_EQ(views.has_strings(i), bytes);
    if (!bytes) continue;
    EXPECT_FALSE(values.valid());
    for (std::string_view v : views.strings(i)) {
      bool inside = false;
      for (std::string_view r : records) inside |= v.data() >= r.data() && v.data() + v.size() <= r.data() + r.size();
      const bool spec_value = std::find(spec_strings.begin(), spec_strings.end(), v) != spec_strings.end();
      EXPECT_TRUE(inside || spec_value) << "'" << v << "' is a copy";
    }
  }
}

// Asserts the exact code and a message fragment.
#define EXPECT_STATUS(expr, code_, fragment)                                         \
  do {                                                                               \
    const ::sluice::Status _s = (expr);                                              \
    EXPECT_EQ(_s.code(), (code_)) << _s;                                             \
    EXPECT_NE(_s.message().find(fragment), std::string::npos)                        \
        << "message: " << _s.message() << "\nexpected fragment: " << (fragment);     \
  } while (0)

}  // namespace sluice::ops::testing

#endif  // SLUICE_SRC_OPS_TEST_UTIL_H_
