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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/image_dataset.h"
#include "common/image_example.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/data/datasets.h"
#include "sluice/distribute/datasets.h"
#include "sluice/distribute/mpi.h"
#include "sluice/distribute/service.h"

namespace {

namespace data = sluice::data;
namespace dist = sluice::distribute;
namespace fs = std::filesystem;
using sluice_examples::Tally;
using sluice_examples::TrainingLoop;
using sluice_examples::WriteImageRecords;
using sluice::Element;
using sluice::Result;
using sluice::Status;

struct Flags : sluice_examples::ImageExampleFlags {
  int64_t preprocess_ranks = 0;
};

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
    generated = WriteImageRecords(f, *dir).status();
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
    error = TrainingLoop(*it, f, &tally);
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
  const bool parsed =
      sluice_examples::ParseImageExampleFlags(argc, argv, &flags, {{"--preprocess-ranks", &flags.preprocess_ranks}});
  if (!parsed) {
    std::fprintf(stderr,
                 "usage: %s [--images N] [--files N] [--epochs N] [--threads N] [--batch N] [--size N]\n"
                 "          [--width N] [--height N] [--preprocess-ranks N] [--quiet]\n",
                 argv[0]);
    return 2;
  }
  return Run(flags);
}
