// Rebatch: the input's batches cut and joined into batches of other sizes.
#include <algorithm>
#include <deque>
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// TF's static batch dimension: the size when every batch has it for sure.
ElementSpec RebatchSpec(const ElementSpec& in, const std::vector<int64_t>& sizes, bool drop_remainder) {
  int64_t dim = sizes[0];
  for (int64_t s : sizes) {
    if (s != sizes[0]) dim = -1;
  }
  if (dim >= 0 && !drop_remainder) {
    // Whole batches only if every known input batch size is a multiple.
    int64_t known = -1;
    for (const PartialShape& shape : in.shapes) {
      if (shape.rank_known() && shape.rank() >= 1 && shape.dim(0) >= 0) known = shape.dim(0);
    }
    if (known < 0 || known % dim != 0) dim = -1;
  }
  ElementSpec out = in;
  for (PartialShape& shape : out.shapes) {
    if (!shape.rank_known()) continue;
    std::vector<int64_t> dims = shape.dims();
    dims[0] = dim;
    shape = PartialShape(std::move(dims));
  }
  return out;
}

class RebatchDataset : public DatasetBase {
 public:
  RebatchDataset(DatasetPtr input, std::vector<int64_t> sizes, bool drop_remainder)
      : DatasetBase(RebatchSpec(input->element_spec(), sizes, drop_remainder)),
        input_(std::move(input)),
        sizes_(std::move(sizes)),
        drop_remainder_(drop_remainder) {}
  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "Rebatch"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  // pending_: input batches not yet handed out, the front one from row offset_.
  class Iterator : public DatasetIterator<RebatchDataset> {
   public:
    Iterator(const RebatchDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "Rebatch")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      const int64_t want = dataset_->sizes_[next_size_];
      while (!input_end_ && buffered_ - offset_ < want) SLUICE_RETURN_IF_ERROR(timer.Inputs([&] { return ReadBatch(); }));
      const int64_t n = std::min(want, buffered_ - offset_);
      if (n == 0 || (n < want && dataset_->drop_remainder_)) {
        *end_of_sequence = true;
        return Status();
      }
      SLUICE_RETURN_IF_ERROR(TakeRows(n, out));
      next_size_ = (next_size_ + 1) % dataset_->sizes_.size();
      *end_of_sequence = false;
      return timer.Finish(Status(), *out, false);
    }

    // The pending rows (the front batch from offset_ on, restored from row
    // 0), the next size's index, and the input (also after its end: its
    // passes number the next epoch's).
    Status Save(IteratorStateWriter* w) override {
      std::vector<Element> pending(pending_.begin(), pending_.end());
      if (!pending.empty() && offset_ > 0) {
        const int64_t rows = pending[0][0].shape().dim(0);
        for (Tensor& t : pending[0]) t = t.Slice(offset_, rows);
      }
      w->WriteElements("pending", pending);
      w->WriteInt("next_size", static_cast<int64_t>(next_size_));
      w->WriteBool("input_end", input_end_);
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t next_size = 0;
      pending_.clear();
      SLUICE_RETURN_IF_ERROR(r->ReadElements("pending", &pending_));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("next_size", &next_size));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("input_end", &input_end_));
      if (next_size < 0 || next_size >= static_cast<int64_t>(dataset_->sizes_.size())) {
        return InvalidArgument("rebatch checkpoint: batch size index " + std::to_string(next_size) +
                               " is out of range");
      }
      next_size_ = static_cast<size_t>(next_size);
      offset_ = 0;
      buffered_ = 0;
      for (const Element& e : pending_) {
        if (e.empty() || e[0].rank() < 1) {
          return InvalidArgument("rebatch checkpoint: a pending element is not a batch");
        }
        buffered_ += e[0].shape().dim(0);
      }
      return RestoreInput(*input_, r);
    }

   private:
    Status ReadBatch() {
      Element e;
      SLUICE_RETURN_IF_ERROR(input_->GetNext(&e, &input_end_));
      if (input_end_) return Status();
      if (e.size() == 0) return InvalidArgument("Rebatch: an input element has no components");
      for (const Tensor& t : e) {
        if (t.rank() < 1) return InvalidArgument("Input element must have a non-scalar value in each component.");
        if (t.shape().dim(0) != e[0].shape().dim(0)) {
          return InvalidArgument("Rebatch: the components of an input batch have different first dimensions: " +
                                 e[0].shape().DebugString() + " and " + t.shape().DebugString());
        }
      }
      buffered_ += e[0].shape().dim(0);
      pending_.push_back(std::move(e));
      return Status();
    }

    // The next n rows of every component: a slice of one input batch, or
    // slices of several joined.
    Status TakeRows(int64_t n, Element* out) {
      std::vector<std::vector<Tensor>> parts(pending_.front().size());
      int64_t left = n;
      while (left > 0) {
        Element& front = pending_.front();
        const int64_t rows = front[0].shape().dim(0);
        const int64_t take = std::min(left, rows - offset_);
        for (size_t c = 0; c < front.size() && c < parts.size(); ++c) {
          parts[c].push_back(front[c].Slice(offset_, offset_ + take));
        }
        offset_ += take;
        left -= take;
        if (offset_ == rows) {
          pending_.pop_front();
          buffered_ -= rows;
          offset_ = 0;
        }
      }
      out->clear();
      for (std::vector<Tensor>& p : parts) {
        if (p.size() == 1) {
          out->push_back(std::move(p[0]));
          continue;
        }
        SLUICE_ASSIGN_OR_RETURN(Tensor joined, Tensor::Concat(p));
        out->push_back(std::move(joined));
      }
      return Status();
    }

    std::unique_ptr<IteratorBase> input_;
    std::deque<Element> pending_;
    int64_t buffered_ = 0;  // rows in pending_, counting those before offset_
    int64_t offset_ = 0;
    size_t next_size_ = 0;
    bool input_end_ = false;
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
  const std::vector<int64_t> sizes_;
  const bool drop_remainder_;
};

}  // namespace

Result<DatasetPtr> Rebatch(DatasetPtr input, std::vector<int64_t> batch_sizes, bool drop_remainder) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "rebatch"));
  if (batch_sizes.empty()) return InvalidArgument("Invalid `batch_sizes`. Expected at least one batch size.");
  for (int64_t s : batch_sizes) {
    if (s < 1) return InvalidArgument("Invalid `batch_sizes`. Every batch size must be >= 1, got " + std::to_string(s) + ".");
  }
  for (const PartialShape& shape : input->element_spec().shapes) {
    if (shape.rank_known() && shape.rank() == 0) {
      return InvalidArgument(
          "Invalid `batch_sizes`. Expected dataset with rank of >= 1 but found a dataset with scalar elements. Fix "
          "the issue by adding the `batch` transformation to the dataset.");
    }
  }
  return DatasetPtr(std::make_shared<RebatchDataset>(std::move(input), std::move(batch_sizes), drop_remainder));
}

}  // namespace sluice::data
