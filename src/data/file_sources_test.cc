// ListFiles and the readers over a dataset of file names.
#include <gtest/gtest.h>

#include <string>

#include "data/data_test_util.h"
#include "data/sources_test_util.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Must;
using testing::ScratchDir;

std::vector<std::string> Strings(const DatasetPtr& ds) {
  std::vector<std::string> out;
  for (const Element& e : Elements(ds)) out.push_back(e[0].scalar<std::string>());
  return out;
}

TEST(ListFilesTest, UnshuffledIsSortedAcrossPatterns) {
  ScratchDir dir;
  for (const char* n : {"b.txt", "a.txt", "c.csv"}) dir.Write(n, "x");
  DatasetPtr ds = Must(ListFiles({dir.Path("*.txt"), dir.Path("*.csv")}, /*shuffle=*/false));
  EXPECT_EQ(Strings(ds), (std::vector<std::string>{dir.Path("a.txt"), dir.Path("b.txt"), dir.Path("c.csv")}));
  EXPECT_EQ(ds->cardinality(), 3);
}

TEST(ListFilesTest, SeededShuffleIsTheSameEveryRunAndAPermutation) {
  ScratchDir dir;
  for (int i = 0; i < 20; ++i) dir.Write(std::to_string(100 + i) + ".f", "x");
  DatasetPtr a = Must(ListFiles({dir.Path("*.f")}, true, 87654321, 7));
  DatasetPtr b = Must(ListFiles({dir.Path("*.f")}, true, 87654321, 7));
  std::vector<std::string> first = Strings(a);
  EXPECT_EQ(first, Strings(b));
  std::vector<std::string> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(first, sorted);
  EXPECT_EQ(sorted, Strings(Must(ListFiles({dir.Path("*.f")}, false))));
}

TEST(ListFilesTest, NoMatchIsInvalidArgumentNamingThePatterns) {
  ScratchDir dir;
  Result<DatasetPtr> r = ListFiles({dir.Path("*.none"), dir.Path("*.nil")});
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("No files matched pattern: " + dir.Path("*.none") + ", " + dir.Path("*.nil")),
            std::string::npos);
}

TEST(TextLineDatasetOfTest, ReadsTheFilesTheNameDatasetYieldsInOrder) {
  ScratchDir dir;
  std::string a = dir.Write("a", "1\n2\n"), b = dir.Write("b", "3\n");
  DatasetPtr names = Must(FromTensorSlices(Element{Tensor::FromStrings({b, a})}));
  EXPECT_EQ(Strings(Must(TextLineDatasetOf(names))), (std::vector<std::string>{"3", "1", "2"}));
  // Two at a time: records interleaved one by one.
  RecordDatasetOptions parallel;
  parallel.num_parallel_reads = 2;
  EXPECT_EQ(Strings(Must(TextLineDatasetOf(names, parallel))), (std::vector<std::string>{"3", "1", "2"}));
}

TEST(TextLineDatasetOfTest, NamesThatAreNotStringScalarsAreInvalidArgument) {
  EXPECT_EQ(TextLineDatasetOf(testing::RangeOf(2)).status().code(), Code::kInvalidArgument);
}

TEST(FixedLengthRecordDatasetOfTest, BadOptionsFailAtConstruction) {
  DatasetPtr names = Must(FromTensorSlices(Element{Tensor::FromStrings({"x"})}));
  EXPECT_EQ(FixedLengthRecordDatasetOf(names, FixedLengthOptions{0, 0, 0}).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::data
