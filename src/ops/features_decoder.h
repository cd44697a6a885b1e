// FeaturesDecoder: turns the Features maps of a batch of records into the
// outputs of a FeaturesPlan (private to the ops layer). Used for Examples and
// for the context of SequenceExamples.
//
// Per record, in two phases:
//   1. BeginRecord, then Found(key, feature) for every map entry in wire
//      order: a requested key remembers where its Feature is (a later entry
//      replaces an earlier one: protobuf's last-wins map rule);
//   2. EndRecord decodes the remembered Features: fixed-length values go
//      straight into the output tensors, the others into ValueBuffers.
// Finish then builds the sparse, ragged and padded outputs.
//
// In views mode (ExampleParser::ParseViews) bytes values are not copied:
// FinishViews returns them as string_views into the records (or into the
// plan's default values), and the kString tensors of the outputs are left
// invalid. Dense bytes values are decoded straight into the result's pool of
// views. Sparse, ragged and padded bytes outputs are built by the same code
// as numeric ones: the bytes buffer is turned into an int64 buffer of value
// indices (-1 for padding) before building, and the built index tensor is
// then mapped back to views.
//
// Scratch: the per-slot working vectors (found, present, dense, buffers) come
// from a per-thread spare, kept between parses with its capacity, so that a
// single-record parse does not allocate them (the buffers vector alone is
// over 1 KiB, beyond glibc's per-thread cache; docs/perf/example-parsing.md).
// A decoder takes the spare
// (or makes its own when another decoder on the thread holds it) and hands it
// back on destruction; a spare over 1 MiB is freed instead.
//
// Not thread-safe: one decoder per parse call. The records' bytes must stay
// alive until Finish returns.
#ifndef SLUICE_SRC_OPS_FEATURES_DECODER_H_
#define SLUICE_SRC_OPS_FEATURES_DECODER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "example_plan.h"
#include "sluice/core/status.h"
#include "sluice/ops/feature_spec.h"
#include "sluice/ops/parse_example.h"
#include "value_buffer.h"

namespace sluice::ops::internal {

// The working vectors of a FeaturesDecoder, reused between parses.
struct DecoderScratch {
  std::vector<std::string_view> found;
  std::vector<uint8_t> present;
  std::vector<Tensor> dense;
  std::vector<ValueBuffer> buffers;
  std::vector<int64_t> view_offset;
};

class FeaturesDecoder {
 public:
  // `batched`: outputs get a leading [num_records] dimension; without it
  // num_records must be 1. `names` (empty, or one per record) name records in
  // errors.
  // `views`: bytes values are kept as views (FinishViews) in *pool (emptied
  // first; REQUIRES: not null then); else copied (Finish).
  FeaturesDecoder(const FeaturesPlan& plan, int64_t num_records, bool batched, std::span<const std::string> names,
                  bool views = false, std::vector<std::string_view>* pool = nullptr);
  ~FeaturesDecoder();
  FeaturesDecoder(const FeaturesDecoder&) = delete;
  FeaturesDecoder& operator=(const FeaturesDecoder&) = delete;

  void BeginRecord() { std::fill(present_.begin(), present_.end(), 0); }
  void Found(std::string_view key, std::string_view feature) {
    const int s = plan_.index.Find(key);
    if (s >= 0) {
      found_[static_cast<size_t>(s)] = feature;
      present_[static_cast<size_t>(s)] = 1;
    }
  }
  // Errors as documented in parse_example.h.
  Status EndRecord(int64_t record);
  // REQUIRES: not views mode.
  Result<ParsedFeatures> Finish();
  // REQUIRES: views mode. Sets *values and *strings to one entry per output,
  // in plan order, overwriting (reusing) what they held; the views go to the
  // pool.
  Status FinishViews(std::vector<FeatureValue>* values, std::vector<StringsRange>* strings);

 private:
  Status DecodeDense(size_t s, const wire::FeatureRef& f, int64_t record);
  Status DecodeToBuffer(size_t s, const wire::FeatureRef& f, int64_t record);
  Status Missing(size_t s, int64_t record);
  // Output i of the plan; in views mode, string outputs hold int64 value
  // indices (see above).
  Status BuildOutput(size_t i, FeatureValue* value);
  // Views mode: true if slot `s` is a kDense kString slot kept as views.
  bool DenseViews(size_t s) const {
    return views_ && plan_.slots[s].kind == SlotKind::kDense && plan_.slots[s].dtype == DType::kString;
  }
  Result<SparseTensor> BuildSparseFeature(const OutputPlan& out) const;
  Result<RaggedTensor> BuildRagged(const OutputPlan& out) const;
  std::string_view Name(int64_t record) const;

  const FeaturesPlan& plan_;
  const bool batched_;
  const bool views_;
  const std::span<const std::string> names_;
  const int64_t num_records_;
  std::unique_ptr<DecoderScratch> scratch_;
  // Per slot (in scratch_; sized to the plan's slots, possibly larger):
  std::vector<std::string_view>& found_;  // this record's Feature
  std::vector<uint8_t>& present_;
  std::vector<Tensor>& dense_;            // kDense slots
  std::vector<ValueBuffer>& buffers_;     // other slots
  // Views mode: the views of kDense kString slots (dense_ stays invalid),
  // slot s's at (*pool_)[view_offset_[s]...]. The result's pool.
  std::vector<int64_t>& view_offset_;
  std::vector<std::string_view>* const pool_;
};

}  // namespace sluice::ops::internal

#endif  // SLUICE_SRC_OPS_FEATURES_DECODER_H_
