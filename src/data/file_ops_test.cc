// read_file as a native map: file contents in order, its signature, and the
// errors naming the file (TF's codes).
#include "sluice/data/file_ops.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/data_test_util.h"
#include "sluice/io/file_system.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Must;

std::string TestFile(const std::string& name) {
  return ::testing::TempDir() + "/file_ops_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
         "_" + name;
}

DatasetPtr Filenames(const std::vector<std::string>& paths) {
  return Must(FromTensorSlices(Element({Tensor::FromStrings(paths)})));
}

// The first error of one pass over `ds`, OK if there is none.
Status FirstError(const DatasetPtr& ds) {
  auto it = ds->MakeIterator();
  for (;;) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    if (!s.ok() || end) return s;
  }
}

TEST(FileOpsTest, ReadFileGivesEachFilesContentsInOrder) {
  const std::vector<std::string> paths = {TestFile("a"), TestFile("b"), TestFile("empty")};
  ASSERT_TRUE(io::WriteStringToFile(nullptr, paths[0], "alpha").ok());
  ASSERT_TRUE(io::WriteStringToFile(nullptr, paths[1], std::string("b\0b", 3)).ok());
  ASSERT_TRUE(io::WriteStringToFile(nullptr, paths[2], "").ok());
  DatasetPtr files = Filenames(paths);
  Result<NativeMap> read = ReadFileMap(files->element_spec(), 0);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->spec.dtypes[0], DType::kString);
  EXPECT_EQ(read->spec.shapes[0].rank(), 0);
  DatasetPtr contents = Must(MapWithIndex(files, read->fn, read->spec, {.num_parallel_calls = 2}));
  std::vector<std::string> got;
  for (const Element& e : Elements(contents)) got.push_back(e[0].scalar<std::string>());
  EXPECT_EQ(got, (std::vector<std::string>{"alpha", std::string("b\0b", 3), ""}));
}

TEST(FileOpsTest, ReadFileOfAMissingFileIsNotFoundNamingIt) {
  const std::string missing = TestFile("missing");
  DatasetPtr files = Filenames({missing});
  NativeMap read = *ReadFileMap(files->element_spec(), 0);
  Status s = FirstError(Must(MapWithIndex(files, read.fn, read.spec)));
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_NE(s.message().find(missing), std::string::npos) << s;
}

TEST(FileOpsTest, ReadFileOfADirectoryIsFailedPrecondition) {
  DatasetPtr files = Filenames({::testing::TempDir()});
  NativeMap read = *ReadFileMap(files->element_spec(), 0);
  Status s = FirstError(Must(MapWithIndex(files, read.fn, read.spec)));
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
}

TEST(FileOpsTest, ReadFileRejectsANonStringOrNonScalarComponentAtBuild) {
  DatasetPtr ints = Must(Range(0, 3));
  EXPECT_EQ(ReadFileMap(ints->element_spec(), 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ReadFileMap(ints->element_spec(), 1).status().code(), Code::kInvalidArgument);
  DatasetPtr batch = Must(FromTensors(Element({Tensor::FromStrings({"a", "b"})})));
  EXPECT_EQ(ReadFileMap(batch->element_spec(), 0).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::data
