// FromElements, Window and WindowDatasets: tf.data's window, its windows
// given as flat elements and opened as datasets on demand.
#include <deque>
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class ElementsDataset : public DatasetBase {
 public:
  ElementsDataset(std::shared_ptr<const std::vector<Element>> elements, ElementSpec spec)
      : DatasetBase(std::move(spec)), elements_(std::move(elements)) {}
  int64_t cardinality() const override { return static_cast<int64_t>(elements_->size()); }
  std::string DebugName() const override { return "Elements"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext&) const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<ElementsDataset> {
   public:
    explicit Iterator(const ElementsDataset* d) : DatasetIterator(d) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      const std::vector<Element>& elements = *dataset_->elements_;
      *end_of_sequence = next_ >= elements.size();
      if (!*end_of_sequence) *out = elements[next_++];
      return Status();
    }
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("next", static_cast<int64_t>(next_));
      return Status();
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t next = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("next", &next));
      if (next < 0) return InvalidArgument("elements checkpoint: negative position");
      next_ = static_cast<size_t>(next);
      return Status();
    }

   private:
    size_t next_ = 0;
  };
  const std::shared_ptr<const std::vector<Element>> elements_;
};

class WindowDataset : public DatasetBase {
 public:
  WindowDataset(DatasetPtr input, int64_t size, int64_t shift, int64_t stride, bool drop_remainder)
      : DatasetBase(input->element_spec()),
        input_(std::move(input)),
        size_(size),
        shift_(shift),
        stride_(stride),
        drop_remainder_(drop_remainder) {}
  // TF's WindowDataset::CardinalityInternal.
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (n < 0) return n;
    if (!drop_remainder_) return n / shift_ + (n % shift_ == 0 ? 0 : 1);
    const int64_t rest = n - ((size_ - 1) * stride_ + 1);
    return rest < 0 ? 0 : rest / shift_ + 1;
  }
  std::string DebugName() const override { return "Window"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  // buffer_ holds the input elements from position start_ on; each window
  // reads what it needs, then the buffer drops what the next window does
  // not (or the input skips it, when shift > the window's span).
  class Iterator : public DatasetIterator<WindowDataset> {
   public:
    Iterator(const WindowDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "Window")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      const int64_t span = (dataset_->size_ - 1) * dataset_->stride_ + 1;
      SLUICE_RETURN_IF_ERROR(timer.Inputs([&] { return SkipToStart(); }));
      while (!input_end_ && static_cast<int64_t>(buffer_.size()) < span) {
        Element e;
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), &e, &input_end_));
        if (!input_end_) buffer_.push_back(std::move(e));
      }
      const bool full = static_cast<int64_t>(buffer_.size()) >= span;
      if (buffer_.empty() || (!full && dataset_->drop_remainder_)) {
        *end_of_sequence = true;
        return Status();
      }
      out->clear();
      for (int64_t i = 0; i < static_cast<int64_t>(buffer_.size()) && i < span; i += dataset_->stride_) {
        for (const Tensor& t : buffer_[static_cast<size_t>(i)]) out->push_back(t);
      }
      to_skip_ = dataset_->shift_;
      *end_of_sequence = false;
      return timer.Finish(Status(), *out, false);
    }

    Status Save(IteratorStateWriter* w) override {
      w->WriteElements("buffer", buffer_);
      w->WriteInt("to_skip", to_skip_);
      w->WriteBool("input_end", input_end_);
      return SaveInput(*input_, w);  // also after its end: its passes
    }
    Status Restore(IteratorStateReader* r) override {
      buffer_.clear();
      SLUICE_RETURN_IF_ERROR(r->ReadElements("buffer", &buffer_));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("to_skip", &to_skip_));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("input_end", &input_end_));
      return RestoreInput(*input_, r);
    }

   private:
    // Drops the first `to_skip_` elements (buffered first, then from input).
    Status SkipToStart() {
      while (to_skip_ > 0 && !buffer_.empty()) {
        buffer_.pop_front();
        --to_skip_;
      }
      while (to_skip_ > 0 && !input_end_) {
        Element e;
        SLUICE_RETURN_IF_ERROR(input_->GetNext(&e, &input_end_));
        if (!input_end_) --to_skip_;
      }
      return Status();
    }

    std::unique_ptr<IteratorBase> input_;
    std::deque<Element> buffer_;
    int64_t to_skip_ = 0;
    bool input_end_ = false;
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
  const int64_t size_, shift_, stride_;
  const bool drop_remainder_;
};

}  // namespace

Result<DatasetPtr> FromElements(std::shared_ptr<const std::vector<Element>> elements, ElementSpec spec) {
  if (!elements) return InvalidArgument("FromElements: the element vector is null");
  return DatasetPtr(std::make_shared<ElementsDataset>(std::move(elements), std::move(spec)));
}

Result<DatasetPtr> Window(DatasetPtr input, int64_t size, std::optional<int64_t> shift, int64_t stride,
                          bool drop_remainder) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "window"));
  const int64_t window_shift = shift.value_or(size);
  if (size < 1) return InvalidArgument("Window size must be greater than zero.");
  if (window_shift < 1) return InvalidArgument("Window shift must be greater than zero.");
  if (stride < 1) return InvalidArgument("Window stride must be greater than zero.");
  return DatasetPtr(std::make_shared<WindowDataset>(std::move(input), size, window_shift, stride, drop_remainder));
}

Result<std::vector<DatasetPtr>> WindowDatasets(const Element& window, const ElementSpec& spec) {
  const size_t k = spec.size();
  if (k == 0 || window.size() == 0 || window.size() % k != 0) {
    return InvalidArgument("a window of " + std::to_string(window.size()) + " tensors is not whole elements of " +
                           spec.DebugString());
  }
  std::vector<DatasetPtr> out;
  for (size_t j = 0; j < k; ++j) {
    auto values = std::make_shared<std::vector<Element>>();
    for (size_t i = j; i < window.size(); i += k) values->push_back(Element{window[i]});
    ElementSpec component{{spec.dtypes[j]}, {spec.shapes[j]}, {}};
    SLUICE_ASSIGN_OR_RETURN(DatasetPtr ds, FromElements(std::move(values), std::move(component)));
    out.push_back(std::move(ds));
  }
  return out;
}

}  // namespace sluice::data
