// Native producer stages: MapParseExample, MapDecodeJpeg,
// MapRandomResizedCrop, MapSelect and the SeedStream.
#include "sluice/pipeline/producer_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "input_test_util.h"
#include "sluice/core/element.h"
#include "sluice/core/tensor.h"
#include "sluice/image/codec.h"
#include "sluice/io/readers.h"
#include "sluice/io/record_writer.h"
#include "sluice/ops/example_builder.h"
#include "sluice/ops/feature_spec.h"

namespace sluice::train {
namespace {

using testing::IsOk;
using testing::Scalar;
using testing::StatusIs;

// Yields {key, value} string scalars, one per record (each once, across
// threads), then OutOfRange: a reader's signature.
TypedProducer RecordsProducer(std::vector<std::string> records) {
  auto shared = std::make_shared<const std::vector<std::string>>(std::move(records));
  auto next = std::make_shared<std::atomic<size_t>>(0);
  Producer p = [shared, next]() -> Result<Element> {
    const size_t i = next->fetch_add(1);
    if (i >= shared->size()) return errors::OutOfRange("records done");
    return Element{Tensor::String("key" + std::to_string(i)), Tensor::String((*shared)[i])};
  };
  return TypedProducer{std::move(p), {DType::kString, DType::kString}, {Scalar(), Scalar()}, {"key", "value"}};
}

// The same record forever.
TypedProducer RepeatProducer(std::string record) {
  Producer p = [record = std::move(record)]() -> Result<Element> { return Element{Tensor::String(record)}; };
  return TypedProducer{std::move(p), {DType::kString}, {Scalar()}, {"image"}};
}

// A deterministic RGB gradient, JPEG-encoded.
std::string TestJpeg(int64_t height, int64_t width) {
  Tensor pixels(DType::kUInt8, TensorShape({height, width, 3}));
  uint8_t* p = pixels.data<uint8_t>();
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      uint8_t* px = p + (y * width + x) * 3;
      px[0] = static_cast<uint8_t>(x * 255 / width);
      px[1] = static_cast<uint8_t>(y * 255 / height);
      px[2] = static_cast<uint8_t>((x + y) % 256);
    }
  }
  Result<std::string> jpeg = image::EncodeJpeg(pixels);
  EXPECT_TRUE(jpeg.ok()) << jpeg.status();
  return jpeg.ok() ? *jpeg : std::string();
}

bool SameFloats(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

std::vector<float> Floats(const Tensor& t) { return {t.flat<float>().begin(), t.flat<float>().end()}; }

image::DecodeJpegOptions Channels(int channels) {
  image::DecodeJpegOptions o;
  o.channels = channels;
  return o;
}

ops::FeatureSpec ImageSpec() {
  ops::FeatureSpec spec;
  spec["image"] = ops::FixedLenFeature(TensorShape({}), DType::kString);
  spec["label"] = ops::FixedLenFeature(TensorShape({}), DType::kInt64);
  spec["tags"] = ops::VarLenFeature(DType::kInt64);
  return spec;
}

// ---- SeedStream ---------------------------------------------------------------

TEST(SeedStreamTest, SeedForIsAPureFunctionThatSeparatesIndicesAndSeeds) {
  EXPECT_EQ(SeedStream::SeedFor(7, 3), SeedStream::SeedFor(7, 3));
  std::set<uint64_t> seen;
  for (uint64_t seed : {0, 1, 2}) {
    for (uint64_t i = 0; i < 1000; ++i) seen.insert(SeedStream::SeedFor(seed, i));
  }
  EXPECT_EQ(seen.size(), 3000u);
}

TEST(SeedStreamTest, ConcurrentCallersShareOneStreamWithoutGapsOrRepeats) {
  SeedStream stream(42);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::vector<std::vector<uint64_t>> drawn(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) drawn[t].push_back(stream.Next());
    });
  }
  for (std::thread& t : threads) t.join();
  std::multiset<uint64_t> got;
  for (const auto& d : drawn) got.insert(d.begin(), d.end());
  std::multiset<uint64_t> want;
  for (uint64_t k = 0; k < kThreads * kPerThread; ++k) want.insert(SeedStream::SeedFor(42, k));
  EXPECT_EQ(got, want);
  EXPECT_EQ(stream.calls(), static_cast<uint64_t>(kThreads * kPerThread));
}

// ---- MapParseExample ------------------------------------------------------------

TEST(MapParseExampleTest, OutputsFeaturesInSortedOrderWithSparseAsThreeComponents) {
  std::string record =
      ops::ExampleBuilder().AddBytes("image", {"jpegbytes"}).AddInt64s("label", {5}).AddInt64s("tags", {1, 2, 3})
          .Serialize();
  Result<ops::ExampleParser> parser = ops::ExampleParser::Create(ImageSpec());
  ASSERT_TRUE(parser.ok()) << parser.status();
  Result<TypedProducer> p = MapParseExample(RecordsProducer({record}), *parser, 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->names, (std::vector<std::string>{"image", "label", "tags/indices", "tags/values", "tags/dense_shape"}));
  EXPECT_EQ(p->dtypes, (std::vector<DType>{DType::kString, DType::kInt64, DType::kInt64, DType::kInt64,
                                           DType::kInt64}));
  EXPECT_EQ(p->shapes[3], PartialShape({-1}));
  EXPECT_EQ(p->shapes[2], PartialShape({-1, 1}));

  Result<Element> e = p->producer();
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->size(), 5u);
  EXPECT_EQ((*e)[0].scalar<std::string>(), "jpegbytes");
  EXPECT_EQ((*e)[1].scalar<int64_t>(), 5);
  EXPECT_EQ(testing::Int64Values((*e)[3]), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(testing::Int64Values((*e)[4]), (std::vector<int64_t>{3}));
  // The input's end passes through.
  EXPECT_TRUE(StatusIs(p->producer().status(), Code::kOutOfRange, "records done"));
}

TEST(MapParseExampleTest, CorruptRecordIsInvalidArgument) {
  Result<ops::ExampleParser> parser = ops::ExampleParser::Create(ImageSpec());
  ASSERT_TRUE(parser.ok());
  Result<TypedProducer> p = MapParseExample(RecordsProducer({"\x0a\xff garbage"}), *parser, 1);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(StatusIs(p->producer().status(), Code::kInvalidArgument));
}

TEST(MapParseExampleTest, BuildErrors) {
  Result<ops::ExampleParser> parser = ops::ExampleParser::Create(ImageSpec());
  ASSERT_TRUE(parser.ok());
  EXPECT_TRUE(StatusIs(MapParseExample(RecordsProducer({}), *parser, 2).status(), Code::kInvalidArgument,
                       "out of range"));
  TypedProducer ints = RecordsProducer({});
  ints.dtypes[1] = DType::kInt64;
  EXPECT_TRUE(StatusIs(MapParseExample(ints, *parser, 1).status(), Code::kInvalidArgument, "string scalar"));
  ops::FeatureSpec ragged;
  ragged["r"] = ops::RaggedFeature(DType::kInt64);
  Result<ops::ExampleParser> ragged_parser = ops::ExampleParser::Create(ragged);
  ASSERT_TRUE(ragged_parser.ok()) << ragged_parser.status();
  EXPECT_TRUE(StatusIs(MapParseExample(RecordsProducer({}), *ragged_parser, 1).status(), Code::kInvalidArgument,
                       "'r' is another kind"));
}

// ---- MapDecodeJpeg ---------------------------------------------------------------

TEST(MapDecodeJpegTest, ReplacesTheComponentWithTheDecodedImage) {
  const std::string jpeg = TestJpeg(30, 40);
  TypedProducer in = RepeatProducer(jpeg);
  Result<TypedProducer> p = MapDecodeJpeg(in, 0, Channels(3));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->dtypes[0], DType::kUInt8);
  EXPECT_EQ(p->shapes[0], PartialShape({-1, -1, 3}));
  Result<Element> e = p->producer();
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)[0].shape(), TensorShape({30, 40, 3}));
  Result<Tensor> want = image::DecodeJpeg(jpeg, Channels(3));
  ASSERT_TRUE(want.ok());
  EXPECT_TRUE(ValuesEqual((*e)[0], *want));

  Result<TypedProducer> gray = MapDecodeJpeg(in, 0, Channels(1));
  ASSERT_TRUE(gray.ok());
  Result<Element> g = gray->producer();
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)[0].shape(), TensorShape({30, 40, 1}));
}

TEST(MapDecodeJpegTest, ErrorsAtBuildAndPerCall) {
  EXPECT_TRUE(StatusIs(MapDecodeJpeg(RepeatProducer(""), 0, Channels(4)).status(), Code::kInvalidArgument,
                       "channels must be 0, 1 or 3"));
  EXPECT_TRUE(StatusIs(MapDecodeJpeg(RepeatProducer(""), 1).status(), Code::kInvalidArgument, "out of range"));
  Result<TypedProducer> p = MapDecodeJpeg(RepeatProducer("not an image"), 0);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(StatusIs(p->producer().status(), Code::kInvalidArgument));
}

// ---- MapRandomResizedCrop --------------------------------------------------------------

image::RandomResizedCropOptions SmallCrop() {
  image::RandomResizedCropOptions o;
  o.height = 8;
  o.width = 12;
  return o;
}

TEST(MapRandomResizedCropTest, CallKUsesTheSeedOfCallK) {
  const std::string jpeg = TestJpeg(48, 64);
  Result<TypedProducer> p = MapRandomResizedCrop(RepeatProducer(jpeg), 0, SmallCrop(), 9);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->dtypes[0], DType::kFloat32);
  EXPECT_EQ(p->shapes[0], PartialShape({3, 8, 12}));
  for (uint64_t k = 0; k < 5; ++k) {
    Result<Element> e = p->producer();
    ASSERT_TRUE(e.ok()) << e.status();
    Result<Tensor> want = image::DecodeRandomResizedCrop(jpeg, SmallCrop(), SeedStream::SeedFor(9, k));
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_TRUE(SameFloats((*e)[0], *want)) << "call " << k;
  }
}

TEST(MapRandomResizedCropTest, ConcurrentCallsGiveTheSequentialOutputs) {
  const std::string jpeg = TestJpeg(48, 64);
  constexpr int kCalls = 64;
  std::vector<std::vector<float>> sequential;
  {
    Result<TypedProducer> p = MapRandomResizedCrop(RepeatProducer(jpeg), 0, SmallCrop(), 5);
    ASSERT_TRUE(p.ok());
    for (int i = 0; i < kCalls; ++i) sequential.push_back(Floats((*p->producer())[0]));
  }
  Result<TypedProducer> p = MapRandomResizedCrop(RepeatProducer(jpeg), 0, SmallCrop(), 5);
  ASSERT_TRUE(p.ok());
  std::vector<std::vector<std::vector<float>>> per_thread(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls / 4; ++i) {
        Result<Element> e = p->producer();
        if (e.ok()) per_thread[t].push_back(Floats((*e)[0]));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::vector<float>> concurrent;
  for (auto& v : per_thread) concurrent.insert(concurrent.end(), v.begin(), v.end());
  std::sort(sequential.begin(), sequential.end());
  std::sort(concurrent.begin(), concurrent.end());
  EXPECT_EQ(concurrent, sequential);
  // Different calls are different crops.
  EXPECT_GT(std::unique(sequential.begin(), sequential.end()) - sequential.begin(), kCalls / 2);
}

TEST(MapRandomResizedCropTest, ErrorsAtBuildAndPerCall) {
  image::RandomResizedCropOptions bad = SmallCrop();
  bad.height = 0;
  EXPECT_TRUE(StatusIs(MapRandomResizedCrop(RepeatProducer(""), 0, bad, 1).status(), Code::kInvalidArgument));
  Result<TypedProducer> p = MapRandomResizedCrop(RepeatProducer("\xff\xd8\xff truncated"), 0, SmallCrop(), 1);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(StatusIs(p->producer().status(), Code::kInvalidArgument));
}

// ---- MapSelect -----------------------------------------------------------------------

TEST(MapSelectTest, ReordersAndRepeatsComponentsWithoutCopies) {
  Result<TypedProducer> p = MapSelect(RecordsProducer({"a", "b"}), std::vector<size_t>{1, 0, 1});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->names, (std::vector<std::string>{"value", "key", "value"}));
  Result<Element> e = p->producer();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)[0].scalar<std::string>(), "a");
  EXPECT_EQ((*e)[1].scalar<std::string>(), "key0");
  EXPECT_TRUE((*e)[0].SharesBufferWith((*e)[2]));
  Result<TypedProducer> by_name = MapSelect(RecordsProducer({"a"}), std::vector<std::string>{"value"});
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ((*by_name->producer())[0].scalar<std::string>(), "a");
}

TEST(MapSelectTest, BuildErrors) {
  EXPECT_TRUE(StatusIs(MapSelect(RecordsProducer({}), std::vector<size_t>{}).status(), Code::kInvalidArgument,
                       "at least one"));
  EXPECT_TRUE(StatusIs(MapSelect(RecordsProducer({}), std::vector<size_t>{2}).status(), Code::kInvalidArgument,
                       "out of range"));
  EXPECT_TRUE(StatusIs(MapSelect(RecordsProducer({}), std::vector<std::string>{"nope"}).status(),
                       Code::kInvalidArgument, "no component is named 'nope'"));
}

// ---- A chain under a batcher's threads ---------------------------------------------------

// ---- Record context of stage errors ------------------------------------------------

// A TFRecord file of `records` in `dir`, and a reader producer over it.
TypedProducer TFRecordFileProducer(const testing::TempDir& dir, const std::vector<std::string>& records,
                                   std::string* path) {
  *path = dir.File("images.tfrecord");
  Result<std::unique_ptr<io::RecordWriter>> writer = io::RecordWriter::Open(*path);
  EXPECT_TRUE(writer.ok()) << writer.status();
  for (const std::string& r : records) EXPECT_TRUE((*writer)->Write(r).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  queue::QueueOptions o;
  o.dtypes = {DType::kString};
  o.shapes = {Scalar()};
  std::shared_ptr<queue::Queue> files = *queue::NewFIFOQueue(std::move(o));
  EXPECT_TRUE(files->Enqueue(Element{Tensor::String(*path)}).ok());
  EXPECT_TRUE(files->Close().ok());
  std::shared_ptr<io::ReaderBase> reader = *io::NewTFRecordReader();
  return TypedProducer{ReaderProducer(reader, files), {DType::kString, DType::kString}, {Scalar(), Scalar()},
                       {"key", "value"}};
}

TEST(MapDecodeJpegTest, DecodeErrorNamesTheFileAndRecordOfAReaderUpstream) {
  testing::TempDir dir;
  std::string path;
  // Record 1 (at offset 16 + 6 = 22) is not an image.
  Result<TypedProducer> p = MapDecodeJpeg(TFRecordFileProducer(dir, {TestJpeg(4, 4), "junk"}, &path), 1);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(p->producer().ok());
  Status s = p->producer().status();
  const std::string key = path + ":" + std::to_string(16 + TestJpeg(4, 4).size());
  EXPECT_TRUE(StatusIs(s, Code::kInvalidArgument, " (record " + key + " of TFRecordReader 'TFRecordReader')"));
  EXPECT_EQ(s.GetPayload("file"), path);
  EXPECT_EQ(s.GetPayload("key"), key);
  // Without a reader upstream the error is the decoder's own.
  Result<TypedProducer> plain = MapDecodeJpeg(RepeatProducer("junk"), 0);
  ASSERT_TRUE(plain.ok());
  Status bare = plain->producer().status();
  EXPECT_TRUE(StatusIs(bare, Code::kInvalidArgument));
  EXPECT_EQ(bare.message().find("(record"), std::string::npos) << bare;
  EXPECT_FALSE(bare.GetPayload("file").has_value());
}

TEST(MapRandomResizedCropTest, DecodeErrorAfterParseNamesTheRecordOfTheReader) {
  testing::TempDir dir;
  std::string path;
  const std::string record = ops::ExampleBuilder().AddBytes("image", {"junk"}).AddInt64s("label", {1}).Serialize();
  ops::FeatureSpec spec;
  spec["image"] = ops::FixedLenFeature(TensorShape({}), DType::kString);
  spec["label"] = ops::FixedLenFeature(TensorShape({}), DType::kInt64);
  Result<ops::ExampleParser> parser = ops::ExampleParser::Create(spec);
  ASSERT_TRUE(parser.ok());
  Result<TypedProducer> parsed = MapParseExample(TFRecordFileProducer(dir, {record}, &path), *parser, 1);
  ASSERT_TRUE(parsed.ok());
  Result<TypedProducer> crops = MapRandomResizedCrop(*parsed, 0, SmallCrop(), 3);
  ASSERT_TRUE(crops.ok()) << crops.status();
  Status s = crops->producer().status();
  EXPECT_TRUE(StatusIs(s, Code::kInvalidArgument, "(record " + path + ":0 of TFRecordReader"));
  EXPECT_EQ(s.GetPayload("file"), path);
}

TEST(MapParseExampleTest, ParseErrorNamesTheFileAndRecordOfAReaderUpstream) {
  testing::TempDir dir;
  std::string path;
  Result<ops::ExampleParser> parser = ops::ExampleParser::Create(ImageSpec());
  ASSERT_TRUE(parser.ok());
  Result<TypedProducer> p = MapParseExample(TFRecordFileProducer(dir, {"\x0a\xff garbage"}, &path), *parser, 1);
  ASSERT_TRUE(p.ok());
  Status s = p->producer().status();
  EXPECT_TRUE(StatusIs(s, Code::kInvalidArgument, "(record " + path + ":0 of TFRecordReader"));
  EXPECT_EQ(s.GetPayload("key"), path + ":0");
}

TEST(ProducerOpsTest, ParseThenCropChainIsThreadSafe) {
  std::vector<std::string> records;
  const std::string jpeg = TestJpeg(40, 50);
  for (int i = 0; i < 40; ++i) {
    records.push_back(ops::ExampleBuilder().AddBytes("image", {jpeg}).AddInt64s("label", {i}).Serialize());
  }
  ops::FeatureSpec spec;
  spec["image"] = ops::FixedLenFeature(TensorShape({}), DType::kString);
  spec["label"] = ops::FixedLenFeature(TensorShape({}), DType::kInt64);
  Result<ops::ExampleParser> parser = ops::ExampleParser::Create(spec);
  ASSERT_TRUE(parser.ok());
  Result<TypedProducer> parsed = MapParseExample(RecordsProducer(records), *parser, 1);
  ASSERT_TRUE(parsed.ok());
  Result<TypedProducer> crops = MapRandomResizedCrop(*parsed, 0, SmallCrop(), 3);
  ASSERT_TRUE(crops.ok());
  std::vector<std::vector<int64_t>> labels(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      while (true) {
        Result<Element> e = crops->producer();
        if (!e.ok()) {
          EXPECT_TRUE(StatusIs(e.status(), Code::kOutOfRange));
          return;
        }
        EXPECT_EQ((*e)[0].shape(), TensorShape({3, 8, 12}));
        labels[t].push_back((*e)[1].scalar<int64_t>());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<int64_t> all;
  for (auto& l : labels) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  std::vector<int64_t> want(40);
  for (int i = 0; i < 40; ++i) want[i] = i;
  EXPECT_EQ(all, want);
}

}  // namespace
}  // namespace sluice::train
