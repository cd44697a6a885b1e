// Checkpoints of the sources: file readers (plain and compressed), list_files,
// CsvDataset, FromRecordFiles and global shuffle, the file cache, and the
// small checkpoint of a shuffle buffer of records (their origins, re-read on
// restore, instead of their bytes).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "data/checkpoint_test_util.h"
#include "data/data_test_util.h"
#include "data/element_codec.h"
#include "data/record_source.h"
#include "sluice/data/checkpoint.h"
#include "sluice/data/datasets.h"
#include "sluice/io/file_system.h"
#include "sluice/io/input_stream.h"
#include "sluice/io/record_writer.h"
#include "sluice/queue/queue.h"

namespace sluice::data {
namespace {

using namespace checkpoint_testing;  // NOLINT(build/namespaces): the shared test helpers

std::string TempPath(const std::string& name) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test.begin(), test.end(), '/', '_');
  return ::testing::TempDir() + "/ckpt_src_" + test + "_" + name;
}

io::CompressionType CompressionOf(const std::string& name) { return *io::ParseCompressionType(name); }

void WriteRecords(const std::string& path, const std::vector<std::string>& records, const std::string& compression) {
  io::RecordWriterOptions options;
  options.compression_type = CompressionOf(compression);
  auto w = io::RecordWriter::Open(path, options);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) ASSERT_TRUE((*w)->Write(r).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

// `bytes` into `path`, compressed as `compression` says.
void WriteBytes(const std::string& path, const std::string& bytes, const std::string& compression) {
  auto file = io::DefaultFileSystem()->NewWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  std::unique_ptr<io::WritableFile> out = std::move(*file);
  if (!compression.empty()) {
    auto z = io::NewZlibOutputStream(std::move(out), CompressionOf(compression));
    ASSERT_TRUE(z.ok()) << z.status();
    out = std::move(*z);
  }
  ASSERT_TRUE(out->Append(bytes).ok());
  ASSERT_TRUE(out->Close().ok());
}

std::vector<std::string> Records(int n, const std::string& tag, size_t size = 0) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string r = tag + std::to_string(i);
    if (r.size() < size) r.resize(size, static_cast<char>('a' + i % 26));
    out.push_back(r);
  }
  return out;
}

// Three files of 3, 0 and 4 records.
std::vector<std::string> RecordFiles(const std::string& compression) {
  std::vector<std::string> files = {TempPath("a"), TempPath("b"), TempPath("c")};
  WriteRecords(files[0], Records(3, "a"), compression);
  WriteRecords(files[1], {}, compression);
  WriteRecords(files[2], Records(4, "c"), compression);
  return files;
}

int64_t CheckpointBytes(IteratorBase& it) {
  Result<std::string> saved = SaveIterator(it);
  EXPECT_TRUE(saved.ok()) << saved.status();
  return saved.ok() ? static_cast<int64_t>(saved->size()) : -1;
}

class CompressedReaderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CompressedReaderTest, TFRecordDatasetResumesAtEveryBreakPoint) {
  const std::vector<std::string> files = RecordFiles(GetParam());
  RecordDatasetOptions options;
  options.compression_type = GetParam();
  ExpectCheckpointsExact([&] { return Must(TFRecordDataset(files, options)); });
}

TEST_P(CompressedReaderTest, TextLineDatasetResumesAtEveryBreakPoint) {
  const std::vector<std::string> files = {TempPath("a.txt"), TempPath("b.txt")};
  WriteBytes(files[0], "one\ntwo\r\n\nfour", GetParam());
  WriteBytes(files[1], "five\nsix\n", GetParam());
  RecordDatasetOptions options;
  options.compression_type = GetParam();
  ExpectCheckpointsExact([&] { return Must(TextLineDataset(files, options)); });
}

TEST_P(CompressedReaderTest, FixedLengthRecordDatasetResumesAtEveryBreakPoint) {
  const std::vector<std::string> files = {TempPath("a.bin"), TempPath("b.bin")};
  WriteBytes(files[0], "HHaaabbbcccF", GetParam());
  WriteBytes(files[1], "HHdddeeeF", GetParam());
  FixedLengthOptions fixed{.record_bytes = 3, .header_bytes = 2, .footer_bytes = 1};
  RecordDatasetOptions options;
  options.compression_type = GetParam();
  ExpectCheckpointsExact([&] { return Must(FixedLengthRecordDataset(files, fixed, options)); });
}

TEST_P(CompressedReaderTest, ShuffledRecordsUnderRepeatResumeWithSmallCheckpoints) {
  // Every buffered element is a record: saved as its origin, re-read on restore.
  const std::vector<std::string> files = RecordFiles(GetParam());
  RecordDatasetOptions options;
  options.compression_type = GetParam();
  ExpectCheckpointsExact(
      [&] { return Must(Repeat(Must(Shuffle(Must(TFRecordDataset(files, options)), 4, 3, 9, true)), 2)); });
}

TEST_P(CompressedReaderTest, ShuffledLinesAndFixedLengthRecordsResume) {
  const std::vector<std::string> text = {TempPath("a.txt")}, bin = {TempPath("a.bin")};
  WriteBytes(text[0], "l0\nl1\nl2\nl3\nl4\nl5\n", GetParam());
  WriteBytes(bin[0], "Haabbccddeeff", GetParam());
  RecordDatasetOptions options;
  options.compression_type = GetParam();
  ExpectCheckpointsExact([&] { return Must(Shuffle(Must(TextLineDataset(text, options)), 3, 1, 2, false)); });
  FixedLengthOptions fixed{.record_bytes = 2, .header_bytes = 1, .footer_bytes = 0};
  ExpectCheckpointsExact(
      [&] { return Must(Shuffle(Must(FixedLengthRecordDataset(bin, fixed, options)), 3, 1, 2, false)); });
}

INSTANTIATE_TEST_SUITE_P(Compression, CompressedReaderTest, ::testing::Values("", "GZIP", "ZLIB"),
                         [](const auto& info) { return info.param.empty() ? std::string("None") : info.param; });

// The readers over a dataset of names are interleaves (TF's construction),
// with prefetches for num_parallel_reads: they save once those stages do.
bool StagesSave(const DatasetPtr& ds) {
  return SaveIterator(*ds->MakeIterator()).status().code() != Code::kUnimplemented;
}

TEST(CheckpointSourcesTest, ReadersOverListFilesResume) {
  const std::vector<std::string> files = RecordFiles("");
  const std::string pattern = TempPath("*");
  const std::vector<std::optional<int64_t>> parallel = {std::nullopt, 2};
  std::string skipped;
  for (std::optional<int64_t> reads : parallel) {
    auto make = [&] {
      RecordDatasetOptions options;
      options.num_parallel_reads = reads;
      return Must(TFRecordDatasetOf(Must(ListFiles({pattern}, true, 5, 6)), options));
    };
    if (!StagesSave(make())) {
      skipped += reads ? " num_parallel_reads" : " sequential";
      continue;
    }
    SCOPED_TRACE(reads ? "num_parallel_reads" : "sequential");
    ExpectCheckpointsExact(make);
  }
  if (!skipped.empty()) GTEST_SKIP() << "Interleave or Prefetch cannot be saved yet:" << skipped;
}

TEST(CheckpointSourcesTest, ListFilesResumesWithTheSameOrderEachEpoch) {
  const std::vector<std::string> files = RecordFiles("");
  const std::string pattern = TempPath("*");
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(ListFiles({pattern}, true, 5, 6)), 3)); });
}

TEST(CheckpointSourcesTest, CsvDatasetResumesAtEveryBreakPoint) {
  const std::vector<std::string> files = {TempPath("a.csv"), TempPath("b.csv")};
  WriteBytes(files[0], "h1,h2\n1,x\n2,\"multi\nline\"\n3,z\n", "");
  WriteBytes(files[1], "h1,h2\n4,w\n", "");
  CsvDatasetOptions options;
  options.header = true;
  std::vector<Tensor> defaults = {Tensor::FromVector<int64_t>({0}), Tensor::FromVector<std::string>({""})};
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(CsvDataset(files, defaults, options)), 2)); });
}

TEST(CheckpointSourcesTest, RecordFilesInFileOrderResumeAcrossReadAheadBatches) {
  const std::vector<std::string> files = RecordFiles("");
  RecordFilesOptions options;
  options.index = RecordIndexPolicy::kLoadOrBuildNoSave;
  options.read_ahead_records = 2;
  ExpectCheckpointsExact([&] { return Must(FromRecordFiles(files, options)); });
}

TEST(CheckpointSourcesTest, GlobalShuffleUnderRepeatResumesWithEachEpochsPermutation) {
  const std::vector<std::string> files = RecordFiles("");
  RecordFilesOptions options;
  options.index = RecordIndexPolicy::kLoadOrBuildNoSave;
  options.shuffle = GlobalShuffleOptions{.seed = 17, .reshuffle_each_iteration = true};
  options.read_ahead_records = 3;
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(FromRecordFiles(files, options)), 3)); });
}

TEST(CheckpointSourcesTest, ReadingACacheFileResumes) {
  const std::string cache = TempPath("cache");
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(CacheToFile(RangeOf(5), cache)), 2)); });
}

TEST(CheckpointSourcesTest, APassWritingTheCacheResumesItsInputWithoutWriting) {
  const std::string cache = TempPath("cache");
  // Each make() is a new process that finds no cache file.
  ExpectCheckpointsExact([&] {
    (void)io::DefaultFileSystem()->DeleteFile(cache);
    return Must(Map(Must(CacheToFile(RangeOf(6), cache)), testing::Times(2), Int64Scalar()));
  });
  (void)io::DefaultFileSystem()->DeleteFile(cache);
  std::string bytes;
  {
    auto it = Must(CacheToFile(RangeOf(6), cache))->MakeIterator();
    ASSERT_EQ(EncodedRun(*it, 2).size(), 2u);
    bytes = *SaveIterator(*it);
  }
  auto it = Must(CacheToFile(RangeOf(6), cache))->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*it, bytes).ok());
  EXPECT_EQ(EncodedRun(*it, 100).size(), 4u);
  EXPECT_FALSE(io::DefaultFileSystem()->FileExists(cache).ok()) << "a resumed pass wrote a partial cache";
  EXPECT_EQ(testing::Ints(Must(CacheToFile(RangeOf(6), cache))).size(), 6u);
  EXPECT_TRUE(io::DefaultFileSystem()->FileExists(cache).ok());
}

TEST(CheckpointSourcesTest, AWritingPassRestoredAfterTheCacheWasFinishedReadsTheCache) {
  const std::string cache = TempPath("cache");
  (void)io::DefaultFileSystem()->DeleteFile(cache);
  std::string bytes;
  {
    auto it = Must(CacheToFile(RangeOf(6), cache))->MakeIterator();
    ASSERT_EQ(EncodedRun(*it, 4).size(), 4u);
    bytes = *SaveIterator(*it);
  }
  ASSERT_EQ(testing::Ints(Must(CacheToFile(RangeOf(6), cache))).size(), 6u);  // another pass finishes the cache
  auto it = Must(CacheToFile(RangeOf(100), cache))->MakeIterator();            // the cache, not this input, is read
  ASSERT_TRUE(RestoreIterator(*it, bytes).ok());
  std::vector<int64_t> rest;
  Element e;
  bool end = false;
  while (it->GetNext(&e, &end).ok() && !end) rest.push_back(e[0].scalar<int64_t>());
  EXPECT_EQ(rest, (std::vector<int64_t>{4, 5}));
}

TEST(CheckpointSourcesTest, GeneratorsAndQueuesSayWhatToDoInstead) {
  auto gen = Must(FromGenerator(
      []() -> Result<GeneratorFn> {
        return GeneratorFn([]() -> Result<std::optional<Element>> { return std::optional<Element>(); });
      },
      Int64Scalar()));
  Result<std::string> saved = SaveIterator(*gen->MakeIterator());
  ASSERT_EQ(saved.status().code(), Code::kUnimplemented);
  EXPECT_NE(saved.status().message().find("FromGenerator"), std::string::npos) << saved.status();
  EXPECT_NE(saved.status().message().find("map the generator's work"), std::string::npos) << saved.status();
}

TEST(CheckpointSourcesTest, AQueueSourceSaysToCheckpointItsProducersInstead) {
  queue::QueueOptions o;
  o.capacity = 4;
  o.dtypes = {DType::kInt64};
  o.shapes = {PartialShape({})};
  auto q = queue::NewFIFOQueue(o);
  ASSERT_TRUE(q.ok()) << q.status();
  Result<std::string> saved = SaveIterator(*Must(FromQueue(*q))->MakeIterator());
  ASSERT_EQ(saved.status().code(), Code::kUnimplemented);
  EXPECT_NE(saved.status().message().find("Checkpoint the pipeline that feeds the queue"), std::string::npos)
      << saved.status();
}

TEST(CheckpointSourcesTest, SparseSlicesResumeUnderRepeat) {
  Tensor indices(DType::kInt64, TensorShape{3, 2});
  const int64_t idx[] = {0, 1, 2, 0, 2, 3};
  std::copy(std::begin(idx), std::end(idx), indices.data<int64_t>());
  Element e{Tensor::FromVector<int64_t>({7, 8, 9}), indices, Tensor::FromVector<int64_t>({10, 20, 30}),
            Tensor::FromVector<int64_t>({3, 4})};
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(FromTensorSlicesWithSparse(e, {1})), 2)); });
}

TEST(CheckpointSourcesTest, SourcesUnderAShuffleResume) {
  const std::vector<std::string> files = RecordFiles("");
  const std::vector<std::string> csv = {TempPath("a.csv")};
  WriteBytes(csv[0], "1,a\n2,b\n3,c\n4,d\n5,e\n", "");
  std::vector<Tensor> defaults = {Tensor::FromVector<int64_t>({0}), Tensor::FromVector<std::string>({""})};
  ExpectCheckpointsExact(
      [&] { return Must(Repeat(Must(Shuffle(Must(CsvDataset(csv, defaults)), 3, 1, 2, true)), 2)); });
  RecordFilesOptions options;
  options.index = RecordIndexPolicy::kLoadOrBuildNoSave;
  options.read_ahead_records = 2;
  ExpectCheckpointsExact([&] { return Must(Shuffle(Must(FromRecordFiles(files, options)), 3, 1, 2, false)); });
  const std::string cache = TempPath("cache");
  ExpectCheckpointsExact(
      [&] { return Must(Repeat(Must(Shuffle(Must(CacheToFile(RangeOf(6), cache)), 4, 1, 2, true)), 2)); });
  ExpectCheckpointsExact([&] {
    (void)io::DefaultFileSystem()->DeleteFile(cache);
    return Must(Shuffle(Must(CacheToFile(RangeOf(6), cache)), 4, 1, 2, false));
  });
}

TEST(CheckpointSourcesTest, TextAndFixedLengthReadersResumeInTheSecondEpoch) {
  const std::vector<std::string> text = {TempPath("a.txt")}, bin = {TempPath("a.bin")};
  WriteBytes(text[0], "l0\nl1\nl2\n", "");
  WriteBytes(bin[0], "aabbcc", "");
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(TextLineDataset(text)), 2)); });
  FixedLengthOptions fixed{.record_bytes = 2, .header_bytes = 0, .footer_bytes = 0};
  ExpectCheckpointsExact([&] { return Must(Repeat(Must(FixedLengthRecordDataset(bin, fixed)), 2)); });
}

TEST(CheckpointSourcesTest, ARestoredReaderWhoseFileIsGoneIsNotFound) {
  const std::vector<std::string> files = RecordFiles("");
  std::string bytes;
  {
    auto it = Must(TFRecordDataset(files))->MakeIterator();
    ASSERT_EQ(EncodedRun(*it, 1).size(), 1u);
    bytes = *SaveIterator(*it);
  }
  ASSERT_TRUE(io::DefaultFileSystem()->DeleteFile(files[0]).ok());
  auto it = Must(TFRecordDataset(files))->MakeIterator();
  EXPECT_EQ(RestoreIterator(*it, bytes).code(), Code::kNotFound);
}

// `bytes` into `path` whole or not at all (a rename), with plain system calls.
void WriteAtomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) ::_exit(3);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) ::_exit(3);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CheckpointSourcesTest, AfterKill9TheRestartedProcessResumesFromItsLastCheckpoint) {
  const std::vector<std::string> files = RecordFiles("GZIP");
  RecordDatasetOptions options;
  options.compression_type = "GZIP";
  auto make = [&] { return Must(Repeat(Must(Shuffle(Must(TFRecordDataset(files, options)), 3, 4, 5, true)), 3)); };
  std::vector<std::string> full;
  {
    auto it = make()->MakeIterator();
    full = EncodedRun(*it, 1000);
  }
  ASSERT_EQ(full.size(), 21u);
  const std::string ckpt = TempPath("ckpt"), log = TempPath("log");
  (void)::unlink(ckpt.c_str());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The training process: logs every element (u32 length | encoding) and
    // checkpoints (count | bytes) every 4 elements; says when it has gone 3
    // past its third checkpoint, then waits to be killed.
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    auto it = make()->MakeIterator();
    for (uint32_t n = 1; n <= 15; ++n) {
      Element e;
      bool end = false;
      if (!it->GetNext(&e, &end).ok() || end) ::_exit(2);
      const std::string enc = EncodeElement(e);
      const uint32_t size = static_cast<uint32_t>(enc.size());
      if (::write(out, &size, 4) != 4 || ::write(out, enc.data(), enc.size()) != static_cast<ssize_t>(enc.size())) {
        ::_exit(2);
      }
      if (n % 4 == 0) {
        Result<std::string> saved = SaveIterator(*it);
        if (!saved.ok()) ::_exit(4);
        WriteAtomically(ckpt, std::string(reinterpret_cast<const char*>(&n), 4) + *saved);
      }
    }
    if (::write(ready[1], "k", 1) != 1) ::_exit(2);
    while (true) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the child failed before its checkpoints";
  ::close(ready[0]);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  // The restarted process: the elements logged up to the last checkpoint,
  // then the restored iterator's.
  const std::string saved = ReadAll(ckpt);
  ASSERT_GT(saved.size(), 4u);
  uint32_t count = 0;
  std::memcpy(&count, saved.data(), 4);
  EXPECT_EQ(count, 12u);
  std::vector<std::string> got;
  const std::string logged = ReadAll(log);
  for (size_t at = 0; at + 4 <= logged.size() && got.size() < count;) {
    uint32_t size = 0;
    std::memcpy(&size, logged.data() + at, 4);
    got.push_back(logged.substr(at + 4, size));
    at += 4 + size;
  }
  ASSERT_EQ(got.size(), count);
  auto it = make()->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*it, std::string_view(saved).substr(4)).ok());
  std::vector<std::string> rest = EncodedRun(*it, 1000);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, full);
}

// ---- The small checkpoint ------------------------------------------------------

// `files` files of `per_file` records of `size` bytes.
std::vector<std::string> BigRecordFiles(int files, int per_file, size_t size) {
  std::vector<std::string> out;
  for (int f = 0; f < files; ++f) {
    const std::string n = std::to_string(f);
    out.push_back(TempPath("big" + n));
    WriteRecords(out.back(), Records(per_file, n + "r", size), "");
  }
  return out;
}

TEST(SmallCheckpointTest, AShuffleBufferOf10000RecordsCheckpointsInUnder1MB) {
  // SLUICE_LONG_TESTS: ~100 KB records (1 GB of files) as in the issue;
  // otherwise 1 KB records, whose bytes alone (10 MB) would not fit either.
  const bool full = std::getenv("SLUICE_LONG_TESTS") != nullptr;
  const size_t size = full ? 100 << 10 : 1 << 10;
  const std::vector<std::string> files = BigRecordFiles(4, 3000, size);
  auto make = [&] { return Must(Shuffle(Must(TFRecordDataset(files)), 10000, 11, 12, true)); };
  std::vector<std::string> full_run;
  {
    auto it = make()->MakeIterator();
    full_run = EncodedRun(*it, 12000);
  }
  std::string bytes;
  std::vector<std::string> got;
  {
    auto it = make()->MakeIterator();
    got = EncodedRun(*it, 100);  // 10,000 buffered
    Result<std::string> saved = SaveIterator(*it);
    ASSERT_TRUE(saved.ok()) << saved.status();
    bytes = *saved;
  }
  EXPECT_LT(bytes.size(), size_t{1} << 20);
  auto it = make()->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*it, bytes).ok());
  std::vector<std::string> rest = EncodedRun(*it, 12000);
  got.insert(got.end(), rest.begin(), rest.end());
  ASSERT_EQ(got.size(), full_run.size());
  EXPECT_TRUE(got == full_run);
  // A second checkpoint, of the restored iterator, is as small.
  auto again = make()->MakeIterator();
  ASSERT_TRUE(RestoreIterator(*again, bytes).ok());
  ASSERT_EQ(EncodedRun(*again, 1).size(), 1u);
  EXPECT_LT(CheckpointBytes(*again), int64_t{1} << 20);
  for (const std::string& f : files) (void)io::DefaultFileSystem()->DeleteFile(f);
}

TEST(SmallCheckpointTest, MappedElementsAreSavedAsTheirBytes) {
  const std::vector<std::string> files = BigRecordFiles(1, 20, 1000);
  auto identity = [](Element e) -> Result<Element> { return e; };
  ElementSpec spec{{DType::kString}, {PartialShape({})}, {}};
  auto it = Must(Shuffle(Must(Map(Must(TFRecordDataset(files)), identity, spec)), 20, 1, 2, false))->MakeIterator();
  ASSERT_EQ(EncodedRun(*it, 1).size(), 1u);
  EXPECT_GT(CheckpointBytes(*it), 19 * 1000);  // a map's result is not the record: its bytes are kept
  auto direct = Must(Shuffle(Must(TFRecordDataset(files)), 20, 1, 2, false))->MakeIterator();
  ASSERT_EQ(EncodedRun(*direct, 1).size(), 1u);
  EXPECT_LT(CheckpointBytes(*direct), 2000);
  ExpectCheckpointsExact(
      [&] { return Must(Shuffle(Must(Map(Must(TFRecordDataset(files)), identity, spec)), 7, 1, 2, false)); },
      {0, 1, 5, 13});
}

TEST(SmallCheckpointTest, GloballyShuffledRecordsInAShuffleBufferAreSavedAsOrigins) {
  const std::vector<std::string> files = BigRecordFiles(2, 10, 1000);
  RecordFilesOptions options;
  options.index = RecordIndexPolicy::kLoadOrBuildNoSave;
  options.shuffle = GlobalShuffleOptions{.seed = 3, .reshuffle_each_iteration = true};
  options.read_ahead_records = 4;
  auto make = [&] { return Must(Repeat(Must(Shuffle(Must(FromRecordFiles(files, options)), 20, 1, 2, true)), 2)); };
  auto it = make()->MakeIterator();
  ASSERT_EQ(EncodedRun(*it, 1).size(), 1u);
  EXPECT_LT(CheckpointBytes(*it), 2000);  // 19 buffered records of 1000 bytes
  ExpectCheckpointsExact(make, {0, 1, 7, 19, 20, 21, 33, 40});
}

TEST(SmallCheckpointTest, RecordsThroughRepeatTakeAndSkipAreSavedAsOrigins) {
  const std::vector<std::string> files = BigRecordFiles(2, 30, 1000);
  auto make = [&] {
    return Must(Shuffle(Must(Repeat(Must(Take(Must(Skip(Must(TFRecordDataset(files)), 3)), 50)), 2)), 40, 1, 2, true));
  };
  auto it = make()->MakeIterator();
  ASSERT_EQ(EncodedRun(*it, 1).size(), 1u);
  EXPECT_LT(CheckpointBytes(*it), 4000);  // 39 buffered records of 1000 bytes
  ExpectCheckpointsExact(make, {0, 1, 2, 39, 40, 41, 60, 99, 100});
}

TEST(SmallCheckpointTest, ASequentialInterleaveOfReadersPassesTheRecordsOrigins) {
  // Shown by a map failure naming the file (the interleave's Save is another stage's).
  const std::vector<std::string> files = BigRecordFiles(2, 3, 10);
  WriteRecords(files[1], {"ok", "bad"}, "");
  auto fail_on_bad = [](Element e) -> Result<Element> {
    if (e[0].scalar<std::string>() == "bad") return Status(Code::kInvalidArgument, "cannot parse");
    return e;
  };
  ElementSpec spec{{DType::kString}, {PartialShape({})}, {}};
  DatasetPtr names = Must(FromTensorSlices(Element{Tensor::FromStrings(files)}));
  auto it = Must(Map(Must(TFRecordDatasetOf(names)), fail_on_bad, spec))->MakeIterator();
  Status s;
  Element e;
  bool end = false;
  while ((s = it->GetNext(&e, &end)).ok() && !end) {
  }
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.GetPayload("file"), files[1]);
  EXPECT_EQ(s.GetPayload("record"), "1");
}

TEST(SmallCheckpointTest, ABufferSavedAsBytesOnlyReadsBack) {
  // The format of buffers saved before origins (WriteElements: ".size", "." + i).
  IteratorState state;
  IteratorStateWriter w(&state, "s/");
  w.WriteElements("buffer", std::vector<Element>{Element{Tensor::String("x")}, Element{Tensor::Scalar<int64_t>(7)}});
  IteratorStateReader r(&state, "s/");
  std::vector<Element> elements;
  std::vector<ElementOrigin> origins;
  ASSERT_TRUE(ReadBufferedElements(r, "buffer", &elements, &origins).ok());
  ASSERT_EQ(elements.size(), 2u);
  EXPECT_EQ(elements[0][0].scalar<std::string>(), "x");
  EXPECT_EQ(elements[1][0].scalar<int64_t>(), 7);
  EXPECT_EQ(origins.size(), 2u);
}

TEST(SmallCheckpointTest, ARecordFileChangedSinceTheCheckpointIsDataLoss) {
  const std::vector<std::string> files = BigRecordFiles(1, 10, 100);
  auto make = [&] { return Must(Shuffle(Must(TFRecordDataset(files)), 10, 1, 2, false)); };
  std::string bytes;
  {
    auto it = make()->MakeIterator();
    ASSERT_EQ(EncodedRun(*it, 2).size(), 2u);
    bytes = *SaveIterator(*it);
  }
  WriteRecords(files[0], Records(10, "x", 50), "");
  auto it = make()->MakeIterator();
  Status s = RestoreIterator(*it, bytes);
  EXPECT_EQ(s.code(), Code::kDataLoss) << s;
  EXPECT_EQ(s.GetPayload("file"), files[0]);
}

}  // namespace
}  // namespace sluice::data
