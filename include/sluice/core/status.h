// Status and Result<T>: how every sluice call reports success or failure.
//
// Errors are values here, not exceptions: an OutOfRange at the end of an epoch
// or a Cancelled at shutdown is routine, and a producer's DataLoss may wait in
// a buffer until the consumer reaches it. The codes and their numbers are
// TensorFlow's (which are Abseil's canonical codes), so a status round-trips
// with TF and absl, and the Python layer maps each code to the exception class
// of TensorFlow's name (OutOfRange -> sluice.errors.OutOfRangeError).
//
// A Status is cheap to copy: OK holds no allocation, and an error shares its
// immutable state. Thread-safe to read from several threads.
#ifndef SLUICE_CORE_STATUS_H_
#define SLUICE_CORE_STATUS_H_

#include <cassert>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sluice {

// TensorFlow's error codes (tensorflow/core/protobuf/error_codes.proto), with
// their numbers.
enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "OUT_OF_RANGE", "CANCELLED", ... as TensorFlow spells them.
std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  // OK.
  Status() = default;
  // An error (or OK when `code` is kOk, in which case `message` is dropped).
  Status(Code code, std::string message);

  static Status OK() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  Code code() const { return ok() ? Code::kOk : state_->code; }
  // Empty for OK.
  const std::string& message() const;

  // Structured context ("file", "record", "offset", ...), set by the layer
  // that knows it. Returns a new status; this one is unchanged.
  Status WithPayload(std::string key, std::string value) const;
  std::optional<std::string> GetPayload(std::string_view key) const;
  const std::map<std::string, std::string, std::less<>>& payloads() const;

  // Prefixes the message ("while reading x: " + message). OK stays OK.
  Status WithPrefix(std::string_view prefix) const;

  // "OUT_OF_RANGE: message" ("OK" for OK).
  std::string ToString() const;

  // Marks a status as deliberately ignored.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }
  friend bool operator!=(const Status& a, const Status& b) { return !(a == b); }

 private:
  struct State {
    Code code;
    std::string message;
    std::map<std::string, std::string, std::less<>> payloads;
  };
  std::shared_ptr<const State> state_;
};

std::ostream& operator<<(std::ostream& os, const Status& s);

// Builds a message from streamable parts: StrCat("got ", n, " items").
template <class... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (void)(os << ... << args);
  return os.str();
}

// Constructors named for the code: errors::OutOfRange("queue '", name, "' ...").
namespace errors {
#define SLUICE_DECLARE_ERROR(Name, Code_)                 \
  template <class... Args>                                \
  Status Name(const Args&... args) {                      \
    return Status(Code::Code_, ::sluice::StrCat(args...)); \
  }                                                       \
  inline bool Is##Name(const Status& s) { return s.code() == Code::Code_; }
SLUICE_DECLARE_ERROR(Cancelled, kCancelled)
SLUICE_DECLARE_ERROR(Unknown, kUnknown)
SLUICE_DECLARE_ERROR(InvalidArgument, kInvalidArgument)
SLUICE_DECLARE_ERROR(DeadlineExceeded, kDeadlineExceeded)
SLUICE_DECLARE_ERROR(NotFound, kNotFound)
SLUICE_DECLARE_ERROR(AlreadyExists, kAlreadyExists)
SLUICE_DECLARE_ERROR(PermissionDenied, kPermissionDenied)
SLUICE_DECLARE_ERROR(ResourceExhausted, kResourceExhausted)
SLUICE_DECLARE_ERROR(FailedPrecondition, kFailedPrecondition)
SLUICE_DECLARE_ERROR(Aborted, kAborted)
SLUICE_DECLARE_ERROR(OutOfRange, kOutOfRange)
SLUICE_DECLARE_ERROR(Unimplemented, kUnimplemented)
SLUICE_DECLARE_ERROR(Internal, kInternal)
SLUICE_DECLARE_ERROR(Unavailable, kUnavailable)
SLUICE_DECLARE_ERROR(DataLoss, kDataLoss)
SLUICE_DECLARE_ERROR(Unauthenticated, kUnauthenticated)
#undef SLUICE_DECLARE_ERROR
}  // namespace errors

// A value of type T or an error Status (never an OK status without a value).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result needs an error status or a value");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace sluice

#define SLUICE_STATUS_CONCAT_INNER_(a, b) a##b
#define SLUICE_STATUS_CONCAT_(a, b) SLUICE_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is an error.
#define SLUICE_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::sluice::Status _sluice_status = (expr);         \
    if (!_sluice_status.ok()) return _sluice_status;  \
  } while (0)

// `lhs = value of expr` (a Result<T>), or returns its error.
#define SLUICE_ASSIGN_OR_RETURN(lhs, expr) \
  SLUICE_ASSIGN_OR_RETURN_IMPL_(SLUICE_STATUS_CONCAT_(_sluice_result_, __LINE__), lhs, expr)
#define SLUICE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // SLUICE_CORE_STATUS_H_
