// Range, FromTensors, FromTensorSlices.
#include <utility>

#include "data/dataset_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

class RangeDataset : public DatasetBase {
 public:
  RangeDataset(int64_t start, int64_t stop, int64_t step, DType dtype)
      : DatasetBase(ElementSpec{{dtype}, {PartialShape({})}, {}}), start_(start), stop_(stop), step_(step) {}

  int64_t cardinality() const override {
    if (step_ > 0) return stop_ > start_ ? (stop_ - start_ - 1) / step_ + 1 : 0;
    return start_ > stop_ ? (start_ - stop_ - 1) / -step_ + 1 : 0;
  }
  std::string DebugName() const override { return "Range"; }

  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext&) const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<RangeDataset> {
   public:
    explicit Iterator(const RangeDataset* d) : DatasetIterator(d), next_(d->start_) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      const RangeDataset& d = *dataset_;
      if (d.step_ > 0 ? next_ >= d.stop_ : next_ <= d.stop_) {
        *end_of_sequence = true;
        return Status();
      }
      *end_of_sequence = false;
      *out = Element{IntScalarOf(d.element_spec().dtypes[0], next_)};
      next_ += d.step_;
      return Status();
    }
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("next", next_);
      return Status();
    }
    Status Restore(IteratorStateReader* r) override { return r->ReadInt("next", &next_); }

   private:
    int64_t next_;
  };

  const int64_t start_, stop_, step_;
};

// FromTensors (slices == false) and FromTensorSlices.
class TensorsDataset : public DatasetBase {
 public:
  TensorsDataset(Element components, ElementSpec spec, bool slices, int64_t count)
      : DatasetBase(std::move(spec)), components_(std::move(components)), slices_(slices), count_(count) {}

  int64_t cardinality() const override { return count_; }
  std::string DebugName() const override { return slices_ ? "TensorSliceDataset" : "TensorDataset"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext&) const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<TensorsDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status GetNext(Element* out, bool* end_of_sequence) override {
      const TensorsDataset& d = *dataset_;
      if (i_ >= d.count_) {
        *end_of_sequence = true;
        return Status();
      }
      *end_of_sequence = false;
      if (!d.slices_) {
        *out = d.components_;
      } else {
        out->clear();
        for (const Tensor& t : d.components_) out->push_back(t.Slice(i_));
      }
      ++i_;
      return Status();
    }
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("i", i_);
      return Status();
    }
    Status Restore(IteratorStateReader* r) override { return r->ReadInt("i", &i_); }

   private:
    int64_t i_ = 0;
  };

  const Element components_;
  const bool slices_;
  const int64_t count_;
};

Status CheckNames(const Element& components, const std::vector<std::string>& names) {
  if (!names.empty() && names.size() != components.size()) {
    return InvalidArgument("got " + std::to_string(names.size()) + " names for " + std::to_string(components.size()) +
                           " components");
  }
  return Status();
}

}  // namespace

Result<DatasetPtr> Range(int64_t start, int64_t stop, int64_t step, DType dtype) {
  if (step == 0) return InvalidArgument("step must be a non-zero integer.");
  return DatasetPtr(std::make_shared<RangeDataset>(start, stop, step, dtype));
}

Result<DatasetPtr> FromTensors(Element components, std::vector<std::string> names) {
  SLUICE_RETURN_IF_ERROR(CheckNames(components, names));
  ElementSpec spec;
  for (const Tensor& t : components) {
    spec.dtypes.push_back(t.dtype());
    spec.shapes.push_back(PartialShape(t.shape()));
  }
  spec.names = std::move(names);
  return DatasetPtr(std::make_shared<TensorsDataset>(std::move(components), std::move(spec), false, 1));
}

Result<DatasetPtr> FromTensorSlices(Element components, std::vector<std::string> names) {
  SLUICE_RETURN_IF_ERROR(CheckNames(components, names));
  if (components.empty()) return InvalidArgument("from_tensor_slices needs at least one component");
  ElementSpec spec;
  int64_t n = -1;
  for (const Tensor& t : components) {
    if (t.rank() == 0) return InvalidArgument("Unbatching a tensor is only supported for rank >= 1");
    if (n >= 0 && t.shape().dim(0) != n) {
      return InvalidArgument("Dimensions " + std::to_string(n) + " and " + std::to_string(t.shape().dim(0)) +
                             " are not compatible");
    }
    n = t.shape().dim(0);
    spec.dtypes.push_back(t.dtype());
    spec.shapes.push_back(PartialShape(t.shape().WithoutFirstDim()));
  }
  spec.names = std::move(names);
  return DatasetPtr(std::make_shared<TensorsDataset>(std::move(components), std::move(spec), true, n));
}

}  // namespace sluice::data
