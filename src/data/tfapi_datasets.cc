// Counter, Random and AssertCardinality (datasets.h's "tf.data API
// completions"): tf.data.Dataset.counter, Dataset.random and
// tf.data.experimental.assert_cardinality.
#include <atomic>
#include <random>
#include <string>
#include <utility>

#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// start, start + step, ... for ever (wrapping at 2^64, as int64 adds do in TF).
class CounterDataset : public DatasetBase {
 public:
  CounterDataset(int64_t start, int64_t step, DType dtype)
      : DatasetBase(ElementSpec{{dtype}, {PartialShape({})}, {}}), start_(start), step_(step) {}
  int64_t cardinality() const override { return kInfiniteCardinality; }
  std::string DebugName() const override { return "Counter"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext&) const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<CounterDataset> {
   public:
    explicit Iterator(const CounterDataset* d) : DatasetIterator(d), next_(d->start_) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      *end_of_sequence = false;
      *out = Element{IntScalarOf(dataset_->element_spec().dtypes[0], next_)};
      next_ = static_cast<int64_t>(static_cast<uint64_t>(next_) + static_cast<uint64_t>(dataset_->step_));
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
  const int64_t start_, step_;
};

// SplitMix64's finaliser: a bijection of 64-bit words that mixes every bit.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Element i of pass p is a hash of (key, p, i): a pure function of the
// position, so a checkpoint is (pass, i).
class RandomIntsDataset : public DatasetBase {
 public:
  RandomIntsDataset(uint64_t key, bool rerandomize)
      : DatasetBase(ElementSpec{{DType::kInt64}, {PartialShape({})}, {}}), key_(key), rerandomize_(rerandomize) {}
  int64_t cardinality() const override { return kInfiniteCardinality; }
  std::string DebugName() const override { return "RandomDataset"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, rerandomize_ ? NextPass(passes_, ctx) : 0);
  }

 private:
  class Iterator : public DatasetIterator<RandomIntsDataset> {
   public:
    Iterator(const RandomIntsDataset* d, uint64_t pass) : DatasetIterator(d), pass_(pass) { Rekey(); }
    Status GetNext(Element* out, bool* end_of_sequence) override {
      *end_of_sequence = false;
      const uint64_t bits = Mix(pass_key_ + static_cast<uint64_t>(next_++) * 0x9E3779B97F4A7C15ull);
      *out = Element{IntScalarOf(DType::kInt64, static_cast<int64_t>(bits >> 32))};
      return Status();
    }
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("pass", static_cast<int64_t>(pass_));
      w->WriteInt("next", next_);
      return Status();
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t pass = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("pass", &pass));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("next", &next_));
      pass_ = static_cast<uint64_t>(pass);
      if (dataset_->rerandomize_) RestorePass(dataset_->passes_, pass_);
      Rekey();
      return Status();
    }

   private:
    void Rekey() { pass_key_ = Mix(dataset_->key_ ^ Mix(pass_ + 0x632BE59BD9B4E019ull)); }
    uint64_t pass_;
    uint64_t pass_key_ = 0;
    int64_t next_ = 0;
  };
  const uint64_t key_;
  const bool rerandomize_;
  mutable std::atomic<uint64_t> passes_{0};
};

// TF's wording: "5 elements", "1 element", "an infinite number of elements".
std::string ElementCount(int64_t n) {
  if (n == kInfiniteCardinality) return "an infinite number of elements";
  return std::to_string(n) + (n == 1 ? " element" : " elements");
}

class AssertCardinalityDataset : public DatasetBase {
 public:
  AssertCardinalityDataset(DatasetPtr input, int64_t expected)
      : DatasetBase(input->element_spec()), input_(std::move(input)), expected_(expected) {}
  int64_t cardinality() const override { return expected_; }
  std::string DebugName() const override { return "AssertCardinality"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<AssertCardinalityDataset> {
   public:
    Iterator(const AssertCardinalityDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d), input_(d->input_->MakeIteratorInternal(ctx)), node_(NewNode(ctx, d->DebugName())) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      SLUICE_RETURN_IF_ERROR(timer.Input(input_.get(), out, end_of_sequence));
      const int64_t expected = dataset_->expected_;
      if (*end_of_sequence) {
        if (expected != seen_) {
          return errors::FailedPrecondition("Input dataset was expected to contain ", ElementCount(expected),
                                            " but contained only ", ElementCount(seen_), ".");
        }
        return Status();
      }
      if (++seen_ > expected && expected != kInfiniteCardinality) {
        return errors::FailedPrecondition("Input dataset was expected to contain ", ElementCount(expected),
                                          " but contained at least ", ElementCount(seen_), ".");
      }
      return timer.Finish(Status(), *out, *end_of_sequence);
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
  const DatasetPtr input_;
  const int64_t expected_;
};

}  // namespace

Result<DatasetPtr> Counter(int64_t start, int64_t step, DType dtype) {
  return DatasetPtr(std::make_shared<CounterDataset>(start, step, dtype));
}

Result<DatasetPtr> Random(uint64_t seed, uint64_t seed2, bool rerandomize_each_iteration) {
  uint64_t key = Mix(seed) ^ Mix(seed2 + 0xD1B54A32D192ED03ull);
  if (seed == 0 && seed2 == 0) key = (static_cast<uint64_t>(std::random_device()()) << 32) | std::random_device()();
  return DatasetPtr(std::make_shared<RandomIntsDataset>(key, rerandomize_each_iteration));
}

Result<DatasetPtr> AssertCardinality(DatasetPtr input, int64_t expected_cardinality) {
  SLUICE_RETURN_IF_ERROR(CheckInput(input, "assert_cardinality"));
  if (expected_cardinality < 0 && expected_cardinality != kInfiniteCardinality) {
    return InvalidArgument("assert_cardinality: expected_cardinality must be >= 0 or INFINITE_CARDINALITY, got " +
                           std::to_string(expected_cardinality));
  }
  return DatasetPtr(std::make_shared<AssertCardinalityDataset>(std::move(input), expected_cardinality));
}

}  // namespace sluice::data
