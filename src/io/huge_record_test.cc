// A record header that claims a huge length (2^40 bytes, and up to 2^64 - 1)
// with a valid length checksum, in a file of a few bytes: the record
// iterator, RecordReader (strict and ignore_errors), the queue-fed
// TFRecordReader and the record index must answer at once (DataLoss, or a
// skip) without allocating anything of that size; so must an index side
// file that claims 2^40 records.
//
// The allocation check runs in a forked child whose address space is capped
// (RLIMIT_AS), where a 2^40-byte allocation throws std::bad_alloc. Sanitizer
// builds reserve terabytes of shadow memory and cannot run under such a cap;
// there (and in every build, in-process) the checks must pass without
// std::bad_alloc and quickly.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/core/tensor.h"
#include "sluice/io/readers.h"
#include "sluice/io/record_format.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_iterator.h"
#include "sluice/io/record_reader.h"
#include "sluice/queue/queue.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLUICE_HUGE_RECORD_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SLUICE_HUGE_RECORD_TEST_SANITIZED 1
#endif
#endif

namespace sluice::io {
namespace {

using testing::ScratchDir;

constexpr uint64_t kClaims[] = {uint64_t{1} << 40, kMaxRecordLength, kMaxRecordLength + 1, ~uint64_t{0}};

// A valid record "ok", then a header claiming `length` bytes and four bytes.
std::string HugeClaim(uint64_t length) {
  char header[kRecordHeaderSize];
  EncodeRecordHeader(header, length);
  return EncodeRecord("ok") + std::string(header, sizeof(header)) + "tiny";
}

std::string Stored(const std::string& plain, CompressionType c) {
  if (c == CompressionType::kNone) return plain;
  return testing::Deflate(plain, c == CompressionType::kGzip ? 31 : 15);
}

// "" if `s` is DataLoss, else what it is.
std::string ExpectDataLoss(const Status& s, const std::string& what) {
  return s.code() == Code::kDataLoss ? "" : what + ": expected DataLoss, got " + s.ToString() + "\n";
}

std::string CheckIterator(const std::string& path, const RecordReaderOptions& options) {
  Result<std::unique_ptr<TFRecordIterator>> it = TFRecordIterator::Open(path, options);
  if (!it.ok()) return "open: " + it.status().ToString() + "\n";
  Result<std::optional<std::string>> first = (*it)->Next();
  if (!first.ok() || *first != std::optional<std::string>("ok")) return "iterator: the record before is lost\n";
  return ExpectDataLoss((*it)->Next().status(), "iterator");
}

// ignore_errors drops the claimed record and ends.
std::string CheckSkipping(const std::string& path, RecordReaderOptions options) {
  options.ignore_errors = true;
  Result<std::unique_ptr<RecordReader>> reader = RecordReader::Open(path, options);
  if (!reader.ok()) return "open: " + reader.status().ToString() + "\n";
  std::string_view record;
  if (!(*reader)->ReadNext(&record).ok() || record != "ok") return "ignore_errors: the record before is lost\n";
  const Status end = (*reader)->ReadNext(&record);
  if (!errors::IsOutOfRange(end)) return "ignore_errors: expected the end, got " + end.ToString() + "\n";
  return (*reader)->corruptions_skipped() == 1 ? "" : "ignore_errors: the claim was not reported\n";
}

std::string CheckQueueFedReader(const std::string& path, CompressionType c) {
  TFRecordReaderOptions options;
  options.compression_type = std::string(CompressionTypeName(c));
  Result<std::unique_ptr<ReaderBase>> reader = NewTFRecordReader(options);
  queue::QueueOptions qo;
  qo.dtypes = {DType::kString};
  qo.shapes = {PartialShape(std::vector<int64_t>{})};
  Result<std::shared_ptr<queue::Queue>> q = queue::NewFIFOQueue(qo);
  if (!reader.ok() || !q.ok() || !(*q)->Enqueue(Element{Tensor::String(path)}).ok()) return "reader setup failed\n";
  Result<ReaderBase::Record> first = (*reader)->Read(**q);
  if (!first.ok() || first->value != "ok") return "TFRecordReader: the record before is lost\n";
  return ExpectDataLoss((*reader)->Read(**q).status(), "TFRecordReader");
}

// A side file that claims 2^40 records in its 68 bytes.
std::string CheckIndexFile(const std::string& dir) {
  std::string bytes(68, '\0');
  std::copy(RecordIndex::kMagic, RecordIndex::kMagic + 8, bytes.begin());
  EncodeFixed32(bytes.data() + 8, RecordIndex::kVersion);
  EncodeFixed64(bytes.data() + 40, uint64_t{1} << 40);
  const std::string path = dir + "/claims.idx";
  if (!WriteStringToFile(nullptr, path, bytes).ok()) return "cannot write the index file\n";
  return ExpectDataLoss(RecordIndex::Load(path).status(), "RecordIndex::Load");
}

// Every check over every claim and compression; "" when all pass, else the
// failures. Never throws.
std::string CheckAll(const std::string& dir) {
  try {
    std::string failures;
    int n = 0;
    for (uint64_t claim : kClaims) {
      for (CompressionType c : {CompressionType::kNone, CompressionType::kZlib, CompressionType::kGzip}) {
        const std::string path = dir + "/claim-" + std::to_string(n++);
        if (!WriteStringToFile(nullptr, path, Stored(HugeClaim(claim), c)).ok()) return "cannot write " + path;
        RecordReaderOptions options;
        options.compression_type = c;
        std::string f = CheckIterator(path, options) + CheckSkipping(path, options) + CheckQueueFedReader(path, c) +
                        ExpectDataLoss(RecordIndex::Build(path, options).status(), "RecordIndex::Build") +
                        ExpectDataLoss(RecordIndex::LoadOrBuild(path, options).status(), "RecordIndex::LoadOrBuild");
        if (!f.empty()) {
          failures += "claim " + std::to_string(claim) + ", compression '" + std::string(CompressionTypeName(c)) + "':\n" + f;
        }
      }
    }
    return failures + CheckIndexFile(dir);
  } catch (const std::bad_alloc&) {
    return "std::bad_alloc: something allocated what a header claimed\n";
  }
}

TEST(HugeRecordTest, ClaimedLengthsFailAtOnceWithoutBadAlloc) {
  ScratchDir dir;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(CheckAll(dir.path()), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

#ifndef SLUICE_HUGE_RECORD_TEST_SANITIZED
// Bytes of address space this process has mapped now (/proc/self/statm).
uint64_t MappedBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}
#endif

TEST(HugeRecordTest, ClaimedLengthsAllocateNothingUnderACappedAddressSpace) {
#ifdef SLUICE_HUGE_RECORD_TEST_SANITIZED
  GTEST_SKIP() << "sanitizers reserve more address space than the cap allows";
#else
  ScratchDir dir;
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child: 256 MiB more than it has, far below the claims.
    const rlim_t cap = static_cast<rlim_t>(MappedBytes() + (uint64_t{256} << 20));
    const struct rlimit limit = {cap, cap};
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    const std::string failures = CheckAll(dir.path());
    if (!failures.empty()) std::fprintf(stderr, "%s", failures.c_str());
    std::fflush(stderr);
    _exit(failures.empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died with signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's stderr above";
#endif
}

}  // namespace
}  // namespace sluice::io
