#include "sluice/ops/example_view.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::ops {
namespace {

using testing::BytesFeature;
using testing::FloatFeature;
using testing::Int64Feature;
using testing::MakeExample;

TEST(ExampleViewTest, FindsFeaturesAndDecodesThemLazily) {
  const std::string ex = MakeExample(
      {{"b", BytesFeature({"xy", "z"})}, {"f", FloatFeature({1.5f})}, {"i", Int64Feature({1, 2, 3})}, {"e", ""}});
  auto view = ExampleView::Parse(ex);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->entries().size(), 4u);
  std::vector<std::string_view> bytes;
  ASSERT_TRUE(view->Find("b")->AppendBytes(&bytes).ok());
  EXPECT_EQ(bytes, (std::vector<std::string_view>{"xy", "z"}));
  EXPECT_TRUE(bytes[0].data() > ex.data() && bytes[0].data() < ex.data() + ex.size());  // no copy
  std::vector<float> floats;
  ASSERT_TRUE(view->Find("f")->AppendFloats(&floats).ok());
  EXPECT_EQ(floats, std::vector<float>{1.5f});
  EXPECT_EQ(*view->Find("i")->NumValues(), 3);
  EXPECT_EQ(view->Find("e")->kind(), FeatureKind::kNone);
  EXPECT_FALSE(view->Find("missing").has_value());
}

TEST(ExampleViewTest, WrongKindIsInvalidArgument) {
  const std::string ex = MakeExample({{"i", Int64Feature({1})}});
  auto view = ExampleView::Parse(ex);
  ASSERT_TRUE(view.ok());
  std::vector<float> floats;
  EXPECT_STATUS(view->Find("i")->AppendFloats(&floats), Code::kInvalidArgument,
                "Data types don't match. Expected type: float, Actual type: int64");
}

TEST(ExampleViewTest, RepeatedKeyFindsTheLastEntry) {
  const std::string ex = MakeExample({{"k", Int64Feature({1})}, {"k", Int64Feature({2, 3})}});
  auto view = ExampleView::Parse(ex);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(*view->Find("k")->NumValues(), 2);
}

TEST(ExampleViewTest, MalformedExampleIsInvalidArgument) {
  EXPECT_STATUS(ExampleView::Parse("\x0a\x05\x0a").status(), Code::kInvalidArgument, "Could not parse example input");
  std::string bad_feature = "\x12\x05";  // float_list claiming 5 bytes
  EXPECT_STATUS(ExampleView::Parse(MakeExample({{"k", bad_feature}})).status(), Code::kInvalidArgument,
                "Could not parse example input");
  EXPECT_STATUS(FeatureView::Parse(bad_feature).status(), Code::kInvalidArgument, "Can't parse serialized Feature.");
}

}  // namespace
}  // namespace sluice::ops
