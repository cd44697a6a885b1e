// ChooseFromDatasets and SampleFromDatasets: TF's DirectedInterleaveDataset
// (a selector dataset of int64 indices picks the input each element comes
// from) and the selector sample_from_datasets builds for it: RandomDataset
// (one Philox(seed, seed2) uint32 sample per element) batched by two, each
// pair the seed of a stateless_multinomial draw over log(weights). Written
// sample for sample as TF computes it, so seeded sampling gives TF's order.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "core/philox.h"
#include "data/dataset_util.h"
#include "data/model.h"
#include "data/stage_timer.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// log(weights) computed in the weights' dtype (TF's math_ops.log), as double.
Result<std::vector<double>> LogitsOf(const Tensor& w) {
  std::vector<double> out;
  if (w.dtype() == DType::kFloat32) {
    for (float x : w.flat<float>()) out.push_back(static_cast<double>(std::log(x)));
  } else if (w.dtype() == DType::kFloat64) {
    for (double x : w.flat<double>()) out.push_back(std::log(x));
  } else {
    return InvalidArgument("Invalid `weights`. `weights` type must be either `tf.float32` or `tf.float64` but is " +
                           std::string(DTypeName(w.dtype())) + ".");
  }
  return out;
}

// The selector of SampleFromDatasets: int64 scalars in [0, logits.size()),
// with constant logits, or with the logits of each element of `weights`
// (float vectors; the selector ends with them).
class CategoricalSelectorDataset : public DatasetBase {
 public:
  CategoricalSelectorDataset(std::vector<double> logits, DatasetPtr weights, uint64_t seed, uint64_t seed2,
                             bool rerandomize)
      : DatasetBase(ElementSpec{{DType::kInt64}, {PartialShape({})}, {}}),
        logits_(std::move(logits)),
        weights_(std::move(weights)),
        seed_(seed),
        seed2_(seed2),
        rerandomize_(rerandomize) {}

  int64_t cardinality() const override { return weights_ ? weights_->cardinality() : kInfiniteCardinality; }
  std::string DebugName() const override { return "SampleSelector"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    uint64_t s = seed_, s2 = seed2_;
    if (s == 0 && s2 == 0) {  // TF's RandomSeeds: both 0 draws fresh seeds
      std::random_device rd;
      s = (uint64_t{rd()} << 32) | rd();
      s2 = (uint64_t{rd()} << 32) | rd();
    }
    uint64_t k = 0;
    if (rerandomize_) {
      // Iterator k's seeds: samples 2k and 2k+1 of Philox(seed, seed2), as
      // TF's RandomSeedGenerator (and Shuffle) derive them.
      k = NextPass(iterators_, ctx);
      Philox4x32 generator(s, s2);
      generator.Skip(k / 2);
      if (k % 2 == 1) {
        generator.Next();
        generator.Next();
      }
      s = generator.Next();
      s2 = generator.Next();
    }
    return std::make_unique<Iterator>(this, weights_ ? weights_->MakeIteratorInternal(ctx) : nullptr, s, s2, k);
  }

  // The categorical draw of gen_stateless_random_ops.stateless_multinomial
  // (one row, one sample) over `logits` (each of the logits' dtype, as
  // double) seeded by (s0, s1).
  static int64_t Draw(const std::vector<double>& logits, uint64_t s0, uint64_t s1) {
    // GenerateKey: the seed, hashed by one Philox block under a fixed key.
    // (Philox with counter (s0, s1) under key 0x02461e29'3ec8f720: s0 enters
    // the counter's low half by Skip.)
    Philox4x32 hash(0x02461e293ec8f720ull, s1);
    hash.Skip(s0);
    uint32_t mix[4];
    for (uint32_t& m : mix) m = hash.Next();
    Philox4x32 gen(uint64_t{mix[0]} | uint64_t{mix[1]} << 32, uint64_t{mix[2]} | uint64_t{mix[3]} << 32);
    // MultinomialFunctor: a cumulative distribution of exp(logit - max) over
    // the finite logits, searched with a uniform double.
    double max = std::numeric_limits<double>::lowest();
    for (double l : logits) {
      if (std::isfinite(l)) max = std::max(max, l);
    }
    std::vector<double> cdf(logits.size());
    double total = 0;
    for (size_t j = 0; j < logits.size(); ++j) {
      if (std::isfinite(logits[j])) total += std::exp(logits[j] - max);
      cdf[j] = total;
    }
    const uint32_t x0 = gen.Next(), x1 = gen.Next();
    const uint64_t bits = (uint64_t{1023} << 52) | (uint64_t{x0 & 0xfffffu} << 32) | x1;
    double u;
    std::memcpy(&u, &bits, sizeof(u));
    const double to_find = (u - 1.0) * total;
    return std::upper_bound(cdf.begin(), cdf.end(), to_find) - cdf.begin();
  }

 private:
  class Iterator : public DatasetIterator<CategoricalSelectorDataset> {
   public:
    Iterator(const CategoricalSelectorDataset* d, std::unique_ptr<IteratorBase> weights, uint64_t seed,
             uint64_t seed2, uint64_t pass)
        : DatasetIterator(d), weights_(std::move(weights)), random_(seed, seed2), seed_(seed), seed2_(seed2),
          pass_(pass) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      const std::vector<double>* logits = &dataset_->logits_;
      std::vector<double> varying;
      if (weights_) {
        Element w;
        SLUICE_RETURN_IF_ERROR(weights_->GetNext(&w, end_of_sequence));
        if (*end_of_sequence) return Status();
        SLUICE_ASSIGN_OR_RETURN(varying, LogitsOf(w[0]));
        logits = &varying;
      }
      // Dataset.random(seed).batch(2): two uint32 samples, as int64.
      const uint64_t s0 = random_.Next();
      const uint64_t s1 = random_.Next();
      draws_ += 2;
      *out = Element{Tensor::Scalar<int64_t>(Draw(*logits, s0, s1))};
      *end_of_sequence = false;
      return Status();
    }

    // The RNG as its seeds (drawn at random when both were 0, so saved
    // rather than derived again) and the samples drawn; the pass keeps the
    // later iterators' seeds under rerandomize.
    Status Save(IteratorStateWriter* w) override {
      w->WriteInt("seed", static_cast<int64_t>(seed_));
      w->WriteInt("seed2", static_cast<int64_t>(seed2_));
      w->WriteInt("pass", static_cast<int64_t>(pass_));
      w->WriteInt("draws", static_cast<int64_t>(draws_));
      if (!weights_) return Status();
      IteratorStateWriter weights = w->Child("weights");
      return weights_->Save(&weights);
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t seed = 0, seed2 = 0, pass = 0, draws = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadInt("seed", &seed));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("seed2", &seed2));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("pass", &pass));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("draws", &draws));
      seed_ = static_cast<uint64_t>(seed);
      seed2_ = static_cast<uint64_t>(seed2);
      pass_ = static_cast<uint64_t>(pass);
      draws_ = static_cast<uint64_t>(draws);
      if (dataset_->rerandomize_) RestorePass(dataset_->iterators_, pass_);
      random_ = Philox4x32(seed_, seed2_);
      random_.Skip(draws_ / 4);
      for (uint64_t i = 0; i < draws_ % 4; ++i) random_.Next();
      if (!weights_) return Status();
      IteratorStateReader weights = r->Child("weights");
      return weights_->Restore(&weights);
    }

   private:
    std::unique_ptr<IteratorBase> weights_;
    Philox4x32 random_;
    uint64_t seed_, seed2_, pass_;
    uint64_t draws_ = 0;  // samples taken from random_
  };

  const std::vector<double> logits_;
  const DatasetPtr weights_;
  const uint64_t seed_, seed2_;
  const bool rerandomize_;
  mutable std::atomic<uint64_t> iterators_{0};  // iterators made so far (rerandomize_)
};

class DirectedInterleaveDataset : public DatasetBase {
 public:
  DirectedInterleaveDataset(DatasetPtr selector, std::vector<DatasetPtr> inputs, bool stop_on_empty)
      : DatasetBase(inputs[0]->element_spec()),
        selector_(std::move(selector)),
        inputs_(std::move(inputs)),
        stop_on_empty_(stop_on_empty) {}

  // TF's rule: infinite if any input is, otherwise unknown.
  int64_t cardinality() const override {
    for (const DatasetPtr& in : inputs_) {
      if (in->cardinality() == kInfiniteCardinality) return kInfiniteCardinality;
    }
    return kUnknownCardinality;
  }
  std::string DebugName() const override { return "DirectedInterleave"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx);
  }

 private:
  class Iterator : public DatasetIterator<DirectedInterleaveDataset> {
   public:
    Iterator(const DirectedInterleaveDataset* d, const IteratorContext& ctx)
        : DatasetIterator(d),
          selector_(d->selector_->MakeIteratorInternal(ctx)),
          exhausted_(d->inputs_.size(), false),
          active_(d->inputs_.size()) {
      for (const DatasetPtr& in : d->inputs_) inputs_.push_back(in->MakeIteratorInternal(ctx));
      node_ = NewNode(ctx, "DirectedInterleave");
    }

    Status GetNext(Element* out, bool* end_of_sequence) override {
      StageTimer timer(*node_);
      while (!ended_) {
        Element choice;
        bool selector_end = false;
        SLUICE_RETURN_IF_ERROR(timer.Input(selector_.get(), &choice, &selector_end));
        if (selector_end) break;
        const int64_t i = choice[0].scalar<int64_t>();
        if (i < 0 || i >= static_cast<int64_t>(inputs_.size())) {
          return InvalidArgument("Selector index out of range: " + std::to_string(i) +
                                 " >= " + std::to_string(inputs_.size()));
        }
        if (exhausted_[i]) continue;  // draw again
        bool input_end = false;
        SLUICE_RETURN_IF_ERROR(timer.Input(inputs_[i].get(), out, &input_end));
        if (!input_end) {
          *end_of_sequence = false;
          return timer.Finish(Status(), *out, false);
        }
        exhausted_[i] = true;
        if (dataset_->stop_on_empty_ || --active_ == 0) break;
      }
      ended_ = true;
      *end_of_sequence = true;
      return Status();
    }

    // The selector, which inputs are exhausted, and every input ("input_<i>"),
    // the exhausted and the ended ones too: their passes number the next
    // epoch's.
    Status Save(IteratorStateWriter* w) override {
      w->WriteBool("ended", ended_);
      w->WriteInt("active", static_cast<int64_t>(active_));
      IteratorStateWriter selector = w->Child("selector");
      SLUICE_RETURN_IF_ERROR(selector_->Save(&selector));
      for (size_t i = 0; i < inputs_.size(); ++i) {
        const std::string name = "input_" + std::to_string(i);
        w->WriteBool(name + ".exhausted", exhausted_[i]);
        IteratorStateWriter input = w->Child(name);
        SLUICE_RETURN_IF_ERROR(inputs_[i]->Save(&input));
      }
      return Status();
    }
    Status Restore(IteratorStateReader* r) override {
      int64_t active = 0;
      SLUICE_RETURN_IF_ERROR(r->ReadBool("ended", &ended_));
      SLUICE_RETURN_IF_ERROR(r->ReadInt("active", &active));
      active_ = static_cast<size_t>(active);
      IteratorStateReader selector = r->Child("selector");
      SLUICE_RETURN_IF_ERROR(selector_->Restore(&selector));
      for (size_t i = 0; i < inputs_.size(); ++i) {
        const std::string name = "input_" + std::to_string(i);
        bool exhausted = false;
        SLUICE_RETURN_IF_ERROR(r->ReadBool(name + ".exhausted", &exhausted));
        exhausted_[i] = exhausted;
        IteratorStateReader input = r->Child(name);
        SLUICE_RETURN_IF_ERROR(inputs_[i]->Restore(&input));
      }
      return Status();
    }

   private:
    std::unique_ptr<IteratorBase> selector_;
    std::vector<std::unique_ptr<IteratorBase>> inputs_;
    std::vector<bool> exhausted_;  // inputs that have ended (kept: checkpoints save their passes)
    size_t active_;
    bool ended_ = false;
    std::shared_ptr<Node> node_;  // made after the inputs' (sources first)
  };

  const DatasetPtr selector_;
  const std::vector<DatasetPtr> inputs_;
  const bool stop_on_empty_;
};

Status CheckCompatible(const std::vector<DatasetPtr>& datasets) {
  if (datasets.empty()) return InvalidArgument("Invalid `datasets`. `datasets` should not be empty.");
  for (const DatasetPtr& d : datasets) SLUICE_RETURN_IF_ERROR(CheckInput(d, "choose_from_datasets"));
  const ElementSpec& first = datasets[0]->element_spec();
  for (const DatasetPtr& d : datasets) {
    const ElementSpec& spec = d->element_spec();
    bool same = spec.size() == first.size();
    for (size_t i = 0; same && i < spec.size(); ++i) {
      same = spec.dtypes[i] == first.dtypes[i] || spec.dtypes[i] == DType::kInvalid ||
             first.dtypes[i] == DType::kInvalid;
    }
    if (!same) {
      return InvalidArgument("Invalid `datasets`. `datasets` must have compatible element specs.\n dataset[0]: " +
                             first.DebugString() + "\ndataset: " + spec.DebugString());
    }
  }
  return Status();
}

}  // namespace

Result<DatasetPtr> ChooseFromDatasets(std::vector<DatasetPtr> datasets, DatasetPtr choice_dataset,
                                      bool stop_on_empty_dataset) {
  SLUICE_RETURN_IF_ERROR(CheckCompatible(datasets));
  SLUICE_RETURN_IF_ERROR(CheckInput(choice_dataset, "choose_from_datasets"));
  const ElementSpec& choice = choice_dataset->element_spec();
  if (choice.size() != 1 || choice.dtypes[0] != DType::kInt64 ||
      (choice.shapes[0].rank_known() && choice.shapes[0].rank() != 0)) {
    return InvalidArgument(
        "Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of type `tf.int64`.");
  }
  return DatasetPtr(std::make_shared<DirectedInterleaveDataset>(std::move(choice_dataset), std::move(datasets),
                                                                stop_on_empty_dataset));
}

Result<DatasetPtr> SampleFromDatasets(std::vector<DatasetPtr> datasets, std::vector<double> weights, int64_t seed,
                                      int64_t seed2, bool stop_on_empty_dataset, bool rerandomize_each_iteration) {
  SLUICE_RETURN_IF_ERROR(CheckCompatible(datasets));
  if (weights.empty()) weights.assign(datasets.size(), 1.0);
  if (weights.size() != datasets.size()) {
    return InvalidArgument("Invalid `weights`. `weights` should have the same length as `datasets` but got "
                           "`len(weights)=" + std::to_string(weights.size()) + "` vs. `len(datasets)=" +
                           std::to_string(datasets.size()) + "`.");
  }
  // TF drops the datasets of weight 0 first (none left: an empty dataset).
  std::vector<DatasetPtr> kept;
  std::vector<double> logits;
  for (size_t i = 0; i < datasets.size(); ++i) {
    if (weights[i] > 0) {
      kept.push_back(datasets[i]);
      logits.push_back(static_cast<double>(std::log(static_cast<float>(weights[i]))));  // float32, as TF
    }
  }
  if (kept.empty()) return Take(datasets[0], 0);
  if (kept.size() == 1) return kept[0];
  auto selector = std::make_shared<CategoricalSelectorDataset>(std::move(logits), nullptr, static_cast<uint64_t>(seed),
                                                               static_cast<uint64_t>(seed2),
                                                               rerandomize_each_iteration);
  return DatasetPtr(
      std::make_shared<DirectedInterleaveDataset>(std::move(selector), std::move(kept), stop_on_empty_dataset));
}

Result<DatasetPtr> SampleFromDatasetsWithWeightDataset(std::vector<DatasetPtr> datasets, DatasetPtr weights,
                                                      int64_t seed, int64_t seed2, bool stop_on_empty_dataset,
                                                      bool rerandomize_each_iteration) {
  SLUICE_RETURN_IF_ERROR(CheckCompatible(datasets));
  SLUICE_RETURN_IF_ERROR(CheckInput(weights, "sample_from_datasets"));
  const ElementSpec& spec = weights->element_spec();
  if (spec.size() != 1 || (spec.dtypes[0] != DType::kFloat32 && spec.dtypes[0] != DType::kFloat64)) {
    return InvalidArgument("Invalid `weights`. `weights` must be a dataset of float32 or float64 vectors.");
  }
  if (datasets.size() == 1) return datasets[0];
  auto selector = std::make_shared<CategoricalSelectorDataset>(std::vector<double>(), std::move(weights),
                                                               static_cast<uint64_t>(seed),
                                                               static_cast<uint64_t>(seed2),
                                                               rerandomize_each_iteration);
  return DatasetPtr(
      std::make_shared<DirectedInterleaveDataset>(std::move(selector), std::move(datasets), stop_on_empty_dataset));
}

}  // namespace sluice::data
