// What examples/data_image_pipeline.cc and examples/distribute_image_pipeline.cc
// share: their common flags, the TFRecord files of synthetic images they
// generate, and the checked training loop. Plain functions, no state.
#ifndef SLUICE_EXAMPLES_COMMON_IMAGE_EXAMPLE_H_
#define SLUICE_EXAMPLES_COMMON_IMAGE_EXAMPLE_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flags.h"
#include "synthetic_images.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/data/dataset.h"
#include "sluice/image/codec.h"
#include "sluice/io/record_writer.h"

namespace sluice_examples {

struct ImageExampleFlags {
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

// Parses the common flags and the caller's `extra` integer flags (as
// ParseFlags). Returns false after printing "bad flag NAME VALUE".
inline bool ParseImageExampleFlags(int argc, char** argv, ImageExampleFlags* f, std::vector<IntFlag> extra = {}) {
  std::vector<IntFlag> ints = {{"--images", &f->images}, {"--files", &f->files},   {"--epochs", &f->epochs},
                               {"--threads", &f->threads}, {"--batch", &f->batch}, {"--size", &f->size},
                               {"--width", &f->width},   {"--height", &f->height}};
  ints.insert(ints.end(), extra.begin(), extra.end());
  return ParseFlags(argc, argv, ints, {{"--quiet", &f->quiet}});
}

// Writes image i to TFRecord file <dir>/train-<i % files>.tfrecord as
// Example {image, label, id}. Returns the file names.
inline sluice::Result<std::vector<std::string>> WriteImageRecords(const ImageExampleFlags& f,
                                                                  const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::vector<std::unique_ptr<sluice::io::RecordWriter>> writers;
  for (int64_t i = 0; i < f.files; ++i) {
    names.push_back((dir / ("train-" + std::to_string(i) + ".tfrecord")).string());
    sluice::Result<std::unique_ptr<sluice::io::RecordWriter>> w = sluice::io::RecordWriter::Open(names.back());
    if (!w.ok()) return w.status();
    writers.push_back(std::move(*w));
  }
  for (int64_t id = 0; id < f.images; ++id) {
    sluice::Result<std::string> jpeg = sluice::image::EncodeJpeg(MakeImage(id, f.height, f.width, f.classes),
                                                                 sluice::image::EncodeJpegOptions{});
    if (!jpeg.ok()) return jpeg.status();
    const std::string record = ExampleRecord(*jpeg, id, f.classes);
    if (sluice::Status s = writers[static_cast<size_t>(id % f.files)]->Write(record); !s.ok()) return s;
  }
  for (auto& w : writers) {
    if (sluice::Status s = w->Close(); !s.ok()) return s;
  }
  return names;
}

// Checks one batch {id, image, label} (the parsed features' sorted order):
// its shapes (the last batch may be smaller), then each row (CheckRows).
inline void CheckBatch(const sluice::Element& batch, const ImageExampleFlags& f, Tally* t) {
  const sluice::Tensor& ids = batch[0];
  const sluice::Tensor& images = batch[1];
  const sluice::Tensor& labels = batch[2];
  const int64_t n = ids.rank() == 1 ? ids.shape().dim(0) : -1;
  ++t->batches;
  if (n < 1 || n > f.batch || images.shape() != sluice::TensorShape({n, 3, f.size, f.size}) ||
      labels.shape() != sluice::TensorShape({n})) {
    ++t->bad_shapes;
    return;
  }
  CheckRows(ids, images, labels, n, f.size, f.images, f.classes, t);
}

// The "training loop": every batch of `it` to its end, each checked
// (CheckBatch). Returns the first error, OK at the end of the sequence.
inline sluice::Status TrainingLoop(sluice::data::IteratorBase& it, const ImageExampleFlags& f, Tally* t) {
  while (true) {
    sluice::Element batch;
    bool end = false;
    sluice::Status s = it.GetNext(&batch, &end);
    if (!s.ok() || end) return s;
    CheckBatch(batch, f, t);
  }
}

}  // namespace sluice_examples

#endif  // SLUICE_EXAMPLES_COMMON_IMAGE_EXAMPLE_H_
