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
// Not thread-safe: one decoder per parse call. The records' bytes must stay
// alive until Finish returns.
#ifndef SLUICE_SRC_OPS_FEATURES_DECODER_H_
#define SLUICE_SRC_OPS_FEATURES_DECODER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "example_plan.h"
#include "sluice/core/status.h"
#include "sluice/ops/feature_spec.h"
#include "value_buffer.h"

namespace sluice::ops::internal {

class FeaturesDecoder {
 public:
  // `batched`: outputs get a leading [num_records] dimension; without it
  // num_records must be 1. `names` (empty, or one per record) name records in
  // errors.
  FeaturesDecoder(const FeaturesPlan& plan, int64_t num_records, bool batched, std::span<const std::string> names);

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
  Result<ParsedFeatures> Finish();

 private:
  Status DecodeDense(size_t s, const wire::FeatureRef& f, int64_t record);
  Status DecodeToBuffer(size_t s, const wire::FeatureRef& f, int64_t record);
  Status Missing(size_t s, int64_t record);
  Result<SparseTensor> BuildSparseFeature(const OutputPlan& out) const;
  Result<RaggedTensor> BuildRagged(const OutputPlan& out) const;
  std::string_view Name(int64_t record) const;

  const FeaturesPlan& plan_;
  const bool batched_;
  const std::span<const std::string> names_;
  std::vector<std::string_view> found_;  // per slot, this record
  std::vector<uint8_t> present_;
  std::vector<Tensor> dense_;            // kDense slots
  std::vector<ValueBuffer> buffers_;     // other slots
};

}  // namespace sluice::ops::internal

#endif  // SLUICE_SRC_OPS_FEATURES_DECODER_H_
