#include "sluice/core/status.h"

#include <ostream>

namespace sluice {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kCancelled: return "CANCELLED";
    case Code::kUnknown: return "UNKNOWN";
    case Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Code::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case Code::kNotFound: return "NOT_FOUND";
    case Code::kAlreadyExists: return "ALREADY_EXISTS";
    case Code::kPermissionDenied: return "PERMISSION_DENIED";
    case Code::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case Code::kFailedPrecondition: return "FAILED_PRECONDITION";
    case Code::kAborted: return "ABORTED";
    case Code::kOutOfRange: return "OUT_OF_RANGE";
    case Code::kUnimplemented: return "UNIMPLEMENTED";
    case Code::kInternal: return "INTERNAL";
    case Code::kUnavailable: return "UNAVAILABLE";
    case Code::kDataLoss: return "DATA_LOSS";
    case Code::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN_CODE";
}

Status::Status(Code code, std::string message) {
  if (code == Code::kOk) return;
  state_ = std::make_shared<const State>(State{code, std::move(message), {}});
}

const std::string& Status::message() const {
  static const std::string* const kEmpty = new std::string();
  return ok() ? *kEmpty : state_->message;
}

const std::map<std::string, std::string, std::less<>>& Status::payloads() const {
  static const auto* const kNone = new std::map<std::string, std::string, std::less<>>();
  return ok() ? *kNone : state_->payloads;
}

Status Status::WithPayload(std::string key, std::string value) const {
  if (ok()) return *this;
  State copy = *state_;
  copy.payloads[std::move(key)] = std::move(value);
  Status s;
  s.state_ = std::make_shared<const State>(std::move(copy));
  return s;
}

std::optional<std::string> Status::GetPayload(std::string_view key) const {
  if (ok()) return std::nullopt;
  auto it = state_->payloads.find(key);
  if (it == state_->payloads.end()) return std::nullopt;
  return it->second;
}

Status Status::WithPrefix(std::string_view prefix) const {
  if (ok()) return *this;
  State copy = *state_;
  copy.message = std::string(prefix) + copy.message;
  Status s;
  s.state_ = std::make_shared<const State>(std::move(copy));
  return s;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeName(code()));
  out += ": ";
  out += message();
  return out;
}

std::ostream& operator<<(std::ostream& os, const Status& s) { return os << s.ToString(); }

}  // namespace sluice
