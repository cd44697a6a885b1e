// The structural transformations: Repeat, Take, Skip, Shard, Zip,
// Concatenate, Enumerate, Cache.
#include <algorithm>
#include <utility>

#include "data/dataset_util.h"
#include "data/error_policy.h"
#include "data/memory_budget.h"
#include "data/model.h"
#include "data/stage_timer.h"
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
    if (ctx.probe && count_ != 0) return input_->MakeIteratorInternal(ctx);  // the same first element
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<RepeatDataset> {
   public:
    // Its node comes before its input's: the input is made at the first GetNext (and every epoch).
    Iterator(const RepeatDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), ctx_(ctx), node_(NewNode(ctx, "Repeat")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      const int64_t count = dataset_->count_;
      while (count < 0 || epoch_ < count) {
        if (!input_) {
          input_ = dataset_->input_->MakeIteratorInternal(ctx_);
          produced_this_epoch_ = false;
        }
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
        if (!*end_of_sequence) {
          produced_this_epoch_ = true;
          return timer.Finish(Status(), *out, false);
        }
        input_.reset();
        ++epoch_;
        // An empty input would make an infinite repeat spin for ever.
        if (!produced_this_epoch_) break;
      }
      *end_of_sequence = true;
      return Status();
    }

    // The elements are the input's: so are their origins.
    const ElementOrigin* origin() const override { return input_ ? input_->origin() : nullptr; }

    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("epoch", epoch_);
      w->WriteBool("produced_this_epoch", produced_this_epoch_);
      w->WriteBool("has_input", input_ != nullptr);
      if (!input_) return Status();
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      bool has_input = false;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("epoch", &epoch_));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("produced_this_epoch", &produced_this_epoch_));
      SLUICE_RETURN_IF_ERROR(r->ReadBool("has_input", &has_input));
      input_.reset();
      if (!has_input) return Status();
      input_ = dataset_->input_->MakeIteratorInternal(ctx_);
      return RestoreInput(*input_, r);
    }

   private:
    const IteratorContext ctx_;
    std::unique_ptr<IteratorBase> input_;
    int64_t epoch_ = 0;
    bool produced_this_epoch_ = false;
    const std::shared_ptr<Node> node_;
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
    // Take's first element is its input's. Skip reads on in a probe too: what
    // it skips (a header line) may be what a function cannot take.
    if (ctx.probe && take_ && count_ != 0) return input_->MakeIteratorInternal(ctx);
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<TakeSkipDataset> {
   public:
    Iterator(const TakeSkipDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, d->DebugName())) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      const int64_t count = dataset_->count_;
      if (dataset_->take_) {
        if (count >= 0 && seen_ >= count) {
          *end_of_sequence = true;
          return Status();
        }
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
        if (!*end_of_sequence) ++seen_;
        return timer.Finish(Status(), *out, *end_of_sequence);
      }
      while (count < 0 || seen_ < count) {
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
        if (*end_of_sequence) return Status();
        ++seen_;
      }
      Status s = timer.Input(input_.get(), out, end_of_sequence);
      return timer.Finish(std::move(s), *out, *end_of_sequence);
    }

    const ElementOrigin* origin() const override { return input_->origin(); }

    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("seen", seen_);
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      SLUICE_RETURN_IF_ERROR(r->ReadInt("seen", &seen_));
      return RestoreInput(*input_, r);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    int64_t seen_ = 0;
    const std::shared_ptr<Node> node_;
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
    if (ctx.probe) return input_->MakeIteratorInternal(ctx);  // any element of the input will do
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<ShardDataset> {
   public:
    Iterator(const ShardDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "Shard")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      while (true) {
        SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
        if (*end_of_sequence) return Status();
        if (next_index_++ % dataset_->num_shards_ == dataset_->index_) return timer.Finish(Status(), *out, false);
      }
    }

    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("next_index", next_index_);
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      SLUICE_RETURN_IF_ERROR(r->ReadInt("next_index", &next_index_));
      return RestoreInput(*input_, r);
    }

   private:
    std::unique_ptr<IteratorBase> input_;
    int64_t next_index_ = 0;
    const std::shared_ptr<Node> node_;
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
      node_ = NewNode(ctx, "Zip");
    }
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      if (ended_) {
        *end_of_sequence = true;
        return Status();
      }
      out->clear();
      Element e;
      for (auto& in : inputs_) {
        SLUICE_RETURN_IF_ERROR(timer.Input(in.get(), &e, end_of_sequence));
        if (*end_of_sequence) {
          ended_ = true;
          return Status();
        }
        for (Tensor& t : e) out->push_back(std::move(t));
      }
      return timer.Finish(Status(), *out, false);
    }

    // Input i under "input_<i>", also after the end (their passes number
    // the next epoch's).
    Status Save(IteratorStateWriter* w) override {
      w->WriteBool("ended", ended_);
      for (size_t i = 0; i < inputs_.size(); ++i) {
        IteratorStateWriter input = w->Child("input_" + std::to_string(i));
        SLUICE_RETURN_IF_ERROR(inputs_[i]->Save(&input));
      }
      return Status();
    }
    Status Restore(IteratorStateReader* r) override {
      SLUICE_RETURN_IF_ERROR(r->ReadBool("ended", &ended_));
      for (size_t i = 0; i < inputs_.size(); ++i) {
        IteratorStateReader input = r->Child("input_" + std::to_string(i));
        SLUICE_RETURN_IF_ERROR(inputs_[i]->Restore(&input));
      }
      return Status();
    }

   private:
    std::vector<std::unique_ptr<IteratorBase>> inputs_;
    bool ended_ = false;
    std::shared_ptr<Node> node_;  // made after the inputs' (sources first)
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
  // The iterators of both inputs are kept to the end, and saved: their
  // passes number the next epoch's under Repeat.
  class Iterator : public DatasetIterator<ConcatenateDataset> {
   public:
    Iterator(const ConcatenateDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), ctx_(ctx), first_(d->a_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, "Concatenate")) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      while (part_ < 2) {
        IteratorBase* input = part_ == 0 ? first_.get() : second_.get();
        SLUICE_RETURN_IF_ERROR(timer.Input(input, out, end_of_sequence));
        if (!*end_of_sequence) return timer.Finish(Status(), *out, false);
        if (++part_ == 1 && !second_) second_ = dataset_->b_->MakeIteratorInternal(ctx_);
      }
      *end_of_sequence = true;
      return Status();
    }

    // Before the second input starts, an uncounted iterator of it (one that
    // takes no pass) is saved in its place: the passes it will take.
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("part", part_);
      IteratorStateWriter first = w->Child("first");
      SLUICE_RETURN_IF_ERROR(first_->Save(&first));
      IteratorStateWriter second = w->Child("second");
      if (second_) return second_->Save(&second);
      IteratorContext uncounted{std::make_shared<CancellationManager>(), nullptr, false, nullptr, true};
      std::unique_ptr<IteratorBase> next = dataset_->b_->MakeIteratorInternal(uncounted);
      Status s = next->Save(&second);
      uncounted.cancellation->StartCancel();
      return s;
    }
    // The second input's iterator is made here (before it is needed) to
    // take the saved passes.
    Status Restore(IteratorStateReader* r) override {
      SLUICE_RETURN_IF_ERROR(r->ReadInt("part", &part_));
      if (part_ < 0 || part_ > 2) return InvalidArgument("concatenate checkpoint: bad part " + std::to_string(part_));
      IteratorStateReader first = r->Child("first");
      SLUICE_RETURN_IF_ERROR(first_->Restore(&first));
      second_ = dataset_->b_->MakeIteratorInternal(ctx_);
      IteratorStateReader second = r->Child("second");
      return second_->Restore(&second);
    }

   private:
    const IteratorContext ctx_;
    std::unique_ptr<IteratorBase> first_, second_;
    int64_t part_ = 0;  // the input being read: 0, 1, or 2 when both have ended
    const std::shared_ptr<Node> node_;
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
    if (ctx.probe) return input_->MakeIteratorInternal(ctx);  // a probe neither fills nor reads the cache
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
        : DatasetIterator(d),
          ctx_(ctx),
          cached_(std::move(cached)),
          account_(ctx.model ? ctx.model->memory() : nullptr, "Cache") {
      if (!cached_) input_ = d->input_->MakeIteratorInternal(ctx);
      node_ = NewNode(ctx, "Cache");
    }
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      if (cached_) {
        if (!charged_) {  // a pass over the cache holds all of it
          charged_ = true;
          int64_t bytes = 0;
          for (const Element& e : *cached_) bytes += ElementBytes(e);
          SLUICE_RETURN_IF_ERROR(account_.ChargeNoWait(bytes));
        }
        *end_of_sequence = next_ >= cached_->size();
        if (!*end_of_sequence) *out = (*cached_)[next_++];
        return timer.Finish(Status(), *out, *end_of_sequence);
      }
      SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
      if (!*end_of_sequence) {
        timer.Produced(*out);
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

    // Writing (the first pass): the elements so far and the input. Reading a
    // finished cache: the cache itself (a new process has none) and the
    // position; restoring it publishes the cache to the later passes.
    Status Save(IteratorStateWriter* w) override {
      w->WriteBool("reading", cached_ != nullptr);
      if (cached_) {
        w->WriteInt("next", static_cast<int64_t>(next_));
        w->WriteElements("cache", *cached_);
        return Status();
      }
      w->WriteElements("written", writing_);
      return SaveInput(*input_, w);
    }
    Status Restore(IteratorStateReader* r) override {
      bool reading = false;
      SLUICE_RETURN_IF_ERROR(r->ReadBool("reading", &reading));
      if (reading) {
        int64_t next = 0;
        auto cache = std::make_shared<std::vector<Element>>();
        SLUICE_RETURN_IF_ERROR(r->ReadInt("next", &next));
        SLUICE_RETURN_IF_ERROR(r->ReadElements("cache", cache.get()));
        if (next < 0 || next > static_cast<int64_t>(cache->size())) {
          return InvalidArgument("cache checkpoint position " + std::to_string(next) + " is past its " +
                                 std::to_string(cache->size()) + " elements");
        }
        cached_ = std::move(cache);
        next_ = static_cast<size_t>(next);
        input_.reset();
        MutexLock lock(&dataset_->state_.mu);
        if (!dataset_->state_.elements) dataset_->state_.elements = cached_;
        return Status();
      }
      // A rebuilt iterator of this process may have found the cache done;
      // the checkpoint's first pass continues from its input all the same.
      if (cached_) {
        cached_.reset();
        next_ = 0;
        input_ = dataset_->input_->MakeIteratorInternal(ctx_);
      }
      writing_.clear();
      SLUICE_RETURN_IF_ERROR(r->ReadElements("written", &writing_));
      return RestoreInput(*input_, r);
    }

   private:
    const IteratorContext ctx_;
    std::shared_ptr<const std::vector<Element>> cached_;
    std::unique_ptr<IteratorBase> input_;
    std::vector<Element> writing_;
    size_t next_ = 0;
    BudgetAccount account_;
    bool charged_ = false;  // the cached elements, by a pass over them
    std::shared_ptr<Node> node_;  // made after the input's (sources first)
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
