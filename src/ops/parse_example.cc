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

// Phases 1 and 2 for every record; the caller then finishes `decoder`.
Status DecodeRecords(std::span<const std::string_view> records, std::span<const std::string> names,
                     FeaturesDecoder* decoder) {
  if (!names.empty() && names.size() != records.size()) {
    return errors::InvalidArgument("example_names must be empty or have the correct number of elements: ",
                                   names.size(), " names for ", records.size(), " records");
  }
  for (size_t r = 0; r < records.size(); ++r) {
    const auto record = static_cast<int64_t>(r);
    decoder->BeginRecord();
    if (!ScanExample(records[r], decoder)) {
      return UnparsableRecord(RecordName(names, record), record, records[r]);
    }
    SLUICE_RETURN_IF_ERROR(decoder->EndRecord(record));
  }
  return Status();
}

Result<ParsedFeatures> ParseRecords(const ExamplePlan& plan, std::span<const std::string_view> records,
                                    std::span<const std::string> names, bool batched) {
  FeaturesDecoder decoder(plan.features, static_cast<int64_t>(records.size()), batched, names);
  SLUICE_RETURN_IF_ERROR(DecodeRecords(records, names, &decoder));
  return decoder.Finish();
}

// Copies `views` into a new kString tensor of `shape`.
Tensor StringTensor(const TensorShape& shape, std::span<const std::string_view> views) {
  Tensor t(DType::kString, shape);
  std::string* out = t.data<std::string>();
  for (size_t i = 0; i < views.size(); ++i) out[i].assign(views[i].data(), views[i].size());
  return t;
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

Status ExampleParser::ParseRecordViews(std::span<const std::string_view> records, std::span<const std::string> names,
                                       bool batched, ParsedFeatureViews* out) const {
  if (out->plan_ != plan_) out->plan_ = plan_;
  Status s;
  {
    internal::FeaturesDecoder decoder(plan_->features, static_cast<int64_t>(records.size()), batched, names,
                                      /*views=*/true, &out->pool_);
    s = internal::DecodeRecords(records, names, &decoder);
    if (s.ok()) s = decoder.FinishViews(&out->values_, &out->strings_);
  }
  if (!s.ok()) {
    out->values_.clear();
    out->strings_.clear();
    out->pool_.clear();
  }
  return s;
}

Status ExampleParser::ParseSingleViews(std::string_view serialized, ParsedFeatureViews* out) const {
  return ParseRecordViews(std::span<const std::string_view>(&serialized, 1), {}, false, out);
}

Status ExampleParser::ParseViews(std::span<const std::string_view> serialized, ParsedFeatureViews* out,
                                 std::span<const std::string> names) const {
  return ParseRecordViews(serialized, names, true, out);
}

Result<ParsedFeatureViews> ExampleParser::ParseSingleViews(std::string_view serialized) const {
  ParsedFeatureViews out;
  SLUICE_RETURN_IF_ERROR(ParseSingleViews(serialized, &out));
  return out;
}

Result<ParsedFeatureViews> ExampleParser::ParseViews(std::span<const std::string_view> serialized,
                                                     std::span<const std::string> names) const {
  ParsedFeatureViews out;
  SLUICE_RETURN_IF_ERROR(ParseViews(serialized, &out, names));
  return out;
}

const std::string& ParsedFeatureViews::name(size_t i) const { return plan_->features.outputs[i].name; }

int ParsedFeatureViews::Find(std::string_view name) const {
  for (size_t i = 0; i < values_.size(); ++i) {
    if (plan_->features.outputs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

ParsedFeatures ParsedFeatureViews::ToParsedFeatures() const {
  ParsedFeatures out;
  for (size_t i = 0; i < values_.size(); ++i) {
    FeatureValue v = values_[i];
    if (has_strings(i)) {
      Tensor t = internal::StringTensor(strings_shape(i), strings(i));
      if (auto* st = std::get_if<SparseTensor>(&v)) {
        st->values = std::move(t);
      } else if (auto* rt = std::get_if<RaggedTensor>(&v)) {
        rt->values = std::move(t);
      } else {
        v = std::move(t);
      }
    }
    out.emplace(name(i), std::move(v));
  }
  return out;
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
