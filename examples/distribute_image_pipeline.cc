// The image training input pipeline of data_image_pipeline.cc on several
// ranks (mpirun, srun or torchrun), every image read exactly once per epoch
// across the ranks:
//
//   ShardedRecordFiles(files, RECORD, seed)   this rank's records, globally
//     reshuffled each epoch -> Repeat(E)
//     -> Map(parse_example, T threads) -> Map(random resized crop + flip + normalise, T threads)
//     -> Batch(B) -> Prefetch(2) -> the "training loop"
//
// With --preprocess-ranks K (or SLUICE_ROLE=preprocess on some ranks, e.g.
// with mpirun's colon syntax), ranks 1..K run that pipeline over their share
// of the records and stream the batches to the other ranks (Serve /
// FromService: tf.data service's job), which only train.
//
//   mpirun -n 2 distribute_image_pipeline              2 training ranks
//   mpirun -n 4 distribute_image_pipeline --preprocess-ranks 3
//   distribute_image_pipeline                          one process
//
// Rank 0 generates the data (the images of image_pipeline.cc) into a
// temporary folder, removed at the end. Checks, over all training ranks:
// every image id arrived exactly E times with its label, every batch has the
// declared shapes, and every crop's red channel still has its class's
// colour. Rank 0 prints images/s (all trainers' images over the slowest
// trainer's time); exits non-zero on a failed check.
//
//   distribute_image_pipeline [--images N] [--files N] [--epochs N] [--threads N]
//                             [--batch N] [--size N] [--width N] [--height N]
//                             [--preprocess-ranks N] [--quiet]
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/flags.h"
#include "common/image_dataset.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/data/datasets.h"
#include "sluice/distribute/datasets.h"
#include "sluice/distribute/mpi.h"
#include "sluice/distribute/service.h"
#include "sluice/image/codec.h"
#include "sluice/io/record_writer.h"
#include "sluice/ops/example_builder.h"

namespace {

namespace data = sluice::data;
namespace dist = sluice::distribute;
namespace fs = std::filesystem;
namespace image = sluice::image;
namespace ops = sluice::ops;
using sluice::DType;
using sluice::Element;
using sluice::Result;
using sluice::Status;
using sluice::Tensor;
using sluice::TensorShape;

struct Flags {
  int64_t images = 256;
  int64_t files = 4;
  int64_t epochs = 2;
  int64_t threads = 2;
  int64_t batch = 32;
  int64_t size = 224;
  int64_t width = 500;
  int64_t height = 375;
  int64_t classes = 10;
  int64_t preprocess_ranks = 0;
  bool quiet = false;
};

// Parses "--name value" and "--name=value". Returns false on a bad flag.
bool ParseFlags(int argc, char** argv, Flags* f) {
  return sluice_examples::ParseFlags(argc, argv,
                                     {{"--images", &f->images},
                                      {"--files", &f->files},
                                      {"--epochs", &f->epochs},
                                      {"--threads", &f->threads},
                                      {"--batch", &f->batch},
                                      {"--size", &f->size},
                                      {"--width", &f->width},
                                      {"--height", &f->height},
                                      {"--preprocess-ranks", &f->preprocess_ranks}},
                                     {{"--quiet", &f->quiet}});
}

// ---- Data (as image_pipeline.cc) -------------------------------------------------

int RedOfClass(int64_t label) { return static_cast<int>(16 + 20 * label); }

uint32_t Hash(uint64_t x) {
  x = (x ^ (x >> 33)) * 0xFF51AFD7ED558CCDull;
  x = (x ^ (x >> 33)) * 0xC4CEB9FE1A85EC53ull;
  return static_cast<uint32_t>(x ^ (x >> 33));
}

// Image `id`: red = its class's level +- 4, green and blue textured.
Tensor MakeImage(int64_t id, const Flags& f) {
  Tensor t(DType::kUInt8, TensorShape({f.height, f.width, 3}));
  uint8_t* p = t.data<uint8_t>();
  const int red = RedOfClass(id % f.classes);
  const double phase = static_cast<double>(id % 97) * 0.37;
  for (int64_t y = 0; y < f.height; ++y) {
    for (int64_t x = 0; x < f.width; ++x) {
      const uint32_t h = Hash(static_cast<uint64_t>(id) * 1000003u + static_cast<uint64_t>(y * f.width + x));
      uint8_t* px = p + (y * f.width + x) * 3;
      px[0] = static_cast<uint8_t>(red + static_cast<int>(h % 9) - 4);
      const double g = 128 + 90 * std::sin(x * 0.031 + phase) * std::cos(y * 0.023 - phase);
      const double b = 128 + 90 * std::sin((x + y) * 0.017 + 2 * phase);
      px[1] = static_cast<uint8_t>(std::clamp(g + static_cast<int>((h >> 8) % 25) - 12, 0.0, 255.0));
      px[2] = static_cast<uint8_t>(std::clamp(b + static_cast<int>((h >> 16) % 25) - 12, 0.0, 255.0));
    }
  }
  return t;
}

// Writes image i to TFRecord file i % files as Example {image, label, id}.
Result<std::vector<std::string>> Generate(const Flags& f, const fs::path& dir) {
  std::vector<std::string> names;
  std::vector<std::unique_ptr<sluice::io::RecordWriter>> writers;
  for (int64_t i = 0; i < f.files; ++i) {
    names.push_back((dir / ("train-" + std::to_string(i) + ".tfrecord")).string());
    Result<std::unique_ptr<sluice::io::RecordWriter>> w = sluice::io::RecordWriter::Open(names.back());
    if (!w.ok()) return w.status();
    writers.push_back(std::move(*w));
  }
  for (int64_t id = 0; id < f.images; ++id) {
    Result<std::string> jpeg = image::EncodeJpeg(MakeImage(id, f), image::EncodeJpegOptions{});
    if (!jpeg.ok()) return jpeg.status();
    const std::string record = ops::ExampleBuilder()
                                   .AddBytes("image", {std::string_view(*jpeg)})
                                   .AddInt64s("label", {id % f.classes})
                                   .AddInt64s("id", {id})
                                   .Serialize();
    if (Status s = writers[static_cast<size_t>(id % f.files)]->Write(record); !s.ok()) return s;
  }
  for (auto& w : writers) {
    if (Status s = w->Close(); !s.ok()) return s;
  }
  return names;
}

// ---- The pipeline -------------------------------------------------------------------

// The pipeline over this input pipeline's share (`shard`: id and count of the
// ranks that run it; no communicator: the seed is given).
Result<data::DatasetPtr> Build(const Flags& f, const std::vector<std::string>& files, const dist::InputContext& shard) {
  dist::DistributeOptions sharding;
  sharding.policy = dist::ShardingPolicy::kRecord;
  sharding.seed = 87654321;
  sharding.uneven = dist::Uneven::kAllow;  // the check counts every image once per epoch
  SLUICE_ASSIGN_OR_RETURN(data::DatasetPtr ds, dist::ShardedRecordFiles(files, sharding, shard));
  SLUICE_ASSIGN_OR_RETURN(ds, data::Repeat(ds, f.epochs));
  return sluice_examples::ImageDataset(
      ds, {.size = f.size, .map = {.num_parallel_calls = f.threads}, .batch = f.batch, .prefetch = 2});
}

struct Tally {
  std::vector<int64_t> seen;  // per id
  int64_t images = 0, batches = 0, wrong_labels = 0, wrong_colours = 0, bad_shapes = 0;
};

// Checks one batch {id, image, label} (the parsed features' sorted order).
void Check(const Element& batch, const Flags& f, Tally* t) {
  const Tensor& ids = batch[0];
  const Tensor& images = batch[1];
  const Tensor& labels = batch[2];
  const int64_t n = ids.rank() == 1 ? ids.shape().dim(0) : -1;
  ++t->batches;
  if (n < 1 || n > f.batch || images.shape() != TensorShape({n, 3, f.size, f.size}) ||
      labels.shape() != TensorShape({n})) {
    ++t->bad_shapes;
    return;
  }
  const int64_t plane = f.size * f.size;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = ids.flat<int64_t>()[i];
    const int64_t label = labels.flat<int64_t>()[i];
    if (id < 0 || id >= f.images || label != id % f.classes) {
      ++t->wrong_labels;
      continue;
    }
    ++t->seen[static_cast<size_t>(id)];
    ++t->images;
    // The red channel of the normalised crop, back on the 0..255 scale (every 4th pixel).
    const float* red = images.data<float>() + i * 3 * plane;
    double sum = 0;
    int64_t count = 0;
    for (int64_t y = 0; y < f.size; y += 4) {
      for (int64_t x = 0; x < f.size; x += 4, ++count) sum += red[y * f.size + x];
    }
    const double level = (sum / static_cast<double>(count) * 0.229 + 0.485) * 255.0;
    if (std::abs(level - RedOfClass(label)) > 8) ++t->wrong_colours;
  }
}

// Every rank's role: --preprocess-ranks K makes ranks 1..K workers; else
// each rank's SLUICE_ROLE.
Result<std::vector<std::string>> Roles(const Flags& f, const dist::InputContext& ctx) {
  std::vector<std::string> roles(static_cast<size_t>(ctx.num_input_pipelines), "train");
  if (f.preprocess_ranks > 0) {
    if (f.preprocess_ranks >= ctx.num_input_pipelines) {
      return sluice::errors::InvalidArgument("--preprocess-ranks ", f.preprocess_ranks, " leaves no training rank of ",
                                             ctx.num_input_pipelines);
    }
    for (int64_t r = 1; r <= f.preprocess_ranks; ++r) roles[static_cast<size_t>(r)] = "preprocess";
    return roles;
  }
  if (!ctx.communicator) return roles;
  return ctx.communicator->Allgather(ctx.role);
}

// Rank 0's folder of generated files, known to every rank.
Result<std::vector<std::string>> SharedData(const Flags& f, const dist::InputContext& ctx, fs::path* dir) {
  std::string path;
  Status generated;
  if (ctx.input_pipeline_id == 0) {
    std::string tmpl = (fs::temp_directory_path() / "sluice_distribute_image_pipeline_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return sluice::errors::Internal("mkdtemp failed");
    path = tmpl;
    *dir = tmpl;
    generated = Generate(f, *dir).status();
  }
  if (ctx.communicator) {
    SLUICE_RETURN_IF_ERROR(ctx.communicator->Bcast(&path, 0));
    // Every rank learns whether rank 0 succeeded before reading its files.
    SLUICE_ASSIGN_OR_RETURN(int64_t failed, ctx.communicator->Allreduce(generated.ok() ? 0 : 1, dist::ReduceOp::kMax));
    if (failed) return generated.ok() ? sluice::errors::Aborted("rank 0 failed to generate the data") : generated;
  }
  SLUICE_RETURN_IF_ERROR(generated);
  std::vector<std::string> names;
  for (int64_t i = 0; i < f.files; ++i) names.push_back((fs::path(path) / ("train-" + std::to_string(i) + ".tfrecord")).string());
  return names;
}

// Sums `values` over the ranks (element-wise), as one Allgather.
Result<std::vector<int64_t>> SumOverRanks(const dist::InputContext& ctx, std::vector<int64_t> values) {
  if (!ctx.communicator) return values;
  const std::string mine(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> all, ctx.communicator->Allgather(mine));
  std::fill(values.begin(), values.end(), 0);
  for (const std::string& rank : all) {
    for (size_t i = 0; i < values.size() && (i + 1) * sizeof(int64_t) <= rank.size(); ++i) {
      int64_t v;
      std::memcpy(&v, rank.data() + i * sizeof(int64_t), sizeof v);
      values[i] += v;
    }
  }
  return values;
}

int Fail(const char* what, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  return 1;
}

int Run(const Flags& f) {
  Result<dist::InputContext> init = dist::InitMpi();
  if (!init.ok()) return Fail("init", init.status());
  const dist::InputContext& ctx = *init;
  const int rank = ctx.input_pipeline_id;
  Result<std::vector<std::string>> roles = Roles(f, ctx);
  if (!roles.ok()) return Fail("roles", roles.status());
  dist::ServiceOptions service = dist::ServiceOptionsFromRoles(*roles);
  if (!service.workers.empty() && !ctx.communicator) {
    return Fail("preprocessing ranks", sluice::errors::FailedPrecondition("they need MPI (launch with mpirun or srun)"));
  }
  fs::path dir;
  struct Cleanup {
    fs::path* dir;
    ~Cleanup() {
      std::error_code ignored;
      if (!dir->empty()) fs::remove_all(*dir, ignored);
    }
  } cleanup{&dir};
  Result<std::vector<std::string>> files = SharedData(f, ctx, &dir);
  if (!files.ok()) return Fail("generating the data", files.status());

  // The pipeline runs on the workers, or on every rank without workers.
  const bool with_service = !service.workers.empty();
  const std::vector<int>& runners = with_service ? service.workers : service.trainers;
  dist::InputContext shard;
  shard.num_input_pipelines = static_cast<int>(runners.size());
  shard.input_pipeline_id = static_cast<int>(std::find(runners.begin(), runners.end(), rank) - runners.begin());
  const bool runs_pipeline = shard.input_pipeline_id < shard.num_input_pipelines;
  const bool trains = (*roles)[static_cast<size_t>(rank)] == "train";
  Result<data::DatasetPtr> ds = Build(f, *files, runs_pipeline ? shard : dist::InputContext{});
  if (!ds.ok()) return Fail("building the pipeline", ds.status());
  if (with_service && !trains) {
    Status s = dist::Serve(*ds, ctx.communicator, service);
    if (!s.ok()) return Fail("serving", s);
  }
  if (with_service && trains) {
    ds = dist::FromService(ctx.communicator, service, (*ds)->element_spec());
    if (!ds.ok()) return Fail("reading the service", ds.status());
  }
  if (rank == 0 && !f.quiet) std::printf("element_spec: %s\n", (*ds)->element_spec().DebugString().c_str());

  Tally tally;
  tally.seen.assign(static_cast<size_t>(f.images), 0);
  const auto start = std::chrono::steady_clock::now();
  Status error;
  if (trains) {
    std::unique_ptr<data::IteratorBase> it = (*ds)->MakeIterator();
    while (true) {  // the training loop
      Element batch;
      bool end = false;
      error = it->GetNext(&batch, &end);
      if (!error.ok() || end) break;
      Check(batch, f, &tally);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Totals over the ranks: the counts per id, then the tallies and the slowest trainer's time.
  std::vector<int64_t> totals = tally.seen;
  totals.insert(totals.end(), {tally.images, tally.batches, tally.wrong_labels, tally.wrong_colours, tally.bad_shapes,
                               error.ok() ? 0 : 1, trains ? static_cast<int64_t>(seconds * 1e6) : 0});
  Result<std::vector<int64_t>> sum = SumOverRanks(ctx, totals);
  if (!sum.ok()) return Fail("gathering the checks", sum.status());
  Result<int64_t> slowest = ctx.communicator
                                ? ctx.communicator->Allreduce(trains ? static_cast<int64_t>(seconds * 1e6) : 0,
                                                             dist::ReduceOp::kMax)
                                : Result<int64_t>(static_cast<int64_t>(seconds * 1e6));
  if (!slowest.ok()) return Fail("gathering the times", slowest.status());
  if (!error.ok()) std::fprintf(stderr, "rank %d: %s\n", rank, error.ToString().c_str());
  const int64_t* t = sum->data() + f.images;
  const int64_t images = t[0], batches = t[1], wrong_labels = t[2], wrong_colours = t[3], bad_shapes = t[4],
                errors = t[5];
  int64_t wrong_counts = 0;
  for (int64_t i = 0; i < f.images; ++i) wrong_counts += (*sum)[static_cast<size_t>(i)] != f.epochs;
  const bool ok = errors == 0 && images == f.images * f.epochs && wrong_counts == 0 && wrong_labels == 0 &&
                  wrong_colours == 0 && bad_shapes == 0;
  if (rank != 0) return ok ? 0 : 1;
  const double wall = static_cast<double>(*slowest) / 1e6;
  std::printf("images/s: %.1f (%" PRId64 " images of %" PRId64 "x%" PRId64 " in %" PRId64 " batches, %" PRId64
              " epochs, %zu training and %zu preprocessing ranks, %" PRId64 " threads each, %.3f s)\n",
              static_cast<double>(images) / wall, images, f.size, f.size, batches, f.epochs,
              service.trainers.size(), service.workers.size(), f.threads, wall);
  if (ok) {
    std::printf("check: %" PRId64 " images (every id %" PRId64 " times), labels, shapes and colours: OK\n", images,
                f.epochs);
    return 0;
  }
  std::printf("check FAILED: %" PRId64 " rank(s) failed; %" PRId64 " images (want %" PRId64 "), %" PRId64
              " ids not seen %" PRId64 " times, %" PRId64 " wrong labels, %" PRId64 " wrong colours, %" PRId64
              " bad shapes\n",
              errors, images, f.images * f.epochs, wrong_counts, f.epochs, wrong_labels, wrong_colours, bad_shapes);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr,
                 "usage: %s [--images N] [--files N] [--epochs N] [--threads N] [--batch N] [--size N]\n"
                 "          [--width N] [--height N] [--preprocess-ranks N] [--quiet]\n",
                 argv[0]);
    return 2;
  }
  return Run(flags);
}
