#include "sluice/ops/string_split.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::ops {
namespace {

using testing::Values;

TEST(StringSplitTest, EachDelimiterCharacterSeparatesAndEmptyTokensAreSkipped) {
  auto r = StringSplit(Tensor::FromStrings({"a b", "c,,d e", ""}), " ,");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>(r->indices), (std::vector<int64_t>{0, 0, 0, 1, 1, 0, 1, 1, 1, 2}));
  EXPECT_EQ(Values<std::string>(r->values), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(Values<int64_t>(r->dense_shape), (std::vector<int64_t>{3, 3}));
}

TEST(StringSplitTest, KeepingEmptyTokens) {
  auto r = StringSplit(Tensor::FromStrings({"a,,b", ""}), ",", /*skip_empty=*/false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(r->values), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_EQ(Values<int64_t>(r->dense_shape), (std::vector<int64_t>{2, 3}));
}

TEST(StringSplitTest, EmptyDelimiterSplitsIntoBytes) {
  auto r = StringSplit(Tensor::FromStrings({"abc"}), "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(r->values), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(StringSplitTest, InputMustBeARankOneStringTensor) {
  EXPECT_STATUS(StringSplit(Tensor::String("a b")).status(), Code::kInvalidArgument,
                "input must be a rank-1 string tensor");
}

TEST(StringSplitV2Test, SeparatorIsAWholeStringAndEmptyTokensStay) {
  auto r = StringSplitV2(Tensor::FromStrings({"1<>2<><>3", ""}), "<>");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(r->values), (std::vector<std::string>{"1", "2", "", "3", ""}));
  EXPECT_EQ(Values<int64_t>(r->dense_shape), (std::vector<int64_t>{2, 4}));
}

TEST(StringSplitV2Test, NoSeparatorSplitsOnWhitespaceRuns) {
  auto r = StringSplitV2(Tensor::FromStrings({"  a \t b\nc  ", "   ", ""}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(r->values), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Values<int64_t>(r->dense_shape), (std::vector<int64_t>{3, 3}));
}

TEST(StringSplitV2Test, MaxsplitLeavesTheRestInTheLastToken) {
  auto r = StringSplitV2(Tensor::FromStrings({"a,b,c,d"}), ",", 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(r->values), (std::vector<std::string>{"a", "b", "c,d"}));
  auto ws = StringSplitV2(Tensor::FromStrings({"  a b  c  "}), "", 1);
  ASSERT_TRUE(ws.ok()) << ws.status();
  EXPECT_EQ(Values<std::string>(ws->values), (std::vector<std::string>{"a", "b  c  "}));  // as Python
}

}  // namespace
}  // namespace sluice::ops
