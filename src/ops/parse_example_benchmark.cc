// Example parsing throughput on tests/data records: sluice's batch and
// single-record parsers and the zero-copy ExampleView, against libprotobuf's
// generated parser as the baseline (parse, then copy the values out, which
// is the least a tensor-producing parser has to do).
//
//   cmake -DSLUICE_BUILD_BENCHMARKS=ON ... && ninja parse_example_benchmark
//   ./src/ops/parse_example_benchmark --benchmark_filter=Mnist
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sluice/ops/decode_compressed.h"
#include "sluice/ops/decode_csv.h"
#include "sluice/ops/example_view.h"
#include "sluice/ops/parse_example.h"
#include "sluice/ops/parse_sequence_example.h"
#ifdef SLUICE_HAVE_PROTOBUF
#include "example.pb.h"
#endif

namespace sluice::ops {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// TFRecord payloads (no CRC checks), gunzipping ".gz" files.
std::vector<std::string> Records(const std::string& relative) {
  const std::string path = std::string(SLUICE_TESTDATA_DIR) + "/" + relative;
  std::string data = ReadFile(path);
  if (path.ends_with(".gz")) data = *DecompressString(data, "GZIP");
  std::vector<std::string> out;
  for (size_t pos = 0; pos + 12 <= data.size();) {
    uint64_t len;
    std::memcpy(&len, data.data() + pos, 8);
    out.push_back(data.substr(pos + 12, len));
    pos += 16 + len;
  }
  return out;
}

const std::vector<std::string>& Mnist() {
  static const auto* r = new std::vector<std::string>(Records("tfrecord/tfx_mnist/mnist.tfrecord"));
  return *r;
}
const std::vector<std::string>& NextPage() {
  static const auto* r = new std::vector<std::string>(Records("tfrecord/tfx_tfjs_next_page/data.tfrecord.gz"));
  return *r;
}
const std::vector<std::string>& Sequence() {
  static const auto* r =
      new std::vector<std::string>(Records("tfrecord/tfx_tfrecord_sequence/Split-eval/data_tfrecord_eval.gz"));
  return *r;
}

void SetCounters(benchmark::State& state, const std::vector<std::string>& recs) {
  int64_t bytes = 0;
  for (const std::string& r : recs) bytes += static_cast<int64_t>(r.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(recs.size()));
  state.SetBytesProcessed(state.iterations() * bytes);
}

FeatureSpec MnistSpec() {
  return {{"image_class", FixedLenFeature({}, DType::kInt64)},
          {"image_floats", FixedLenFeature({784}, DType::kFloat32)}};
}
FeatureSpec NextPageSpec() {
  return {{"cur_page", FixedLenFeature({}, DType::kString)},
          {"label", FixedLenFeature({}, DType::kString)},
          {"session_index", FixedLenFeature({}, DType::kInt64)}};
}

void BM_MnistSluiceBatch(benchmark::State& state) {
  const auto& recs = Mnist();
  const std::vector<std::string_view> views(recs.begin(), recs.end());
  const ExampleParser parser = *ExampleParser::Create(MnistSpec());
  for (auto _ : state) benchmark::DoNotOptimize(parser.Parse(views));
  SetCounters(state, recs);
}
BENCHMARK(BM_MnistSluiceBatch)->Unit(benchmark::kMillisecond);

void BM_MnistSluiceSingle(benchmark::State& state) {
  const auto& recs = Mnist();
  const ExampleParser parser = *ExampleParser::Create(MnistSpec());
  for (auto _ : state) {
    for (const std::string& r : recs) benchmark::DoNotOptimize(parser.ParseSingle(r));
  }
  SetCounters(state, recs);
}
BENCHMARK(BM_MnistSluiceSingle)->Unit(benchmark::kMillisecond);

void BM_MnistExampleView(benchmark::State& state) {
  const auto& recs = Mnist();
  std::vector<float> floats;
  for (auto _ : state) {
    for (const std::string& r : recs) {
      floats.clear();
      auto view = ExampleView::Parse(r);
      view->Find("image_floats")->AppendFloats(&floats).IgnoreError();
      benchmark::DoNotOptimize(floats.data());
    }
  }
  SetCounters(state, recs);
}
BENCHMARK(BM_MnistExampleView)->Unit(benchmark::kMillisecond);

void BM_NextPageSluiceBatch(benchmark::State& state) {
  const auto& recs = NextPage();
  const std::vector<std::string_view> views(recs.begin(), recs.end());
  const ExampleParser parser = *ExampleParser::Create(NextPageSpec());
  for (auto _ : state) benchmark::DoNotOptimize(parser.Parse(views));
  SetCounters(state, recs);
}
BENCHMARK(BM_NextPageSluiceBatch);

void BM_NextPageExampleView(benchmark::State& state) {
  const auto& recs = NextPage();
  std::vector<std::string_view> pages;
  for (auto _ : state) {
    for (const std::string& r : recs) {
      pages.clear();
      auto view = ExampleView::Parse(r);
      view->Find("cur_page")->AppendBytes(&pages).IgnoreError();
      view->Find("label")->AppendBytes(&pages).IgnoreError();
      benchmark::DoNotOptimize(pages.data());
    }
  }
  SetCounters(state, recs);
}
BENCHMARK(BM_NextPageExampleView);

void BM_SequenceSluiceBatch(benchmark::State& state) {
  const auto& recs = Sequence();
  const std::vector<std::string_view> views(recs.begin(), recs.end());
  const SequenceExampleParser parser = *SequenceExampleParser::Create(
      {{"i", VarLenFeature(DType::kInt64)}, {"f", VarLenFeature(DType::kFloat32)}},
      {{"s", RaggedFeature(DType::kString)}});
  for (auto _ : state) benchmark::DoNotOptimize(parser.Parse(views));
  SetCounters(state, recs);
}
BENCHMARK(BM_SequenceSluiceBatch)->Unit(benchmark::kMillisecond);

void BM_PenguinDecodeCSV(benchmark::State& state) {
  static const std::string text = ReadFile(std::string(SLUICE_TESTDATA_DIR) + "/csv/tfx/penguins_processed.csv");
  std::vector<std::string_view> lines;
  for (size_t start = text.find('\n') + 1; start < text.size();) {
    const size_t end = text.find('\n', start);
    lines.push_back(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  std::vector<Tensor> defaults = {Tensor(DType::kInt64, TensorShape{0})};
  for (int c = 0; c < 4; ++c) defaults.emplace_back(DType::kFloat32, TensorShape{0});
  for (auto _ : state) benchmark::DoNotOptimize(DecodeCSV(lines, defaults));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(lines.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_PenguinDecodeCSV);

#ifdef SLUICE_HAVE_PROTOBUF
namespace pb = ::sluice::example;

void BM_MnistProtobuf(benchmark::State& state) {
  const auto& recs = Mnist();
  pb::Example ex;
  std::vector<float> floats(784 * recs.size());
  std::vector<int64_t> labels(recs.size());
  for (auto _ : state) {
    for (size_t i = 0; i < recs.size(); ++i) {
      ex.ParseFromString(recs[i]);
      const auto& map = ex.features().feature();
      const auto& v = map.at("image_floats").float_list().value();
      std::copy(v.begin(), v.end(), floats.begin() + static_cast<ptrdiff_t>(784 * i));
      labels[i] = map.at("image_class").int64_list().value(0);
    }
    benchmark::DoNotOptimize(floats.data());
  }
  SetCounters(state, recs);
}
BENCHMARK(BM_MnistProtobuf)->Unit(benchmark::kMillisecond);

void BM_NextPageProtobuf(benchmark::State& state) {
  const auto& recs = NextPage();
  pb::Example ex;
  std::vector<std::string> cur(recs.size()), label(recs.size());
  std::vector<int64_t> session(recs.size());
  for (auto _ : state) {
    for (size_t i = 0; i < recs.size(); ++i) {
      ex.ParseFromString(recs[i]);
      const auto& map = ex.features().feature();
      cur[i] = map.at("cur_page").bytes_list().value(0);
      label[i] = map.at("label").bytes_list().value(0);
      session[i] = map.at("session_index").int64_list().value(0);
    }
    benchmark::DoNotOptimize(cur.data());
  }
  SetCounters(state, recs);
}
BENCHMARK(BM_NextPageProtobuf);
#endif

}  // namespace
}  // namespace sluice::ops

BENCHMARK_MAIN();
