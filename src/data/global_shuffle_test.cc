// FromRecordFiles and its global shuffle.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "data/data_test_util.h"
#include "sluice/data/datasets.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_writer.h"

namespace sluice::data {
namespace {

using testing::Must;

std::string TempPath(const std::string& name) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test.begin(), test.end(), '/', '_');  // parameterized tests: "Name/0"
  return ::testing::TempDir() + "/" + test + name;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto w = io::RecordWriter::Open(path);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) ASSERT_TRUE((*w)->Write(r).ok());
  ASSERT_TRUE((*w)->Close().ok());
  ::unlink(io::RecordIndex::IndexPath(path).c_str());
}

// Files "<test>f0", "<test>f1", ... holding "f<i>-<j>" for j < sizes[i].
std::vector<std::string> WriteFiles(const std::vector<int>& sizes) {
  std::vector<std::string> files;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string prefix = StrCat("f", i);
    files.push_back(TempPath(prefix));
    std::vector<std::string> records;
    for (int j = 0; j < sizes[i]; ++j) records.push_back(StrCat(prefix, "-", j));
    WriteRecords(files.back(), records);
  }
  return files;
}

std::vector<std::string> Pass(IteratorBase* it) {
  std::vector<std::string> out;
  while (true) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || end) return out;
    out.push_back(e[0].scalar<std::string>());
  }
}
std::vector<std::string> Pass(const DatasetPtr& ds) { return Pass(ds->MakeIterator().get()); }

RecordFilesOptions Shuffled(uint64_t seed, bool reshuffle = true) {
  RecordFilesOptions o;
  o.shuffle = GlobalShuffleOptions{seed, reshuffle};
  o.read_ahead_records = 7;  // several batches per pass
  return o;
}

TEST(FromRecordFilesTest, ReadsFilesInOrderWithoutShuffle) {
  std::vector<std::string> files = WriteFiles({3, 0, 2});
  DatasetPtr ds = Must(FromRecordFiles(files));
  EXPECT_EQ(ds->cardinality(), 5);
  EXPECT_EQ(Pass(ds), (std::vector<std::string>{"f0-0", "f0-1", "f0-2", "f2-0", "f2-1"}));
}

TEST(GlobalShuffleTest, EveryRecordExactlyOncePerEpoch) {
  std::vector<std::string> files = WriteFiles({50, 1, 0, 77, 13});
  DatasetPtr ds = Must(FromRecordFiles(files, Shuffled(5)));
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::map<std::string, int> counts;
    for (const std::string& r : Pass(ds)) ++counts[r];
    EXPECT_EQ(counts.size(), 141u);
    for (const auto& [record, count] : counts) EXPECT_EQ(count, 1) << record;
    EXPECT_EQ(counts.count("f1-0"), 1u);
    EXPECT_EQ(counts.count("f3-76"), 1u);
  }
}

TEST(GlobalShuffleTest, EpochsDifferAndSeedsRepeat) {
  std::vector<std::string> files = WriteFiles({40, 40, 40});
  DatasetPtr ds = Must(FromRecordFiles(files, Shuffled(11)));
  std::vector<std::string> e0 = Pass(ds), e1 = Pass(ds);
  EXPECT_NE(e0, e1);
  std::vector<std::string> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(e0, sorted);
  // A new dataset with the same seed starts again from epoch 0.
  DatasetPtr again = Must(FromRecordFiles(files, Shuffled(11)));
  EXPECT_EQ(Pass(again), e0);
  EXPECT_EQ(Pass(again), e1);
  EXPECT_NE(Pass(Must(FromRecordFiles(files, Shuffled(12)))), e0);
  // GlobalShuffle of an unshuffled dataset is the same dataset with the shuffle.
  DatasetPtr later = Must(GlobalShuffle(Must(FromRecordFiles(files)), GlobalShuffleOptions{11, true}));
  EXPECT_EQ(Pass(later), e0);
  EXPECT_EQ(GlobalShuffle(Must(Take(later, 3)), {}).status().code(), Code::kInvalidArgument);
  // Without reshuffling every pass repeats epoch 0.
  DatasetPtr fixed = Must(FromRecordFiles(files, Shuffled(11, /*reshuffle=*/false)));
  EXPECT_EQ(Pass(fixed), e0);
  EXPECT_EQ(Pass(fixed), e0);
}

TEST(GlobalShuffleTest, RepeatGivesANewPermutationPerEpoch) {
  std::vector<std::string> files = WriteFiles({10, 10});
  std::vector<std::string> both = Pass(Must(Repeat(Must(FromRecordFiles(files, Shuffled(3))), 2)));
  ASSERT_EQ(both.size(), 40u);
  DatasetPtr ds = Must(FromRecordFiles(files, Shuffled(3)));
  std::vector<std::string> e0 = Pass(ds), e1 = Pass(ds);
  EXPECT_EQ(std::vector<std::string>(both.begin(), both.begin() + 20), e0);
  EXPECT_EQ(std::vector<std::string>(both.begin() + 20, both.end()), e1);
}

TEST(GlobalShuffleTest, PositionIsSeedEpochAndRecordsHandedOut) {
  std::vector<std::string> files = WriteFiles({5});
  DatasetPtr ds = Must(FromRecordFiles(files, Shuffled(9)));
  Pass(ds);
  std::unique_ptr<RecordFilesIterator> it = MakeRecordFilesIterator(ds);
  ASSERT_NE(it, nullptr);
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  GlobalShufflePosition p = it->position();
  EXPECT_EQ(p.seed, 9u);
  EXPECT_EQ(p.epoch, 1u);
  EXPECT_EQ(p.position, 2);
  EXPECT_EQ(MakeRecordFilesIterator(Must(Range(0, 3))), nullptr);
}

TEST(FromRecordFilesTest, UsesAFreshIndexAndRebuildsAStaleOne) {
  const std::string f = TempPath("f");
  WriteRecords(f, {"a", "b"});
  ASSERT_EQ(Pass(Must(FromRecordFiles({f}))), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(io::RecordIndex::Load(io::RecordIndex::IndexPath(f)).ok());  // written beside the file
  // New contents of another length: the side file no longer fits.
  {
    auto w = io::RecordWriter::Open(f);
    ASSERT_TRUE(w.ok());
    for (const char* r : {"xx", "yyyy", "z"}) ASSERT_TRUE((*w)->Write(r).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  RecordFilesOptions require;
  require.index = RecordIndexPolicy::kRequireFresh;
  EXPECT_EQ(FromRecordFiles({f}, require).status().code(), Code::kFailedPrecondition);
  DatasetPtr ds = Must(FromRecordFiles({f}));
  EXPECT_EQ(ds->cardinality(), 3);
  EXPECT_EQ(Pass(ds), (std::vector<std::string>{"xx", "yyyy", "z"}));
  EXPECT_TRUE(FromRecordFiles({f}, require).ok());
}

class ReadPathTest : public ::testing::TestWithParam<bool> {
 protected:
  RecordFilesOptions Options() const {
    RecordFilesOptions o;
    o.use_mmap = GetParam();
    return o;
  }
};

TEST_P(ReadPathTest, ReadsEveryRecordInPermutationOrder) {
  std::vector<std::string> files = WriteFiles({20, 33});
  RecordFilesOptions o = Options();
  o.shuffle = GlobalShuffleOptions{2, true};
  o.read_ahead_records = 5;
  RecordFilesOptions other = o;
  other.use_mmap = !o.use_mmap;
  // Both read paths give the same records in the same order.
  std::vector<std::string> got = Pass(Must(FromRecordFiles(files, o)));
  EXPECT_EQ(got, Pass(Must(FromRecordFiles(files, other))));
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), 53u);
}

TEST_P(ReadPathTest, CorruptRecordIsDataLossNamingFileRecordAndOffset) {
  const std::string f = TempPath("f");
  WriteRecords(f, {"good", "soon bad", "fine"});
  DatasetPtr ds = Must(FromRecordFiles({f}, Options()));  // indexed while intact
  {
    std::fstream s(f, std::ios::in | std::ios::out | std::ios::binary);
    s.seekp(20 + 12 + 2);  // inside record 1's data
    s.put('X');
  }
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_EQ(s.GetPayload("file"), f);
  EXPECT_EQ(s.GetPayload("record"), "1");
  EXPECT_EQ(s.GetPayload("offset"), "20");
  EXPECT_NE(s.message().find(f), std::string::npos) << s;
  EXPECT_NE(s.message().find("record 1"), std::string::npos) << s;
  // The next call goes on with the next record.
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<std::string>(), "fine");
}

TEST_P(ReadPathTest, TruncatedFileIsDataLoss) {
  const std::string f = TempPath("f");
  WriteRecords(f, {"one", "two"});
  DatasetPtr ds = Must(FromRecordFiles({f}, Options()));
  // Into record 1 (a mapping reads zeros past the end inside the last page:
  // the size check, not the fault, finds it).
  ASSERT_EQ(::truncate(f.c_str(), 19 + 10), 0);
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kDataLoss) << s;
  EXPECT_EQ(s.GetPayload("record"), "1");
  EXPECT_EQ(s.GetPayload("offset"), "19");
}

TEST_P(ReadPathTest, FileTruncatedByWholePagesWhileMappedIsDataLossNotACrash) {
  const std::string f = TempPath("f");
  WriteRecords(f, std::vector<std::string>(10, std::string(3000, 'x')));
  DatasetPtr ds = Must(FromRecordFiles({f}, Options()));  // mapped here (use_mmap)
  ASSERT_EQ(::truncate(f.c_str(), 8192), 0);  // pages 2.. of the mapping are gone
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  int ok = 0, lost = 0;
  while (true) {
    Status s = it->GetNext(&e, &end);
    if (s.ok() && end) break;
    if (s.ok()) {
      ++ok;
    } else {
      EXPECT_EQ(s.code(), Code::kDataLoss) << s;
      ++lost;
    }
  }
  EXPECT_EQ(ok, 2);  // the records wholly inside the first 8192 bytes
  EXPECT_EQ(lost, 8);
}

INSTANTIATE_TEST_SUITE_P(MmapAndPread, ReadPathTest, ::testing::Bool());

TEST(FromRecordFilesTest, CorruptFileWithoutIndexFailsAtConstruction) {
  const std::string f = TempPath("f");
  WriteRecords(f, {"good", "soon bad"});
  {
    std::fstream s(f, std::ios::in | std::ios::out | std::ios::binary);
    s.seekp(20 + 12 + 2);
    s.put('X');
  }
  Result<DatasetPtr> r = FromRecordFiles({f});
  EXPECT_EQ(r.status().code(), Code::kDataLoss);
  EXPECT_EQ(r.status().GetPayload("record"), "1");
}

TEST(FromRecordFilesTest, RefusesCompressionAndNoFiles) {
  RecordFilesOptions gzip;
  gzip.compression_type = "GZIP";
  EXPECT_EQ(FromRecordFiles({"x"}, gzip).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(FromRecordFiles({}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(FromRecordFiles({TempPath("missing")}).status().code(), Code::kNotFound);
}

TEST(FromRecordFilesTest, ReadAheadByBytesStillVisitsEverything) {
  std::vector<std::string> files = WriteFiles({30, 30});
  RecordFilesOptions o = Shuffled(1);
  o.read_ahead_records = 0;
  o.read_ahead_bytes = 1;  // one record per batch
  std::set<std::string> seen;
  for (const std::string& r : Pass(Must(FromRecordFiles(files, o)))) seen.insert(r);
  EXPECT_EQ(seen.size(), 60u);
}

}  // namespace
}  // namespace sluice::data
