// GroupByWindow: elements gathered per key into windows, each window reduced
// to a dataset whose elements are the output.
#include <map>
#include <utility>

#include "data/dataset_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class GroupByWindowDataset : public DatasetBase {
 public:
  GroupByWindowDataset(DatasetPtr input, KeyFn key_fn, ReduceFn reduce_fn, WindowSizeFn window_size_fn,
                       ElementSpec out_spec)
      : DatasetBase(std::move(out_spec)),
        input_(std::move(input)),
        key_fn_(std::move(key_fn)),
        reduce_fn_(std::move(reduce_fn)),
        window_size_fn_(std::move(window_size_fn)) {}
  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "GroupByWindow"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  // TF's GroupByWindowDatasetOp iterator: read input into groups_ until one
  // is full, then read the reduced dataset of that group to its end.
  class Iterator : public DatasetIterator<GroupByWindowDataset> {
   public:
    Iterator(const GroupByWindowDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), ctx_(ctx), input_(d->input_->MakeIteratorInternal(ctx)) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      while (true) {
        if (group_) {
          SLUICE_RETURN_IF_ERROR(group_->GetNext(out, end_of_sequence));
          if (!*end_of_sequence) return Status();
          group_.reset();
        }
        if (!input_end_) {
          SLUICE_RETURN_IF_ERROR(ReadInput());
          continue;
        }
        if (groups_.empty()) {
          *end_of_sequence = true;
          return Status();
        }
        SLUICE_RETURN_IF_ERROR(Flush(groups_.begin()->first));
      }
    }

    // The open windows per key, each key's window size, and the window being
    // read out: its key and elements (the reduced dataset is rebuilt from
    // them on restore) and the position of its iterator.
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("groups.size", static_cast<int64_t>(groups_.size()));
      int64_t i = 0;
      for (const auto& [key, elements] : groups_) {
        const std::string name = "groups." + std::to_string(i++);
        w->WriteInt(name + ".key", key);
        w->WriteElements(name, elements);
      }
      w->WriteInt("window_sizes.size", static_cast<int64_t>(window_sizes_.size()));
      i = 0;
      for (const auto& [key, size] : window_sizes_) {
        const std::string name = "window_sizes." + std::to_string(i++);
        w->WriteInt(name + ".key", key);
        w->WriteInt(name, size);
      }
      w->WriteBool("has_group", group_ != nullptr);
      if (group_) {
        w->WriteInt("group.key", group_key_);
        w->WriteElements("group.window", *group_window_);
        IteratorStateWriter group = w->Child("group");
        SLUICE_RETURN_IF_ERROR(group_->Save(&group));
      }
      w->WriteBool("input_end", input_end_);
      return SaveInput(*input_, w);  // also after its end: its passes
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t n = 0;
      groups_.clear();
      SLUICE_RETURN_IF_ERROR(r->ReadInt("groups.size", &n));
      for (int64_t i = 0; i < n; ++i) {
        const std::string name = "groups." + std::to_string(i);
        int64_t key = 0;
        SLUICE_RETURN_IF_ERROR(r->ReadInt(name + ".key", &key));
        SLUICE_RETURN_IF_ERROR(r->ReadElements(name, &groups_[key]));
      }
      window_sizes_.clear();
      SLUICE_RETURN_IF_ERROR(r->ReadInt("window_sizes.size", &n));
      for (int64_t i = 0; i < n; ++i) {
        const std::string name = "window_sizes." + std::to_string(i);
        int64_t key = 0, size = 0;
        SLUICE_RETURN_IF_ERROR(r->ReadInt(name + ".key", &key));
        SLUICE_RETURN_IF_ERROR(r->ReadInt(name, &size));
        window_sizes_[key] = size;
      }
      bool has_group = false;
      SLUICE_RETURN_IF_ERROR(r->ReadBool("has_group", &has_group));
      group_.reset();
      if (has_group) {
        int64_t key = 0;
        std::vector<Element> window;
        SLUICE_RETURN_IF_ERROR(r->ReadInt("group.key", &key));
        SLUICE_RETURN_IF_ERROR(r->ReadElements("group.window", &window));
        SLUICE_RETURN_IF_ERROR(Open(key, std::move(window)));
        IteratorStateReader group = r->Child("group");
        SLUICE_RETURN_IF_ERROR(group_->Restore(&group));
      }
      SLUICE_RETURN_IF_ERROR(r->ReadBool("input_end", &input_end_));
      return RestoreInput(*input_, r);
    }

   private:
    // Reads one input element into its group; flushes the group if full.
    Status ReadInput() {
      Element e;
      SLUICE_RETURN_IF_ERROR(input_->GetNext(&e, &input_end_));
      if (input_end_) return Status();
      SLUICE_ASSIGN_OR_RETURN(int64_t key, dataset_->key_fn_(e));
      auto size = window_sizes_.find(key);
      if (size == window_sizes_.end()) {
        SLUICE_ASSIGN_OR_RETURN(int64_t window_size, dataset_->window_size_fn_(key));
        if (window_size <= 0) {
          return InvalidArgument("Window size must be greater than zero, but got " + std::to_string(window_size) +
                                 ".");
        }
        size = window_sizes_.emplace(key, window_size).first;
      }
      std::vector<Element>& group = groups_[key];
      group.push_back(std::move(e));
      if (static_cast<int64_t>(group.size()) == size->second) return Flush(key);
      return Status();
    }

    Status Flush(int64_t key) {
      auto node = groups_.extract(key);
      return Open(key, std::move(node.mapped()));
    }

    // group_: the reduced dataset of `window`, the window of `key`.
    Status Open(int64_t key, std::vector<Element> window) {
      group_key_ = key;
      group_window_ = std::make_shared<const std::vector<Element>>(std::move(window));
      SLUICE_ASSIGN_OR_RETURN(DatasetPtr window_ds, FromElements(group_window_, dataset_->input_->element_spec()));
      SLUICE_ASSIGN_OR_RETURN(DatasetPtr reduced, dataset_->reduce_fn_(key, std::move(window_ds)));
      if (!reduced) return InvalidArgument("group_by_window: reduce_func returned a null dataset");
      group_ = reduced->MakeIteratorInternal(ctx_);
      return Status();
    }

    const IteratorContext ctx_;
    std::unique_ptr<IteratorBase> input_;
    bool input_end_ = false;
    std::map<int64_t, std::vector<Element>> groups_;
    std::map<int64_t, int64_t> window_sizes_;
    std::unique_ptr<IteratorBase> group_;
    int64_t group_key_ = 0;                                   // group_'s key and window (for Save)
    std::shared_ptr<const std::vector<Element>> group_window_;
  };

  const DatasetPtr input_;
  const KeyFn key_fn_;
  const ReduceFn reduce_fn_;
  const WindowSizeFn window_size_fn_;
};

}  // namespace

Result<DatasetPtr> GroupByWindow(DatasetPtr input, KeyFn key_fn, ReduceFn reduce_fn, WindowSizeFn window_size_fn,
                                 ElementSpec out_spec) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "group_by_window"));
  if (!key_fn || !reduce_fn || !window_size_fn) {
    return InvalidArgument("group_by_window: key_func, reduce_func and window_size_func must all be given");
  }
  return DatasetPtr(std::make_shared<GroupByWindowDataset>(std::move(input), std::move(key_fn), std::move(reduce_fn),
                                                           std::move(window_size_fn), std::move(out_spec)));
}

}  // namespace sluice::data
