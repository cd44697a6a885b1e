// CacheToFile: write once, replay from the file, partial passes, a second
// writer, corrupt files, string and sparse components.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "data/data_test_util.h"
#include "data/sources_test_util.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Ints;
using testing::Must;
using testing::ScratchDir;
using V = std::vector<int64_t>;

// range(n) whose map counts its calls, so a replay from the file is visible.
DatasetPtr Counted(int64_t n, std::shared_ptr<std::atomic<int>> calls) {
  return Must(Map(
      testing::RangeOf(n),
      [calls](Element e) -> Result<Element> {
        ++*calls;
        return e;
      },
      testing::Int64Scalar()));
}

Status FirstError(const DatasetPtr& ds) {
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  while (true) {
    Status s = it->GetNext(&e, &end);
    if (!s.ok() || end) return s;
  }
}

TEST(CacheToFileTest, FirstCompletePassWritesTheFileLaterPassesReadIt) {
  ScratchDir dir;
  auto calls = std::make_shared<std::atomic<int>>(0);
  DatasetPtr ds = Must(CacheToFile(Counted(5, calls), dir.Path("c")));
  EXPECT_EQ(Ints(ds), (V{0, 1, 2, 3, 4}));
  EXPECT_TRUE(std::filesystem::exists(dir.Path("c")));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("c.lockfile")));
  EXPECT_EQ(Ints(ds), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(calls->load(), 5);
  // Another dataset naming the same file reads it too.
  EXPECT_EQ(Ints(Must(CacheToFile(Counted(5, calls), dir.Path("c")))), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(calls->load(), 5);
}

TEST(CacheToFileTest, APartialPassLeavesNothing) {
  ScratchDir dir;
  DatasetPtr ds = Must(CacheToFile(testing::RangeOf(5), dir.Path("c")));
  {
    auto it = ds->MakeIterator();
    Element e;
    bool end = false;
    ASSERT_TRUE(it->GetNext(&e, &end).ok());
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.Path("")));
  EXPECT_EQ(Ints(ds), (V{0, 1, 2, 3, 4}));
}

TEST(CacheToFileTest, ASecondConcurrentWriterIsAlreadyExists) {
  ScratchDir dir;
  DatasetPtr ds = Must(CacheToFile(testing::RangeOf(5), dir.Path("c")));
  auto first = ds->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(first->GetNext(&e, &end).ok());
  Status s = FirstError(ds);
  EXPECT_EQ(s.code(), Code::kAlreadyExists);
  EXPECT_NE(s.message().find("There appears to be a concurrent caching iterator running"), std::string::npos);
}

TEST(CacheToFileTest, StringAndSparseComponentsRoundTrip) {
  ScratchDir dir;
  Tensor indices(DType::kInt64, TensorShape{2, 2});
  for (int i = 0; i < 4; ++i) indices.flat<int64_t>()[i] = i;
  Element element{Tensor::FromStrings({"a", "", std::string("n\0ul", 4)}), indices,
                  Tensor::FromVector<float>({1.5f, 2.5f}), Tensor::FromVector<int64_t>({3, 4})};
  DatasetPtr ds = Must(CacheToFile(Must(FromTensors(element)), dir.Path("c")));
  ASSERT_EQ(Elements(ds).size(), 1u);
  std::vector<Element> replay = Elements(ds);
  ASSERT_EQ(replay.size(), 1u);
  ASSERT_EQ(replay[0].size(), element.size());
  for (size_t i = 0; i < element.size(); ++i) EXPECT_TRUE(ValuesEqual(replay[0][i], element[i])) << i;
}

TEST(CacheToFileTest, ATruncatedOrCorruptFileIsDataLossNamingIt) {
  ScratchDir dir;
  DatasetPtr ds = Must(CacheToFile(testing::RangeOf(50), dir.Path("c")));
  ASSERT_EQ(Ints(ds).size(), 50u);
  std::filesystem::resize_file(dir.Path("c"), std::filesystem::file_size(dir.Path("c")) - 5);
  Status s = FirstError(ds);
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find(dir.Path("c")), std::string::npos);
  EXPECT_EQ(s.GetPayload("file"), dir.Path("c"));

  dir.Write("c", "SLCACHE1garbage-garbage");
  EXPECT_EQ(FirstError(ds).code(), Code::kDataLoss);
  dir.Write("c", "not a cache");
  EXPECT_EQ(FirstError(ds).code(), Code::kDataLoss);
}

}  // namespace
}  // namespace sluice::data
