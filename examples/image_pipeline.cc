// An ImageNet-style training input pipeline in the tf.train style, on
// generated data, with exact self-checks and a throughput figure:
//
//   TFRecord files of tf.train.Examples {image: JPEG bytes, label, id}
//     -> string_input_producer(files, num_epochs=E, shuffle)
//     -> T TFRecordReaders, one per runner thread
//     -> parse_single_example -> random resized crop + flip + normalise
//        (decode_and_crop of the sampled box only; pipeline/producer_ops.h)
//     -> shuffle_batch_join (T threads) -> this thread: the "training loop"
//
// The loop runs `while (!coord->should_stop())` and ends when the batch
// queue's OutOfRange arrives after the last epoch (TF's cascade), then stops
// and joins the Coordinator. Checks: every image id arrived exactly E times,
// each with its label (id % classes), every batch has the declared shapes,
// and every crop's red channel still has its class's colour (the images are
// coloured by class, so a label travelling with the wrong image is caught).
//
// Data: --images JPEGs of --width x --height (default 500x375, quality 90,
// textured so that they compress like photographs), written with
// EncodeJpeg + ExampleBuilder + RecordWriter into --files TFRecord files
// under --data-dir (default: a temporary folder, removed at the end).
// --write-jpegs also writes each JPEG to <data-dir>/jpeg/<label>/<id>.jpg
// (an ImageFolder tree, for bench/train_bench.py's DataLoader peer).
// --generate-only stops after writing. --measure-limit also times
// DecodeAndCropJpeg of the very boxes the pipeline samples, on this thread:
// the per-core limit of the pipeline's work, and the whole fused op
// (decode + resize + flip + normalise) the same way. --dct-scaling decodes large
// boxes at 1/2, 1/4 or 1/8 scale (RandomResizedCropOptions::dct_scaling:
// faster, and no longer equal to the separate ops; the limit then stays the
// full-scale one). --reuse keeps the files already in --data-dir (written
// by an earlier run with the same flags) instead of writing them again; the
// generator is deterministic, so the images are the same.
//
//   image_pipeline [--images N] [--files N] [--epochs N] [--threads N]
//                  [--batch N] [--size N] [--width N] [--height N]
//                  [--quality N] [--classes N] [--data-dir DIR]
//                  [--write-jpegs] [--generate-only] [--measure-limit]
//                  [--dct-scaling] [--reuse] [--quiet]
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/synthetic_images.h"
#include "sluice/core/element.h"
#include "sluice/core/status.h"
#include "sluice/core/tensor.h"
#include "sluice/image/codec.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/io/readers.h"
#include "sluice/io/record_writer.h"
#include "sluice/ops/feature_spec.h"
#include "sluice/ops/parse_example.h"
#include "sluice/pipeline/producer_ops.h"
#include "sluice/train/batchers.h"
#include "sluice/train/coordinator.h"
#include "sluice/train/input_producers.h"
#include "sluice/train/producer.h"
#include "sluice/train/queue_runner_registry.h"

namespace {

namespace fs = std::filesystem;
namespace image = sluice::image;
namespace ops = sluice::ops;
namespace train = sluice::train;
using sluice::DType;
using sluice_examples::CheckRows;
using sluice_examples::ExampleRecord;
using sluice_examples::MakeImage;
using sluice_examples::Tally;
using sluice::Element;
using sluice::Result;
using sluice::Status;
using sluice::Tensor;
using sluice::TensorShape;

struct Flags {
  int64_t images = 512;
  int64_t files = 4;
  int64_t epochs = 2;
  int64_t threads = 2;
  int64_t batch = 32;
  int64_t size = 224;
  int64_t width = 500;
  int64_t height = 375;
  int64_t quality = 90;
  int64_t classes = 10;
  std::string data_dir;
  bool write_jpegs = false;
  bool generate_only = false;
  bool measure_limit = false;
  bool dct_scaling = false;
  bool reuse = false;
  bool quiet = false;
};

void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--images N] [--files N] [--epochs N] [--threads N] [--batch N] [--size N]\n"
               "          [--width N] [--height N] [--quality N] [--classes N] [--data-dir DIR]\n"
               "          [--write-jpegs] [--generate-only] [--measure-limit] [--dct-scaling] [--reuse]\n"
               "          [--quiet]\n"
               "TFRecords of JPEGs -> readers -> parse -> random resized crop -> shuffle_batch_join.\n",
               argv0);
}

// Parses "--name=value" and "--name value". Returns false on a bad flag.
bool ParseFlags(int argc, char** argv, Flags* f) {
  struct Valued {
    std::string_view name;
    int64_t* value;
  };
  const Valued valued[] = {{"--images", &f->images},   {"--files", &f->files},     {"--epochs", &f->epochs},
                           {"--threads", &f->threads}, {"--batch", &f->batch},     {"--size", &f->size},
                           {"--width", &f->width},     {"--height", &f->height},   {"--quality", &f->quality},
                           {"--classes", &f->classes}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return false;
    if (arg == "--write-jpegs") { f->write_jpegs = true; continue; }
    if (arg == "--generate-only") { f->generate_only = true; continue; }
    if (arg == "--measure-limit") { f->measure_limit = true; continue; }
    if (arg == "--dct-scaling") { f->dct_scaling = true; continue; }
    if (arg == "--reuse") { f->reuse = true; continue; }
    if (arg == "--quiet") { f->quiet = true; continue; }
    std::string value;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "%s needs a value\n", arg.c_str());
      return false;
    }
    if (arg == "--data-dir") {
      f->data_dir = value;
      continue;
    }
    const auto it = std::find_if(std::begin(valued), std::end(valued), [&](const Valued& v) { return v.name == arg; });
    if (it == std::end(valued)) {
      std::fprintf(stderr, "unknown flag %s\n", arg.c_str());
      return false;
    }
    char* end = nullptr;
    const long long n = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1) {
      std::fprintf(stderr, "%s: want a positive integer, got '%s'\n", arg.c_str(), value.c_str());
      return false;
    }
    *it->value = n;
  }
  if (f->quality > 100 || f->classes > 12) {
    std::fprintf(stderr, "--quality must be <= 100 and --classes <= 12\n");
    return false;
  }
  return true;
}

// ---- Data ---------------------------------------------------------------------

Status WriteFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return out ? Status() : Status(sluice::Code::kInternal, "cannot write " + path.string());
}

// Writes the TFRecord files (image i goes to file i % files) and, with
// --write-jpegs, the ImageFolder tree. Returns the file names; fills
// *jpegs with every encoded image (for --measure-limit).
// With `write` false only the names and *jpegs are made (--reuse).
Result<std::vector<std::string>> Generate(const Flags& f, const fs::path& dir, bool write,
                                          std::vector<std::string>* jpegs) {
  image::EncodeJpegOptions enc;
  enc.quality = static_cast<int>(f.quality);
  std::vector<std::string> names;
  std::vector<std::unique_ptr<sluice::io::RecordWriter>> writers;
  for (int64_t i = 0; i < f.files; ++i) {
    char name[64];
    std::snprintf(name, sizeof(name), "train-%05" PRId64 "-of-%05" PRId64 ".tfrecord", i, f.files);
    names.push_back((dir / name).string());
    if (!write) continue;
    Result<std::unique_ptr<sluice::io::RecordWriter>> w = sluice::io::RecordWriter::Open(names.back());
    if (!w.ok()) return w.status();
    writers.push_back(std::move(*w));
  }
  for (int64_t id = 0; id < f.images && (write || f.measure_limit); ++id) {
    Result<std::string> jpeg = image::EncodeJpeg(MakeImage(id, f.height, f.width, f.classes), enc);
    if (!jpeg.ok()) return jpeg.status();
    const int64_t label = id % f.classes;
    const std::string record = ExampleRecord(*jpeg, id, f.classes);
    if (!write) {
      jpegs->push_back(std::move(*jpeg));
      continue;
    }
    if (Status s = writers[static_cast<size_t>(id % f.files)]->Write(record); !s.ok()) return s;
    if (f.write_jpegs) {
      const fs::path class_dir = dir / "jpeg" / std::to_string(label);
      fs::create_directories(class_dir);
      if (Status s = WriteFile(class_dir / (std::to_string(id) + ".jpg"), *jpeg); !s.ok()) return s;
    }
    jpegs->push_back(std::move(*jpeg));
  }
  for (auto& w : writers) {
    if (Status s = w->Close(); !s.ok()) return s;
  }
  return names;
}

// ---- The pipeline ---------------------------------------------------------------

image::RandomResizedCropOptions CropOptions(const Flags& f) {
  image::RandomResizedCropOptions o;  // torchvision's RandomResizedCrop + flip + ImageNet Normalize, CHW
  o.height = f.size;
  o.width = f.size;
  o.dct_scaling = f.dct_scaling;
  return o;
}

// Checks one batch {id, image, label} (the parsed features' sorted order).
void Check(const Element& batch, const Flags& f, Tally* t) {
  const Tensor& ids = batch[0];
  const Tensor& images = batch[1];
  const Tensor& labels = batch[2];
  ++t->batches;
  if (images.shape() != TensorShape({f.batch, 3, f.size, f.size}) || ids.shape() != TensorShape({f.batch}) ||
      labels.shape() != TensorShape({f.batch})) {
    ++t->bad_shapes;
    return;
  }
  CheckRows(ids, images, labels, f.batch, f.size, f.images, f.classes, t);
}

// Images/s of one thread over the boxes the fused op samples (the same seeds
// as the first calls of the pipeline's first chain): DecodeAndCropJpeg alone
// (`fused` false: the decode limit), or the whole DecodeRandomResizedCropInto
// (decode + resize + flip + normalise: the op limit).
double MeasureLimit(const std::vector<std::string>& jpegs, const Flags& f, bool fused) {
  const image::RandomResizedCropOptions o = CropOptions(f);
  std::vector<image::CropWindow> boxes;
  for (size_t i = 0; i < jpegs.size(); ++i) {
    Result<image::RandomResizedCropParams> p =
        image::SampleRandomResizedCrop(f.height, f.width, o, train::SeedStream::SeedFor(1, i));
    boxes.push_back(p.ok() ? p->window : image::CropWindow{0, 0, f.height, f.width});
  }
  Result<TensorShape> shape = image::RandomResizedCropShape(o);
  if (!shape.ok()) return 0;
  const Tensor out(DType::kFloat32, *shape);
  int64_t n = 0;
  const auto start = std::chrono::steady_clock::now();
  double seconds = 0;
  while (seconds < 1.0 || n < static_cast<int64_t>(jpegs.size())) {
    const size_t i = static_cast<size_t>(n % static_cast<int64_t>(jpegs.size()));
    const bool ok = fused ? image::DecodeRandomResizedCropInto(jpegs[i], o, train::SeedStream::SeedFor(1, i), out).ok()
                          : image::DecodeAndCropJpeg(jpegs[i], boxes[i]).ok();
    if (!ok) return 0;
    ++n;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return static_cast<double>(n) / seconds;
}

struct Pipeline {
  train::BatchQueue batches;
};

Result<Pipeline> Build(const Flags& f, const std::vector<std::string>& files, train::QueueRunnerRegistry* registry) {
  train::ProducerOptions fo;
  fo.num_epochs = f.epochs;
  fo.shuffle = true;
  fo.seed = 7;
  fo.registry = registry;
  fo.name = "filenames";
  Result<train::ProducerQueue> filenames = train::StringInputProducer(files, fo);
  if (!filenames.ok()) return filenames.status();

  ops::FeatureSpec spec;
  spec["image"] = ops::FixedLenFeature(TensorShape({}), DType::kString);
  spec["label"] = ops::FixedLenFeature(TensorShape({}), DType::kInt64);
  spec["id"] = ops::FixedLenFeature(TensorShape({}), DType::kInt64);
  Result<ops::ExampleParser> parser = ops::ExampleParser::Create(spec);
  if (!parser.ok()) return parser.status();

  std::vector<train::Producer> producers;
  train::TypedProducer last;
  for (int64_t t = 0; t < f.threads; ++t) {  // one reader per thread: reads run in parallel
    Result<std::unique_ptr<sluice::io::ReaderBase>> reader = sluice::io::NewTFRecordReader();
    if (!reader.ok()) return reader.status();
    train::TypedProducer read{train::ReaderProducer(std::move(*reader), filenames->queue),
                              {DType::kString, DType::kString},
                              {sluice::PartialShape(TensorShape({})), sluice::PartialShape(TensorShape({}))},
                              {"key", "value"}};
    Result<train::TypedProducer> parsed = train::MapParseExample(std::move(read), *parser, 1);  // {id, image, label}
    if (!parsed.ok()) return parsed.status();
    // One seed per chain (the same seed would give every thread the same crops).
    Result<train::TypedProducer> crops =
        train::MapRandomResizedCrop(std::move(*parsed), 1, CropOptions(f), static_cast<uint64_t>(t + 1));
    if (!crops.ok()) return crops.status();
    producers.push_back(crops->producer);
    last = std::move(*crops);
  }
  train::ShuffleBatchOptions bo;
  bo.batch_size = f.batch;
  bo.capacity = static_cast<int32_t>(f.batch * 4 + 64);
  bo.min_after_dequeue = static_cast<int32_t>(f.batch * 2);
  bo.seed = 3;
  bo.dtypes = last.dtypes;
  bo.shapes = last.shapes;
  bo.names = last.names;
  bo.registry = registry;
  bo.name = "images";
  Result<train::BatchQueue> batches = train::ShuffleBatchJoin(std::move(producers), bo);
  if (!batches.ok()) return batches.status();
  return Pipeline{std::move(*batches)};
}

int Run(const Flags& f) {
  fs::path dir = f.data_dir;
  const bool temporary = dir.empty();
  if (temporary) {
    std::string tmpl = (fs::temp_directory_path() / "sluice_image_pipeline_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    dir = tmpl;
  }
  fs::create_directories(dir);
  struct Cleanup {
    fs::path dir;
    bool active;
    ~Cleanup() {
      std::error_code ignored;
      if (active) fs::remove_all(dir, ignored);
    }
  } cleanup{dir, temporary};

  std::vector<std::string> jpegs;
  const auto gen_start = std::chrono::steady_clock::now();
  bool write = true;
  if (f.reuse && !temporary) {
    char name[64];
    std::snprintf(name, sizeof(name), "train-%05" PRId64 "-of-%05" PRId64 ".tfrecord", f.files - 1, f.files);
    write = !fs::exists(dir / name) || (f.write_jpegs && !fs::exists(dir / "jpeg"));
  }
  Result<std::vector<std::string>> files = Generate(f, dir, write, &jpegs);
  if (!files.ok()) {
    std::fprintf(stderr, "generating the data failed: %s\n", files.status().ToString().c_str());
    return 1;
  }
  size_t bytes = 0;
  for (const std::string& j : jpegs) bytes += j.size();
  if (!f.quiet && write) {
    std::printf("data: %" PRId64 " JPEGs of %" PRId64 "x%" PRId64 " (q%" PRId64 ", mean %.0f KB) in %" PRId64
                " TFRecord files under %s (%.1f s)\n",
                f.images, f.width, f.height, f.quality, static_cast<double>(bytes) / 1024.0 / f.images, f.files,
                dir.string().c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - gen_start).count());
  }
  if (f.generate_only) return 0;
  if (f.measure_limit) {
    std::printf("decode_and_crop limit: %.1f images/s on one thread\n", MeasureLimit(jpegs, f, false));
    std::printf("fused op limit: %.1f images/s on one thread\n", MeasureLimit(jpegs, f, true));
  }

  train::QueueRunnerRegistry registry;
  Result<Pipeline> pipeline = Build(f, *files, &registry);
  if (!pipeline.ok()) {
    std::fprintf(stderr, "building the pipeline failed: %s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  const train::BatchQueue& batches = pipeline->batches;

  auto coord = std::make_shared<train::Coordinator>();
  Tally tally;
  tally.seen.assign(static_cast<size_t>(f.images), 0);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<train::Thread>> threads = train::StartQueueRunners(coord, true, &registry);
  Status end;
  while (!coord->should_stop()) {  // the training loop
    Result<Element> batch = batches.Dequeue();
    if (!batch.ok()) {
      end = batch.status();  // OutOfRange after the last epoch
      break;
    }
    Check(*batch, f, &tally);
  }
  coord->RequestStop(end).IgnoreError();
  const Status joined = coord->Join(threads, std::chrono::seconds(30));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Without allow_smaller_final_batch the last (images * epochs) % batch
  // examples are dropped, as TF drops them.
  const int64_t expected = (f.images * f.epochs) / f.batch * f.batch;
  int64_t missing = 0, over = 0;
  for (int64_t n : tally.seen) {
    if (n < f.epochs) missing += f.epochs - n;
    if (n > f.epochs) over += n - f.epochs;
  }
  std::printf("images/s: %.1f (%" PRId64 " images of %" PRId64 "x%" PRId64 " in %" PRId64 " batches, %" PRId64
              " epochs, %" PRId64 " threads, %.3f s)\n",
              static_cast<double>(tally.images) / seconds, tally.images, f.size, f.size, tally.batches, f.epochs,
              f.threads, seconds);
  if (!f.quiet) {
    std::printf("end of input: %s; coordinator join: %s\n", end.ToString().c_str(), joined.ToString().c_str());
  }
  const bool ok = joined.ok() && sluice::errors::IsOutOfRange(end) && tally.images == expected &&
                  missing == f.images * f.epochs - expected && over == 0 && tally.wrong_labels == 0 &&
                  tally.wrong_colours == 0 && tally.bad_shapes == 0;
  if (ok) {
    std::printf("check: %" PRId64 " images (every id %" PRId64 " times but the %" PRId64
                " of the dropped final partial batch), labels, shapes and colours: OK\n",
                tally.images, f.epochs, f.images * f.epochs - expected);
    return 0;
  }
  std::printf("check FAILED: %" PRId64 " images (want %" PRId64 "), %" PRId64 " missing, %" PRId64
              " extra, %" PRId64 " wrong labels, %" PRId64 " wrong colours, %" PRId64 " bad shapes\n",
              tally.images, expected, missing, over, tally.wrong_labels, tally.wrong_colours, tally.bad_shapes);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    Usage(argv[0]);
    return 2;
  }
  return Run(flags);
}
