#include "sluice/ops/parse_sequence_example.h"

#include "example_plan.h"
#include "feature_lists_decoder.h"
#include "features_decoder.h"
#include "record_errors.h"
#include "wire_format.h"

namespace sluice::ops {
namespace internal {

struct SequencePlan {
  FeatureSpec context_spec;
  FeatureSpec sequence_spec;
  FeaturesPlan context;
  FeaturesPlan sequence;
};

namespace {

// Phase 1 for one record: SequenceExample field 1 (context: Features) and
// field 2 (feature_lists: FeatureLists), each possibly repeated.
bool ScanSequenceExample(std::string_view record, FeaturesDecoder* context, FeatureListsDecoder* lists) {
  wire::Cursor c(record);
  while (!c.done()) {
    uint32_t field;
    wire::WireType wt;
    if (!c.ReadTag(&field, &wt)) return false;
    if (wt == wire::kLengthDelimited && (field == 1 || field == 2)) {
      std::string_view message;
      if (!c.ReadLengthDelimited(&message)) return false;
      const bool ok = field == 1 ? wire::ForEachMapEntry(message,
                                                         [context](std::string_view k, std::string_view v) {
                                                           context->Found(k, v);
                                                         })
                                 : wire::ForEachMapEntry(message, [lists](std::string_view k, std::string_view v) {
                                     lists->Found(k, v);
                                   });
      if (!ok) return false;
    } else if (!c.Skip(field, wt)) {
      return false;
    }
  }
  return true;
}

Result<ParsedSequenceExample> ParseRecords(const SequencePlan& plan, std::span<const std::string_view> records,
                                           std::span<const std::string> names, bool batched) {
  if (!names.empty() && names.size() != records.size()) {
    return errors::InvalidArgument("example_names must be empty or have the correct number of elements: ",
                                   names.size(), " names for ", records.size(), " records");
  }
  const auto n = static_cast<int64_t>(records.size());
  FeaturesDecoder context(plan.context, n, batched, names);
  FeatureListsDecoder lists(plan.sequence, n, batched, names);
  for (int64_t r = 0; r < n; ++r) {
    const std::string_view record = records[static_cast<size_t>(r)];
    context.BeginRecord();
    lists.BeginRecord();
    if (!ScanSequenceExample(record, &context, &lists)) {
      return UnparsableRecord(RecordName(names, r), r, record);
    }
    SLUICE_RETURN_IF_ERROR(context.EndRecord(r));
    SLUICE_RETURN_IF_ERROR(lists.EndRecord(r));
  }
  ParsedSequenceExample result;
  SLUICE_ASSIGN_OR_RETURN(result.context, context.Finish());
  SLUICE_ASSIGN_OR_RETURN(result.feature_lists, lists.Finish(&result.lengths));
  return result;
}

}  // namespace
}  // namespace internal

Result<SequenceExampleParser> SequenceExampleParser::Create(FeatureSpec context_features,
                                                            FeatureSpec sequence_features) {
  auto plan = std::make_shared<internal::SequencePlan>();
  SLUICE_ASSIGN_OR_RETURN(plan->context, internal::CompileSpec(context_features, internal::SpecUse::kContext));
  SLUICE_ASSIGN_OR_RETURN(plan->sequence,
                          internal::CompileSpec(sequence_features, internal::SpecUse::kFeatureLists));
  plan->context_spec = std::move(context_features);
  plan->sequence_spec = std::move(sequence_features);
  return SequenceExampleParser(std::move(plan));
}

Result<ParsedSequenceExample> SequenceExampleParser::ParseSingle(std::string_view serialized) const {
  return internal::ParseRecords(*plan_, std::span<const std::string_view>(&serialized, 1), {}, false);
}

Result<ParsedSequenceExample> SequenceExampleParser::Parse(std::span<const std::string_view> serialized,
                                                           std::span<const std::string> names) const {
  return internal::ParseRecords(*plan_, serialized, names, true);
}

Result<ParsedSequenceExample> ParseSingleSequenceExample(std::string_view serialized,
                                                         const FeatureSpec& context_features,
                                                         const FeatureSpec& sequence_features) {
  SLUICE_ASSIGN_OR_RETURN(SequenceExampleParser parser,
                          SequenceExampleParser::Create(context_features, sequence_features));
  return parser.ParseSingle(serialized);
}

Result<ParsedSequenceExample> ParseSequenceExample(std::span<const std::string_view> serialized,
                                                   const FeatureSpec& context_features,
                                                   const FeatureSpec& sequence_features,
                                                   std::span<const std::string> names) {
  SLUICE_ASSIGN_OR_RETURN(SequenceExampleParser parser,
                          SequenceExampleParser::Create(context_features, sequence_features));
  return parser.Parse(serialized, names);
}

}  // namespace sluice::ops
