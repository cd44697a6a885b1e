#include "sluice/core/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

namespace sluice {
namespace {

// The numbers are TensorFlow's (error_codes.proto) and Abseil's: a status
// must round-trip with both.
TEST(CodeTest, NumbersAreTensorFlowsCanonicalCodes) {
  EXPECT_EQ(static_cast<int>(Code::kOk), 0);
  EXPECT_EQ(static_cast<int>(Code::kCancelled), 1);
  EXPECT_EQ(static_cast<int>(Code::kUnknown), 2);
  EXPECT_EQ(static_cast<int>(Code::kInvalidArgument), 3);
  EXPECT_EQ(static_cast<int>(Code::kDeadlineExceeded), 4);
  EXPECT_EQ(static_cast<int>(Code::kNotFound), 5);
  EXPECT_EQ(static_cast<int>(Code::kAlreadyExists), 6);
  EXPECT_EQ(static_cast<int>(Code::kPermissionDenied), 7);
  EXPECT_EQ(static_cast<int>(Code::kResourceExhausted), 8);
  EXPECT_EQ(static_cast<int>(Code::kFailedPrecondition), 9);
  EXPECT_EQ(static_cast<int>(Code::kAborted), 10);
  EXPECT_EQ(static_cast<int>(Code::kOutOfRange), 11);
  EXPECT_EQ(static_cast<int>(Code::kUnimplemented), 12);
  EXPECT_EQ(static_cast<int>(Code::kInternal), 13);
  EXPECT_EQ(static_cast<int>(Code::kUnavailable), 14);
  EXPECT_EQ(static_cast<int>(Code::kDataLoss), 15);
  EXPECT_EQ(static_cast<int>(Code::kUnauthenticated), 16);
}

TEST(CodeTest, NamesAreSpelledAsTensorFlowSpellsThem) {
  EXPECT_EQ(CodeName(Code::kOk), "OK");
  EXPECT_EQ(CodeName(Code::kCancelled), "CANCELLED");
  EXPECT_EQ(CodeName(Code::kUnknown), "UNKNOWN");
  EXPECT_EQ(CodeName(Code::kInvalidArgument), "INVALID_ARGUMENT");
  EXPECT_EQ(CodeName(Code::kDeadlineExceeded), "DEADLINE_EXCEEDED");
  EXPECT_EQ(CodeName(Code::kNotFound), "NOT_FOUND");
  EXPECT_EQ(CodeName(Code::kAlreadyExists), "ALREADY_EXISTS");
  EXPECT_EQ(CodeName(Code::kPermissionDenied), "PERMISSION_DENIED");
  EXPECT_EQ(CodeName(Code::kResourceExhausted), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(CodeName(Code::kFailedPrecondition), "FAILED_PRECONDITION");
  EXPECT_EQ(CodeName(Code::kAborted), "ABORTED");
  EXPECT_EQ(CodeName(Code::kOutOfRange), "OUT_OF_RANGE");
  EXPECT_EQ(CodeName(Code::kUnimplemented), "UNIMPLEMENTED");
  EXPECT_EQ(CodeName(Code::kInternal), "INTERNAL");
  EXPECT_EQ(CodeName(Code::kUnavailable), "UNAVAILABLE");
  EXPECT_EQ(CodeName(Code::kDataLoss), "DATA_LOSS");
  EXPECT_EQ(CodeName(Code::kUnauthenticated), "UNAUTHENTICATED");
}

TEST(CodeTest, NumberOutsideTheEnumHasAPlaceholderName) {
  EXPECT_EQ(CodeName(static_cast<Code>(99)), "UNKNOWN_CODE");
}

TEST(StatusTest, DefaultIsOkWithEmptyMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_TRUE(s.payloads().empty());
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(Status::OK(), s);
}

TEST(StatusTest, OkCodeDropsTheMessage) {
  Status s(Code::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s, Status::OK());
}

TEST(StatusTest, ErrorKeepsCodeAndMessage) {
  Status s(Code::kDataLoss, "corrupt record at offset 12");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_EQ(s.message(), "corrupt record at offset 12");
  EXPECT_EQ(s.ToString(), "DATA_LOSS: corrupt record at offset 12");
}

TEST(StatusTest, ErrorWithEmptyMessageIsStillAnError) {
  Status s(Code::kCancelled, "");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kCancelled);
  EXPECT_EQ(s.ToString(), "CANCELLED: ");
}

TEST(StatusTest, StreamsAsToString) {
  std::ostringstream os;
  os << errors::OutOfRange("end") << "|" << Status();
  EXPECT_EQ(os.str(), "OUT_OF_RANGE: end|OK");
}

TEST(StatusTest, ErrorConstructorsConcatenateStreamableParts) {
  Status s = errors::OutOfRange("queue '", "q", "' has ", 3, " of ", 4.5, " items");
  EXPECT_EQ(s.code(), Code::kOutOfRange);
  EXPECT_EQ(s.message(), "queue 'q' has 3 of 4.5 items");
  EXPECT_EQ(StrCat("a", 1, 'b', std::string("c")), "a1bc");
}

TEST(StatusTest, EachErrorConstructorSetsItsCodeAndPredicate) {
  EXPECT_EQ(errors::Cancelled("x").code(), Code::kCancelled);
  EXPECT_EQ(errors::Unknown("x").code(), Code::kUnknown);
  EXPECT_EQ(errors::InvalidArgument("x").code(), Code::kInvalidArgument);
  EXPECT_EQ(errors::DeadlineExceeded("x").code(), Code::kDeadlineExceeded);
  EXPECT_EQ(errors::NotFound("x").code(), Code::kNotFound);
  EXPECT_EQ(errors::AlreadyExists("x").code(), Code::kAlreadyExists);
  EXPECT_EQ(errors::PermissionDenied("x").code(), Code::kPermissionDenied);
  EXPECT_EQ(errors::ResourceExhausted("x").code(), Code::kResourceExhausted);
  EXPECT_EQ(errors::FailedPrecondition("x").code(), Code::kFailedPrecondition);
  EXPECT_EQ(errors::Aborted("x").code(), Code::kAborted);
  EXPECT_EQ(errors::OutOfRange("x").code(), Code::kOutOfRange);
  EXPECT_EQ(errors::Unimplemented("x").code(), Code::kUnimplemented);
  EXPECT_EQ(errors::Internal("x").code(), Code::kInternal);
  EXPECT_EQ(errors::Unavailable("x").code(), Code::kUnavailable);
  EXPECT_EQ(errors::DataLoss("x").code(), Code::kDataLoss);
  EXPECT_EQ(errors::Unauthenticated("x").code(), Code::kUnauthenticated);

  EXPECT_TRUE(errors::IsOutOfRange(errors::OutOfRange("x")));
  EXPECT_FALSE(errors::IsOutOfRange(errors::Cancelled("x")));
  EXPECT_FALSE(errors::IsOutOfRange(Status()));
  EXPECT_TRUE(errors::IsCancelled(errors::Cancelled("x")));
  EXPECT_TRUE(errors::IsDataLoss(errors::DataLoss("x")));
  EXPECT_TRUE(errors::IsDeadlineExceeded(errors::DeadlineExceeded("x")));
}

TEST(StatusTest, EqualityComparesCodeAndMessage) {
  EXPECT_EQ(errors::Aborted("a"), errors::Aborted("a"));
  EXPECT_NE(errors::Aborted("a"), errors::Aborted("b"));
  EXPECT_NE(errors::Aborted("a"), errors::Internal("a"));
  EXPECT_NE(errors::Aborted(""), Status());
}

TEST(StatusTest, CopiesAreEqualAndIndependentOfTheOriginalsLifetime) {
  Status copy;
  {
    Status original = errors::NotFound("no such file: a.tfrecord").WithPayload("file", "a.tfrecord");
    copy = original;
    EXPECT_EQ(copy, original);
  }
  EXPECT_EQ(copy.code(), Code::kNotFound);
  EXPECT_EQ(copy.message(), "no such file: a.tfrecord");
  EXPECT_EQ(copy.GetPayload("file"), "a.tfrecord");
}

TEST(StatusTest, WithPayloadReturnsANewStatusAndLeavesTheOriginal) {
  const Status base = errors::DataLoss("bad crc");
  const Status with = base.WithPayload("file", "x.tfrecord").WithPayload("offset", "1024");
  EXPECT_EQ(with.code(), Code::kDataLoss);
  EXPECT_EQ(with.message(), "bad crc");
  EXPECT_EQ(with.GetPayload("file"), "x.tfrecord");
  EXPECT_EQ(with.GetPayload("offset"), "1024");
  EXPECT_EQ(with.GetPayload("record"), std::nullopt);
  ASSERT_EQ(with.payloads().size(), 2u);
  EXPECT_EQ(with.payloads().begin()->first, "file");  // sorted by key

  EXPECT_TRUE(base.payloads().empty());
  EXPECT_EQ(base.GetPayload("file"), std::nullopt);
}

TEST(StatusTest, WithPayloadOverwritesAnExistingKey) {
  Status s = errors::DataLoss("x").WithPayload("record", "1").WithPayload("record", "2");
  EXPECT_EQ(s.GetPayload("record"), "2");
  EXPECT_EQ(s.payloads().size(), 1u);
}

TEST(StatusTest, OkTakesNoPayload) {
  Status s = Status().WithPayload("file", "x");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.GetPayload("file"), std::nullopt);
  EXPECT_TRUE(s.payloads().empty());
}

TEST(StatusTest, WithPrefixPrependsAndKeepsCodeAndPayloads) {
  const Status base = errors::DataLoss("bad crc").WithPayload("offset", "8");
  const Status s = base.WithPrefix("while reading a.tfrecord: ");
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_EQ(s.message(), "while reading a.tfrecord: bad crc");
  EXPECT_EQ(s.GetPayload("offset"), "8");
  EXPECT_EQ(base.message(), "bad crc");
}

TEST(StatusTest, WithPrefixLeavesOkAlone) {
  Status s = Status().WithPrefix("while reading: ");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, IgnoreErrorCompilesOnAnyStatus) {
  errors::Internal("dropped on purpose").IgnoreError();
  Status().IgnoreError();
}

// ---------------------------------------------------------------------------
// Result<T>

TEST(ResultTest, HoldsAValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
  *r = 7;
  EXPECT_EQ(r.value(), 7);
}

TEST(ResultTest, HoldsAnError) {
  Result<int> r = errors::OutOfRange("end of sequence");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kOutOfRange);
  EXPECT_EQ(r.status().message(), "end of sequence");
}

TEST(ResultTest, ArrowReachesMembers) {
  Result<std::string> r = std::string("abc");
  EXPECT_EQ(r->size(), 3u);
  const Result<std::string>& cr = r;
  EXPECT_EQ(cr->front(), 'a');
  EXPECT_EQ(*cr, "abc");
}

TEST(ResultTest, MoveOnlyValueCanBeMovedOut) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);

  Result<std::unique_ptr<int>> r2 = std::make_unique<int>(6);
  std::unique_ptr<int> p2 = *std::move(r2);
  EXPECT_EQ(*p2, 6);
}

// ---------------------------------------------------------------------------
// Macros

Status FailIfNegative(int x, int* calls) {
  ++*calls;
  if (x < 0) return errors::InvalidArgument("negative: ", x);
  return Status();
}

Status TwoSteps(int a, int b, int* calls, bool* reached_end) {
  SLUICE_RETURN_IF_ERROR(FailIfNegative(a, calls));
  SLUICE_RETURN_IF_ERROR(FailIfNegative(b, calls));
  *reached_end = true;
  return Status();
}

TEST(MacroTest, ReturnIfErrorContinuesOnOk) {
  int calls = 0;
  bool reached_end = false;
  EXPECT_TRUE(TwoSteps(1, 2, &calls, &reached_end).ok());
  EXPECT_EQ(calls, 2);  // each expression evaluated once
  EXPECT_TRUE(reached_end);
}

TEST(MacroTest, ReturnIfErrorReturnsTheFirstError) {
  int calls = 0;
  bool reached_end = false;
  Status s = TwoSteps(-1, -2, &calls, &reached_end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "negative: -1");
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(reached_end);
}

Result<int> Half(int x) {
  if (x % 2 != 0) return errors::InvalidArgument(x, " is odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  SLUICE_ASSIGN_OR_RETURN(int half, Half(x));
  int quarter = 0;
  SLUICE_ASSIGN_OR_RETURN(quarter, Half(half));  // assigns an existing variable
  return quarter;
}

TEST(MacroTest, AssignOrReturnAssignsValues) {
  Result<int> r = Quarter(20);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 5);
}

TEST(MacroTest, AssignOrReturnPropagatesTheError) {
  Result<int> r = Quarter(6);  // 6 -> 3 -> odd
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "3 is odd");
  EXPECT_EQ(Quarter(5).status().message(), "5 is odd");
}

Status UseInStatusFunction(int x, int* out) {
  SLUICE_ASSIGN_OR_RETURN(*out, Half(x));
  return Status();
}

TEST(MacroTest, AssignOrReturnWorksInAFunctionReturningStatus) {
  int out = -1;
  EXPECT_TRUE(UseInStatusFunction(8, &out).ok());
  EXPECT_EQ(out, 4);
  EXPECT_EQ(UseInStatusFunction(7, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(out, 4);
}

Result<std::unique_ptr<int>> MakeBox(int v) { return std::make_unique<int>(v); }

Result<int> Unbox(int v) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(v));
  return *box;
}

TEST(MacroTest, AssignOrReturnMovesMoveOnlyValues) {
  Result<int> r = Unbox(9);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 9);
}

}  // namespace
}  // namespace sluice
