// TFRecord reading and tf.train.Example parsing: sluice against the peers the
// issue names, in one run (bench/run.sh records).
//
//   read/<size>/sluice        TFRecordIterator::GetNext, CRC32C of every
//                             length and payload checked (the default)
//   read/<size>/plain_fread   the same file read record by record with stdio
//                             (fread of header, payload into a reused buffer,
//                             footer), no checks: "plain buffered reading"
//   read/<size>/plain_pread   the same framing out of 256 KiB pread chunks,
//                             views, no checks (informational: sluice's own
//                             read path with the CRC taken out)
//   read/<size>/memcpy        the file's bytes copied from memory (a copy of
//                             the file larger than the L3 cache) into a hot
//                             256 KiB buffer: the bandwidth limit
//   parse/<kind>/<single|batch64>/sluice_views   ExampleParser::ParseSingleViews
//                             / ParseViews into one reused ParsedFeatureViews
//                             (bytes values reference the records)
//   parse/<kind>/<single|batch64>/sluice_copy    ParseSingle / Parse (bytes
//                             values copied into kString tensors)
//   parse/<kind>/<single|batch64>/protobuf       libprotobuf: ParseFromArray into
//                             a reused Example, then every requested field read
//                             out (bytes as views of the message's strings,
//                             numbers copied to output arrays)
//
// The input files are generated deterministically (fixed seed) into
// --records_dir, once; bench/py_records_bench.py reads the same files with
// TensorFlow. --generate_only writes them and exits.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "example.pb.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/record_iterator.h"
#include "sluice/io/record_writer.h"
#include "sluice/ops/parse_example.h"

namespace {

namespace pb = ::sluice::example;
namespace fs = std::filesystem;
using sluice::DType;
using sluice::Tensor;
using sluice::TensorShape;

std::string g_dir = "records-data";
constexpr size_t kFileBytes = 64u << 20;  // larger than the 32 MiB L3 cache
constexpr size_t kChunk = 256u << 10;     // sluice's default read buffer
constexpr int kParseRecords = 1024;
constexpr int kBatch = 64;

struct ReadFile {
  const char* label;  // "100KiB"
  const char* name;   // file name under g_dir
  size_t record_bytes;
};
constexpr ReadFile kReadFiles[] = {{"100KiB", "read_100KiB.tfrecord", 100u << 10},
                                   {"1KiB", "read_1KiB.tfrecord", 1u << 10}};

std::string PathOf(const char* name) { return (fs::path(g_dir) / name).string(); }

void Die(const std::string& what) {
  std::cerr << "records_benchmark: " << what << "\n";
  std::exit(1);
}

// --- deterministic inputs -------------------------------------------------

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(s.data() + i, &v, std::min<size_t>(8, n - i));
  }
  return s;
}

std::string Serialize(const pb::Example& ex) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream sos(&out);
    google::protobuf::io::CodedOutputStream cos(&sos);
    cos.SetSerializationDeterministic(true);  // map keys sorted: same bytes every run
    if (!ex.SerializeToCodedStream(&cos)) Die("cannot serialize an Example");
  }
  return out;
}

pb::Feature& Feat(pb::Example* ex, const std::string& key) { return (*ex->mutable_features()->mutable_feature())[key]; }

// A 10 KiB "image" (bytes), an int64 label, a 4-float box.
std::string ImageRecord(std::mt19937_64& rng) {
  pb::Example ex;
  Feat(&ex, "image").mutable_bytes_list()->add_value(RandomBytes(rng, 10u << 10));
  Feat(&ex, "label").mutable_int64_list()->add_value(static_cast<int64_t>(rng() % 1000));
  auto* box = Feat(&ex, "box").mutable_float_list();
  for (int i = 0; i < 4; ++i) box->add_value(static_cast<float>(rng() % 1000) / 1000.0f);
  return Serialize(ex);
}

// The 15 features of TensorFlow's ImageNet TFRecords (models/research/inception
// build_imagenet_data.py), with a 10 KiB image and 1-3 boxes.
std::string ImageNetRecord(std::mt19937_64& rng, int index) {
  pb::Example ex;
  const auto bytes = [&](const char* k, std::string v) { Feat(&ex, k).mutable_bytes_list()->add_value(std::move(v)); };
  const auto int64 = [&](const char* k, int64_t v) { Feat(&ex, k).mutable_int64_list()->add_value(v); };
  const int64_t label = static_cast<int64_t>(rng() % 1000) + 1;
  int64("image/height", 300 + static_cast<int64_t>(rng() % 200));
  int64("image/width", 300 + static_cast<int64_t>(rng() % 200));
  bytes("image/colorspace", "RGB");
  int64("image/channels", 3);
  int64("image/class/label", label);
  bytes("image/class/synset", "n0" + std::to_string(1440764 + label));
  bytes("image/class/text", "tench, Tinca tinca");
  bytes("image/format", "JPEG");
  bytes("image/filename", "n01440764_" + std::to_string(10026 + index) + ".JPEG");
  bytes("image/encoded", RandomBytes(rng, 10u << 10));
  const int boxes = 1 + static_cast<int>(rng() % 3);
  for (const char* k : {"image/object/bbox/xmin", "image/object/bbox/ymin", "image/object/bbox/xmax",
                        "image/object/bbox/ymax"}) {
    auto* list = Feat(&ex, k).mutable_float_list();
    for (int b = 0; b < boxes; ++b) list->add_value(static_cast<float>(rng() % 1000) / 1000.0f);
  }
  auto* labels = Feat(&ex, "image/object/bbox/label").mutable_int64_list();
  for (int b = 0; b < boxes; ++b) labels->add_value(label);
  return Serialize(ex);
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  const std::string tmp = path + ".tmp";
  auto writer = sluice::io::RecordWriter::Open(tmp);
  if (!writer.ok()) Die(writer.status().ToString());
  for (const std::string& r : records) {
    if (sluice::Status s = (*writer)->Write(r); !s.ok()) Die(s.ToString());
  }
  if (sluice::Status s = (*writer)->Close(); !s.ok()) Die(s.ToString());
  fs::rename(tmp, path);
}

// Writes whatever file is missing. Same seed, same bytes: the files never
// need rewriting, and TensorFlow reads exactly what sluice reads.
void Generate() {
  fs::create_directories(g_dir);
  for (const ReadFile& f : kReadFiles) {
    if (fs::exists(PathOf(f.name))) continue;
    std::mt19937_64 rng(42);
    std::vector<std::string> recs(kFileBytes / f.record_bytes);
    for (std::string& r : recs) r = RandomBytes(rng, f.record_bytes);
    WriteRecords(PathOf(f.name), recs);
  }
  if (!fs::exists(PathOf("image.tfrecord"))) {
    std::mt19937_64 rng(7);
    std::vector<std::string> recs(kParseRecords);
    for (std::string& r : recs) r = ImageRecord(rng);
    WriteRecords(PathOf("image.tfrecord"), recs);
  }
  if (!fs::exists(PathOf("imagenet.tfrecord"))) {
    std::mt19937_64 rng(11);
    std::vector<std::string> recs(kParseRecords);
    for (int i = 0; i < kParseRecords; ++i) recs[static_cast<size_t>(i)] = ImageNetRecord(rng, i);
    WriteRecords(PathOf("imagenet.tfrecord"), recs);
  }
}

std::vector<std::string> LoadRecords(const char* name) {
  auto it = sluice::io::TFRecordIterator::Open(PathOf(name));
  if (!it.ok()) Die(it.status().ToString());
  std::vector<std::string> out;
  for (;;) {
    auto next = (*it)->Next();
    if (!next.ok()) Die(next.status().ToString());
    if (!next->has_value()) return out;
    out.push_back(std::move(**next));
  }
}

// --- reading --------------------------------------------------------------

void SetReadCounters(benchmark::State& state, int64_t records, int64_t payload) {
  state.SetItemsProcessed(state.iterations() * records);
  state.SetBytesProcessed(state.iterations() * payload);
}

void BM_ReadSluice(benchmark::State& state, const ReadFile* f) {
  int64_t records = 0;
  int64_t payload = 0;
  for (auto _ : state) {
    auto it = sluice::io::TFRecordIterator::Open(PathOf(f->name));
    if (!it.ok()) Die(it.status().ToString());
    records = payload = 0;
    std::string_view rec;
    bool end = false;
    for (;;) {
      if (sluice::Status s = (*it)->GetNext(&rec, &end); !s.ok()) Die(s.ToString());
      if (end) break;
      benchmark::DoNotOptimize(rec.data());
      ++records;
      payload += static_cast<int64_t>(rec.size());
    }
  }
  SetReadCounters(state, records, payload);
}

uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

void BM_ReadPlainFread(benchmark::State& state, const ReadFile* f) {
  int64_t records = 0;
  int64_t payload = 0;
  std::vector<char> buf;
  for (auto _ : state) {
    FILE* file = std::fopen(PathOf(f->name).c_str(), "rb");
    if (file == nullptr) Die("cannot open " + PathOf(f->name));
    records = payload = 0;
    char header[12];
    char footer[4];
    while (std::fread(header, 1, sizeof header, file) == sizeof header) {
      const uint64_t len = Load64(header);
      if (buf.size() < len) buf.resize(len);
      if (std::fread(buf.data(), 1, len, file) != len || std::fread(footer, 1, 4, file) != 4) Die("short read");
      benchmark::DoNotOptimize(buf.data());
      ++records;
      payload += static_cast<int64_t>(len);
    }
    std::fclose(file);
  }
  SetReadCounters(state, records, payload);
}

void BM_ReadPlainPread(benchmark::State& state, const ReadFile* f) {
  int64_t records = 0;
  int64_t payload = 0;
  std::vector<char> buf(kChunk + f->record_bytes + 16);
  for (auto _ : state) {
    const int fd = ::open(PathOf(f->name).c_str(), O_RDONLY);
    if (fd < 0) Die("cannot open " + PathOf(f->name));
    records = payload = 0;
    size_t pos = 0;
    size_t limit = 0;
    off_t file_off = 0;
    for (;;) {
      if (limit - pos < 12 || limit - pos < 16 + Load64(buf.data() + pos)) {
        std::memmove(buf.data(), buf.data() + pos, limit - pos);
        limit -= pos;
        pos = 0;
        const ssize_t got = ::pread(fd, buf.data() + limit, buf.size() - limit, file_off);
        if (got < 0) Die("read error");
        if (got == 0) break;
        file_off += got;
        limit += static_cast<size_t>(got);
        continue;
      }
      const uint64_t len = Load64(buf.data() + pos);
      benchmark::DoNotOptimize(buf.data() + pos + 12);
      pos += 16 + len;
      ++records;
      payload += static_cast<int64_t>(len);
    }
    ::close(fd);
  }
  SetReadCounters(state, records, payload);
}

void BM_Memcpy(benchmark::State& state, const ReadFile* f) {
  static std::string* src = nullptr;
  static const char* src_name = nullptr;
  if (src_name != f->name) {  // one file's copy at a time: 64 MiB each
    delete src;
    src = new std::string(fs::file_size(PathOf(f->name)), '\0');
    FILE* file = std::fopen(PathOf(f->name).c_str(), "rb");
    if (file == nullptr || std::fread(src->data(), 1, src->size(), file) != src->size()) Die("cannot read file");
    std::fclose(file);
    src_name = f->name;
  }
  std::vector<char> dst(kChunk);
  for (auto _ : state) {
    for (size_t off = 0; off < src->size(); off += kChunk) {
      std::memcpy(dst.data(), src->data() + off, std::min(kChunk, src->size() - off));
      benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(dst.data());
  }
  const int64_t records = static_cast<int64_t>(src->size() / (f->record_bytes + 16));
  SetReadCounters(state, records, records * static_cast<int64_t>(f->record_bytes));
}

// --- parsing --------------------------------------------------------------

struct ParseCase {
  const char* label;  // "image"
  const char* file;
  sluice::ops::FeatureSpec (*spec)();
};

sluice::ops::FeatureSpec ImageSpec() {
  using sluice::ops::FixedLenFeature;
  return {{"image", FixedLenFeature({}, DType::kString)},
          {"label", FixedLenFeature({}, DType::kInt64)},
          {"box", FixedLenFeature({4}, DType::kFloat32)}};
}

// TensorFlow's ImageNet input spec (official/vision imagenet input, extended to
// every feature of the record).
sluice::ops::FeatureSpec ImageNetSpec() {
  using sluice::ops::FixedLenFeature;
  using sluice::ops::VarLenFeature;
  const auto str = [] { return FixedLenFeature({}, DType::kString, Tensor::String("")); };
  const auto i64 = [] { return FixedLenFeature({}, DType::kInt64, Tensor::Scalar<int64_t>(-1)); };
  return {{"image/encoded", str()},
          {"image/format", str()},
          {"image/filename", str()},
          {"image/colorspace", str()},
          {"image/class/synset", str()},
          {"image/class/text", str()},
          {"image/class/label", i64()},
          {"image/height", i64()},
          {"image/width", i64()},
          {"image/channels", i64()},
          {"image/object/bbox/xmin", VarLenFeature(DType::kFloat32)},
          {"image/object/bbox/ymin", VarLenFeature(DType::kFloat32)},
          {"image/object/bbox/xmax", VarLenFeature(DType::kFloat32)},
          {"image/object/bbox/ymax", VarLenFeature(DType::kFloat32)},
          {"image/object/bbox/label", VarLenFeature(DType::kInt64)}};
}

const ParseCase kParseCases[] = {{"image", "image.tfrecord", ImageSpec}, {"imagenet", "imagenet.tfrecord", ImageNetSpec}};

struct ParseInput {
  std::vector<std::string> records;
  std::vector<std::string_view> views;
};

const ParseInput& Input(const ParseCase* c) {
  static std::map<std::string, ParseInput>* inputs = new std::map<std::string, ParseInput>;
  ParseInput& in = (*inputs)[c->label];
  if (in.records.empty()) {
    in.records = LoadRecords(c->file);
    in.views.assign(in.records.begin(), in.records.end());
  }
  return in;
}

void SetParseCounters(benchmark::State& state, const ParseInput& in) {
  int64_t bytes = 0;
  for (const std::string& r : in.records) bytes += static_cast<int64_t>(r.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(in.records.size()));
  state.SetBytesProcessed(state.iterations() * bytes);
}

template <bool kViews>
void BM_ParseSluiceSingle(benchmark::State& state, const ParseCase* c) {
  const ParseInput& in = Input(c);
  const auto parser = sluice::ops::ExampleParser::Create(c->spec());
  if (!parser.ok()) Die(parser.status().ToString());
  sluice::ops::ParsedFeatureViews views;  // reused, as protobuf's message is
  for (auto _ : state) {
    for (std::string_view r : in.views) {
      if constexpr (kViews) {
        if (sluice::Status s = parser->ParseSingleViews(r, &views); !s.ok()) Die(s.ToString());
        benchmark::DoNotOptimize(views.size());
      } else {
        auto out = parser->ParseSingle(r);
        if (!out.ok()) Die(out.status().ToString());
        benchmark::DoNotOptimize(out->size());
      }
    }
  }
  SetParseCounters(state, in);
}

template <bool kViews>
void BM_ParseSluiceBatch(benchmark::State& state, const ParseCase* c) {
  const ParseInput& in = Input(c);
  const auto parser = sluice::ops::ExampleParser::Create(c->spec());
  if (!parser.ok()) Die(parser.status().ToString());
  const std::span<const std::string_view> all(in.views);
  sluice::ops::ParsedFeatureViews views;  // reused, as protobuf's message is
  for (auto _ : state) {
    for (size_t b = 0; b + kBatch <= all.size(); b += kBatch) {
      if constexpr (kViews) {
        if (sluice::Status s = parser->ParseViews(all.subspan(b, kBatch), &views); !s.ok()) Die(s.ToString());
        benchmark::DoNotOptimize(views.size());
      } else {
        auto out = parser->Parse(all.subspan(b, kBatch));
        if (!out.ok()) Die(out.status().ToString());
        benchmark::DoNotOptimize(out->size());
      }
    }
  }
  SetParseCounters(state, in);
}

// Keys are std::strings made once: Map::find(const char*) would build a
// std::string (an allocation for keys over 15 bytes) on every lookup.
const pb::Feature& Get(const google::protobuf::Map<std::string, pb::Feature>& m, const std::string& key) {
  const auto it = m.find(key);
  if (it == m.end()) Die("missing feature " + key);
  return it->second;
}

// What the output of one batch holds (protobuf peer): the numbers copied, the
// bytes viewed in the message (which owns copies of them).
struct ImageBatch {
  std::vector<std::string_view> image = std::vector<std::string_view>(kBatch);
  std::vector<int64_t> label = std::vector<int64_t>(kBatch);
  std::vector<float> box = std::vector<float>(4 * kBatch);
};

void ReadImage(const pb::Example& ex, int i, ImageBatch* out) {
  static const std::string kImage = "image", kLabel = "label", kBox = "box";
  const auto& m = ex.features().feature();
  out->image[static_cast<size_t>(i)] = Get(m, kImage).bytes_list().value(0);
  out->label[static_cast<size_t>(i)] = Get(m, kLabel).int64_list().value(0);
  const auto& box = Get(m, kBox).float_list().value();
  if (box.size() != 4) Die("bad box");
  std::copy(box.begin(), box.end(), out->box.begin() + 4 * i);
}

struct ImageNetBatch {
  const std::string kBytes[6] = {"image/encoded",    "image/format",       "image/filename",
                                 "image/colorspace", "image/class/synset", "image/class/text"};
  const std::string kInts[4] = {"image/class/label", "image/height", "image/width", "image/channels"};
  const std::string kBoxes[4] = {"image/object/bbox/xmin", "image/object/bbox/ymin", "image/object/bbox/xmax",
                                 "image/object/bbox/ymax"};
  const std::string kBoxLabel = "image/object/bbox/label";
  std::vector<std::string_view> bytes = std::vector<std::string_view>(6 * kBatch);
  std::vector<int64_t> ints = std::vector<int64_t>(4 * kBatch);
  std::vector<float> boxes[4];
  std::vector<int64_t> box_labels;
  void Clear() {
    for (auto& b : boxes) b.clear();
    box_labels.clear();
  }
};

void ReadImageNet(const pb::Example& ex, int i, ImageNetBatch* out) {
  const auto& m = ex.features().feature();
  const auto row = static_cast<size_t>(i);
  for (size_t k = 0; k < 6; ++k) out->bytes[6 * row + k] = Get(m, out->kBytes[k]).bytes_list().value(0);
  for (size_t k = 0; k < 4; ++k) out->ints[4 * row + k] = Get(m, out->kInts[k]).int64_list().value(0);
  for (size_t k = 0; k < 4; ++k) {
    const auto& v = Get(m, out->kBoxes[k]).float_list().value();
    out->boxes[k].insert(out->boxes[k].end(), v.begin(), v.end());
  }
  const auto& v = Get(m, out->kBoxLabel).int64_list().value();
  out->box_labels.insert(out->box_labels.end(), v.begin(), v.end());
}

// single: one record's outputs at a time (batch index 0); batch64: 64 records'
// outputs side by side. libprotobuf has no batch parse, so both loop.
void BM_ParseProtobuf(benchmark::State& state, const ParseCase* c, bool batch) {
  const ParseInput& in = Input(c);
  pb::Example ex;
  ImageBatch image;
  ImageNetBatch imagenet;
  const bool is_image = std::string_view(c->label) == "image";
  for (auto _ : state) {
    for (size_t r = 0; r < in.views.size(); ++r) {
      const int i = batch ? static_cast<int>(r % kBatch) : 0;
      if (i == 0) imagenet.Clear();
      if (!ex.ParseFromArray(in.views[r].data(), static_cast<int>(in.views[r].size()))) Die("protobuf parse failed");
      if (is_image) {
        ReadImage(ex, i, &image);
      } else {
        ReadImageNet(ex, i, &imagenet);
      }
      benchmark::DoNotOptimize(image.label.data());
      benchmark::DoNotOptimize(imagenet.ints.data());
    }
  }
  SetParseCounters(state, in);
}

// Rates are per wall-clock second (UseRealTime), as the TensorFlow peers'
// are; the JSON keeps the CPU time too.
void RegisterAll() {
  for (const ReadFile& f : kReadFiles) {
    const std::string base = std::string("read/") + f.label + "/";
    const auto reg = [&](const char* impl, void (*fn)(benchmark::State&, const ReadFile*)) {
      benchmark::RegisterBenchmark((base + impl).c_str(), fn, &f)->Unit(benchmark::kMillisecond)->UseRealTime();
    };
    reg("sluice", BM_ReadSluice);
    reg("plain_fread", BM_ReadPlainFread);
    reg("plain_pread", BM_ReadPlainPread);
    reg("memcpy", BM_Memcpy);
  }
  for (const ParseCase& c : kParseCases) {
    const std::string base = std::string("parse/") + c.label + "/";
    benchmark::RegisterBenchmark((base + "single/sluice_views").c_str(), BM_ParseSluiceSingle<true>, &c)->UseRealTime();
    benchmark::RegisterBenchmark((base + "single/sluice_copy").c_str(), BM_ParseSluiceSingle<false>, &c)->UseRealTime();
    benchmark::RegisterBenchmark((base + "single/protobuf").c_str(), BM_ParseProtobuf, &c, false)->UseRealTime();
    benchmark::RegisterBenchmark((base + "batch64/sluice_views").c_str(), BM_ParseSluiceBatch<true>, &c)->UseRealTime();
    benchmark::RegisterBenchmark((base + "batch64/sluice_copy").c_str(), BM_ParseSluiceBatch<false>, &c)->UseRealTime();
    benchmark::RegisterBenchmark((base + "batch64/protobuf").c_str(), BM_ParseProtobuf, &c, true)->UseRealTime();
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool generate_only = false;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a.starts_with("--records_dir=")) {
      g_dir = std::string(a.substr(std::strlen("--records_dir=")));
    } else if (a == "--generate_only") {
      generate_only = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  Generate();
  if (generate_only) return 0;
  if (!sluice::io::crc32c::HardwareAccelerated()) std::cerr << "records_benchmark: no hardware CRC32C\n";
  RegisterAll();
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::AddCustomContext("records_dir", g_dir);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
