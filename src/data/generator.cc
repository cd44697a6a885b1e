// FromGenerator: a source whose elements a C++ callable makes, one generator
// per iterator.
#include <utility>

#include "data/dataset_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

// InvalidArgument unless `e` matches `spec` (kInvalid dtypes and unknown
// shapes accept anything).
Status CheckAgainstSpec(const Element& e, const ElementSpec& spec) {
  if (e.size() != spec.size()) {
    return InvalidArgument("the generator returned an element of " + std::to_string(e.size()) +
                           " components; expected " + std::to_string(spec.size()));
  }
  for (size_t i = 0; i < e.size(); ++i) {
    if (spec.dtypes[i] != DType::kInvalid && e[i].dtype() != spec.dtypes[i]) {
      return InvalidArgument("`generator` yielded an element of type " + std::string(DTypeName(e[i].dtype())) +
                             " for component " + std::to_string(i) + " where an element of type " +
                             std::string(DTypeName(spec.dtypes[i])) + " was expected.");
    }
    if (!spec.shapes[i].IsCompatibleWith(e[i].shape())) {
      return InvalidArgument("`generator` yielded an element of shape " + e[i].shape().DebugString() +
                             " for component " + std::to_string(i) + " where an element of shape " +
                             spec.shapes[i].DebugString() + " was expected.");
    }
  }
  return Status();
}

class GeneratorDataset : public DatasetBase {
 public:
  GeneratorDataset(ProbeAwareGeneratorFactory factory, ElementSpec spec)
      : DatasetBase(std::move(spec)), factory_(std::move(factory)) {}

  int64_t cardinality() const override { return kUnknownCardinality; }
  std::string DebugName() const override { return "FromGenerator"; }
  std::unique_ptr<IteratorBase> MakeIteratorInternal(const IteratorContext& ctx) const override {
    return std::make_unique<Iterator>(this, ctx.probe);
  }

 private:
  class Iterator : public DatasetIterator<GeneratorDataset> {
   public:
    Iterator(const GeneratorDataset* d, bool probe) : DatasetIterator(d), probe_(probe) {}
    Status GetNext(Element* out, bool* end_of_sequence) override {
      if (done_) {
        *end_of_sequence = true;
        return Status();
      }
      if (!generator_) {
        Result<GeneratorFn> g = dataset_->factory_(probe_);
        if (!g.ok()) return g.status();
        generator_ = std::move(*g);
      }
      Result<std::optional<Element>> next = generator_();
      if (!next.ok()) return next.status();
      if (!next->has_value()) {
        done_ = true;
        generator_ = nullptr;  // releases what the generator holds
        *end_of_sequence = true;
        return Status();
      }
      SLUICE_RETURN_IF_ERROR(CheckAgainstSpec(**next, dataset_->element_spec()));
      *out = std::move(**next);
      *end_of_sequence = false;
      return Status();
    }

    // A generator's position is its own hidden state.
    Status Save(IteratorStateWriter*) override { return CannotSave(); }
    Status Restore(IteratorStateReader*) override { return CannotSave(); }

   private:
    static Status CannotSave() {
      return Status(Code::kUnimplemented,
                    "FromGenerator cannot be checkpointed: the generator's position is its own state, which sluice "
                    "cannot see. Start the pipeline from a source that can be saved (range, from_tensor_slices, a "
                    "file reader) and map the generator's work over it, or save the generator's state yourself "
                    "and rebuild it with skip().");
    }

    const bool probe_;
    GeneratorFn generator_;
    bool done_ = false;
  };

  const ProbeAwareGeneratorFactory factory_;
};

}  // namespace

Result<DatasetPtr> FromGenerator(GeneratorFactory factory, ElementSpec spec) {
  if (!factory) return InvalidArgument("from_generator: the generator factory is empty");
  return FromProbeAwareGenerator([factory = std::move(factory)](bool) { return factory(); }, std::move(spec));
}

Result<DatasetPtr> FromProbeAwareGenerator(ProbeAwareGeneratorFactory factory, ElementSpec spec) {
  if (!factory) return InvalidArgument("from_generator: the generator factory is empty");
  if (spec.shapes.size() != spec.dtypes.size()) {
    return InvalidArgument("from_generator: " + std::to_string(spec.dtypes.size()) + " dtypes but " +
                           std::to_string(spec.shapes.size()) + " shapes");
  }
  return DatasetPtr(std::make_shared<GeneratorDataset>(std::move(factory), std::move(spec)));
}

}  // namespace sluice::data
