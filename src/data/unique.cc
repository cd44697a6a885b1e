// Unique: each distinct int32, int64 or string value once.
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// The bytes that identify a tensor's value: its shape, then its values
// (strings length-prefixed).
std::string ValueKey(const Tensor& t) {
  std::string key = t.shape().DebugString();
  key.push_back('\0');
  if (t.dtype() == DType::kString) {
    for (const std::string& s : t.flat<std::string>()) {
      const uint64_t n = s.size();
      key.append(reinterpret_cast<const char*>(&n), sizeof(n));
      key += s;
    }
  } else {
    key.append(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  }
  return key;
}

Status CheckDType(DType dtype) {
  if (dtype == DType::kInt32 || dtype == DType::kInt64 || dtype == DType::kString) return Status();
  return InvalidArgument("`tf.data.Dataset.unique` does not support type " + std::string(DTypeName(dtype)) +
                         " -- only `tf.int32`, `tf.int64`, and `tf.string` are supported.");
}

class UniqueDataset : public DatasetBase {
 public:
  explicit UniqueDataset(DatasetPtr input) : DatasetBase(input->element_spec()), input_(std::move(input)) {}
  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "Unique"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<UniqueDataset> {
   public:
    Iterator(const UniqueDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "Unique")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      while (true) {
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
        if (*end_of_sequence) return Status();
        if (out->size() != 1) return InvalidArgument("UniqueDataset only supports inputs with a single component.");
        SLUICE_RETURN_IF_ERROR(CheckDType((*out)[0].dtype()));
        if (seen_.insert(ValueKey((*out)[0])).second) return timer.Finish(Status(), *out, false);
      }
    }

    // The seen set as one entry: each value's key, length-prefixed (u64).
    Status Save(IteratorStateWriter* w) override {
      std::string seen;
      for (const std::string& key : seen_) {
        const uint64_t n = key.size();
        seen.append(reinterpret_cast<const char*>(&n), sizeof(n));
        seen += key;
      }
      w->WriteInt("seen.size", static_cast<int64_t>(seen_.size()));
      w->WriteBytes("seen", seen);
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t count = 0;
      std::string seen;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("seen.size", &count));
      SLUICE_RETURN_IF_ERROR(r->ReadBytes("seen", &seen));
      seen_.clear();
      std::string_view in = seen;
      for (int64_t i = 0; i < count; ++i) {
        uint64_t n = 0;
        if (in.size() < sizeof(n)) return InvalidArgument("unique checkpoint: the seen set is truncated");
        std::memcpy(&n, in.data(), sizeof(n));
        in.remove_prefix(sizeof(n));
        if (in.size() < n) return InvalidArgument("unique checkpoint: the seen set is truncated");
        seen_.emplace(in.substr(0, n));
        in.remove_prefix(n);
      }
      if (!in.empty()) return InvalidArgument("unique checkpoint: the seen set has trailing bytes");
      return RestoreInput(*input_, r);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    std::unordered_set<std::string> seen_;
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
};

}  // namespace

Result<DatasetPtr> Unique(DatasetPtr input) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "unique"));
  const ElementSpec& spec = input->element_spec();
  if (spec.size() != 1) return InvalidArgument("UniqueDataset only supports inputs with a single component.");
  // kInvalid (not known before iterating) is checked per element.
  if (spec.dtypes[0] != DType::kInvalid) SLUICE_RETURN_IF_ERROR(CheckDType(spec.dtypes[0]));
  return DatasetPtr(std::make_shared<UniqueDataset>(std::move(input)));
}

}  // namespace sluice::data
