// SparseTensor components in from_tensor_slices, batch and unbatch: each
// SparseTensor is three components (indices int64 [n, rank], values [n],
// dense_shape int64 [rank]) starting at an index of `sparse`; the other
// components are dense and are sliced, stacked and split as usual.
#include <algorithm>
#include <utility>

#include "data/dataset_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

bool IsSparseStart(const std::vector<size_t>& sparse, size_t c) {
  return std::find(sparse.begin(), sparse.end(), c) != sparse.end();
}

// Rows of a sparse tensor split by the first index: element r of the result
// holds the entries whose first index is r, without that index.
Result<std::vector<Element>> SplitSparse(const Tensor& indices, const Tensor& values, const Tensor& shape) {
  if (indices.rank() != 2 || shape.rank() != 1 || shape.shape().dim(0) < 1 || values.rank() != 1 ||
      indices.shape().dim(0) != values.shape().dim(0) || indices.shape().dim(1) != shape.shape().dim(0)) {
    return InvalidArgument("Unbatching a sparse tensor is only supported for rank >= 1");
  }
  const int64_t rank = shape.shape().dim(0), n = indices.shape().dim(0);
  const int64_t rows = shape.flat<int64_t>()[0];
  std::vector<std::vector<int64_t>> entries(static_cast<size_t>(std::max<int64_t>(rows, 0)));
  const int64_t* ind = indices.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = ind[i * rank];
    if (r < 0 || r >= rows) {
      return InvalidArgument("sparse index " + std::to_string(r) + " is out of bounds of dense_shape[0] " +
                             std::to_string(rows));
    }
    entries[static_cast<size_t>(r)].push_back(i);
  }
  std::vector<int64_t> row_shape(shape.flat<int64_t>().begin() + 1, shape.flat<int64_t>().end());
  std::vector<Element> out;
  for (const std::vector<int64_t>& rows_of : entries) {
    const int64_t k = static_cast<int64_t>(rows_of.size());
    Tensor sub(DType::kInt64, TensorShape{k, rank - 1});
    for (int64_t j = 0; j < k; ++j) {
      std::copy_n(ind + rows_of[j] * rank + 1, rank - 1, sub.data<int64_t>() + j * (rank - 1));
    }
    out.push_back(Element{sub, values.Gather(rows_of), Tensor::FromVector<int64_t>(row_shape)});
  }
  return out;
}

// The slices of `components` along the first dimension.
Result<std::vector<Element>> Slices(const Element& components, const std::vector<size_t>& sparse) {
  int64_t n = -1;
  std::vector<std::vector<Element>> sparse_rows(components.size());
  for (size_t c = 0; c < components.size(); ++c) {
    int64_t rows;
    if (IsSparseStart(sparse, c)) {
      SLUICE_ASSIGN_OR_RETURN(sparse_rows[c], SplitSparse(components[c], components[c + 1], components[c + 2]));
      rows = static_cast<int64_t>(sparse_rows[c].size());
      c += 2;
    } else {
      if (components[c].rank() == 0) return InvalidArgument("Unbatching a tensor is only supported for rank >= 1");
      rows = components[c].shape().dim(0);
    }
    if (n >= 0 && rows != n) {
      return InvalidArgument("Dimensions " + std::to_string(n) + " and " + std::to_string(rows) +
                             " are not compatible");
    }
    n = rows;
  }
  std::vector<Element> out(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) {
    for (size_t c = 0; c < components.size(); ++c) {
      if (IsSparseStart(sparse, c)) {
        for (Tensor& t : sparse_rows[c][i]) out[i].push_back(std::move(t));
        c += 2;
      } else {
        out[i].push_back(components[c].Slice(i));
      }
    }
  }
  return out;
}

// The SparseTensors parts[k] = (indices, values, shape) as one, with the
// position k as the first index and dense_shape [parts, max of each dim].
Result<Element> BatchSparse(const std::vector<const Tensor*>& parts) {
  const size_t b = parts.size() / 3;
  const int64_t rank = parts[2]->shape().dim(0);
  int64_t total = 0;
  std::vector<int64_t> shape(static_cast<size_t>(rank) + 1, 0);
  shape[0] = static_cast<int64_t>(b);
  std::vector<Tensor> values;
  for (size_t k = 0; k < b; ++k) {
    const Tensor& s = *parts[3 * k + 2];
    if (s.shape().dim(0) != rank) {
      return InvalidArgument("Cannot batch SparseTensors of different ranks: " + std::to_string(rank) + " and " +
                             std::to_string(s.shape().dim(0)) + " (element " + std::to_string(k) + ")");
    }
    for (int64_t d = 0; d < rank; ++d) shape[d + 1] = std::max(shape[d + 1], s.flat<int64_t>()[d]);
    total += parts[3 * k]->shape().dim(0);
    values.push_back(*parts[3 * k + 1]);
  }
  Tensor indices(DType::kInt64, TensorShape{total, rank + 1});
  int64_t* out = indices.data<int64_t>();
  for (size_t k = 0; k < b; ++k) {
    const Tensor& in = *parts[3 * k];
    const int64_t n = in.shape().dim(0);
    for (int64_t i = 0; i < n; ++i) {
      *out++ = static_cast<int64_t>(k);
      out = std::copy_n(in.data<int64_t>() + i * rank, rank, out);
    }
  }
  SLUICE_ASSIGN_OR_RETURN(Tensor joined, Tensor::Concat(values));
  return Element{indices, joined, Tensor::FromVector<int64_t>(shape)};
}

// The batch of `elements`: dense components stacked, SparseTensors joined.
Result<Element> BatchOf(const std::vector<Element>& elements, const std::vector<size_t>& sparse) {
  Element out;
  const size_t width = elements[0].size();
  for (size_t c = 0; c < width; ++c) {
    if (IsSparseStart(sparse, c)) {
      std::vector<const Tensor*> parts;
      for (const Element& e : elements) {
        for (size_t j = 0; j < 3; ++j) parts.push_back(&e[c + j]);
      }
      SLUICE_ASSIGN_OR_RETURN(Element joined, BatchSparse(parts));
      for (Tensor& t : joined) out.push_back(std::move(t));
      c += 2;
      continue;
    }
    std::vector<Tensor> parts;
    for (size_t k = 0; k < elements.size(); ++k) {
      if (elements[k][c].shape() != elements[0][c].shape()) {
        return InvalidArgument("Cannot batch tensors with different shapes in component " + std::to_string(c) +
                               ". First element had shape " + elements[0][c].shape().DebugString() +
                               " and element " + std::to_string(k) + " had shape " +
                               elements[k][c].shape().DebugString() + ".");
      }
      parts.push_back(elements[k][c]);
    }
    SLUICE_ASSIGN_OR_RETURN(Tensor stacked, Tensor::Stack(parts, elements[0][c].dtype(), elements[0][c].shape()));
    out.push_back(std::move(stacked));
  }
  return out;
}

ElementSpec SlicedSpec(const ElementSpec& in, const std::vector<size_t>& sparse, bool batched, int64_t batch) {
  ElementSpec spec = in;
  for (size_t c = 0; c < spec.size(); ++c) {
    if (IsSparseStart(sparse, c)) {
      const PartialShape& dense = in.shapes[c + 2];
      int64_t rank = dense.rank_known() && dense.rank() == 1 ? dense.dims()[0] : -1;
      if (rank >= 0) rank += batched ? 1 : -1;
      spec.shapes[c] = PartialShape({-1, rank});
      spec.shapes[c + 1] = PartialShape({-1});
      spec.shapes[c + 2] = PartialShape({rank});
      c += 2;
    } else if (in.shapes[c].rank_known()) {
      std::vector<int64_t> dims = in.shapes[c].dims();
      if (batched) {
        dims.insert(dims.begin(), batch);
      } else if (!dims.empty()) {
        dims.erase(dims.begin());
      }
      spec.shapes[c] = PartialShape(dims);
    }
  }
  return spec;
}

class SparseSlicesDataset : public DatasetBase {
 public:
  SparseSlicesDataset(std::vector<Element> slices, ElementSpec spec)
      : DatasetBase(std::move(spec)), slices_(std::move(slices)) {}
  int64_t cardinality() const override { return static_cast<int64_t>(slices_.size()); }
  std::string DebugName() const override { return "TensorSliceDataset"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext&) const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<SparseSlicesDataset> {
   public:
    using DatasetIterator::DatasetIterator;
    Status GetNext(Element* out, bool* end_of_sequence) override {
      *end_of_sequence = next_ >= dataset_->slices_.size();
      if (!*end_of_sequence) *out = dataset_->slices_[next_++];
      return Status();
    }
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("i", static_cast<int64_t>(next_));
      return Status();
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t i = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("i", &i));
      if (i < 0 || i > static_cast<int64_t>(dataset_->slices_.size())) {
        return InvalidArgument("TensorSliceDataset checkpoint is at slice " + std::to_string(i) + " of " +
                               std::to_string(dataset_->slices_.size()));
      }
      next_ = static_cast<size_t>(i);
      return Status();
    }

   private:
    size_t next_ = 0;
  };
  const std::vector<Element> slices_;
};

class SparseBatchDataset : public DatasetBase {
 public:
  SparseBatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder, std::vector<size_t> sparse)
      : DatasetBase(SlicedSpec(input->element_spec(), sparse, true, drop_remainder ? batch_size : -1)),
        input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        sparse_(std::move(sparse)) {}
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (n < 0) return n;
    return drop_remainder_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
  }
  std::string DebugName() const override { return "Batch"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<SparseBatchDataset> {
   public:
    Iterator(const SparseBatchDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      std::vector<Element> batch;
      while (!input_end_ && static_cast<int64_t>(batch.size()) < dataset_->batch_size_) {
        Element e;
        bool end = false;
        SLUICE_RETURN_IF_ERROR(input_->GetNext(&e, &end));
        if (end) {
          input_end_ = true;
          break;
        }
        batch.push_back(std::move(e));
      }
      if (batch.empty() || (dataset_->drop_remainder_ && static_cast<int64_t>(batch.size()) < dataset_->batch_size_)) {
        *end_of_sequence = true;
        return Status();
      }
      SLUICE_ASSIGN_OR_RETURN(*out, BatchOf(batch, dataset_->sparse_));
      *end_of_sequence = false;
      return Status();
    }

    // A batch is read whole within GetNext. The input is saved also after
    // its end (its passes number the next epoch's).
    Status Save(IteratorStateWriter* w) override {
      w->WriteBool("input_end", input_end_);
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      SLUICE_RETURN_IF_ERROR(r->ReadBool("input_end", &input_end_));
      return RestoreInput(*input_, r);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    bool input_end_ = false;
  };

  const DatasetPtr input_;
  const int64_t batch_size_;
  const bool drop_remainder_;
  const std::vector<size_t> sparse_;
};

class SparseUnbatchDataset : public DatasetBase {
 public:
  SparseUnbatchDataset(DatasetPtr input, std::vector<size_t> sparse)
      : DatasetBase(SlicedSpec(input->element_spec(), sparse, false, -1)),
        input_(std::move(input)),
        sparse_(std::move(sparse)) {}
  int64_t cardinality() const override {
    return input_->cardinality() == kInfiniteCardinality ? kInfiniteCardinality : kUnknownCardinality;
  }
  std::string DebugName() const override { return "Unbatch"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<SparseUnbatchDataset> {
   public:
    Iterator(const SparseUnbatchDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      while (next_ >= rows_.size()) {
        Element e;
        bool end = false;
        SLUICE_RETURN_IF_ERROR(input_->GetNext(&e, &end));
        if (end) {
          *end_of_sequence = true;
          return Status();
        }
        SLUICE_ASSIGN_OR_RETURN(rows_, Slices(e, dataset_->sparse_));
        next_ = 0;
      }
      *out = std::move(rows_[next_++]);
      *end_of_sequence = false;
      return Status();
    }

    // The rows of the current input element not yet returned, then the input.
    Status Save(IteratorStateWriter* w) override {
      const size_t from = std::min(next_, rows_.size());
      w->WriteElements("rows", std::vector<Element>(rows_.begin() + static_cast<std::ptrdiff_t>(from), rows_.end()));
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      rows_.clear();
      next_ = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadElements("rows", &rows_));
      return RestoreInput(*input_, r);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    std::vector<Element> rows_;
    size_t next_ = 0;
  };

  const DatasetPtr input_;
  const std::vector<size_t> sparse_;
};

Status CheckSparse(const ElementSpec& spec, const std::vector<size_t>& sparse) {
  for (size_t s : sparse) {
    if (s + 3 > spec.size()) {
      return InvalidArgument("a SparseTensor at component " + std::to_string(s) + " needs 3 components");
    }
  }
  return Status();
}

ElementSpec SpecOf(const Element& e, std::vector<std::string> names) {
  ElementSpec spec;
  for (const Tensor& t : e) {
    spec.dtypes.push_back(t.dtype());
    spec.shapes.push_back(PartialShape(t.shape()));
  }
  spec.names = std::move(names);
  return spec;
}

}  // namespace

Result<DatasetPtr> FromTensorSlicesWithSparse(Element components, std::vector<size_t> sparse,
                                              std::vector<std::string> names) {
  if (components.empty()) return InvalidArgument("from_tensor_slices needs at least one component");
  ElementSpec whole = SpecOf(components, std::move(names));
  SLUICE_RETURN_IF_ERROR(CheckSparse(whole, sparse));
  SLUICE_ASSIGN_OR_RETURN(std::vector<Element> slices, Slices(components, sparse));
  return DatasetPtr(std::make_shared<SparseSlicesDataset>(std::move(slices), SlicedSpec(whole, sparse, false, -1)));
}

Result<DatasetPtr> BatchWithSparse(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                                   std::vector<size_t> sparse) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "batch"));
  if (batch_size < 1) return InvalidArgument("batch_size must be greater than zero.");
  SLUICE_RETURN_IF_ERROR(CheckSparse(input->element_spec(), sparse));
  return DatasetPtr(std::make_shared<SparseBatchDataset>(std::move(input), batch_size, drop_remainder,
                                                         std::move(sparse)));
}

Result<DatasetPtr> UnbatchWithSparse(DatasetPtr input, std::vector<size_t> sparse) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "unbatch"));
  SLUICE_RETURN_IF_ERROR(CheckSparse(input->element_spec(), sparse));
  return DatasetPtr(std::make_shared<SparseUnbatchDataset>(std::move(input), std::move(sparse)));
}

}  // namespace sluice::data
