// Batch, PaddedBatch, Unbatch.
#include <cstring>
#include <utility>

#include "core/bulk_copy.h"
#include "data/dataset_util.h"
#include "data/map_and_batch.h"
#include "data/memory_budget.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

int64_t BatchCardinality(int64_t n, int64_t batch_size, bool drop_remainder) {
  if (n < 0) return n;
  return drop_remainder ? n / batch_size : (n + batch_size - 1) / batch_size;
}

ElementSpec BatchSpec(const ElementSpec& in, int64_t batch_size, bool drop_remainder,
                      const std::vector<PartialShape>* padded) {
  ElementSpec out = in;
  for (size_t i = 0; i < out.size(); ++i) {
    PartialShape shape = padded != nullptr && !padded->empty() ? (*padded)[i] : in.shapes[i];
    out.shapes[i] = shape.rank_known() ? shape.WithFirstDim(drop_remainder ? batch_size : -1) : PartialShape();
  }
  return out;
}

// Reads up to batch_size elements; false at the end of the input with none.
Status ReadBatch(IteratorBase* input, int64_t batch_size, bool drop_remainder, std::vector<Element>* batch,
                 bool* end_of_sequence) {
  batch->clear();
  bool end = false;
  while (static_cast<int64_t>(batch->size()) < batch_size) {
    Element e;
    SLUICE_RETURN_IF_ERROR(input->GetNext(&e, &end));
    if (end) break;
    batch->push_back(std::move(e));
  }
  *end_of_sequence = batch->empty() || (drop_remainder && static_cast<int64_t>(batch->size()) < batch_size);
  return Status();
}

Status StackBatch(std::vector<Element>& batch, Element* out) {
  const size_t arity = batch[0].size();
  out->clear();
  std::vector<Tensor> parts(batch.size());
  for (size_t c = 0; c < arity; ++c) {
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].size() != arity) return InvalidArgument("elements of a batch have different numbers of components");
      if (i > 0 && batch[i][c].shape() != parts[0].shape()) {
        return InvalidArgument("Cannot batch tensors with different shapes in component " + std::to_string(c) +
                               ". First element had shape " + parts[0].shape().DebugString() + " and element " +
                               std::to_string(i) + " had shape " + batch[i][c].shape().DebugString() + ".");
      }
      parts[i] = std::move(batch[i][c]);
    }
    SLUICE_ASSIGN_OR_RETURN(Tensor stacked, Tensor::Stack(parts, parts[0].dtype(), parts[0].shape()));
    out->push_back(std::move(stacked));
  }
  return Status();
}

// True if batching may copy each element of this shape into the batch as it
// arrives: numbers (not strings) that fill a buffer of their own. A slice of
// a larger buffer goes through StackBatch instead, which returns adjacent
// slices of one buffer (an unbatched batch) without copying.
bool CanCopyAsItArrives(const Element& e) {
  for (const Tensor& t : e) {
    const TensorBuffer* b = t.buffer();
    if (t.dtype() == DType::kString || b == nullptr || b->data() != t.raw_data() || b->size() != t.TotalBytes()) {
      return false;
    }
  }
  return true;
}

// The first element's signature, kept for the checks of the others (without
// keeping its buffers).
struct FirstElement {
  std::vector<DType> dtypes;
  std::vector<TensorShape> shapes;
};

// The error StackBatch gives when element i differs from the first, or OK.
Status CheckLikeFirst(const FirstElement& first, const Element& e, size_t i) {
  if (e.size() != first.shapes.size()) {
    return InvalidArgument("elements of a batch have different numbers of components");
  }
  for (size_t c = 0; c < e.size(); ++c) {
    if (e[c].shape() != first.shapes[c]) {
      return InvalidArgument("Cannot batch tensors with different shapes in component " + std::to_string(c) +
                             ". First element had shape " + first.shapes[c].DebugString() + " and element " +
                             std::to_string(i) + " had shape " + e[c].shape().DebugString() + ".");
    }
    if (e[c].dtype() != first.dtypes[c]) {
      return InvalidArgument("Cannot stack part " + std::to_string(i) + " of " + std::string(DTypeName(e[c].dtype())) +
                             " " + e[c].shape().DebugString() + " with parts of " +
                             std::string(DTypeName(first.dtypes[c])) + " " + first.shapes[c].DebugString());
    }
  }
  return Status();
}

// Reads a batch whose first element is `e` (CanCopyAsItArrives), copying
// each element into the batch as it arrives and dropping it at once, so that
// a batch of large elements (decoded images) holds each of them only for
// its copy and their blocks serve the elements that follow. A short last
// batch is a view of its first rows. `wait_ns` (may be null) gains the time
// spent waiting for the input.
Status ReadBatchCopying(IteratorBase* input, int64_t batch_size, bool drop_remainder, Element e, Element* out,
                        bool* end_of_sequence, int64_t* wait_ns) {
  FirstElement first;
  std::vector<Tensor> parts;
  for (const Tensor& t : e) {
    first.dtypes.push_back(t.dtype());
    first.shapes.push_back(t.shape());
    parts.emplace_back(t.dtype(), t.shape().WithFirstDim(batch_size));
  }
  int64_t n = 0;
  bool end = false;
  while (true) {
    if (n > 0) SLUICE_RETURN_IF_ERROR(CheckLikeFirst(first, e, static_cast<size_t>(n)));
    for (size_t c = 0; c < e.size(); ++c) {
      const size_t bytes = e[c].TotalBytes();
      internal::BulkCopy(static_cast<char*>(parts[c].raw_data()) + static_cast<size_t>(n) * bytes, e[c].raw_data(),
                         bytes);
    }
    e.clear();
    if (++n == batch_size) break;
    const int64_t t0 = wait_ns != nullptr ? NowNanos() : 0;
    SLUICE_RETURN_IF_ERROR(input->GetNext(&e, &end));
    if (wait_ns != nullptr) *wait_ns += NowNanos() - t0;
    if (end) break;
  }
  *end_of_sequence = drop_remainder && n < batch_size;
  if (*end_of_sequence) return Status();
  for (Tensor& t : parts) out->push_back(n < batch_size ? t.Slice(0, n) : std::move(t));
  return Status();
}

class BatchDataset : public DatasetBase {
 public:
  BatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder)
      : DatasetBase(BatchSpec(input->element_spec(), batch_size, drop_remainder, nullptr)),
        input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder) {}

  int64_t cardinality() const override {
    return BatchCardinality(input_->cardinality(), batch_size_, drop_remainder_);
  }
  std::string DebugName() const override { return "Batch"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<BatchDataset> {
   public:
    Iterator(const BatchDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d),
          input_(d->input_->MakeIteratorInternal(ctx)),
          node_(NewNode(ctx, "Batch")),
          account_(ctx.model ? ctx.model->memory() : nullptr, "Batch") {}
    // One batch in Node::kSampleEvery is timed (its input waits apart from
    // its own work), as the sequential stages do; every batch's bytes count.
    Status GetNext(Element* out, bool* end_of_sequence) override {
      const bool sample = node_->SampleNext();
      const int64_t t0 = sample ? NowNanos() : 0;
      Element first;
      SLUICE_RETURN_IF_ERROR(input_->GetNext(&first, end_of_sequence));
      if (*end_of_sequence) return Status();
      out->clear();  // a caller that drops its last batch lets its memory serve this one
      int64_t wait_ns = sample ? NowNanos() - t0 : 0;
      Status s;
      // The batch being assembled is charged while it is built (it is this
      // stage's only buffer, so the charge never waits).
      const int64_t assembly = ElementBytes(first) * dataset_->batch_size_;
      SLUICE_RETURN_IF_ERROR(account_.ChargeNoWait(assembly));
      struct Uncharge {
        BudgetAccount& a;
        int64_t n;
        ~Uncharge() { a.Release(n); }
      } uncharge{account_, assembly};
      if (CanCopyAsItArrives(first)) {
        s = ReadBatchCopying(input_.get(), dataset_->batch_size_, dataset_->drop_remainder_, std::move(first), out,
                             end_of_sequence, sample ? &wait_ns : nullptr);
      } else {
        const int64_t r0 = sample ? NowNanos() : 0;
        SLUICE_RETURN_IF_ERROR(ReadBatch(input_.get(), dataset_->batch_size_ - 1, /*drop_remainder=*/false, &batch_,
                                         end_of_sequence));
        if (sample) wait_ns += NowNanos() - r0;
        batch_.insert(batch_.begin(), std::move(first));
        *end_of_sequence = dataset_->drop_remainder_ && static_cast<int64_t>(batch_.size()) < dataset_->batch_size_;
        if (!*end_of_sequence) s = StackBatch(batch_, out);
      }
      if (!s.ok() || *end_of_sequence) return s;
      if (sample) {
        Node::Bump(node_->wait_ns, wait_ns * Node::kSampleEvery);
        Node::Bump(node_->busy_ns, (NowNanos() - t0 - wait_ns) * Node::kSampleEvery);
      }
      Node::Bump(node_->elements, 1);
      Node::Bump(node_->bytes, ElementBytes(*out));
      return s;
    }

    // A batch is read whole within GetNext: only the input has a position.
    Status Save(IteratorStateWriter* w) override { return SaveInput(*input_, w); }
    Status Restore(IteratorStateReader* r) override { return RestoreInput(*input_, r); }

   private:
    std::unique_ptr<IteratorBase> input_;
    std::vector<Element> batch_;
    const std::shared_ptr<Node> node_;
    BudgetAccount account_;
  };

  const DatasetPtr input_;
  const int64_t batch_size_;
  const bool drop_remainder_;
};

// Fills every value of `t` with the scalar `value` (same dtype).
void Fill(const Tensor& t, const Tensor& value) {
  const int64_t n = t.num_elements();
  if (t.dtype() == DType::kString) {
    for (std::string& s : t.flat<std::string>()) s = value.scalar<std::string>();
    return;
  }
  const size_t size = DTypeSize(t.dtype());
  char* dst = static_cast<char*>(t.raw_data());
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * size, value.raw_data(), size);
}

class PaddedBatchDataset : public DatasetBase {
 public:
  PaddedBatchDataset(DatasetPtr input, int64_t batch_size, std::vector<PartialShape> padded_shapes,
                     Element padding_values, bool drop_remainder)
      : DatasetBase(BatchSpec(input->element_spec(), batch_size, drop_remainder, &padded_shapes)),
        input_(std::move(input)),
        batch_size_(batch_size),
        padded_shapes_(std::move(padded_shapes)),
        padding_values_(std::move(padding_values)),
        drop_remainder_(drop_remainder) {}

  int64_t cardinality() const override {
    return BatchCardinality(input_->cardinality(), batch_size_, drop_remainder_);
  }
  std::string DebugName() const override { return "PaddedBatch"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<PaddedBatchDataset> {
   public:
    Iterator(const PaddedBatchDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "PaddedBatch")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      const PaddedBatchDataset& d = *dataset_;
      SLUICE_RETURN_IF_ERROR(timer.Inputs(
          [&] { return ReadBatch(input_.get(), d.batch_size_, d.drop_remainder_, &batch_, end_of_sequence); }));
      if (*end_of_sequence) return Status();
      out->clear();
      for (size_t c = 0; c < batch_[0].size(); ++c) {
        SLUICE_ASSIGN_OR_RETURN(Tensor padded, PadComponent(c));
        out->push_back(std::move(padded));
      }
      return timer.Finish(Status(), *out, false);
    }

    // A batch is read whole within GetNext: only the input has a position.
    Status Save(IteratorStateWriter* w) override { return SaveInput(*input_, w); }
    Status Restore(IteratorStateReader* r) override { return RestoreInput(*input_, r); }

   private:
    Result<Tensor> PadComponent(size_t c) const {
      const PaddedBatchDataset& d = *dataset_;
      const Tensor& first = batch_[0][c];
      const int rank = first.rank();
      std::vector<int64_t> dims(static_cast<size_t>(rank), 0);
      for (const Element& e : batch_) {
        if (e[c].rank() != rank || e[c].dtype() != first.dtype()) {
          return InvalidArgument("padded_batch: component " + std::to_string(c) +
                                 " has different ranks or dtypes within a batch");
        }
        for (int k = 0; k < rank; ++k) dims[k] = std::max(dims[k], e[c].shape().dim(k));
      }
      if (!d.padded_shapes_.empty()) {
        const PartialShape& target = d.padded_shapes_[c];
        if (target.rank_known()) {
          if (target.rank() != rank) return InvalidArgument("padded_batch: padded_shapes rank mismatch");
          for (int k = 0; k < rank; ++k) {
            if (target.dim(k) < 0) continue;
            if (dims[k] > target.dim(k)) {
              return InvalidArgument("Attempted to pad to a smaller size than the input element.");
            }
            dims[k] = target.dim(k);
          }
        }
      }
      TensorShape shape{static_cast<int64_t>(batch_.size())};
      for (int64_t dim : dims) shape.AddDim(dim);
      Tensor out = Tensor::Zeros(first.dtype(), shape);
      if (c < d.padding_values_.size()) Fill(out, d.padding_values_[c]);
      for (size_t i = 0; i < batch_.size(); ++i) batch_[i][c].CopyPaddedTo(out.Slice(static_cast<int64_t>(i)));
      return out;
    }

    std::unique_ptr<IteratorBase> input_;
    std::vector<Element> batch_;
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
  const int64_t batch_size_;
  const std::vector<PartialShape> padded_shapes_;
  const Element padding_values_;
  const bool drop_remainder_;
};

ElementSpec UnbatchSpec(const ElementSpec& in) {
  ElementSpec out = in;
  for (PartialShape& s : out.shapes) {
    if (s.rank_known() && s.rank() >= 1) s = PartialShape(std::vector<int64_t>(s.dims().begin() + 1, s.dims().end()));
  }
  return out;
}

class UnbatchDataset : public DatasetBase {
 public:
  explicit UnbatchDataset(DatasetPtr input) : DatasetBase(UnbatchSpec(input->element_spec())), input_(std::move(input)) {}

  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (n == kInfiniteCardinality || n == 0) return n;
    const ElementSpec& in = input_->element_spec();
    if (n < 0 || in.size() == 0 || !in.shapes[0].rank_known() || in.shapes[0].rank() < 1 || in.shapes[0].dim(0) < 0) {
      return kUnknownCardinality;
    }
    return n * in.shapes[0].dim(0);
  }
  std::string DebugName() const override { return "Unbatch"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<UnbatchDataset> {
   public:
    Iterator(const UnbatchDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "Unbatch")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      while (index_ >= size_) {
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), &current_, end_of_sequence));
        if (*end_of_sequence) return Status();
        index_ = 0;
        size_ = -1;
        for (const Tensor& t : current_) {
          if (t.rank() == 0) return InvalidArgument("Input element must have a non-scalar value in each component.");
          if (size_ >= 0 && t.shape().dim(0) != size_) {
            return InvalidArgument("Input element must have the same batch size in each component. Component 0 had size " +
                                   std::to_string(size_) + " but another component had size " +
                                   std::to_string(t.shape().dim(0)) + ".");
          }
          size_ = t.shape().dim(0);
        }
        if (size_ < 0) size_ = 0;
      }
      out->clear();
      for (const Tensor& t : current_) out->push_back(t.Slice(index_));
      ++index_;
      *end_of_sequence = false;
      return timer.Finish(Status(), *out, false);
    }

    // The rows of the current input element not yet returned (as one
    // element, restored from row 0), then the input.
    Status Save(IteratorStateWriter* w) override {
      const bool has_rows = index_ < size_;
      w->WriteBool("has_rows", has_rows);
      if (has_rows) {
        Element rest;
        for (const Tensor& t : current_) rest.push_back(t.Slice(index_, size_));
        w->WriteElement("rows", rest);
      }
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      bool has_rows = false;
      SLUICE_RETURN_IF_ERROR(r->ReadBool("has_rows", &has_rows));
      current_.clear();
      index_ = size_ = 0;
      if (has_rows) {
        SLUICE_RETURN_IF_ERROR(r->ReadElement("rows", &current_));
        if (current_.empty() || current_[0].rank() == 0) {
          return InvalidArgument("unbatch checkpoint: the rows saved are not a batch");
        }
        size_ = current_[0].shape().dim(0);
      }
      return RestoreInput(*input_, r);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    Element current_;
    int64_t index_ = 0;
    int64_t size_ = 0;
    const std::shared_ptr<Node> node_;
  };

  const DatasetPtr input_;
};

Status CheckBatchSize(int64_t batch_size) {
  if (batch_size < 1) return InvalidArgument("batch_size must be greater than zero.");
  return Status();
}

}  // namespace

Result<DatasetPtr> Batch(DatasetPtr input, int64_t batch_size, bool drop_remainder) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "batch"));
  SLUICE_RETURN_IF_ERROR(CheckBatchSize(batch_size));
  DatasetPtr batch = std::make_shared<BatchDataset>(input, batch_size, drop_remainder);
  // tf.data's map_and_batch_fusion (Options can turn it off per iterator).
  if (DatasetPtr fused = FuseMapAndBatch(batch, input, batch_size, drop_remainder)) return fused;
  return batch;
}

Result<DatasetPtr> PaddedBatch(DatasetPtr input, int64_t batch_size, std::vector<PartialShape> padded_shapes,
                               Element padding_values, bool drop_remainder) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "padded_batch"));
  SLUICE_RETURN_IF_ERROR(CheckBatchSize(batch_size));
  const ElementSpec& spec = input->element_spec();
  if (!padded_shapes.empty() && padded_shapes.size() != spec.size()) {
    return InvalidArgument("padded_shapes must have one shape per component");
  }
  if (!padding_values.empty()) {
    if (padding_values.size() != spec.size()) return InvalidArgument("padding_values must have one value per component");
    for (size_t i = 0; i < spec.size(); ++i) {
      if (padding_values[i].num_elements() != 1) return InvalidArgument("padding_values must be scalars");
      if (spec.dtypes[i] != DType::kInvalid && padding_values[i].dtype() != spec.dtypes[i]) {
        return InvalidArgument("padding_values[" + std::to_string(i) + "] has dtype " +
                               std::string(DTypeName(padding_values[i].dtype())) + ", the component " +
                               std::string(DTypeName(spec.dtypes[i])));
      }
    }
  }
  return DatasetPtr(std::make_shared<PaddedBatchDataset>(std::move(input), batch_size, std::move(padded_shapes),
                                                         std::move(padding_values), drop_remainder));
}

Result<DatasetPtr> Unbatch(DatasetPtr input) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "unbatch"));
  return DatasetPtr(std::make_shared<UnbatchDataset>(std::move(input)));
}

}  // namespace sluice::data
