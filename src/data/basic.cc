// The structural transformations: Repeat, Take, Skip, Shard, Zip,
// Concatenate, Enumerate, Cache.
#include <algorithm>
#include <utility>

#include "data/dataset_util.h"
#include "data/error_policy.h"
#include "data/memory_budget.h"
#include "data/model.h"
#include "sluice/core/mutex.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// A dataset of one input whose iterator holds the input's iterator.
class UnaryDataset : public DatasetBase {
 public:
  UnaryDataset(DatasetPtr input, ElementSpec spec) : DatasetBase(std::move(spec)), input_(std::move(input)) {}
  UnaryDataset(DatasetPtr input) : UnaryDataset(input, input->element_spec()) {}  // NOLINT

 protected:
  const DatasetPtr input_;
};

class RepeatDataset : public UnaryDataset {
 public:
  RepeatDataset(DatasetPtr input, int64_t count) : UnaryDataset(std::move(input)), count_(count) {}
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (count_ < 0) return n == 0 ? 0 : kInfiniteCardinality;
    if (count_ == 0) return 0;
    if (n < 0) return n;
    return count_ * n;
  }
  std::string DebugName() const override { return "Repeat"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<RepeatDataset> {
   public:
    Iterator(const RepeatDataset* d, const IteratorContext& ctx) : DatasetIterator(d), ctx_(ctx) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      const int64_t count = dataset_->count_;
      while (count < 0 || epoch_ < count) {
        if (!input_) {
          input_ = dataset_->input_->MakeIteratorInternal(ctx_);
          produced_this_epoch_ = false;
        }
        SLUICE_RETURN_IF_ERROR(input_->GetNext(out, end_of_sequence));
        if (!*end_of_sequence) {
          produced_this_epoch_ = true;
          return Status();
        }
        input_.reset();
        ++epoch_;
        // An empty input would make an infinite repeat spin for ever.
        if (!produced_this_epoch_) break;
      }
      *end_of_sequence = true;
      return Status();
    }

   private:
    const IteratorContext ctx_;
    std::unique_ptr<IteratorBase> input_;
    int64_t epoch_ = 0;
    bool produced_this_epoch_ = false;
  };
  const int64_t count_;
};

// Take (take == true) and Skip.
class TakeSkipDataset : public UnaryDataset {
 public:
  TakeSkipDataset(DatasetPtr input, int64_t count, bool take)
      : UnaryDataset(std::move(input)), count_(count), take_(take) {}
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (take_) {
      if (n == kUnknownCardinality) return n;
      if (count_ < 0) return n;
      if (n == kInfiniteCardinality) return count_;
      return std::min(n, count_);
    }
    if (n < 0) return n;
    if (count_ < 0) return 0;
    return std::max<int64_t>(0, n - count_);
  }
  std::string DebugName() const override { return take_ ? "Take" : "Skip"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<TakeSkipDataset> {
   public:
    Iterator(const TakeSkipDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      const int64_t count = dataset_->count_;
      if (dataset_->take_) {
        if (count >= 0 && seen_ >= count) {
          *end_of_sequence = true;
          return Status();
        }
        SLUICE_RETURN_IF_ERROR(input_->GetNext(out, end_of_sequence));
        if (!*end_of_sequence) ++seen_;
        return Status();
      }
      while (count < 0 || seen_ < count) {
        SLUICE_RETURN_IF_ERROR(input_->GetNext(out, end_of_sequence));
        if (*end_of_sequence) return Status();
        ++seen_;
      }
      return input_->GetNext(out, end_of_sequence);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    int64_t seen_ = 0;
  };
  const int64_t count_;
  const bool take_;
};

class ShardDataset : public UnaryDataset {
 public:
  ShardDataset(DatasetPtr input, int64_t num_shards, int64_t index)
      : UnaryDataset(std::move(input)), num_shards_(num_shards), index_(index) {}
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (n < 0) return n;
    return n / num_shards_ + (index_ < n % num_shards_ ? 1 : 0);
  }
  std::string DebugName() const override { return "Shard"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<ShardDataset> {
   public:
    Iterator(const ShardDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      while (true) {
        SLUICE_RETURN_IF_ERROR(input_->GetNext(out, end_of_sequence));
        if (*end_of_sequence) return Status();
        if (next_index_++ % dataset_->num_shards_ == dataset_->index_) return Status();
      }
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    int64_t next_index_ = 0;
  };
  const int64_t num_shards_;
  const int64_t index_;
};

ElementSpec ZipSpec(const std::vector<DatasetPtr>& inputs) {
  ElementSpec out;
  for (const DatasetPtr& d : inputs) {
    const ElementSpec& s = d->element_spec();
    out.dtypes.insert(out.dtypes.end(), s.dtypes.begin(), s.dtypes.end());
    out.shapes.insert(out.shapes.end(), s.shapes.begin(), s.shapes.end());
  }
  return out;
}

class ZipDataset : public DatasetBase {
 public:
  explicit ZipDataset(std::vector<DatasetPtr> inputs) : DatasetBase(ZipSpec(inputs)), inputs_(std::move(inputs)) {}
  int64_t cardinality() const override {
    int64_t result = kInfiniteCardinality;
    for (const DatasetPtr& d : inputs_) {
      const int64_t n = d->cardinality();
      if (n == kUnknownCardinality) return n;
      if (n != kInfiniteCardinality) result = result == kInfiniteCardinality ? n : std::min(result, n);
    }
    return result;
  }
  std::string DebugName() const override { return "Zip"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<ZipDataset> {
   public:
    Iterator(const ZipDataset* d, const IteratorContext& ctx) : DatasetIterator(d) {
      for (const DatasetPtr& in : d->inputs_) inputs_.push_back(in->MakeIteratorInternal(ctx));
    }
    Status GetNext(Element* out, bool* end_of_sequence) override {
      if (ended_) {
        *end_of_sequence = true;
        return Status();
      }
      out->clear();
      Element e;
      for (auto& in : inputs_) {
        SLUICE_RETURN_IF_ERROR(in->GetNext(&e, end_of_sequence));
        if (*end_of_sequence) {
          ended_ = true;
          return Status();
        }
        for (Tensor& t : e) out->push_back(std::move(t));
      }
      return Status();
    }

   private:
    std::vector<std::unique_ptr<IteratorBase>> inputs_;
    bool ended_ = false;
  };
  const std::vector<DatasetPtr> inputs_;
};

// The most specific shape compatible with both.
PartialShape MostSpecificCompatible(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return PartialShape();
  std::vector<int64_t> dims(static_cast<size_t>(a.rank()));
  for (int i = 0; i < a.rank(); ++i) dims[i] = a.dim(i) == b.dim(i) ? a.dim(i) : -1;
  return PartialShape(std::move(dims));
}

class ConcatenateDataset : public DatasetBase {
 public:
  ConcatenateDataset(DatasetPtr a, DatasetPtr b, ElementSpec spec)
      : DatasetBase(std::move(spec)), a_(std::move(a)), b_(std::move(b)) {}
  int64_t cardinality() const override {
    const int64_t n1 = a_->cardinality();
    const int64_t n2 = b_->cardinality();
    if (n1 == kInfiniteCardinality || n2 == kInfiniteCardinality) return kInfiniteCardinality;
    if (n1 == kUnknownCardinality || n2 == kUnknownCardinality) return kUnknownCardinality;
    return n1 + n2;
  }
  std::string DebugName() const override { return "Concatenate"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<ConcatenateDataset> {
   public:
    Iterator(const ConcatenateDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), ctx_(ctx), input_(d->a_->MakeIteratorInternal(ctx)) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      while (input_) {
        SLUICE_RETURN_IF_ERROR(input_->GetNext(out, end_of_sequence));
        if (!*end_of_sequence) return Status();
        input_ = second_ ? nullptr : dataset_->b_->MakeIteratorInternal(ctx_);
        second_ = true;
      }
      *end_of_sequence = true;
      return Status();
    }

   private:
    const IteratorContext ctx_;
    std::unique_ptr<IteratorBase> input_;
    bool second_ = false;
  };
  const DatasetPtr a_, b_;
};

// The first pass that reaches the end publishes its elements here.
struct CacheState {
  Mutex mu;
  std::shared_ptr<const std::vector<Element>> elements SLUICE_GUARDED_BY(mu);
};

class CacheDataset : public UnaryDataset {
 public:
  explicit CacheDataset(DatasetPtr input) : UnaryDataset(std::move(input)) {}
  int64_t cardinality() const override { return input_->cardinality(); }
  std::string DebugName() const override { return "Cache"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    std::shared_ptr<const std::vector<Element>> cached;
    {
      MutexLock lock(&state_.mu);
      cached = state_.elements;
    }
    return std::make_unique<Iterator>(this, ctx, std::move(cached));
  }

 private:
  class Iterator : public DatasetIterator<CacheDataset> {
   public:
    Iterator(const CacheDataset* d, const IteratorContext& ctx, std::shared_ptr<const std::vector<Element>> cached)
        : DatasetIterator(d), cached_(std::move(cached)), account_(ctx.model ? ctx.model->memory() : nullptr, "Cache") {
      if (!cached_) input_ = d->input_->MakeIteratorInternal(ctx);
    }
    Status GetNext(Element* out, bool* end_of_sequence) override {
      if (cached_) {
        if (!charged_) {  // a pass over the cache holds all of it
          charged_ = true;
          int64_t bytes = 0;
          for (const Element& e : *cached_) bytes += ElementBytes(e);
          SLUICE_RETURN_IF_ERROR(account_.ChargeNoWait(bytes));
        }
        *end_of_sequence = next_ >= cached_->size();
        if (!*end_of_sequence) *out = (*cached_)[next_++];
        return Status();
      }
      SLUICE_RETURN_IF_ERROR(input_->GetNext(out, end_of_sequence));
      if (!*end_of_sequence) {
        // Charged without waiting (a cache cannot give elements back); one
        // that cannot fit in the budget fails.
        const int64_t bytes = ElementBytes(*out);
        if (!account_.CouldHold(account_.held() + bytes)) {
          return errors::ResourceExhausted("cache(): the cached elements pass Options.ram_budget (",
                                           account_.held() + bytes, " bytes so far)")
              .WithPayload(kRamBudgetPayload, "cache");
        }
        SLUICE_RETURN_IF_ERROR(account_.ChargeNoWait(bytes));
        writing_.push_back(*out);
      } else if (input_) {
        auto done = std::make_shared<const std::vector<Element>>(std::move(writing_));
        MutexLock lock(&dataset_->state_.mu);
        if (!dataset_->state_.elements) dataset_->state_.elements = std::move(done);
      }
      return Status();
    }

   private:
    std::shared_ptr<const std::vector<Element>> cached_;
    std::unique_ptr<IteratorBase> input_;
    std::vector<Element> writing_;
    size_t next_ = 0;
    BudgetAccount account_;
    bool charged_ = false;  // the cached elements, by a pass over them
  };
  mutable CacheState state_;
};

}  // namespace

Result<DatasetPtr> Repeat(DatasetPtr input, int64_t count) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "repeat"));
  return DatasetPtr(std::make_shared<RepeatDataset>(std::move(input), count));
}

Result<DatasetPtr> Take(DatasetPtr input, int64_t count) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "take"));
  return DatasetPtr(std::make_shared<TakeSkipDataset>(std::move(input), count, true));
}

Result<DatasetPtr> Skip(DatasetPtr input, int64_t count) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "skip"));
  return DatasetPtr(std::make_shared<TakeSkipDataset>(std::move(input), count, false));
}

Result<DatasetPtr> Shard(DatasetPtr input, int64_t num_shards, int64_t index) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "shard"));
  if (num_shards < 1) return InvalidArgument("Number of shards must be greater than zero (currently num_shards = " +
                                             std::to_string(num_shards) + ").");
  if (index < 0 || index >= num_shards) {
    return InvalidArgument("Index must be between 0 and " + std::to_string(num_shards - 1) +
                           " (currently index = " + std::to_string(index) + ").");
  }
  return DatasetPtr(std::make_shared<ShardDataset>(std::move(input), num_shards, index));
}

Result<DatasetPtr> Zip(std::vector<DatasetPtr> inputs) {
  if (inputs.empty()) return InvalidArgument("zip needs at least one dataset");
  for (const DatasetPtr& d : inputs) SLUICE_RETURN_IF_ERROR(CheckInput(d, "zip"));
  return DatasetPtr(std::make_shared<ZipDataset>(std::move(inputs)));
}

Result<DatasetPtr> Concatenate(DatasetPtr input, DatasetPtr other) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "concatenate"));
  SLUICE_RETURN_IF_ERROR(CheckInput(other, "concatenate"));
  const ElementSpec& a = input->element_spec();
  const ElementSpec& b = other->element_spec();
  if (a.size() != b.size()) return InvalidArgument("Incompatible dataset structures: " + a.DebugString() + " and " + b.DebugString());
  ElementSpec spec = a;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.dtypes[i] != b.dtypes[i]) {
      return InvalidArgument("Incompatible dataset elements: " + a.DebugString() + " and " + b.DebugString());
    }
    spec.shapes[i] = MostSpecificCompatible(a.shapes[i], b.shapes[i]);
  }
  return DatasetPtr(std::make_shared<ConcatenateDataset>(std::move(input), std::move(other), std::move(spec)));
}

Result<DatasetPtr> Enumerate(DatasetPtr input, int64_t start) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "enumerate"));
  SLUICE_ASSIGN_OR_RETURN(DatasetPtr counter, Range(start, INT64_MAX));
  return Zip({std::move(counter), std::move(input)});
}

Result<DatasetPtr> Cache(DatasetPtr input) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "cache"));
  return DatasetPtr(std::make_shared<CacheDataset>(std::move(input)));
}

}  // namespace sluice::data
