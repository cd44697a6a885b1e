// libFuzzer entry point for sluice's tf.train.Example / SequenceExample
// wire-format parser (src/ops). Any input must give a value or an error
// Status: never a crash, a hang, an out-of-bounds read or a leak.
//
// The input is cut at "\n--\n" separators into records; the first byte picks
// what is run: a single Example, a batch of Examples, a SequenceExample
// (single or batch), or the zero-copy ExampleView. The feature spec asks for
// every kind of feature, with keys short enough that mutations hit them.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sluice/ops/example_view.h"
#include "sluice/ops/parse_example.h"
#include "sluice/ops/parse_sequence_example.h"

namespace {

using namespace sluice;       // NOLINT
using namespace sluice::ops;  // NOLINT

FeatureSpec ExampleSpec() {
  FeatureSpec spec;
  spec.emplace("a", FixedLenFeature({2}, DType::kFloat32, Tensor::FromVector<float>({0, 0})));
  spec.emplace("b", FixedLenFeature({}, DType::kString, Tensor::String("")));
  spec.emplace("c", FixedLenFeature({}, DType::kInt64, Tensor::Scalar<int64_t>(0)));
  spec.emplace("d", VarLenFeature(DType::kString));
  spec.emplace("e", VarLenFeature(DType::kFloat32));
  spec.emplace("f", FixedLenSequenceFeature({2}, DType::kInt64, true));
  spec.emplace("sp", SparseFeature({"i", "j"}, "v", DType::kFloat32, {8, 8}));
  spec.emplace("r", RaggedFeature(DType::kInt64, "rv",
                                  {RaggedPartition::RowLengths("rl"), RaggedPartition::UniformRowLength(2)}));
  spec.emplace("s", RaggedFeature(DType::kString, "rs", {RaggedPartition::RowSplits("rp")}, DType::kInt64));
  return spec;
}

FeatureSpec ContextSpec() {
  FeatureSpec spec;
  spec.emplace("a", FixedLenFeature({}, DType::kInt64, Tensor::Scalar<int64_t>(0)));
  spec.emplace("d", VarLenFeature(DType::kFloat32));
  spec.emplace("r", RaggedFeature(DType::kString));
  return spec;
}

FeatureSpec SequenceSpec() {
  FeatureSpec spec;
  spec.emplace("a", FixedLenSequenceFeature({2}, DType::kFloat32, true));
  spec.emplace("d", VarLenFeature(DType::kInt64));
  spec.emplace("r", RaggedFeature(DType::kInt64, "rv", {RaggedPartition::RowLimits("rl")}));
  spec.emplace("s", RaggedFeature(DType::kString));
  return spec;
}

std::vector<std::string_view> SplitRecords(std::string_view input) {
  std::vector<std::string_view> records;
  constexpr std::string_view kSep = "\n--\n";
  size_t start = 0;
  while (true) {
    const size_t pos = input.find(kSep, start);
    if (pos == std::string_view::npos) break;
    records.push_back(input.substr(start, pos - start));
    start = pos + kSep.size();
  }
  records.push_back(input.substr(start));
  return records;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ExampleParser* const example = new ExampleParser(*ExampleParser::Create(ExampleSpec()));
  static const SequenceExampleParser* const sequence =
      new SequenceExampleParser(*SequenceExampleParser::Create(ContextSpec(), SequenceSpec()));
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (mode % 5) {
    case 0:
      example->ParseSingle(input).status().IgnoreError();
      break;
    case 1:
      example->Parse(SplitRecords(input)).status().IgnoreError();
      break;
    case 2:
      sequence->ParseSingle(input).status().IgnoreError();
      break;
    case 3:
      sequence->Parse(SplitRecords(input)).status().IgnoreError();
      break;
    default: {
      Result<ExampleView> view = ExampleView::Parse(input);
      if (view.ok()) {
        for (const auto& [key, feature] : view->entries()) {
          std::vector<std::string_view> bytes;
          std::vector<float> floats;
          std::vector<int64_t> ints;
          feature.AppendBytes(&bytes).IgnoreError();
          feature.AppendFloats(&floats).IgnoreError();
          feature.AppendInt64s(&ints).IgnoreError();
          feature.NumValues().status().IgnoreError();
        }
      }
    }
  }
  return 0;
}
