#include "sluice/core/logging.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace sluice {
namespace {

// Restores the default sink when a test ends, whatever it set.
class LoggingTest : public ::testing::Test {
 protected:
  void TearDown() override { SetLogSink(nullptr); }
};

TEST_F(LoggingTest, DefaultSinkWritesAWarningLineToStderr) {
  ::testing::internal::CaptureStderr();
  LogWarning("partial header");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "sluice: warning: partial header\n");
}

TEST_F(LoggingTest, SetSinkReceivesSeverityAndMessageInsteadOfStderr) {
  std::vector<std::pair<LogSeverity, std::string>> got;
  SetLogSink([&got](LogSeverity s, std::string_view m) { got.emplace_back(s, std::string(m)); });
  ::testing::internal::CaptureStderr();
  LogWarning("w");
  Log(LogSeverity::kError, "e");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(LogSeverity::kWarning, std::string("w")));
  EXPECT_EQ(got[1], std::make_pair(LogSeverity::kError, std::string("e")));
}

TEST_F(LoggingTest, EmptySinkRestoresTheDefault) {
  int calls = 0;
  SetLogSink([&calls](LogSeverity, std::string_view) { ++calls; });
  SetLogSink(nullptr);
  ::testing::internal::CaptureStderr();
  LogWarning("back");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "sluice: warning: back\n");
  EXPECT_EQ(calls, 0);
}

TEST_F(LoggingTest, SinkMayReplaceItselfWhileRunning) {
  int calls = 0;
  SetLogSink([&calls](LogSeverity, std::string_view) {
    ++calls;
    SetLogSink(nullptr);  // the running sink stays alive until it returns
  });
  ::testing::internal::CaptureStderr();
  LogWarning("first");
  LogWarning("second");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "sluice: warning: second\n");
  EXPECT_EQ(calls, 1);
}

TEST(LogSeverityTest, NamesAreUpperCase) {
  EXPECT_EQ(LogSeverityName(LogSeverity::kInfo), "INFO");
  EXPECT_EQ(LogSeverityName(LogSeverity::kWarning), "WARNING");
  EXPECT_EQ(LogSeverityName(LogSeverity::kError), "ERROR");
}

}  // namespace
}  // namespace sluice
