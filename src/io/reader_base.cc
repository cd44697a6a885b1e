// ReaderBase, following TensorFlow's core/framework/reader_base.cc.
//
// Serialized state (IdentityReader, WholeFileReader), little-endian:
//
//   offset   size  field
//   0        4     magic "SLRS"
//   4        4     uint32 version (1)
//   8        4     uint32 payload length P (= 28 + W)
//   12       8     int64 work_started
//   20       8     int64 work_finished
//   28       8     int64 num_records_produced
//   36       4     uint32 W, the length of the current work unit
//   40       W     current work unit
//   12+P     4     uint32 masked crc32c of bytes [0, 12+P)
//
// The exact length and the checksum make every truncation, extension,
// prefix and flipped bit detectable.
#include "sluice/io/reader_base.h"

#include <cstring>

#include "sluice/core/tensor.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/record_format.h"

namespace sluice::io {
namespace {

constexpr char kStateMagic[4] = {'S', 'L', 'R', 'S'};
constexpr uint32_t kStateVersion = 1;
constexpr size_t kStateFixed = 28;  // counters + work length

}  // namespace

ReaderBase::ReaderBase(std::string type_name, std::string name)
    : type_name_(std::move(type_name)), name_(name.empty() ? type_name_ : std::move(name)) {}

std::string ReaderBase::DisplayName() const { return StrCat(type_name_, " '", name_, "'"); }

Status ReaderBase::StartNextWorkLocked(queue::Queue& queue, const queue::WaitOptions& wait) {
  mu_.AssertHeld();
  if (queue.dtypes().size() != 1) return errors::InvalidArgument("Expected single component queue");
  if (queue.dtypes()[0] != DType::kString) {
    return errors::InvalidArgument("Expected queue with single string component");
  }
  SLUICE_ASSIGN_OR_RETURN(Element element, queue.Dequeue(wait));
  if (element.size() != 1) return errors::InvalidArgument("Expected single component queue");
  const Tensor& t = element[0];
  if (t.dtype() != DType::kString) return errors::InvalidArgument("Expected queue with single string component");
  if (t.num_elements() != 1) return errors::InvalidArgument("Expected to dequeue a one-element string tensor");
  work_ = t.flat<std::string>()[0];
  SLUICE_RETURN_IF_ERROR(OnWorkStartedLocked());
  ++work_started_;
  return Status::OK();
}

Status ReaderBase::FinishWorkLocked() {
  mu_.AssertHeld();
  Status s = OnWorkFinishedLocked();
  work_finished_ = work_started_;
  return s;
}

Result<ReaderBase::Record> ReaderBase::Read(queue::Queue& queue, const queue::WaitOptions& wait) {
  MutexLock l(&mu_);
  Record record;
  for (;;) {
    if (!work_in_progress()) SLUICE_RETURN_IF_ERROR(StartNextWorkLocked(queue, wait));
    bool produced = false, at_end = false;
    Status s = ReadLocked(&record.key, &record.value, &produced, &at_end);
    if (s.ok() && !produced && !at_end) {
      s = errors::Internal("ReadLocked() for ", DisplayName(),
                           " must set *at_end=true, *produced=true, or return an error.");
    }
    if (!s.ok() && produced) {
      s = errors::Internal("ReadLocked() for ", DisplayName(), " set *produced=true *and* returned an error: ",
                           s.message());
    }
    if (s.ok() && at_end) s = FinishWorkLocked();
    SLUICE_RETURN_IF_ERROR(s);
    if (produced) {
      ++num_records_produced_;
      return record;
    }
  }
}

Status ReaderBase::ReadUpToLocked(int64_t n, std::vector<std::string>* keys, std::vector<std::string>* values,
                                  int64_t* num_read, bool* at_end) {
  mu_.AssertHeld();
  // As TensorFlow: one record per call; ReadUpTo() calls again while it
  // needs more and the unit has not ended.
  *num_read = 0;
  std::string key, value;
  bool produced = false;
  Status s = ReadLocked(&key, &value, &produced, at_end);
  if (produced) {
    keys->push_back(std::move(key));
    values->push_back(std::move(value));
    *num_read = 1;
  }
  return s;
}

Result<ReaderBase::Records> ReaderBase::ReadUpTo(queue::Queue& queue, int64_t num_records,
                                                 const queue::WaitOptions& wait) {
  if (num_records < 0) return errors::InvalidArgument("num_records must be >= 0, not ", num_records);
  MutexLock l(&mu_);
  Records out;
  int64_t produced_this_call = 0;
  while (produced_this_call < num_records) {
    if (!work_in_progress()) SLUICE_RETURN_IF_ERROR(StartNextWorkLocked(queue, wait));
    int64_t num_read = 0;
    bool at_end = false;
    Status s = ReadUpToLocked(num_records - produced_this_call, &out.keys, &out.values, &num_read, &at_end);
    produced_this_call += num_read;
    num_records_produced_ += num_read;
    if (s.ok() && !at_end && num_read == 0) {
      s = errors::Internal("ReadUpToLocked() for ", DisplayName(),
                           " must set *at_end=true, *num_read > 0, or return an error.");
    }
    if (s.ok() && at_end) {
      s = FinishWorkLocked();
      if (s.ok() && produced_this_call > 0) break;
    }
    SLUICE_RETURN_IF_ERROR(s);
  }
  return out;
}

int64_t ReaderBase::num_records_produced() {
  MutexLock l(&mu_);
  return num_records_produced_;
}

int64_t ReaderBase::num_work_units_completed() {
  MutexLock l(&mu_);
  return work_finished_;
}

Status ReaderBase::Reset() {
  MutexLock l(&mu_);
  return ResetLocked();
}

Status ReaderBase::ResetLocked() {
  mu_.AssertHeld();
  work_started_ = 0;
  work_finished_ = 0;
  num_records_produced_ = 0;
  work_.clear();
  return Status::OK();
}

Result<std::string> ReaderBase::SerializeState() {
  MutexLock l(&mu_);
  std::string state;
  SLUICE_RETURN_IF_ERROR(SerializeStateLocked(&state));
  return state;
}

Status ReaderBase::RestoreState(std::string_view state) {
  MutexLock l(&mu_);
  Status s = RestoreStateLocked(state);
  if (!s.ok()) ResetLocked().IgnoreError();
  return s;
}

Status ReaderBase::SerializeStateLocked(std::string* state) {
  return errors::Unimplemented("Reader SerializeState");
}

Status ReaderBase::RestoreStateLocked(std::string_view state) {
  return errors::Unimplemented("Reader RestoreState");
}

std::string ReaderBase::SaveBaseStateLocked() const {
  mu_.AssertHeld();
  const size_t payload = kStateFixed + work_.size();
  std::string out(12 + payload + 4, '\0');
  char* p = out.data();
  std::memcpy(p, kStateMagic, 4);
  EncodeFixed32(p + 4, kStateVersion);
  EncodeFixed32(p + 8, static_cast<uint32_t>(payload));
  EncodeFixed64(p + 12, static_cast<uint64_t>(work_started_));
  EncodeFixed64(p + 20, static_cast<uint64_t>(work_finished_));
  EncodeFixed64(p + 28, static_cast<uint64_t>(num_records_produced_));
  EncodeFixed32(p + 36, static_cast<uint32_t>(work_.size()));
  if (!work_.empty()) std::memcpy(p + 40, work_.data(), work_.size());
  EncodeFixed32(p + 12 + payload, crc32c::Mask(crc32c::Value(p, 12 + payload)));
  return out;
}

Status ReaderBase::RestoreBaseStateLocked(std::string_view state) {
  mu_.AssertHeld();
  const auto unparseable = [&] { return errors::InvalidArgument("Could not parse state for ", DisplayName()); };
  if (state.size() < 12 + kStateFixed + 4) return unparseable();
  const char* p = state.data();
  if (std::memcmp(p, kStateMagic, 4) != 0 || DecodeFixed32(p + 4) != kStateVersion) return unparseable();
  const uint64_t payload = DecodeFixed32(p + 8);
  if (payload < kStateFixed || 12 + payload + 4 != state.size()) return unparseable();
  if (crc32c::Unmask(DecodeFixed32(p + 12 + payload)) != crc32c::Value(p, 12 + payload)) return unparseable();
  if (DecodeFixed32(p + 36) != payload - kStateFixed) return unparseable();
  const int64_t started = static_cast<int64_t>(DecodeFixed64(p + 12));
  const int64_t finished = static_cast<int64_t>(DecodeFixed64(p + 20));
  const int64_t produced = static_cast<int64_t>(DecodeFixed64(p + 28));
  if (started < 0 || finished < 0 || produced < 0) {
    return errors::InvalidArgument("Unexpected negative value when restoring in ", DisplayName(),
                                   ": work_started=", started, " work_finished=", finished,
                                   " num_records_produced=", produced);
  }
  if (started > finished) {
    return errors::InvalidArgument("Inconsistent work started vs. finished when restoring in ", DisplayName(),
                                   ": work_started=", started, " work_finished=", finished);
  }
  work_started_ = started;
  work_finished_ = finished;
  num_records_produced_ = produced;
  work_.assign(p + 40, static_cast<size_t>(payload - kStateFixed));
  return Status::OK();
}

}  // namespace sluice::io
