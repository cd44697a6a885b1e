#include "sluice/ops/parse_example.h"

#include <vector>

#include "example_plan.h"
#include "features_decoder.h"
#include "op_util.h"
#include "record_errors.h"
#include "wire_format.h"

namespace sluice::ops {
namespace internal {

struct ExamplePlan {
  FeatureSpec spec;
  FeaturesPlan features;
};

namespace {

// Phase 1 for one record: the map entries of every `features` field
// (Example field 1; repeated fields merge, later entries replace earlier).
bool ScanExample(std::string_view record, FeaturesDecoder* decoder) {
  return wire::ForEachMessageField(record, 1, [decoder](std::string_view features) {
    return wire::ForEachMapEntry(features, [decoder](std::string_view key, std::string_view feature) {
      decoder->Found(key, feature);
    });
  });
}

Result<ParsedFeatures> ParseRecords(const ExamplePlan& plan, std::span<const std::string_view> records,
                                    std::span<const std::string> names, bool batched) {
  if (!names.empty() && names.size() != records.size()) {
    return errors::InvalidArgument("example_names must be empty or have the correct number of elements: ",
                                   names.size(), " names for ", records.size(), " records");
  }
  FeaturesDecoder decoder(plan.features, static_cast<int64_t>(records.size()), batched, names);
  for (size_t r = 0; r < records.size(); ++r) {
    const auto record = static_cast<int64_t>(r);
    decoder.BeginRecord();
    if (!ScanExample(records[r], &decoder)) {
      return UnparsableRecord(RecordName(names, record), record, records[r]);
    }
    SLUICE_RETURN_IF_ERROR(decoder.EndRecord(record));
  }
  return decoder.Finish();
}

}  // namespace

}  // namespace internal

Result<ExampleParser> ExampleParser::Create(FeatureSpec features) {
  auto plan = std::make_shared<internal::ExamplePlan>();
  SLUICE_ASSIGN_OR_RETURN(plan->features, internal::CompileSpec(features, internal::SpecUse::kExample));
  plan->spec = std::move(features);
  return ExampleParser(std::move(plan));
}

Result<ParsedFeatures> ExampleParser::ParseSingle(std::string_view serialized) const {
  return internal::ParseRecords(*plan_, std::span<const std::string_view>(&serialized, 1), {}, false);
}

Result<ParsedFeatures> ExampleParser::Parse(std::span<const std::string_view> serialized,
                                            std::span<const std::string> names) const {
  return internal::ParseRecords(*plan_, serialized, names, true);
}

Result<ParsedFeatures> ExampleParser::Parse(const Tensor& serialized) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string_view> views, internal::StringViews(serialized, "serialized", true));
  return Parse(views);
}

const FeatureSpec& ExampleParser::features() const { return plan_->spec; }

Result<ParsedFeatures> ParseSingleExample(std::string_view serialized, const FeatureSpec& features) {
  SLUICE_ASSIGN_OR_RETURN(ExampleParser parser, ExampleParser::Create(features));
  return parser.ParseSingle(serialized);
}

Result<ParsedFeatures> ParseExample(std::span<const std::string_view> serialized, const FeatureSpec& features,
                                    std::span<const std::string> names) {
  SLUICE_ASSIGN_OR_RETURN(ExampleParser parser, ExampleParser::Create(features));
  return parser.Parse(serialized, names);
}

Result<ParsedFeatures> ParseExample(const Tensor& serialized, const FeatureSpec& features) {
  SLUICE_ASSIGN_OR_RETURN(ExampleParser parser, ExampleParser::Create(features));
  return parser.Parse(serialized);
}

}  // namespace sluice::ops
