// Unit tests of the private building blocks: the wire-format cursor, Feature
// resolution, the key index and ragged splits.
#include "wire_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "example_plan.h"
#include "ragged_builder.h"
#include "test_util.h"
#include "value_buffer.h"

namespace sluice::ops {
namespace {

using testing::PutBytes;
using testing::PutTag;
using testing::PutVarint;

TEST(WireCursorTest, VarintsOfEveryLengthRoundTrip) {
  const std::vector<uint64_t> values = {0, 1, 127, 128, 300, 1ull << 35, ~0ull, static_cast<uint64_t>(-5)};
  std::string s;
  for (uint64_t v : values) PutVarint(&s, v);
  wire::Cursor c(s);
  for (uint64_t v : values) {
    uint64_t got = 0;
    ASSERT_TRUE(c.ReadVarint(&got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(c.done());
}

TEST(WireCursorTest, VarintLongerThanTenBytesOrTruncatedIsMalformed) {
  uint64_t v;
  const std::string long_varint = std::string(10, '\x80') + "\x01";
  wire::Cursor eleven(long_varint);
  EXPECT_FALSE(eleven.ReadVarint(&v));
  wire::Cursor truncated("\x80\x80");
  EXPECT_FALSE(truncated.ReadVarint(&v));
}

TEST(WireCursorTest, FieldNumberZeroIsMalformed) {
  uint32_t field;
  wire::WireType wt;
  const std::string zero_field("\x00\x01", 2);
  wire::Cursor c(zero_field);
  EXPECT_FALSE(c.ReadTag(&field, &wt));
}

TEST(WireCursorTest, LengthBeyondTheEndIsMalformed) {
  std::string s;
  PutTag(&s, 1, 2);
  PutVarint(&s, 10);
  s += "abc";
  wire::Cursor c(s);
  uint32_t field;
  wire::WireType wt;
  ASSERT_TRUE(c.ReadTag(&field, &wt));
  std::string_view out;
  EXPECT_FALSE(c.ReadLengthDelimited(&out));
}

TEST(WireCursorTest, SkipsEveryWireTypeIncludingNestedGroups) {
  std::string s;
  PutTag(&s, 1, 0);
  PutVarint(&s, 1ull << 60);
  PutTag(&s, 2, 1);
  s.append(8, 'x');
  PutBytes(&s, 3, "hello");
  PutTag(&s, 4, 5);
  s.append(4, 'y');
  PutTag(&s, 5, 3);  // group 5 { group 6 { varint } }
  PutTag(&s, 6, 3);
  PutTag(&s, 7, 0);
  PutVarint(&s, 3);
  PutTag(&s, 6, 4);
  PutTag(&s, 5, 4);
  wire::Cursor c(s);
  int fields = 0;
  while (!c.done()) {
    uint32_t field;
    wire::WireType wt;
    ASSERT_TRUE(c.ReadTag(&field, &wt));
    ASSERT_TRUE(c.Skip(field, wt)) << "field " << field;
    ++fields;
  }
  EXPECT_EQ(fields, 5);
}

TEST(WireCursorTest, UnmatchedGroupsAndUnknownWireTypesAreMalformed) {
  for (const std::string& s : {std::string("\x2b\x08\x01", 3),   // group 5 never ends
                               std::string("\x2b\x34", 2),       // ends as group 6
                               std::string("\x2c", 1),           // end without start
                               std::string("\x0e\x00", 2)}) {    // wire type 6
    wire::Cursor c(s);
    uint32_t field;
    wire::WireType wt;
    ASSERT_TRUE(c.ReadTag(&field, &wt));
    EXPECT_FALSE(c.Skip(field, wt));
  }
  std::string deep;
  for (int i = 0; i < 200; ++i) PutTag(&deep, 5, 3);
  wire::Cursor c(deep);
  uint32_t field;
  wire::WireType wt;
  ASSERT_TRUE(c.ReadTag(&field, &wt));
  EXPECT_FALSE(c.Skip(field, wt));  // deeper than kMaxGroupDepth
}

TEST(ResolveFeatureTest, EmptyFeatureHasNoKind) {
  wire::FeatureRef f;
  ASSERT_TRUE(wire::ResolveFeature("", &f));
  EXPECT_EQ(f.kind, FeatureKind::kNone);
}

TEST(ResolveFeatureTest, WrongWireTypeForAListFieldIsAnUnknownField) {
  std::string s;
  PutTag(&s, 2, 0);  // float_list as a varint: not the oneof
  PutVarint(&s, 1);
  s += testing::Int64Feature({4});
  wire::FeatureRef f;
  ASSERT_TRUE(wire::ResolveFeature(s, &f));
  EXPECT_EQ(f.kind, FeatureKind::kInt64);
  internal::ValueBuffer buf;
  buf.dtype = DType::kInt64;
  ASSERT_TRUE(internal::AppendFeature(f, &buf));
  EXPECT_EQ(buf.int64s, std::vector<int64_t>{4});
}

TEST(ResolveFeatureTest, SwitchingBackToAKindDropsItsEarlierLists) {
  const std::string s = testing::Int64Feature({1}) + testing::FloatFeature({2}) + testing::Int64Feature({3}) +
                        testing::Int64Feature({4});
  wire::FeatureRef f;
  ASSERT_TRUE(wire::ResolveFeature(s, &f));
  internal::ValueBuffer buf;
  buf.dtype = DType::kInt64;
  ASSERT_TRUE(internal::AppendFeature(f, &buf));
  EXPECT_EQ(buf.int64s, (std::vector<int64_t>{3, 4}));
}

TEST(WriteFeatureTest, CountsValuesBeyondTheCapacityWithoutWritingThem) {
  wire::FeatureRef f;
  const std::string s = testing::FloatFeature({1, 2, 3});
  ASSERT_TRUE(wire::ResolveFeature(s, &f));
  Tensor t = Tensor::Zeros(DType::kFloat32, TensorShape{4});
  int64_t count = 0;
  ASSERT_TRUE(internal::WriteFeature(f, t, 1, 2, &count));
  EXPECT_EQ(count, 3);
  EXPECT_EQ(testing::Values<float>(t), (std::vector<float>{0, 1, 2, 0}));
}

TEST(KeyIndexTest, FindsEveryKeyAndOnlyThose) {
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) keys.push_back("feature/" + std::to_string(i * 7919));
  keys.push_back("");
  keys.push_back(std::string(100, 'k'));
  internal::KeyIndex index;
  index.Build(keys);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(index.Find(keys[i]), static_cast<int>(i));
  EXPECT_EQ(index.Find("feature/1"), -1);
  EXPECT_EQ(index.Find(std::string(99, 'k')), -1);
  internal::KeyIndex empty;
  empty.Build({});
  EXPECT_EQ(empty.Find("x"), -1);
}

TEST(SplitsTensorTest, Int32SplitsThatOverflowAreInvalidArgument) {
  const std::vector<int64_t> splits = {0, int64_t{1} << 31};
  EXPECT_STATUS(internal::SplitsTensor(splits, DType::kInt32).status(), Code::kInvalidArgument,
                "does not fit row_splits_dtype int32");
  auto ok = internal::SplitsTensor(splits, DType::kInt64);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(testing::Values<int64_t>(*ok), splits);
}

TEST(RaggedBuilderTest, ValueRowIdsMayImplyTrailingEmptyRowsWithinTheLimit) {
  std::vector<internal::PartitionPlan> parts(1);
  parts[0].kind = RaggedPartition::Kind::kValueRowIds;
  internal::RaggedBuilder builder(parts);
  const std::vector<int64_t> ids = {0, 3};
  std::vector<std::span<const int64_t>> spans = {ids};
  int64_t top = 0;
  ASSERT_TRUE(builder.AddUnit(2, spans, &top).ok());
  EXPECT_EQ(top, 4);
  EXPECT_EQ(builder.levels()[0], (std::vector<int64_t>{0, 1, 1, 1, 2}));
  const std::vector<int64_t> huge = {0, int64_t{1} << 40};
  spans[0] = huge;
  EXPECT_STATUS(builder.AddUnit(2, spans, &top), Code::kInvalidArgument, "implies too many empty rows");
}

}  // namespace
}  // namespace sluice::ops
