// Checkpoint size and save/restore time of the image pipeline
//
//   TFRecordDataset(files) -> Shuffle(buffer) -> Map(parse_example)
//     -> Map(fused decode + random resized crop) -> Batch(batch)
//
// after `steps` batches (the shuffle buffer full). A buffered element is a
// record the reader read, so the checkpoint holds (file, record, offset) per
// element and restore re-reads the records. Each repetition saves the
// iterator (time, bytes), restores into an iterator of a newly built
// pipeline and takes the next batch (time of both), and checks that batch
// against the saved iterator's next one. Prints one JSON line.
//
//   checkpoint_benchmark --generate --data-dir D [--records 12000] [--files 8] [--images 64]
//       writes Example records {image: JPEG 500x375 q90, label, id} (the
//       JPEGs of --images distinct images, reused) and exits
//   checkpoint_benchmark --data-dir D [--buffer 10000] [--batch 64] [--steps 40] [--reps 3]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/image_dataset.h"
#include "sluice/data/checkpoint.h"
#include "sluice/data/datasets.h"
#include "sluice/image/codec.h"
#include "sluice/io/record_writer.h"
#include "sluice/ops/example_builder.h"

namespace {

namespace data = sluice::data;
namespace fs = std::filesystem;
using sluice::DType;
using sluice::Element;
using sluice::Result;
using sluice::Status;
using sluice::Tensor;
using sluice::TensorShape;

struct Flags {
  std::string data_dir;
  bool generate = false;
  int64_t records = 12000, files = 8, images = 64;
  int64_t buffer = 10000, batch = 64, steps = 40, reps = 3;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--generate") {
      f->generate = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (arg == "--data-dir") {
      f->data_dir = value;
      continue;
    }
    int64_t* target = arg == "--records" ? &f->records
                      : arg == "--files"  ? &f->files
                      : arg == "--images" ? &f->images
                      : arg == "--buffer" ? &f->buffer
                      : arg == "--batch"  ? &f->batch
                      : arg == "--steps"  ? &f->steps
                      : arg == "--reps"   ? &f->reps
                                          : nullptr;
    if (target == nullptr) return false;
    *target = std::atoll(value.c_str());
    if (*target < 1) return false;
  }
  return !f->data_dir.empty();
}

std::vector<std::string> FileNames(const Flags& f) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < f.files; ++i) names.push_back(f.data_dir + "/ckpt-" + std::to_string(i) + ".tfrecord");
  return names;
}

// A textured, noisy 500x375 image, different per id (its JPEG at q90 is
// about 100 KB, as an ImageNet image).
Tensor MakeImage(int64_t id) {
  const int64_t h = 375, w = 500;
  Tensor t(DType::kUInt8, TensorShape({h, w, 3}));
  uint8_t* p = t.data<uint8_t>();
  uint64_t state = static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      uint8_t* px = p + (y * w + x) * 3;
      px[0] = static_cast<uint8_t>(16 + 20 * (id % 10) + static_cast<int>((state >> 33) % 9));
      const double noise_g = static_cast<double>((state >> 45) % 61) - 30;
      const double noise_b = static_cast<double>((state >> 53) % 61) - 30;
      const double g = 128 + 90 * std::sin(x * 0.031 + id) * std::cos(y * 0.023) + noise_g;
      const double b = 128 + 90 * std::sin((x + y) * 0.017 + id) + noise_b;
      px[1] = static_cast<uint8_t>(std::clamp(g, 0.0, 255.0));
      px[2] = static_cast<uint8_t>(std::clamp(b, 0.0, 255.0));
    }
  }
  return t;
}

Status Generate(const Flags& f) {
  fs::create_directories(f.data_dir);
  std::vector<std::string> jpegs;
  for (int64_t i = 0; i < f.images; ++i) {
    sluice::image::EncodeJpegOptions options;
    options.quality = 90;
    SLUICE_ASSIGN_OR_RETURN(std::string jpeg, sluice::image::EncodeJpeg(MakeImage(i), options));
    jpegs.push_back(std::move(jpeg));
  }
  std::vector<std::unique_ptr<sluice::io::RecordWriter>> writers;
  for (const std::string& name : FileNames(f)) {
    SLUICE_ASSIGN_OR_RETURN(auto w, sluice::io::RecordWriter::Open(name));
    writers.push_back(std::move(w));
  }
  for (int64_t id = 0; id < f.records; ++id) {
    const std::string record = sluice::ops::ExampleBuilder()
                                   .AddBytes("image", {std::string_view(jpegs[static_cast<size_t>(id % f.images)])})
                                   .AddInt64s("label", {id % 10})
                                   .AddInt64s("id", {id})
                                   .Serialize();
    SLUICE_RETURN_IF_ERROR(writers[static_cast<size_t>(id % f.files)]->Write(record));
  }
  for (auto& w : writers) SLUICE_RETURN_IF_ERROR(w->Close());
  return Status();
}

// The pipeline; `batched` false leaves out the Batch (where it cannot be
// saved yet the loop below batches by hand).
Result<data::DatasetPtr> Build(const Flags& f, bool batched) {
  SLUICE_ASSIGN_OR_RETURN(data::DatasetPtr ds, data::TFRecordDataset(FileNames(f)));
  SLUICE_ASSIGN_OR_RETURN(ds, data::Shuffle(ds, f.buffer, /*seed=*/87654321, /*seed2=*/7));
  sluice_examples::ImageDatasetOptions options;  // 224x224 crops, sequential maps
  options.batch = batched ? f.batch : 0;
  return sluice_examples::ImageDataset(ds, options);
}

// The ids of the next batch (one Batch element, or `batch` elements).
Result<std::vector<int64_t>> NextIds(data::IteratorBase& it, const Flags& f, bool batched) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < (batched ? 1 : f.batch); ++i) {
    Element e;
    bool end = false;
    SLUICE_RETURN_IF_ERROR(it.GetNext(&e, &end));
    if (end) return Status(sluice::Code::kOutOfRange, "the pipeline ended early; generate more --records");
    for (int64_t id : e[0].flat<int64_t>()) ids.push_back(id);
  }
  return ids;
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "checkpoint_benchmark: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, &f)) {
    std::fprintf(stderr, "usage: checkpoint_benchmark [--generate] --data-dir D [--records N] [--files N] "
                         "[--images N] [--buffer N] [--batch N] [--steps N] [--reps N]\n");
    return 2;
  }
  if (f.generate) {
    Status s = Generate(f);
    return s.ok() ? 0 : Fail(s);
  }
  // Batch saves once its iterator implements Save; until then the loop batches.
  bool batched = true;
  {
    Result<data::DatasetPtr> ds = Build(f, true);
    if (!ds.ok()) return Fail(ds.status());
    Result<std::string> probe = data::SaveIterator(*(*ds)->MakeIterator());
    if (!probe.ok()) batched = false;
  }
  std::vector<double> save_s, restore_s;
  size_t bytes = 0;
  for (int64_t rep = 0; rep < f.reps; ++rep) {
    Result<data::DatasetPtr> ds = Build(f, batched);
    if (!ds.ok()) return Fail(ds.status());
    auto it = (*ds)->MakeIterator();
    for (int64_t s = 0; s < f.steps; ++s) {
      if (Result<std::vector<int64_t>> ids = NextIds(*it, f, batched); !ids.ok()) return Fail(ids.status());
    }
    auto t0 = std::chrono::steady_clock::now();
    Result<std::string> saved = data::SaveIterator(*it);
    save_s.push_back(Seconds(t0));
    if (!saved.ok()) return Fail(saved.status());
    bytes = saved->size();
    Result<std::vector<int64_t>> expected = NextIds(*it, f, batched);
    if (!expected.ok()) return Fail(expected.status());
    it.reset();

    Result<data::DatasetPtr> fresh = Build(f, batched);  // as a new process would
    if (!fresh.ok()) return Fail(fresh.status());
    auto restored = (*fresh)->MakeIterator();
    t0 = std::chrono::steady_clock::now();
    if (Status s = data::RestoreIterator(*restored, *saved); !s.ok()) return Fail(s);
    Result<std::vector<int64_t>> got = NextIds(*restored, f, batched);
    restore_s.push_back(Seconds(t0));
    if (!got.ok()) return Fail(got.status());
    if (*got != *expected) return Fail(Status(sluice::Code::kInternal, "the restored batch differs"));
  }
  std::sort(save_s.begin(), save_s.end());
  std::sort(restore_s.begin(), restore_s.end());
  std::printf("{\"peer\": \"sluice\", \"buffer\": %lld, \"batch\": %lld, \"steps\": %lld, \"batched\": %s, "
              "\"bytes\": %zu, \"save_s\": %.6f, \"restore_s\": %.6f}\n",
              static_cast<long long>(f.buffer), static_cast<long long>(f.batch), static_cast<long long>(f.steps),
              batched ? "true" : "false", bytes, save_s[save_s.size() / 2], restore_s[restore_s.size() / 2]);
  return 0;
}
