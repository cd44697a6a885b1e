// Property tests against libprotobuf: random Examples and SequenceExamples
// are built and serialized with the generated classes of proto/example.proto
// (the same wire format as TensorFlow's), then parsed by sluice's hand-written
// decoder; libprotobuf's own parse of the same bytes is the expected result.
// Mutated bytes check that whatever libprotobuf accepts, sluice decodes the
// same way.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "example.pb.h"
#include "sluice/ops/example_view.h"
#include "sluice/ops/parse_example.h"
#include "sluice/ops/parse_sequence_example.h"
#include "test_util.h"

namespace sluice::ops {
namespace {

namespace pb = ::sluice::example;
using testing::Values;

// What libprotobuf says a Feature holds.
struct Expected {
  FeatureKind kind = FeatureKind::kNone;
  std::vector<int64_t> int64s;
  std::vector<float> floats;
  std::vector<std::string> bytes;
  size_t size() const { return int64s.size() + floats.size() + bytes.size(); }
};

Expected FromProto(const pb::Feature& f) {
  Expected e;
  switch (f.kind_case()) {
    case pb::Feature::kInt64List:
      e.kind = FeatureKind::kInt64;
      e.int64s.assign(f.int64_list().value().begin(), f.int64_list().value().end());
      break;
    case pb::Feature::kFloatList:
      e.kind = FeatureKind::kFloat;
      e.floats.assign(f.float_list().value().begin(), f.float_list().value().end());
      break;
    case pb::Feature::kBytesList:
      e.kind = FeatureKind::kBytes;
      e.bytes.assign(f.bytes_list().value().begin(), f.bytes_list().value().end());
      break;
    default:
      break;
  }
  return e;
}

DType KindDType(FeatureKind k) {
  switch (k) {
    case FeatureKind::kInt64:
      return DType::kInt64;
    case FeatureKind::kFloat:
      return DType::kFloat32;
    default:
      return DType::kString;
  }
}

class RandomFeatures {
 public:
  explicit RandomFeatures(uint32_t seed) : rng_(seed) {}

  int Uniform(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  bool Coin(int one_in) { return Uniform(one_in) == 0; }

  void Fill(FeatureKind kind, pb::Feature* f) {
    const int n = Coin(8) ? Uniform(40) : Uniform(5);
    switch (kind) {
      case FeatureKind::kInt64: {
        auto* list = f->mutable_int64_list();
        for (int i = 0; i < n; ++i) {
          const int64_t v = Coin(3) ? static_cast<int64_t>(rng_() | (uint64_t{rng_()} << 32))
                                    : static_cast<int64_t>(Uniform(300)) - 150;
          list->add_value(v);
        }
        break;
      }
      case FeatureKind::kFloat: {
        auto* list = f->mutable_float_list();
        for (int i = 0; i < n; ++i) {
          float v;
          const uint32_t bits = rng_();
          std::memcpy(&v, &bits, 4);
          if (v != v) v = 0.25f;  // NaN != NaN would spoil the comparison
          list->add_value(Coin(2) ? v : static_cast<float>(Uniform(1000)) / 8);
        }
        break;
      }
      case FeatureKind::kBytes: {
        auto* list = f->mutable_bytes_list();
        for (int i = 0; i < n; ++i) {
          std::string s(static_cast<size_t>(Coin(10) ? Uniform(300) : Uniform(6)), '\0');
          for (char& c : s) c = static_cast<char>(rng_());
          list->add_value(s);
        }
        break;
      }
      case FeatureKind::kNone:
        f->Clear();
        break;
    }
  }

  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
};

// Keys of the pool and the list kind each holds in this run.
std::vector<std::pair<std::string, FeatureKind>> KeyPool(RandomFeatures& r) {
  const char* names[] = {"a", "b", "image/encoded", "", "label", "a_rather_long_feature_name_of_forty_chars_",
                         "x1", "x2"};
  std::vector<std::pair<std::string, FeatureKind>> pool;
  for (const char* n : names) pool.emplace_back(n, static_cast<FeatureKind>(1 + r.Uniform(3)));
  return pool;
}

// Compares sluice's VarLen result for one key with libprotobuf's values.
void ExpectVarLenEquals(const SparseTensor& st, const std::vector<Expected>& per_record, const std::string& key) {
  SCOPED_TRACE("key '" + key + "'");
  size_t n = 0;
  int64_t max_len = 0;
  for (const Expected& e : per_record) {
    n += e.size();
    max_len = std::max<int64_t>(max_len, static_cast<int64_t>(e.size()));
  }
  ASSERT_EQ(static_cast<size_t>(st.values.num_elements()), n);
  EXPECT_EQ(Values<int64_t>(st.dense_shape), (std::vector<int64_t>{static_cast<int64_t>(per_record.size()), max_len}));
  size_t j = 0;
  const int64_t* ix = st.indices.data<int64_t>();
  for (size_t r = 0; r < per_record.size(); ++r) {
    const Expected& e = per_record[r];
    for (size_t i = 0; i < e.size(); ++i, ++j) {
      ASSERT_EQ(ix[2 * j], static_cast<int64_t>(r));
      ASSERT_EQ(ix[2 * j + 1], static_cast<int64_t>(i));
      switch (st.values.dtype()) {
        case DType::kInt64:
          ASSERT_EQ(st.values.data<int64_t>()[j], e.int64s[i]);
          break;
        case DType::kFloat32:
          ASSERT_EQ(std::memcmp(&st.values.data<float>()[j], &e.floats[i], 4), 0);
          break;
        default:
          ASSERT_EQ(st.values.data<std::string>()[j], e.bytes[i]);
      }
    }
  }
}

TEST(ParseExamplePropertyTest, RandomExamplesParseAsLibprotobufParsesThem) {
  RandomFeatures r(20240601);
  for (int iter = 0; iter < 150; ++iter) {
    const auto pool = KeyPool(r);
    const int batch = 1 + r.Uniform(8);
    std::vector<std::string> records;
    for (int b = 0; b < batch; ++b) {
      std::string bytes;
      const int parts = r.Coin(4) ? 2 : 1;  // two serialized Examples concatenated merge
      for (int p = 0; p < parts; ++p) {
        pb::Example ex;
        auto& map = *ex.mutable_features()->mutable_feature();
        for (const auto& [key, kind] : pool) {
          if (r.Coin(3)) continue;
          r.Fill(r.Coin(10) ? FeatureKind::kNone : kind, &map[key]);
        }
        map["fixed"].mutable_float_list()->add_value(static_cast<float>(b));
        map["fixed"].mutable_float_list()->add_value(static_cast<float>(iter));
        bytes += ex.SerializeAsString();
      }
      records.push_back(std::move(bytes));
    }
    FeatureSpec spec{{"fixed", FixedLenFeature{{2}, DType::kFloat32}}};
    for (const auto& [key, kind] : pool) spec.emplace(key, VarLenFeature{KindDType(kind)});
    auto parser = ExampleParser::Create(spec);
    ASSERT_TRUE(parser.ok()) << parser.status();
    std::vector<std::string_view> views(records.begin(), records.end());
    auto got = parser->Parse(views);
    ASSERT_TRUE(got.ok()) << got.status();

    std::vector<pb::Example> parsed(records.size());
    for (size_t i = 0; i < records.size(); ++i) ASSERT_TRUE(parsed[i].ParseFromString(records[i]));
    for (const auto& [key, kind] : pool) {
      std::vector<Expected> per_record;
      for (const pb::Example& ex : parsed) {
        auto it = ex.features().feature().find(key);
        per_record.push_back(it == ex.features().feature().end() ? Expected{} : FromProto(it->second));
      }
      ExpectVarLenEquals(testing::SparseOf(*got, key), per_record, key);
    }
    const std::vector<float> fixed = Values<float>(testing::DenseOf(*got, "fixed"));
    for (int b = 0; b < batch; ++b) {
      EXPECT_EQ(fixed[2 * b], static_cast<float>(b));
      EXPECT_EQ(fixed[2 * b + 1], static_cast<float>(iter));
    }
    // The zero-copy parse holds the same values, as views into the records.
    ParsedFeatureViews zero_copy;
    ASSERT_TRUE(parser->ParseViews(views, &zero_copy).ok());
    testing::ExpectViewsMatch(*got, zero_copy, views);
    // Record by record, ParseSingle agrees with the batch.
    for (size_t i = 0; i < records.size(); ++i) {
      auto one = parser->ParseSingle(records[i]);
      ASSERT_TRUE(one.ok()) << one.status();
      ASSERT_TRUE(parser->ParseSingleViews(records[i], &zero_copy).ok());
      testing::ExpectViewsMatch(*one, zero_copy, std::span<const std::string_view>(&views[i], 1));
      for (const auto& [key, kind] : pool) {
        EXPECT_EQ(testing::SparseOf(*one, key).values.num_elements(),
                  static_cast<int64_t>(FromProto(parsed[i].features().feature().count(key)
                                                     ? parsed[i].features().feature().at(key)
                                                     : pb::Feature())
                                           .size()));
      }
    }
  }
}

void DiscardProtobufLog(google::protobuf::LogLevel, const char*, int, const std::string&) {}

TEST(ParseExamplePropertyTest, MutatedBytesThatLibprotobufAcceptsDecodeTheSame) {
  // Mutated keys are often not UTF-8, which libprotobuf logs as it rejects.
  google::protobuf::LogHandler* previous = google::protobuf::SetLogHandler(&DiscardProtobufLog);
  RandomFeatures r(7);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const auto pool = KeyPool(r);
    pb::Example ex;
    auto& map = *ex.mutable_features()->mutable_feature();
    for (const auto& [key, kind] : pool) {
      if (r.Coin(2)) r.Fill(kind, &map[key]);
    }
    std::string bytes = ex.SerializeAsString();
    if (bytes.empty()) continue;
    const int mutations = 1 + r.Uniform(3);
    for (int m = 0; m < mutations; ++m) {
      const size_t at = static_cast<size_t>(r.Uniform(static_cast<int>(bytes.size())));
      switch (r.Uniform(3)) {
        case 0:
          bytes[at] = static_cast<char>(bytes[at] ^ (1 << r.Uniform(8)));
          break;
        case 1:
          bytes.resize(at);
          break;
        default:
          bytes.insert(at, 1, static_cast<char>(r.rng()()));
      }
      if (bytes.empty()) break;
    }
    pb::Example reference;
    if (!reference.ParseFromString(bytes)) continue;  // sluice may be more lenient (e.g. UTF-8 keys)
    ++accepted;
    FeatureSpec spec;
    for (const auto& [key, f] : reference.features().feature()) {
      if (f.kind_case() != pb::Feature::KIND_NOT_SET) spec.emplace(key, VarLenFeature{KindDType(FromProto(f).kind)});
    }
    auto got = ParseSingleExample(bytes, spec);
    ASSERT_TRUE(got.ok()) << "libprotobuf accepted what sluice rejects: " << got.status();
    for (const auto& [key, config] : spec) {
      const SparseTensor& st = testing::SparseOf(*got, key);
      const Expected e = FromProto(reference.features().feature().at(key));
      ASSERT_EQ(static_cast<size_t>(st.values.num_elements()), e.size()) << key;
    }
  }
  EXPECT_GT(accepted, 100);
  google::protobuf::SetLogHandler(previous);
}

TEST(ParseExamplePropertyTest, RandomSequenceExamplesParseAsLibprotobufParsesThem) {
  RandomFeatures r(99);
  for (int iter = 0; iter < 100; ++iter) {
    const auto pool = KeyPool(r);
    const int batch = 1 + r.Uniform(5);
    std::vector<std::string> records;
    std::vector<pb::SequenceExample> protos(static_cast<size_t>(batch));
    for (int b = 0; b < batch; ++b) {
      pb::SequenceExample& ex = protos[static_cast<size_t>(b)];
      for (const auto& [key, kind] : pool) {
        if (r.Coin(2)) r.Fill(kind, &(*ex.mutable_context()->mutable_feature())[key]);
        if (r.Coin(2)) {
          pb::FeatureList& list = (*ex.mutable_feature_lists()->mutable_feature_list())[key];
          const int rows = r.Uniform(6);
          for (int row = 0; row < rows; ++row) r.Fill(r.Coin(8) ? FeatureKind::kNone : kind, list.add_feature());
        }
      }
      records.push_back(ex.SerializeAsString());
    }
    FeatureSpec context, sequence;
    for (const auto& [key, kind] : pool) {
      context.emplace(key, VarLenFeature{KindDType(kind)});
      sequence.emplace(key, RaggedFeature{KindDType(kind), "", {}, DType::kInt64});
    }
    std::vector<std::string_view> views(records.begin(), records.end());
    auto got = ParseSequenceExample(views, context, sequence);
    ASSERT_TRUE(got.ok()) << got.status();
    for (const auto& [key, kind] : pool) {
      std::vector<Expected> per_record;
      for (const pb::SequenceExample& ex : protos) {
        auto it = ex.context().feature().find(key);
        per_record.push_back(it == ex.context().feature().end() ? Expected{} : FromProto(it->second));
      }
      ExpectVarLenEquals(testing::SparseOf(got->context, key), per_record, key);
      // Feature lists: row splits per record, value count per row.
      const RaggedTensor& rt = testing::RaggedOf(got->feature_lists, key);
      ASSERT_EQ(rt.nested_row_splits.size(), 2u);
      const std::vector<int64_t> outer = Values<int64_t>(rt.nested_row_splits[0]);
      const std::vector<int64_t> inner = Values<int64_t>(rt.nested_row_splits[1]);
      size_t row = 0;
      for (size_t b = 0; b < protos.size(); ++b) {
        auto it = protos[b].feature_lists().feature_list().find(key);
        const int rows = it == protos[b].feature_lists().feature_list().end() ? 0 : it->second.feature_size();
        ASSERT_EQ(outer[b + 1] - outer[b], rows) << key;
        for (int i = 0; i < rows; ++i, ++row) {
          ASSERT_EQ(inner[row + 1] - inner[row], static_cast<int64_t>(FromProto(it->second.feature(i)).size()));
        }
      }
    }
  }
}

}  // namespace
}  // namespace sluice::ops
