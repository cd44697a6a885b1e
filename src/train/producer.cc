#include "sluice/train/producer.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::train {
namespace {

Tensor StringScalar(std::string&& value) {
  Tensor t(DType::kString, TensorShape{});
  t.scalar<std::string>() = std::move(value);
  return t;
}

Tensor StringVector(std::vector<std::string>&& values) {
  Tensor t(DType::kString, TensorShape{static_cast<int64_t>(values.size())});
  std::span<std::string> out = t.flat<std::string>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = std::move(values[i]);
  return t;
}

thread_local const queue::WaitOptions* current_wait = nullptr;
thread_local RecordOriginScope* current_origin = nullptr;

// The file a reader's key names: the key itself, or the key less its
// ":<offset or line>" suffix.
std::string_view FileOfKey(std::string_view key, bool key_is_file) {
  if (key_is_file) return key;
  const size_t colon = key.rfind(':');
  return colon == std::string_view::npos ? key : key.substr(0, colon);
}

}  // namespace

ScopedProducerWait::ScopedProducerWait(const queue::WaitOptions& wait) : previous_(current_wait) {
  current_wait = &wait;
}

ScopedProducerWait::~ScopedProducerWait() { current_wait = previous_; }

const queue::WaitOptions& CurrentProducerWait() {
  static const queue::WaitOptions kNone;
  return current_wait != nullptr ? *current_wait : kNone;
}

RecordOriginScope::RecordOriginScope() : previous_(current_origin) { current_origin = this; }

RecordOriginScope::~RecordOriginScope() {
  current_origin = previous_;
  // An outer stage sees the record of this inner one (decode over parse over
  // a reader), unless its own input noted one first.
  if (previous_ != nullptr && key_.valid() && !previous_->key_.valid()) {
    previous_->key_ = std::move(key_);
    previous_->key_is_file_ = key_is_file_;
    previous_->reader_ = reader_;
  }
}

void RecordOriginScope::Note(const Tensor& key, bool key_is_file, const io::ReaderBase& reader) {
  RecordOriginScope* scope = current_origin;
  if (scope == nullptr) return;
  scope->key_ = key;
  scope->key_is_file_ = key_is_file;
  scope->reader_ = &reader;
}

Status RecordOriginScope::Annotate(const Status& s) const {
  if (s.ok() || !key_.valid()) return s;
  const std::string& key = key_.scalar<std::string>();
  Status out(s.code(), StrCat(s.message(), " (record ", key, " of ", reader_->DisplayName(), ")"));
  for (const auto& [k, v] : s.payloads()) out = out.WithPayload(k, v);
  if (!s.GetPayload("file").has_value()) out = out.WithPayload("file", std::string(FileOfKey(key, key_is_file_)));
  if (!s.GetPayload("key").has_value()) out = out.WithPayload("key", key);
  return out;
}

Result<Producer> LimitEpochs(Producer producer, std::optional<int64_t> num_epochs) {
  assert(producer);
  if (!num_epochs.has_value()) return producer;
  const int64_t limit = *num_epochs;
  if (limit <= 0) return errors::InvalidArgument("num_epochs must be > 0 not ", limit, ".");
  // TF's count_up_to: the call that finds the counter at the limit fails and
  // leaves it there.
  auto count = std::make_shared<std::atomic<int64_t>>(0);
  return Producer([producer = std::move(producer), count, limit]() -> Result<Element> {
    int64_t seen = count->load(std::memory_order_relaxed);
    do {
      if (seen >= limit) return errors::OutOfRange("Reached limit of ", limit);
    } while (!count->compare_exchange_weak(seen, seen + 1, std::memory_order_relaxed));
    return producer();
  });
}

Result<Producer> LimitEpochs(Element value, std::optional<int64_t> num_epochs) {
  return LimitEpochs(Producer([value = std::move(value)]() -> Result<Element> { return value; }),
                     num_epochs);
}

Result<std::vector<std::string>> MatchFilenamesOnce(const std::vector<std::string>& patterns,
                                                    io::FileSystem* fs) {
  fs = io::OrDefault(fs);
  std::vector<std::string> files;
  for (const std::string& pattern : patterns) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> matched, fs->GetMatchingPaths(pattern));
    files.insert(files.end(), std::make_move_iterator(matched.begin()),
                 std::make_move_iterator(matched.end()));
  }
  std::sort(files.begin(), files.end());
  return files;
}

Producer ReaderProducer(std::shared_ptr<io::ReaderBase> reader,
                        std::shared_ptr<queue::Queue> filename_queue) {
  assert(reader != nullptr && filename_queue != nullptr);
  // WholeFileReader and IdentityReader key a record by its file alone.
  const bool key_is_file = reader->type_name() == "WholeFileReader" || reader->type_name() == "IdentityReader";
  return [reader = std::move(reader), queue = std::move(filename_queue), key_is_file]() -> Result<Element> {
    SLUICE_ASSIGN_OR_RETURN(io::ReaderBase::Record record, reader->Read(*queue, CurrentProducerWait()));
    Tensor key = StringScalar(std::move(record.key));
    RecordOriginScope::Note(key, key_is_file, *reader);
    return Element{std::move(key), StringScalar(std::move(record.value))};
  };
}

Producer ReaderUpToProducer(std::shared_ptr<io::ReaderBase> reader,
                            std::shared_ptr<queue::Queue> filename_queue, int64_t num_records) {
  assert(reader != nullptr && filename_queue != nullptr && num_records >= 1);
  return [reader = std::move(reader), queue = std::move(filename_queue),
          num_records]() -> Result<Element> {
    SLUICE_ASSIGN_OR_RETURN(io::ReaderBase::Records records, reader->ReadUpTo(*queue, num_records, CurrentProducerWait()));
    return Element{StringVector(std::move(records.keys)), StringVector(std::move(records.values))};
  };
}

Producer DequeueProducer(std::shared_ptr<queue::Queue> queue) {
  assert(queue != nullptr);
  return [queue = std::move(queue)]() -> Result<Element> { return queue->Dequeue(CurrentProducerWait()); };
}

}  // namespace sluice::train
