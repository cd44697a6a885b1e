// ExampleBuilder / SequenceExampleBuilder: the bytes they write are checked
// against the hand-assembled wire format of test_util.h, parsed back with
// sluice's own parsers, and (with libprotobuf) compared byte for byte with
// protobuf's deterministic serialization of the same content.
#include "sluice/ops/example_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sluice/ops/example_view.h"
#include "sluice/ops/parse_example.h"
#include "sluice/ops/parse_sequence_example.h"
#include "test_util.h"

#ifdef SLUICE_HAVE_PROTOBUF
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "example.pb.h"
#endif

namespace sluice::ops {
namespace {

using testing::BytesFeature;
using testing::EmptyFeature;
using testing::FloatFeature;
using testing::Int64Feature;
using testing::MakeExample;
using testing::MakeFeatureList;
using testing::MakeSequenceExample;

TEST(ExampleBuilderTest, WritesTheWireFormatOfEachListKind) {
  ExampleBuilder b;
  b.AddInt64s("i", {1, -2, 300}).AddFloats("f", {1.5f, -0.25f}).AddBytes("b", {"x", "", "yz"}).AddEmpty("e");
  // Keys come out sorted: b, e, f, i.
  EXPECT_EQ(b.Serialize(), MakeExample({{"b", BytesFeature({"x", "", "yz"})},
                                        {"e", EmptyFeature()},
                                        {"f", FloatFeature({1.5f, -0.25f})},
                                        {"i", Int64Feature({1, -2, 300})}}));
}

TEST(ExampleBuilderTest, KeysAreWrittenInBytewiseOrderWhateverTheInsertionOrder) {
  ExampleBuilder a;
  a.AddInt64s("zeta", {1}).AddInt64s("Alpha", {2}).AddInt64s("\xff", {3}).AddInt64s("alpha", {4});
  ExampleBuilder b;
  b.AddInt64s("alpha", {4}).AddInt64s("\xff", {3}).AddInt64s("zeta", {1}).AddInt64s("Alpha", {2});
  EXPECT_EQ(a.Serialize(), b.Serialize());
  EXPECT_EQ(a.Serialize(), MakeExample({{"Alpha", Int64Feature({2})},
                                        {"alpha", Int64Feature({4})},
                                        {"zeta", Int64Feature({1})},
                                        {"\xff", Int64Feature({3})}}));
}

TEST(ExampleBuilderTest, AddingAKeyAgainReplacesItsFeature) {
  ExampleBuilder b;
  b.AddInt64s("k", {1, 2}).AddBytes("k", {"now bytes"});
  EXPECT_EQ(b.features().size(), 1u);
  EXPECT_EQ(b.features().Find("k")->kind(), FeatureKind::kBytes);
  EXPECT_EQ(b.Serialize(), MakeExample({{"k", BytesFeature({"now bytes"})}}));
}

TEST(ExampleBuilderTest, EmptyListsKeepTheirKindAndEmptyFeaturesHaveNone) {
  ExampleBuilder b;
  b.AddInt64s("i", std::span<const int64_t>()).AddFloats("f", std::span<const float>());
  b.AddBytes("b", std::span<const std::string>()).AddEmpty("n");
  const std::string record = b.Serialize();  // the view points into it
  Result<ExampleView> view = ExampleView::Parse(record);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->Find("i")->kind(), FeatureKind::kInt64);
  EXPECT_EQ(view->Find("f")->kind(), FeatureKind::kFloat);
  EXPECT_EQ(view->Find("b")->kind(), FeatureKind::kBytes);
  EXPECT_EQ(view->Find("n")->kind(), FeatureKind::kNone);
  for (const char* key : {"i", "f", "b", "n"}) EXPECT_EQ(*view->Find(key)->NumValues(), 0) << key;
}

TEST(ExampleBuilderTest, EmptyExampleHasEmptyFeaturesUnlessDisabled) {
  ExampleBuilder b;
  EXPECT_EQ(b.Serialize(), std::string("\x0a\x00", 2));
  b.set_write_empty_features(false);
  EXPECT_EQ(b.Serialize(), "");
  EXPECT_EQ(b.ByteSize(), 0u);
}

TEST(ExampleBuilderTest, ExtremeInt64sAndLongBytesRoundTripThroughTheParser) {
  const std::vector<int64_t> ints = {0, -1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                     127, 128, 16383, 16384};
  const std::string big(70000, 'j');  // a three-byte length prefix
  ExampleBuilder b;
  b.AddInt64s("ints", ints).AddBytes("jpeg", {big, std::string_view("\0\1", 2)});
  const std::string record = b.Serialize();
  EXPECT_EQ(record.size(), b.ByteSize());

  FeatureSpec spec;
  spec["ints"] = FixedLenFeature(TensorShape({8}), DType::kInt64);
  spec["jpeg"] = VarLenFeature(DType::kString);
  Result<ParsedFeatures> parsed = ParseSingleExample(record, spec);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(testing::Values<int64_t>(testing::DenseOf(*parsed, "ints")), ints);
  const std::vector<std::string> bytes = testing::Values<std::string>(testing::SparseOf(*parsed, "jpeg").values);
  EXPECT_EQ(bytes, (std::vector<std::string>{big, std::string("\0\1", 2)}));
}

TEST(ExampleBuilderTest, FloatsKeepTheirBitsIncludingNanAndSignedZero) {
  const std::vector<float> floats = {-0.0f, std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN(), 1e-45f};
  ExampleBuilder b;
  b.AddFloats("f", floats);
  const std::string record = b.Serialize();  // the view points into it
  Result<ExampleView> view = ExampleView::Parse(record);
  ASSERT_TRUE(view.ok()) << view.status();
  std::vector<float> back;
  ASSERT_TRUE(view->Find("f")->AppendFloats(&back).ok());
  ASSERT_EQ(back.size(), floats.size());
  for (size_t i = 0; i < floats.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(floats[i])) << i;
  }
}

TEST(ExampleBuilderTest, SerializeToReplacesTheOutputAndAppendToAppends) {
  ExampleBuilder b;
  b.AddInt64s("k", {7});
  std::string out = "stale contents that are longer than the record";
  b.SerializeTo(&out);
  EXPECT_EQ(out, b.Serialize());

  std::string body = "prefix";
  b.features().AppendTo(&body);
  EXPECT_EQ(body.substr(0, 6), "prefix");
  EXPECT_EQ(body.size(), 6 + b.features().ByteSize());
}

TEST(ExampleBuilderTest, RemoveAndClearForgetFeatures) {
  ExampleBuilder b;
  b.AddInt64s("a", {1}).AddInt64s("b", {2});
  EXPECT_TRUE(b.features().Remove("a"));
  EXPECT_FALSE(b.features().Remove("a"));
  EXPECT_FALSE(b.features().Contains("a"));
  EXPECT_EQ(b.Serialize(), MakeExample({{"b", Int64Feature({2})}}));
  b.Clear();
  EXPECT_TRUE(b.features().empty());
}

TEST(ExampleBuilderTest, BatchOfBuiltRecordsParsesWithEveryFeatureKind) {
  std::vector<std::string> records;
  for (int i = 0; i < 3; ++i) {
    ExampleBuilder b;
    b.AddFloats("dense", {static_cast<float>(i), 0.5f});
    std::vector<int64_t> var(static_cast<size_t>(i), i);
    b.AddInt64s("var", var);
    b.AddInt64s("idx", {i}).AddBytes("val", {std::string(1, static_cast<char>('a' + i))});
    records.push_back(b.Serialize());
  }
  FeatureSpec spec;
  spec["dense"] = FixedLenFeature(TensorShape({2}), DType::kFloat32);
  spec["var"] = VarLenFeature(DType::kInt64);
  spec["sp"] = SparseFeature({"idx"}, "val", DType::kString, {3});
  Result<ParsedFeatures> parsed = ParseExample(testing::Views(records), spec);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(testing::Values<float>(testing::DenseOf(*parsed, "dense")),
            (std::vector<float>{0, 0.5f, 1, 0.5f, 2, 0.5f}));
  EXPECT_EQ(testing::Values<int64_t>(testing::SparseOf(*parsed, "var").values), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(testing::Values<std::string>(testing::SparseOf(*parsed, "sp").values),
            (std::vector<std::string>{"a", "b", "c"}));
}

TEST(SequenceExampleBuilderTest, WritesContextAndFeatureListsInKeyOrder) {
  SequenceExampleBuilder b;
  b.context().AddInt64s("len", {2});
  b.feature_list("tokens").AddBytes({"a", "b"}).AddBytes({"c"});
  b.feature_list("scores").AddFloats({0.5f}).AddEmpty();
  EXPECT_EQ(b.Serialize(),
            MakeSequenceExample({{"len", Int64Feature({2})}},
                                {{"scores", MakeFeatureList({FloatFeature({0.5f}), EmptyFeature()})},
                                 {"tokens", MakeFeatureList({BytesFeature({"a", "b"}), BytesFeature({"c"})})}}));
}

TEST(SequenceExampleBuilderTest, EmptyPartsAreLeftOutUnlessMarkedPresent) {
  SequenceExampleBuilder b;
  EXPECT_EQ(b.Serialize(), "");
  b.set_write_empty_context(true);
  EXPECT_EQ(b.Serialize(), std::string("\x0a\x00", 2));
  b.set_write_empty_context(false);
  b.feature_list("empty");  // a list with no rows is still an entry
  EXPECT_EQ(b.Serialize(), MakeSequenceExample({}, {{"empty", MakeFeatureList({})}}));
  EXPECT_TRUE(b.RemoveFeatureList("empty"));
  EXPECT_EQ(b.FindFeatureList("empty"), nullptr);
  b.set_write_empty_feature_lists(true);
  EXPECT_EQ(b.Serialize(), std::string("\x12\x00", 2));
}

TEST(SequenceExampleBuilderTest, RoundTripsThroughTheSequenceParser) {
  SequenceExampleBuilder b;
  b.context().AddBytes("id", {"seq-1"});
  b.feature_list("frames").AddInt64s({1, 2}).AddInt64s({3, 4}).AddInt64s({5, 6});
  b.feature_list("words").AddBytes({"x"}).AddBytes({"y", "z"});
  FeatureSpec context;
  context["id"] = FixedLenFeature(TensorShape({}), DType::kString);
  FeatureSpec sequence;
  sequence["frames"] = FixedLenSequenceFeature(TensorShape({2}), DType::kInt64);
  sequence["words"] = VarLenFeature(DType::kString);
  Result<ParsedSequenceExample> parsed = ParseSingleSequenceExample(b.Serialize(), context, sequence);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(testing::Values<std::string>(testing::DenseOf(parsed->context, "id")), std::vector<std::string>{"seq-1"});
  const Tensor& frames = testing::DenseOf(parsed->feature_lists, "frames");
  EXPECT_EQ(testing::Dims(frames), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(testing::Values<int64_t>(frames), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  const SparseTensor& words = testing::SparseOf(parsed->feature_lists, "words");
  EXPECT_EQ(testing::Values<int64_t>(words.dense_shape), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(testing::Values<int64_t>(parsed->lengths.at("frames")), std::vector<int64_t>{3});
}

#ifdef SLUICE_HAVE_PROTOBUF

namespace pb = ::sluice::example;

std::string DeterministicBytes(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

// Fills `b` and `p` with the same random Feature content.
class RandomContent {
 public:
  explicit RandomContent(uint32_t seed) : rng_(seed) {}
  int Uniform(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

  std::string Key() {
    std::string k;
    const int n = Uniform(4);
    for (int i = 0; i < n; ++i) k.push_back(static_cast<char>('a' + Uniform(4)));  // valid UTF-8: protobuf checks
    return k;
  }

  FeatureData Feature(pb::Feature* p) {
    const int n = Uniform(6) == 0 ? Uniform(300) : Uniform(4);
    switch (Uniform(4)) {
      case 0: {
        std::vector<int64_t> v;
        for (int i = 0; i < n; ++i) {
          const auto x = static_cast<int64_t>(static_cast<uint64_t>(rng_()) << Uniform(40));
          v.push_back(Uniform(2) ? x : -x);
        }
        p->mutable_int64_list()->mutable_value()->Add(v.begin(), v.end());
        return FeatureData::Int64s(v);
      }
      case 1: {
        std::vector<float> v;
        for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(static_cast<int32_t>(rng_())) / 7.0f);
        p->mutable_float_list()->mutable_value()->Add(v.begin(), v.end());
        return FeatureData::Floats(v);
      }
      case 2: {
        std::vector<std::string> v;
        for (int i = 0; i < n; ++i) v.push_back(std::string(static_cast<size_t>(Uniform(200)), 'q'));
        auto* list = p->mutable_bytes_list();
        for (const std::string& s : v) list->add_value(s);
        return FeatureData::Bytes(v);
      }
      default:
        return FeatureData();
    }
  }

 private:
  std::mt19937 rng_;
};

class ExampleBuilderProtobufTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ExampleBuilderProtobufTest, ExamplesAreByteIdenticalToDeterministicProtobuf) {
  RandomContent r(GetParam());
  for (int round = 0; round < 20; ++round) {
    ExampleBuilder b;
    pb::Example p;
    p.mutable_features();
    const int n = r.Uniform(8);
    for (int i = 0; i < n; ++i) {
      const std::string key = r.Key();
      pb::Feature& f = (*p.mutable_features()->mutable_feature())[key];
      f.Clear();
      b.features().Add(key, r.Feature(&f));
    }
    const std::string bytes = b.Serialize();
    ASSERT_EQ(bytes, DeterministicBytes(p)) << "round " << round;
    pb::Example back;
    ASSERT_TRUE(back.ParseFromString(bytes));
    EXPECT_EQ(back.features().feature_size(), static_cast<int>(b.features().size()));
  }
}

TEST_P(ExampleBuilderProtobufTest, SequenceExamplesAreByteIdenticalToDeterministicProtobuf) {
  RandomContent r(GetParam());
  for (int round = 0; round < 20; ++round) {
    SequenceExampleBuilder b;
    pb::SequenceExample p;
    const int n_context = r.Uniform(4);
    for (int i = 0; i < n_context; ++i) {
      const std::string key = r.Key();
      pb::Feature& f = (*p.mutable_context()->mutable_feature())[key];
      f.Clear();
      b.context().Add(key, r.Feature(&f));
    }
    const int n_lists = r.Uniform(4);
    for (int i = 0; i < n_lists; ++i) {
      const std::string key = r.Key();
      pb::FeatureList& pl = (*p.mutable_feature_lists()->mutable_feature_list())[key];
      FeatureListBuilder& bl = b.feature_list(key);
      pl.Clear();
      bl.Clear();
      const int rows = r.Uniform(5);
      for (int j = 0; j < rows; ++j) bl.Add(r.Feature(pl.add_feature()));
    }
    ASSERT_EQ(b.Serialize(), DeterministicBytes(p)) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ExampleBuilderProtobufTest, ::testing::Values(1u, 2u, 3u, 4u, 5u));

#endif  // SLUICE_HAVE_PROTOBUF

}  // namespace
}  // namespace sluice::ops
