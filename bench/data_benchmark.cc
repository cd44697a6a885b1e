// sluice::data's per-element costs (bench/run.sh data; bench/report_data.py
// turns the JSON into "ratio ..." lines):
//
//   data/source                  Range(0, n) iterated alone: the limit a
//                                chain of maps is measured against
//   data/identity_maps/<k>       the same Range -> k Map(identity) stages
//                                (sequential: num_parallel_calls unset);
//                                per stage = (chain - source) / k
//   data/parallel_map/<t>        a CPU-bound native map (a fixed integer loop
//                                per element) with num_parallel_calls = t;
//                                real time, so 2 threads can show 2x
//   data/batch_uint8/<m>/<b>     FromTensors(uint8 [224, 224, 3]) ->
//                                Repeat -> Batch(b), per batch: what
//                                bench/py_data_image_bench.py's `batch64`
//                                measures from Python over the same pipeline.
//                                m = hold: the caller keeps each batch until
//                                the next is made (a Python for loop); drop:
//                                it lets GetNext free it first, so the batch
//                                is built in the same, cache-warm block
//
// items_per_second counts elements (batches for data/batch_uint8).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "sluice/core/tensor.h"
#include "sluice/data/dataset.h"
#include "sluice/data/datasets.h"

namespace {

namespace sd = sluice::data;

constexpr int64_t kElements = 1 << 20;
constexpr int64_t kParallelElements = 4096;
constexpr int64_t kBatches = 64;
// Iterations of the parallel map's loop: tens of microseconds per element,
// so that the hand-off between threads is a small part of the work.
constexpr uint64_t kSpinIterations = 20000;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "data_benchmark: %s\n", what.c_str());
  std::exit(1);
}

sd::DatasetPtr Check(sluice::Result<sd::DatasetPtr> made) {
  if (!made.ok()) Die(made.status().ToString());
  return *std::move(made);
}

// Iterates `ds` to the end; the number of elements. With `hold`, each
// element stays alive until the next one has been made, as a Python
// `for x in dataset` loop keeps it; without, GetNext may free it first.
int64_t Drain(const sd::DatasetPtr& ds, bool hold = false) {
  std::unique_ptr<sd::IteratorBase> it = ds->MakeIterator();
  sluice::Element e;
  sluice::Element held;
  bool end = false;
  int64_t n = 0;
  for (;;) {
    sluice::Status s = it->GetNext(&e, &end);
    if (!s.ok()) Die("GetNext: " + s.ToString());
    if (end) return n;
    benchmark::DoNotOptimize(e[0].raw_data());
    if (hold) held = std::move(e);
    ++n;
  }
}

void BM_Source(benchmark::State& state) {
  sd::DatasetPtr ds = Check(sd::Range(0, kElements));
  for (auto _ : state) benchmark::DoNotOptimize(Drain(ds));
  state.SetItemsProcessed(state.iterations() * kElements);
}

void BM_IdentityMaps(benchmark::State& state) {
  sd::DatasetPtr ds = Check(sd::Range(0, kElements));
  for (int64_t k = 0; k < state.range(0); ++k) {
    const sd::ElementSpec spec = ds->element_spec();
    ds = Check(sd::Map(ds, [](sluice::Element e) -> sluice::Result<sluice::Element> { return e; }, spec));
  }
  for (auto _ : state) benchmark::DoNotOptimize(Drain(ds));
  state.SetItemsProcessed(state.iterations() * kElements);
}

// A fixed amount of integer work that the compiler cannot fold away.
uint64_t Spin(uint64_t x) {
  for (uint64_t i = 0; i < kSpinIterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    benchmark::DoNotOptimize(x);
  }
  return x;
}

void BM_ParallelMap(benchmark::State& state) {
  sd::MapOptions options;
  options.num_parallel_calls = state.range(0);
  sd::DatasetPtr source = Check(sd::Range(0, kParallelElements));
  sd::DatasetPtr ds = Check(sd::Map(
      source,
      [](sluice::Element e) -> sluice::Result<sluice::Element> {
        int64_t* v = static_cast<int64_t*>(e[0].raw_data());
        *v = static_cast<int64_t>(Spin(static_cast<uint64_t>(*v) + 1));
        return e;
      },
      source->element_spec(), options));
  for (auto _ : state) benchmark::DoNotOptimize(Drain(ds));
  state.SetItemsProcessed(state.iterations() * kParallelElements);
}

void BM_BatchUint8(benchmark::State& state, bool hold) {
  const int64_t batch = state.range(0);
  sluice::Tensor image = sluice::Tensor::Zeros(sluice::DType::kUInt8, sluice::TensorShape{224, 224, 3});
  std::memset(image.raw_data(), 7, image.TotalBytes());
  sd::DatasetPtr ds = Check(sd::FromTensors(sluice::Element{image}));
  ds = Check(sd::Batch(Check(sd::Repeat(ds, batch * kBatches)), batch));
  for (auto _ : state) {
    if (Drain(ds, hold) != kBatches) Die("batch_uint8: wrong number of batches");
  }
  state.SetItemsProcessed(state.iterations() * kBatches);
}

}  // namespace

BENCHMARK(BM_Source)->Name("data/source")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IdentityMaps)->Name("data/identity_maps")->Arg(5)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParallelMap)->Name("data/parallel_map")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_BatchUint8, drop, false)->Name("data/batch_uint8/drop")->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BatchUint8, hold, true)->Name("data/batch_uint8/hold")->Arg(64)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
