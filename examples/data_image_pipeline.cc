// The ImageNet-style training input pipeline of image_pipeline.cc, with the
// Dataset API (sluice/data) instead of queues and runners:
//
//   TFRecordDataset(files, num_parallel_reads=T)   T files read at once
//     -> Shuffle(buffer) -> Repeat(E)
//     -> Map(parse_example, T threads) -> Map(random resized crop + flip + normalise, T threads)
//     -> Batch(B) -> Prefetch(2) -> this thread: the "training loop"
//
// The loop reads until the end of the sequence (the last epoch). Checks:
// every image id arrived exactly E times, each with its label (id %
// classes), every batch has the declared shapes (the last may be smaller),
// and every crop's red channel still has its class's colour (the images are
// coloured by class, so a label travelling with the wrong image is caught).
// Generated data (the same images as image_pipeline.cc) in a temporary
// folder, removed at the end. Prints images/s; exits non-zero on a failed
// check.
//
//   data_image_pipeline [--images N] [--files N] [--epochs N] [--threads N]
//                       [--batch N] [--size N] [--width N] [--height N] [--quiet]
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/image_dataset.h"
#include "common/image_example.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/data/datasets.h"

namespace {

namespace data = sluice::data;
namespace fs = std::filesystem;
using sluice_examples::ImageDataset;
using sluice_examples::Tally;
using sluice_examples::TrainingLoop;
using sluice_examples::WriteImageRecords;
using sluice::Element;
using sluice::Result;
using sluice::Status;

using Flags = sluice_examples::ImageExampleFlags;

// ---- The pipeline -------------------------------------------------------------------

Result<data::DatasetPtr> Build(const Flags& f, const std::vector<std::string>& files) {
  data::RecordDatasetOptions read;
  read.num_parallel_reads = f.files;  // every file at once
  SLUICE_ASSIGN_OR_RETURN(data::DatasetPtr ds, data::TFRecordDataset(files, read));
  SLUICE_ASSIGN_OR_RETURN(ds, data::Shuffle(ds, 4 * f.batch, /*seed=*/87654321, /*seed2=*/7));
  SLUICE_ASSIGN_OR_RETURN(ds, data::Repeat(ds, f.epochs));
  return ImageDataset(ds, {.size = f.size, .map = {.num_parallel_calls = f.threads}, .batch = f.batch, .prefetch = 2});
}

int Run(const Flags& f) {
  std::string tmpl = (fs::temp_directory_path() / "sluice_data_image_pipeline_XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{tmpl};
  Result<std::vector<std::string>> files = WriteImageRecords(f, cleanup.dir);
  if (!files.ok()) {
    std::fprintf(stderr, "generating the data failed: %s\n", files.status().ToString().c_str());
    return 1;
  }
  Result<data::DatasetPtr> ds = Build(f, *files);
  if (!ds.ok()) {
    std::fprintf(stderr, "building the pipeline failed: %s\n", ds.status().ToString().c_str());
    return 1;
  }
  if (!f.quiet) std::printf("element_spec: %s\n", (*ds)->element_spec().DebugString().c_str());

  Tally tally;
  tally.seen.assign(static_cast<size_t>(f.images), 0);
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<data::IteratorBase> it = (*ds)->MakeIterator();
  const Status error = TrainingLoop(*it, f, &tally);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  it.reset();

  int64_t wrong_counts = 0;
  for (int64_t n : tally.seen) wrong_counts += n != f.epochs;
  std::printf("images/s: %.1f (%" PRId64 " images of %" PRId64 "x%" PRId64 " in %" PRId64 " batches, %" PRId64
              " epochs, %" PRId64 " threads, %.3f s)\n",
              static_cast<double>(tally.images) / seconds, tally.images, f.size, f.size, tally.batches, f.epochs,
              f.threads, seconds);
  const bool ok = error.ok() && tally.images == f.images * f.epochs && wrong_counts == 0 &&
                  tally.wrong_labels == 0 && tally.wrong_colours == 0 && tally.bad_shapes == 0;
  if (ok) {
    std::printf("check: %" PRId64 " images (every id %" PRId64 " times), labels, shapes and colours: OK\n",
                tally.images, f.epochs);
    return 0;
  }
  std::printf("check FAILED: %s; %" PRId64 " images (want %" PRId64 "), %" PRId64 " ids not seen %" PRId64
              " times, %" PRId64 " wrong labels, %" PRId64 " wrong colours, %" PRId64 " bad shapes\n",
              error.ToString().c_str(), tally.images, f.images * f.epochs, wrong_counts, f.epochs,
              tally.wrong_labels, tally.wrong_colours, tally.bad_shapes);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!sluice_examples::ParseImageExampleFlags(argc, argv, &flags)) {
    std::fprintf(stderr,
                 "usage: %s [--images N] [--files N] [--epochs N] [--threads N] [--batch N] [--size N]\n"
                 "          [--width N] [--height N] [--quiet]\n",
                 argv[0]);
    return 2;
  }
  return Run(flags);
}
