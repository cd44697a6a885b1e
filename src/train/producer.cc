#include "sluice/train/producer.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <span>
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

}  // namespace

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
  return [reader = std::move(reader), queue = std::move(filename_queue)]() -> Result<Element> {
    SLUICE_ASSIGN_OR_RETURN(io::ReaderBase::Record record, reader->Read(*queue));
    return Element{StringScalar(std::move(record.key)), StringScalar(std::move(record.value))};
  };
}

Producer ReaderUpToProducer(std::shared_ptr<io::ReaderBase> reader,
                            std::shared_ptr<queue::Queue> filename_queue, int64_t num_records) {
  assert(reader != nullptr && filename_queue != nullptr && num_records >= 1);
  return [reader = std::move(reader), queue = std::move(filename_queue),
          num_records]() -> Result<Element> {
    SLUICE_ASSIGN_OR_RETURN(io::ReaderBase::Records records, reader->ReadUpTo(*queue, num_records));
    return Element{StringVector(std::move(records.keys)), StringVector(std::move(records.values))};
  };
}

Producer DequeueProducer(std::shared_ptr<queue::Queue> queue) {
  assert(queue != nullptr);
  return [queue = std::move(queue)]() -> Result<Element> { return queue->Dequeue(); };
}

}  // namespace sluice::train
