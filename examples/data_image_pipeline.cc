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

#include "common/flags.h"
#include "common/image_dataset.h"
#include "common/synthetic_images.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/data/datasets.h"
#include "sluice/image/codec.h"
#include "sluice/io/record_writer.h"

namespace {

namespace data = sluice::data;
namespace fs = std::filesystem;
namespace image = sluice::image;
using sluice_examples::CheckRows;
using sluice_examples::ExampleRecord;
using sluice_examples::ImageDataset;
using sluice_examples::MakeImage;
using sluice_examples::Tally;
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
                                      {"--height", &f->height}},
                                     {{"--quiet", &f->quiet}});
}

// ---- Data (as image_pipeline.cc: common/synthetic_images.h) ----------------------

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
    Result<std::string> jpeg =
        image::EncodeJpeg(MakeImage(id, f.height, f.width, f.classes), image::EncodeJpegOptions{});
    if (!jpeg.ok()) return jpeg.status();
    const std::string record = ExampleRecord(*jpeg, id, f.classes);
    if (Status s = writers[static_cast<size_t>(id % f.files)]->Write(record); !s.ok()) return s;
  }
  for (auto& w : writers) {
    if (Status s = w->Close(); !s.ok()) return s;
  }
  return names;
}

// ---- The pipeline -------------------------------------------------------------------

Result<data::DatasetPtr> Build(const Flags& f, const std::vector<std::string>& files) {
  data::RecordDatasetOptions read;
  read.num_parallel_reads = f.files;  // every file at once
  SLUICE_ASSIGN_OR_RETURN(data::DatasetPtr ds, data::TFRecordDataset(files, read));
  SLUICE_ASSIGN_OR_RETURN(ds, data::Shuffle(ds, 4 * f.batch, /*seed=*/87654321, /*seed2=*/7));
  SLUICE_ASSIGN_OR_RETURN(ds, data::Repeat(ds, f.epochs));
  return ImageDataset(ds, {.size = f.size, .map = {.num_parallel_calls = f.threads}, .batch = f.batch, .prefetch = 2});
}

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
  CheckRows(ids, images, labels, n, f.size, f.images, f.classes, t);
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
  Result<std::vector<std::string>> files = Generate(f, cleanup.dir);
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
  Status error;
  while (true) {  // the training loop
    Element batch;
    bool end = false;
    error = it->GetNext(&batch, &end);
    if (!error.ok() || end) break;
    Check(batch, f, &tally);
  }
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
  if (!ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr,
                 "usage: %s [--images N] [--files N] [--epochs N] [--threads N] [--batch N] [--size N]\n"
                 "          [--width N] [--height N] [--quiet]\n",
                 argv[0]);
    return 2;
  }
  return Run(flags);
}
