// The queue-fed readers (docs/spec/tf-queues.md §11), after TensorFlow's
// kernel_tests/io_ops/reader_ops_test.py.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/core/cancellation.h"
#include "sluice/core/tensor.h"
#include "sluice/io/crc32c.h"
#include "sluice/io/record_format.h"
#include "sluice/io/readers.h"
#include "sluice/io/record_writer.h"
#include "sluice/queue/queue.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;
using testing::WriteFileOrDie;
using Pair = std::pair<std::string, std::string>;

constexpr auto kSafety = std::chrono::seconds(10);

queue::WaitOptions Safe() { return queue::WaitOptions::Timeout(kSafety); }

// A filename queue holding `names`, closed unless asked otherwise.
std::shared_ptr<queue::Queue> FilenameQueue(const std::vector<std::string>& names, bool close = true) {
  queue::QueueOptions o;
  o.dtypes = {DType::kString};
  o.shapes = {PartialShape(std::vector<int64_t>{})};
  auto q = queue::NewFIFOQueue(o);
  EXPECT_TRUE(IsOk(q));
  for (const auto& n : names) EXPECT_TRUE(IsOk((*q)->Enqueue(Element{Tensor::String(n)})));
  if (close) {
    EXPECT_TRUE(IsOk((*q)->Close()));
  }
  return *q;
}

Pair Read(ReaderBase& reader, queue::Queue& q) {
  auto r = reader.Read(q, Safe());
  EXPECT_TRUE(IsOk(r));
  if (!r.ok()) return {};
  return {r->key, r->value};
}

// Reads until OutOfRange; the pairs read.
std::vector<Pair> ReadToEnd(ReaderBase& reader, queue::Queue& q) {
  std::vector<Pair> out;
  for (;;) {
    auto r = reader.Read(q, Safe());
    if (!r.ok()) {
      EXPECT_TRUE(HasError(r, Code::kOutOfRange, "is closed and has insufficient elements"));
      return out;
    }
    out.emplace_back(r->key, r->value);
  }
}

// ---------------------------------------------------------------------------
// IdentityReader and the ReaderBase model.

TEST(IdentityReaderTest, EachWorkUnitIsOneRecordWithKeyEqualValue) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewIdentityReader({{"test_reader"}}));
  EXPECT_EQ(reader->DisplayName(), "IdentityReader 'test_reader'");
  auto q = FilenameQueue({"A", "B", "C"});
  EXPECT_EQ(Read(*reader, *q), Pair("A", "A"));
  EXPECT_EQ(reader->num_records_produced(), 1);
  EXPECT_EQ(reader->num_work_units_completed(), 1);
  EXPECT_EQ(Read(*reader, *q), Pair("B", "B"));
  EXPECT_EQ(Read(*reader, *q), Pair("C", "C"));
  EXPECT_EQ(reader->num_records_produced(), 3);
  EXPECT_EQ(reader->num_work_units_completed(), 3);
  EXPECT_TRUE(HasError(reader->Read(*q, Safe()), Code::kOutOfRange,
                       "is closed and has insufficient elements (requested 1, current size 0)"));
  EXPECT_EQ(reader->num_records_produced(), 3);
}

TEST(IdentityReaderTest, ReadUpToReturnsOneUnitsRecords) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewIdentityReader());
  auto q = FilenameQueue({"A", "B", "C"});
  SLUICE_ASSERT_OK_AND_ASSIGN(auto batch, reader->ReadUpTo(*q, 2, Safe()));
  EXPECT_EQ(batch.keys, std::vector<std::string>{"A"});
  SLUICE_ASSERT_OK_AND_ASSIGN(batch, reader->ReadUpTo(*q, 0, Safe()));
  EXPECT_TRUE(batch.keys.empty());
  EXPECT_TRUE(HasError(reader->ReadUpTo(*q, -1, Safe()), Code::kInvalidArgument));
  SLUICE_ASSERT_OK_AND_ASSIGN(batch, reader->ReadUpTo(*q, 5, Safe()));
  EXPECT_EQ(batch.values, std::vector<std::string>{"B"});
  SLUICE_ASSERT_OK_AND_ASSIGN(batch, reader->ReadUpTo(*q, 5, Safe()));
  EXPECT_EQ(batch.values, std::vector<std::string>{"C"});
  EXPECT_TRUE(HasError(reader->ReadUpTo(*q, 5, Safe()), Code::kOutOfRange));
  EXPECT_EQ(reader->num_records_produced(), 3);
}

TEST(IdentityReaderTest, ResetClearsCountersAndDropsTheCurrentUnit) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewIdentityReader());
  auto q = FilenameQueue({"X", "Y", "Z"});
  EXPECT_EQ(Read(*reader, *q), Pair("X", "X"));
  ASSERT_TRUE(IsOk(reader->Reset()));
  EXPECT_EQ(reader->num_records_produced(), 0);
  EXPECT_EQ(reader->num_work_units_completed(), 0);
  EXPECT_EQ(Read(*reader, *q), Pair("Y", "Y"));
  EXPECT_EQ(reader->num_records_produced(), 1);
}

TEST(IdentityReaderTest, SerializeRestoreRoundTrips) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewIdentityReader({{"test_reader"}}));
  EXPECT_TRUE(reader->supports_serialize());
  auto q = FilenameQueue({"X", "Y", "Z"});
  EXPECT_EQ(Read(*reader, *q), Pair("X", "X"));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string state, reader->SerializeState());
  EXPECT_EQ(Read(*reader, *q), Pair("Y", "Y"));
  EXPECT_EQ(reader->num_records_produced(), 2);
  ASSERT_TRUE(IsOk(reader->RestoreState(state)));
  EXPECT_EQ(reader->num_records_produced(), 1);
  EXPECT_EQ(reader->num_work_units_completed(), 1);
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string again, reader->SerializeState());
  EXPECT_EQ(again, state);
  EXPECT_EQ(Read(*reader, *q), Pair("Z", "Z"));
  // Another reader restores it too.
  SLUICE_ASSERT_OK_AND_ASSIGN(auto other, NewIdentityReader({{"other"}}));
  ASSERT_TRUE(IsOk(other->RestoreState(state)));
  EXPECT_EQ(other->num_records_produced(), 1);
}

// A state in the documented format with a valid checksum.
std::string MakeState(int64_t started, int64_t finished, int64_t produced, std::string_view work) {
  const size_t payload = 28 + work.size();
  std::string out(12 + payload + 4, '\0');
  char* p = out.data();
  std::memcpy(p, "SLRS", 4);
  EncodeFixed32(p + 4, 1);
  EncodeFixed32(p + 8, static_cast<uint32_t>(payload));
  EncodeFixed64(p + 12, static_cast<uint64_t>(started));
  EncodeFixed64(p + 20, static_cast<uint64_t>(finished));
  EncodeFixed64(p + 28, static_cast<uint64_t>(produced));
  EncodeFixed32(p + 36, static_cast<uint32_t>(work.size()));
  std::memcpy(p + 40, work.data(), work.size());
  EncodeFixed32(p + 12 + payload, crc32c::Mask(crc32c::Value(p, 12 + payload)));
  return out;
}

TEST(IdentityReaderTest, EveryCorruptStateIsRejectedAndResetsTheReader) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewIdentityReader({{"test_reader"}}));
  auto q = FilenameQueue({"X", "Y"});
  EXPECT_EQ(Read(*reader, *q), Pair("X", "X"));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string state, reader->SerializeState());
  EXPECT_EQ(state, MakeState(1, 1, 1, "X"));
  const std::string kMessage = "Could not parse state for IdentityReader 'test_reader'";
  std::vector<std::string> bad = {"", "BOGUS" + state, state + "ExtraJunk", state.substr(1), "garbage"};
  for (size_t n = 0; n < state.size(); ++n) bad.push_back(state.substr(0, n));
  for (size_t i = 0; i < state.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = state;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      bad.push_back(flipped);
    }
  }
  for (const std::string& b : bad) {
    ASSERT_TRUE(IsOk(reader->RestoreState(state)));
    ASSERT_EQ(reader->num_records_produced(), 1);
    ASSERT_TRUE(HasError(reader->RestoreState(b), Code::kInvalidArgument, kMessage)) << "size " << b.size();
    ASSERT_EQ(reader->num_records_produced(), 0) << "a failed restore resets";
  }
  EXPECT_TRUE(HasError(reader->RestoreState(MakeState(-1, 0, 0, "")), Code::kInvalidArgument,
                       "Unexpected negative value when restoring in IdentityReader 'test_reader'"));
  EXPECT_TRUE(HasError(reader->RestoreState(MakeState(0, 0, -5, "")), Code::kInvalidArgument, "negative"));
  EXPECT_TRUE(HasError(reader->RestoreState(MakeState(2, 1, 1, "Y")), Code::kInvalidArgument,
                       "Inconsistent work started vs. finished"));
  EXPECT_TRUE(IsOk(reader->RestoreState(MakeState(3, 7, 9, ""))));
  EXPECT_EQ(reader->num_work_units_completed(), 7);
}

TEST(ReaderBaseTest, RejectsQueuesThatDoNotHoldOneStringPerElement) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewIdentityReader());
  queue::QueueOptions two;
  two.dtypes = {DType::kString, DType::kString};
  SLUICE_ASSERT_OK_AND_ASSIGN(auto q2, queue::NewFIFOQueue(two));
  EXPECT_TRUE(HasError(reader->Read(*q2, Safe()), Code::kInvalidArgument, "Expected single component queue"));
  queue::QueueOptions ints;
  ints.dtypes = {DType::kInt64};
  SLUICE_ASSERT_OK_AND_ASSIGN(auto qi, queue::NewFIFOQueue(ints));
  EXPECT_TRUE(HasError(reader->Read(*qi, Safe()), Code::kInvalidArgument,
                       "Expected queue with single string component"));
  queue::QueueOptions any;
  any.dtypes = {DType::kString};
  SLUICE_ASSERT_OK_AND_ASSIGN(auto qa, queue::NewFIFOQueue(any));
  ASSERT_TRUE(IsOk(qa->Enqueue(Element{Tensor::FromStrings({"a", "b"})})));
  EXPECT_TRUE(HasError(reader->Read(*qa, Safe()), Code::kInvalidArgument,
                       "Expected to dequeue a one-element string tensor"));
}

TEST(ReaderBaseTest, BlockedReadEndsWithTheQueuesDeadlineOrCancellation) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewIdentityReader());
  auto q = FilenameQueue({}, /*close=*/false);
  EXPECT_TRUE(HasError(reader->Read(*q, queue::WaitOptions::Timeout(std::chrono::milliseconds(1))),
                       Code::kDeadlineExceeded));
  CancellationManager cm;
  queue::WaitOptions wait = Safe();
  wait.cancellation = &cm;
  std::thread canceller([&] { cm.StartCancel(); });
  Status s = reader->Read(*q, wait).status();
  canceller.join();
  // Cancelled, unless the cancel came before the read registered (then too).
  EXPECT_TRUE(HasError(s, Code::kCancelled)) << s;
}

TEST(ReaderBaseTest, ReadersBlockedOnDifferentQueuesDoNotBlockEachOther) {
  SLUICE_ASSERT_OK_AND_ASSIGN(auto blocked_reader, NewIdentityReader());
  SLUICE_ASSERT_OK_AND_ASSIGN(auto free_reader, NewIdentityReader());
  auto empty = FilenameQueue({}, /*close=*/false);
  auto full = FilenameQueue({"a", "b"});
  Status blocked_status;
  std::thread t([&] { blocked_status = blocked_reader->Read(*empty, Safe()).status(); });
  EXPECT_EQ(Read(*free_reader, *full), Pair("a", "a"));
  EXPECT_EQ(Read(*free_reader, *full), Pair("b", "b"));
  ASSERT_TRUE(IsOk(empty->Close()));
  t.join();
  EXPECT_TRUE(HasError(blocked_status, Code::kOutOfRange));
}

TEST(ReaderBaseTest, ReadersSharingAQueueSplitItsWorkUnits) {
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.push_back("unit" + std::to_string(i));
  auto q = FilenameQueue(names);
  std::vector<std::unique_ptr<ReaderBase>> readers;
  for (int i = 0; i < 4; ++i) readers.push_back(*NewIdentityReader());
  std::vector<std::vector<Pair>> got(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { got[i] = ReadToEnd(*readers[i], *q); });
  for (auto& t : threads) t.join();
  std::vector<std::string> all;
  for (const auto& g : got) {
    for (const auto& p : g) all.push_back(p.first);
  }
  std::sort(all.begin(), all.end());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(all, names);
}

// ---------------------------------------------------------------------------
// WholeFileReader.

TEST(WholeFileReaderTest, ReadsWholeFilesAndSkipsAMissingOne) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("a"), "contents of a");
  WriteFileOrDie(dir.File("empty"), "");
  const std::string big(1 << 20, 'b');
  WriteFileOrDie(dir.File("big"), big);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewWholeFileReader());
  auto q = FilenameQueue({dir.File("a"), dir.File("missing"), dir.File("empty"), dir.File("big")});
  EXPECT_EQ(Read(*reader, *q), Pair(dir.File("a"), "contents of a"));
  auto missing = reader->Read(*q, Safe());
  EXPECT_TRUE(HasError(missing, Code::kNotFound, dir.File("missing")));
  EXPECT_EQ(Read(*reader, *q), Pair(dir.File("empty"), ""));
  EXPECT_EQ(Read(*reader, *q).second.size(), big.size());
  EXPECT_EQ(reader->num_records_produced(), 3);
  EXPECT_EQ(reader->num_work_units_completed(), 3);
  EXPECT_TRUE(HasError(reader->Read(*q, Safe()), Code::kOutOfRange));
}

TEST(WholeFileReaderTest, SerializeRestoreRoundTripsAndRejectsCorruption) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("a"), "1");
  WriteFileOrDie(dir.File("b"), "2");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewWholeFileReader({{"wf"}}));
  auto q = FilenameQueue({dir.File("a"), dir.File("b")});
  Read(*reader, *q);
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string state, reader->SerializeState());
  Read(*reader, *q);
  ASSERT_TRUE(IsOk(reader->RestoreState(state)));
  EXPECT_EQ(reader->num_records_produced(), 1);
  std::string bad = state;
  bad[bad.size() / 2] ^= 1;
  EXPECT_TRUE(HasError(reader->RestoreState(bad), Code::kInvalidArgument,
                       "Could not parse state for WholeFileReader 'wf'"));
}

// ---------------------------------------------------------------------------
// TextLineReader.

TEST(TextLineReaderTest, KeysAreFileAndLineAndCrlfLooksLikeLf) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("lf"), "Line 0 of file 0\nLine 1 of file 0\n\nLine 3 of file 0\n");
  WriteFileOrDie(dir.File("crlf"), "Line 0 of file 1\r\nLine 1 of file 1\r\n\r\nLast line no newline\r");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTextLineReader());
  auto q = FilenameQueue({dir.File("lf"), dir.File("crlf")});
  const std::vector<Pair> expected = {
      {dir.File("lf") + ":1", "Line 0 of file 0"},   {dir.File("lf") + ":2", "Line 1 of file 0"},
      {dir.File("lf") + ":3", ""},                   {dir.File("lf") + ":4", "Line 3 of file 0"},
      {dir.File("crlf") + ":1", "Line 0 of file 1"}, {dir.File("crlf") + ":2", "Line 1 of file 1"},
      {dir.File("crlf") + ":3", ""},                 {dir.File("crlf") + ":4", "Last line no newline"},
  };
  EXPECT_EQ(ReadToEnd(*reader, *q), expected);
  EXPECT_EQ(reader->num_work_units_completed(), 2);
}

TEST(TextLineReaderTest, LastLineRulesAndEmptyFiles) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("empty"), "");
  WriteFileOrDie(dir.File("nl_only"), "\n");
  WriteFileOrDie(dir.File("cr_last"), "x\n\r");
  WriteFileOrDie(dir.File("no_nl"), "a\nb");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTextLineReader());
  auto q = FilenameQueue({dir.File("empty"), dir.File("nl_only"), dir.File("cr_last"), dir.File("no_nl")});
  const std::vector<Pair> expected = {
      {dir.File("nl_only") + ":1", ""},
      {dir.File("cr_last") + ":1", "x"},
      {dir.File("no_nl") + ":1", "a"},
      {dir.File("no_nl") + ":2", "b"},
  };
  EXPECT_EQ(ReadToEnd(*reader, *q), expected);
}

TEST(TextLineReaderTest, SkipHeaderLinesSkipsInEveryFileAndKeepsLineNumbers) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("f0"), "header\nrow 1\nrow 2\n");
  WriteFileOrDie(dir.File("short"), "only a header");
  WriteFileOrDie(dir.File("f1"), "header\nrow A");
  TextLineReaderOptions options;
  options.skip_header_lines = 1;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTextLineReader(options));
  auto q = FilenameQueue({dir.File("f0"), dir.File("short"), dir.File("f1")});
  const std::vector<Pair> expected = {
      {dir.File("f0") + ":2", "row 1"}, {dir.File("f0") + ":3", "row 2"}, {dir.File("f1") + ":2", "row A"}};
  EXPECT_EQ(ReadToEnd(*reader, *q), expected);
  options.skip_header_lines = -1;
  EXPECT_TRUE(HasError(NewTextLineReader(options), Code::kInvalidArgument, "skip_header_lines"));
}

TEST(TextLineReaderTest, ReadUpToStaysWithinOneFile) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("a"), "a1\na2\na3\na4\na5\n");
  WriteFileOrDie(dir.File("e"), "");
  WriteFileOrDie(dir.File("b"), "b1\nb2\n");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTextLineReader());
  auto q = FilenameQueue({dir.File("a"), dir.File("e"), dir.File("b")});
  std::vector<std::vector<std::string>> batches;
  for (;;) {
    auto batch = reader->ReadUpTo(*q, 3, Safe());
    if (!batch.ok()) {
      EXPECT_TRUE(HasError(batch, Code::kOutOfRange));
      break;
    }
    ASSERT_EQ(batch->keys.size(), batch->values.size());
    batches.push_back(batch->values);
  }
  EXPECT_EQ(batches, (std::vector<std::vector<std::string>>{{"a1", "a2", "a3"}, {"a4", "a5"}, {"b1", "b2"}}));
  EXPECT_EQ(reader->num_records_produced(), 7);
  EXPECT_EQ(reader->num_work_units_completed(), 3);
}

TEST(TextLineReaderTest, MissingFileIsNotFoundAndSkipped) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("b"), "line\n");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTextLineReader());
  auto q = FilenameQueue({dir.File("missing"), dir.File("b")});
  EXPECT_TRUE(HasError(reader->Read(*q, Safe()), Code::kNotFound));
  EXPECT_EQ(Read(*reader, *q), Pair(dir.File("b") + ":1", "line"));
  EXPECT_TRUE(HasError(reader->SerializeState(), Code::kUnimplemented, "Reader SerializeState"));
  EXPECT_TRUE(HasError(reader->RestoreState("x"), Code::kUnimplemented, "Reader RestoreState"));
}

TEST(TextLineReaderTest, LongLinesSpanningBuffersReadWhole) {
  ScratchDir dir;
  const std::string long_line(600000, 'L');
  WriteFileOrDie(dir.File("long"), "short\n" + long_line + "\nend");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTextLineReader());
  auto q = FilenameQueue({dir.File("long")});
  auto got = ReadToEnd(*reader, *q);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].second, long_line);
  EXPECT_EQ(got[2].second, "end");
}

// ---------------------------------------------------------------------------
// FixedLengthRecordReader.

// header + records + footer, as reader_ops_test's _CreateFiles.
std::string FixedLengthFile(int header, int record, int footer, int num_records, int file_index) {
  std::string out(header, 'H');
  for (int j = 0; j < num_records; ++j) out += std::string(record, static_cast<char>('0' + (file_index * 3 + j) % 10));
  out += std::string(footer, 'F');
  return out;
}

TEST(FixedLengthRecordReaderTest, HeaderAndFooterAreSkippedAndKeysCountRecords) {
  ScratchDir dir;
  std::vector<std::string> files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(dir.File("fl" + std::to_string(i)));
    WriteFileOrDie(files.back(), FixedLengthFile(5, 3, 2, i + 1, i));
  }
  FixedLengthRecordReaderOptions options;
  options.header_bytes = 5;
  options.record_bytes = 3;
  options.footer_bytes = 2;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewFixedLengthRecordReader(options));
  auto q = FilenameQueue(files);
  std::vector<Pair> expected;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < i + 1; ++j) {
      expected.emplace_back(files[i] + ":" + std::to_string(j), std::string(3, static_cast<char>('0' + (i * 3 + j) % 10)));
    }
  }
  EXPECT_EQ(ReadToEnd(*reader, *q), expected);
}

TEST(FixedLengthRecordReaderTest, HopBytesOverlapOrSkipAndPartialRecordsAreDropped) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("h"), "HH0123456789F");  // header 2, footer 1: stream "0123456789"
  FixedLengthRecordReaderOptions options;
  options.header_bytes = 2;
  options.footer_bytes = 1;
  options.record_bytes = 4;
  options.hop_bytes = 2;  // overlapping windows
  SLUICE_ASSERT_OK_AND_ASSIGN(auto overlapping, NewFixedLengthRecordReader(options));
  auto q = FilenameQueue({dir.File("h")});
  std::vector<std::string> values;
  for (const auto& p : ReadToEnd(*overlapping, *q)) values.push_back(p.second);
  EXPECT_EQ(values, (std::vector<std::string>{"0123", "2345", "4567", "6789"}));

  options.record_bytes = 2;
  options.hop_bytes = 3;  // gaps between records
  SLUICE_ASSERT_OK_AND_ASSIGN(auto gaps, NewFixedLengthRecordReader(options));
  q = FilenameQueue({dir.File("h")});
  values.clear();
  for (const auto& p : ReadToEnd(*gaps, *q)) values.push_back(p.second);
  EXPECT_EQ(values, (std::vector<std::string>{"01", "34", "67"}));  // "9" + footer is partial

  options.record_bytes = 3;
  options.hop_bytes = 0;  // = record_bytes; "9" is a dropped partial record
  SLUICE_ASSERT_OK_AND_ASSIGN(auto plain, NewFixedLengthRecordReader(options));
  q = FilenameQueue({dir.File("h")});
  values.clear();
  for (const auto& p : ReadToEnd(*plain, *q)) values.push_back(p.second);
  EXPECT_EQ(values, (std::vector<std::string>{"012", "345", "678"}));
}

TEST(FixedLengthRecordReaderTest, CompressedEncodingsApplyToTheDecompressedBytes) {
  ScratchDir dir;
  const std::string raw = FixedLengthFile(5, 100, 7, 50, 1);
  WriteFileOrDie(dir.File("z"), testing::ZlibCompress(raw));
  WriteFileOrDie(dir.File("g"), testing::Gzip(raw));
  for (auto [name, encoding] : {Pair{"z", "ZLIB"}, Pair{"g", "GZIP"}}) {
    FixedLengthRecordReaderOptions options;
    options.header_bytes = 5;
    options.record_bytes = 100;
    options.footer_bytes = 7;
    options.encoding = encoding;
    SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewFixedLengthRecordReader(options));
    auto q = FilenameQueue({dir.File(name)});
    auto got = ReadToEnd(*reader, *q);
    ASSERT_EQ(got.size(), 50u) << encoding;
    for (int j = 0; j < 50; ++j) {
      EXPECT_EQ(got[j].first, dir.File(name) + ":" + std::to_string(j));
      EXPECT_EQ(got[j].second, raw.substr(5 + 100 * j, 100));
    }
  }
}

TEST(FixedLengthRecordReaderTest, MnistFramesReadAsFixedLengthRecordsGiveThePayloads) {
  FixedLengthRecordReaderOptions options;
  options.header_bytes = 12;
  options.record_bytes = 3187;
  options.hop_bytes = 3203;
  options.footer_bytes = 4;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewFixedLengthRecordReader(options));
  auto q = FilenameQueue({testing::TestdataPath("tfrecord/tfx_mnist/mnist.tfrecord")});
  auto got = ReadToEnd(*reader, *q);
  ASSERT_EQ(got.size(), 1000u);
  for (const auto& p : got) ASSERT_EQ(p.second.size(), 3187u);
  EXPECT_NE(got[0].second.find("image_class"), std::string::npos);
}

TEST(FixedLengthRecordReaderTest, RejectsNegativeSizesAndUnknownEncodings) {
  FixedLengthRecordReaderOptions options;
  options.record_bytes = 4;
  options.header_bytes = -1;
  EXPECT_TRUE(HasError(NewFixedLengthRecordReader(options), Code::kInvalidArgument, "header_bytes must be >= 0 not -1"));
  options.header_bytes = 0;
  options.footer_bytes = -2;
  EXPECT_TRUE(HasError(NewFixedLengthRecordReader(options), Code::kInvalidArgument, "footer_bytes must be >= 0 not -2"));
  options.footer_bytes = 0;
  options.hop_bytes = -3;
  EXPECT_TRUE(HasError(NewFixedLengthRecordReader(options), Code::kInvalidArgument, "hop_bytes must be >= 0 not -3"));
  options.hop_bytes = 0;
  options.record_bytes = -4;
  EXPECT_TRUE(HasError(NewFixedLengthRecordReader(options), Code::kInvalidArgument, "record_bytes must be >= 0 not -4"));
  options.record_bytes = 0;
  EXPECT_TRUE(HasError(NewFixedLengthRecordReader(options), Code::kInvalidArgument));
  options.record_bytes = 4;
  options.encoding = "BZIP2";
  EXPECT_TRUE(HasError(NewFixedLengthRecordReader(options), Code::kInvalidArgument, "BZIP2"));
}

// ---------------------------------------------------------------------------
// TFRecordReader.

void WriteTFRecords(const std::string& path, const std::vector<std::string>& records,
                    CompressionType type = CompressionType::kNone) {
  RecordWriterOptions options;
  options.compression_type = type;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto writer, RecordWriter::Open(path, options));
  for (const auto& r : records) ASSERT_TRUE(IsOk(writer->Write(r)));
  ASSERT_TRUE(IsOk(writer->Close()));
}

std::vector<std::string> NumberedRecords(int file, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("Record " + std::to_string(i) + " of file " + std::to_string(file));
  return out;
}

TEST(TFRecordReaderTest, KeysAreFileAndOffset) {
  ScratchDir dir;
  std::vector<std::string> files;
  for (int f = 0; f < 2; ++f) {
    files.push_back(dir.File("tf" + std::to_string(f)));
    WriteTFRecords(files.back(), NumberedRecords(f, 7));
  }
  WriteTFRecords(dir.File("empty"), {});
  files.insert(files.begin() + 1, dir.File("empty"));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader());
  auto q = FilenameQueue(files);
  std::vector<Pair> expected;
  for (int f = 0; f < 2; ++f) {
    uint64_t offset = 0;
    for (const auto& r : NumberedRecords(f, 7)) {
      expected.emplace_back(dir.File("tf" + std::to_string(f)) + ":" + std::to_string(offset), r);
      offset += r.size() + 16;
    }
  }
  EXPECT_EQ(ReadToEnd(*reader, *q), expected);
  EXPECT_EQ(reader->num_records_produced(), 14);
  EXPECT_EQ(reader->num_work_units_completed(), 3);
  EXPECT_TRUE(HasError(reader->SerializeState(), Code::kUnimplemented, "Reader SerializeState"));
}

TEST(TFRecordReaderTest, ReadsZlibAndGzipAndTreatsAnUnknownTypeAsNone) {
  ScratchDir dir;
  WriteTFRecords(dir.File("z"), NumberedRecords(0, 20), CompressionType::kZlib);
  WriteTFRecords(dir.File("g"), NumberedRecords(1, 20), CompressionType::kGzip);
  WriteTFRecords(dir.File("p"), NumberedRecords(2, 20));
  for (auto [name, type] : {Pair{"z", "ZLIB"}, Pair{"g", "GZIP"}, Pair{"p", "SNAPPY?"}}) {
    TFRecordReaderOptions options;
    options.compression_type = type;
    SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader(options));
    auto q = FilenameQueue({dir.File(name)});
    auto got = ReadToEnd(*reader, *q);
    ASSERT_EQ(got.size(), 20u) << type;
    EXPECT_EQ(got[19].second, NumberedRecords(name == std::string("z") ? 0 : name == std::string("g") ? 1 : 2, 20)[19]);
  }
}

TEST(TFRecordReaderTest, ReadUpToStaysWithinOneFile) {
  ScratchDir dir;
  WriteTFRecords(dir.File("a"), NumberedRecords(0, 5));
  WriteTFRecords(dir.File("b"), NumberedRecords(1, 5));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader());
  auto q = FilenameQueue({dir.File("a"), dir.File("b")});
  std::vector<size_t> sizes;
  for (;;) {
    auto batch = reader->ReadUpTo(*q, 3, Safe());
    if (!batch.ok()) break;
    sizes.push_back(batch->keys.size());
    for (const auto& k : batch->keys) EXPECT_EQ(k.substr(0, k.rfind(':')), batch->keys[0].substr(0, batch->keys[0].rfind(':')));
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 2, 3, 2}));
}

TEST(TFRecordReaderTest, DataLossRepeatsOnTheSameUnitUntilReset) {
  ScratchDir dir;
  WriteTFRecords(dir.File("bad"), NumberedRecords(0, 3));
  WriteTFRecords(dir.File("good"), NumberedRecords(1, 1));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFileToString(nullptr, dir.File("bad")));
  const size_t second = NumberedRecords(0, 1)[0].size() + 16;
  bytes[second + 12 + 2] ^= 1;
  WriteFileOrDie(dir.File("bad"), bytes);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader());
  auto q = FilenameQueue({dir.File("bad"), dir.File("good")});
  EXPECT_EQ(Read(*reader, *q).second, NumberedRecords(0, 1)[0]);
  const std::string expected = "corrupted record at " + std::to_string(second + 12);
  auto r = reader->Read(*q, Safe());
  EXPECT_TRUE(HasError(r, Code::kDataLoss, expected));
  EXPECT_EQ(r.status().GetPayload("record"), "1");
  EXPECT_TRUE(HasError(reader->Read(*q, Safe()), Code::kDataLoss, expected));
  ASSERT_TRUE(IsOk(reader->Reset()));
  EXPECT_EQ(Read(*reader, *q), Pair(dir.File("good") + ":0", NumberedRecords(1, 1)[0]));
}

TEST(TFRecordReaderTest, IgnoreErrorsSkipsCorruptRecords) {
  ScratchDir dir;
  WriteTFRecords(dir.File("bad"), NumberedRecords(0, 3));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string bytes, ReadFileToString(nullptr, dir.File("bad")));
  const size_t second = NumberedRecords(0, 1)[0].size() + 16;
  bytes[second + 12 + 2] ^= 1;
  WriteFileOrDie(dir.File("bad"), bytes);
  CountingReporter reporter;
  TFRecordReaderOptions options;
  options.record_options.ignore_errors = true;
  options.record_options.reporter = &reporter;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader(options));
  auto q = FilenameQueue({dir.File("bad")});
  auto got = ReadToEnd(*reader, *q);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].second, NumberedRecords(0, 3)[2]);
  EXPECT_EQ(got[1].first, dir.File("bad") + ":" + std::to_string(2 * second));
  EXPECT_EQ(reporter.records_dropped(), 1);
}

TEST(TFRecordReaderTest, MissingFileIsNotFoundAndSkipped) {
  ScratchDir dir;
  WriteTFRecords(dir.File("b"), {"x"});
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader());
  auto q = FilenameQueue({dir.File("nope"), dir.File("b")});
  EXPECT_TRUE(HasError(reader->Read(*q, Safe()), Code::kNotFound, dir.File("nope")));
  EXPECT_EQ(Read(*reader, *q), Pair(dir.File("b") + ":0", "x"));
  EXPECT_EQ(reader->num_work_units_completed(), 0);  // b is still in progress
  EXPECT_TRUE(HasError(reader->Read(*q, Safe()), Code::kOutOfRange));
  EXPECT_EQ(reader->num_work_units_completed(), 1);
}

TEST(TFRecordReaderTest, ReadsTheTestdataGzipFile) {
  TFRecordReaderOptions options;
  options.compression_type = "GZIP";
  SLUICE_ASSERT_OK_AND_ASSIGN(auto reader, NewTFRecordReader(options));
  const std::string path = testing::TestdataPath("tfrecord/tfx_tfjs_next_page/data.tfrecord.gz");
  auto q = FilenameQueue({path});
  auto got = ReadToEnd(*reader, *q);
  ASSERT_EQ(got.size(), 100u);
  EXPECT_EQ(got[1].first, path + ":85");
}

}  // namespace
}  // namespace sluice::io
