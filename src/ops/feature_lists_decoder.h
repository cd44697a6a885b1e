// FeatureListsDecoder: turns the feature_lists of a batch of SequenceExamples
// into the outputs of a FeaturesPlan compiled for SpecUse::kFeatureLists
// (private to the ops layer).
//
// Same two phases as FeaturesDecoder: Found(key, feature_list) remembers the
// last FeatureList of each requested key; EndRecord decodes them row by row
// into ValueBuffers (one unit per row) and notes each record's row count.
// Finish builds the dense, sparse and ragged outputs and the dense lengths.
//
// Not thread-safe: one decoder per parse call; the records must outlive it.
#ifndef SLUICE_SRC_OPS_FEATURE_LISTS_DECODER_H_
#define SLUICE_SRC_OPS_FEATURE_LISTS_DECODER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "example_plan.h"
#include "sluice/core/status.h"
#include "sluice/ops/feature_spec.h"
#include "value_buffer.h"

namespace sluice::ops::internal {

class FeatureListsDecoder {
 public:
  FeatureListsDecoder(const FeaturesPlan& plan, int64_t num_records, bool batched,
                      std::span<const std::string> names);

  void BeginRecord() { std::fill(present_.begin(), present_.end(), 0); }
  void Found(std::string_view key, std::string_view feature_list) {
    const int s = plan_.index.Find(key);
    if (s >= 0) {
      found_[static_cast<size_t>(s)] = feature_list;
      present_[static_cast<size_t>(s)] = 1;
    }
  }
  // Errors as documented in parse_sequence_example.h.
  Status EndRecord(int64_t record);
  Result<ParsedFeatures> Finish(std::map<std::string, Tensor, std::less<>>* lengths);

 private:
  Status DecodeList(size_t s, int64_t record);
  // Row counts per record of slot s.
  std::vector<int64_t> RecordRows(size_t s) const;
  Tensor BuildDense(size_t s, Tensor* lengths) const;
  SparseTensor BuildSparse(size_t s) const;
  Result<RaggedTensor> BuildRagged(const OutputPlan& out) const;
  std::string_view Name(int64_t record) const;

  const FeaturesPlan& plan_;
  const int64_t num_records_;
  const bool batched_;
  const std::span<const std::string> names_;
  std::vector<std::string_view> found_;
  std::vector<uint8_t> present_;
  std::vector<ValueBuffer> rows_;                // per slot: one unit per row
  std::vector<std::vector<int64_t>> row_ends_;  // per slot: rows after each record
};

}  // namespace sluice::ops::internal

#endif  // SLUICE_SRC_OPS_FEATURE_LISTS_DECODER_H_
