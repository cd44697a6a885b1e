#include "sluice/io/file_system.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "sluice/io/fault_injection_file_system.h"

namespace sluice::io {
namespace {

using testing::HasError;
using testing::IsOk;
using testing::ScratchDir;
using testing::WriteFileOrDie;

TEST(PosixFileSystemTest, WrittenFileReadsBackAtAnyOffset) {
  ScratchDir dir;
  const std::string path = dir.File("a");
  WriteFileOrDie(path, "hello, world");
  FileSystem* fs = DefaultFileSystem();
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, fs->NewRandomAccessFile(path));
  EXPECT_EQ(file->name(), path);
  char buf[32];
  SLUICE_ASSERT_OK_AND_ASSIGN(size_t got, file->Read(7, 5, buf));
  EXPECT_EQ(std::string(buf, got), "world");
  SLUICE_ASSERT_OK_AND_ASSIGN(got, file->Read(7, 32, buf));
  EXPECT_EQ(std::string(buf, got), "world");
  SLUICE_ASSERT_OK_AND_ASSIGN(got, file->Read(100, 5, buf));
  EXPECT_EQ(got, 0u);
  SLUICE_ASSERT_OK_AND_ASSIGN(uint64_t size, fs->GetFileSize(path));
  EXPECT_EQ(size, 12u);
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string all, ReadFileToString(fs, path));
  EXPECT_EQ(all, "hello, world");
}

TEST(PosixFileSystemTest, MissingFileIsNotFoundNamingThePath) {
  ScratchDir dir;
  const std::string path = dir.File("missing");
  auto file = DefaultFileSystem()->NewRandomAccessFile(path);
  EXPECT_TRUE(HasError(file, Code::kNotFound, path));
  EXPECT_EQ(file.status().GetPayload("file"), path);
  EXPECT_TRUE(HasError(DefaultFileSystem()->FileExists(path), Code::kNotFound));
  EXPECT_TRUE(HasError(DefaultFileSystem()->Stat(path), Code::kNotFound));
  EXPECT_TRUE(HasError(DefaultFileSystem()->DeleteFile(path), Code::kNotFound));
  EXPECT_TRUE(HasError(DefaultFileSystem()->NewWritableFile(dir.File("no/such/dir")), Code::kNotFound));
}

TEST(PosixFileSystemTest, OpeningADirectoryForReadingIsFailedPrecondition) {
  ScratchDir dir;
  EXPECT_TRUE(HasError(DefaultFileSystem()->NewRandomAccessFile(dir.path()), Code::kFailedPrecondition));
  SLUICE_ASSERT_OK_AND_ASSIGN(FileStatistics st, DefaultFileSystem()->Stat(dir.path()));
  EXPECT_TRUE(st.is_directory);
}

TEST(PosixFileSystemTest, WritableFileBuffersLargeAndSmallAppends) {
  ScratchDir dir;
  const std::string path = dir.File("w");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, DefaultFileSystem()->NewWritableFile(path));
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    const std::string piece = std::to_string(i) + ",";
    ASSERT_TRUE(IsOk(file->Append(piece)));
    expected += piece;
  }
  const std::string big(200000, 'x');
  ASSERT_TRUE(IsOk(file->Append(big)));
  expected += big;
  ASSERT_TRUE(IsOk(file->Sync()));
  ASSERT_TRUE(IsOk(file->Close()));
  EXPECT_TRUE(HasError(file->Append("more"), Code::kFailedPrecondition));
  EXPECT_TRUE(HasError(file->Close(), Code::kFailedPrecondition));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string all, ReadFileToString(nullptr, path));
  EXPECT_EQ(all, expected);
}

TEST(PosixFileSystemTest, SequentialFileReadsAndSkips) {
  ScratchDir dir;
  const std::string path = dir.File("s");
  WriteFileOrDie(path, "0123456789");
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, DefaultFileSystem()->NewSequentialFile(path));
  char buf[8];
  SLUICE_ASSERT_OK_AND_ASSIGN(size_t got, file->Read(3, buf));
  EXPECT_EQ(std::string(buf, got), "012");
  ASSERT_TRUE(IsOk(file->Skip(4)));
  SLUICE_ASSERT_OK_AND_ASSIGN(got, file->Read(8, buf));
  EXPECT_EQ(std::string(buf, got), "789");
}

TEST(PosixFileSystemTest, GetMatchingPathsSupportsGlobSyntaxAndSorts) {
  ScratchDir dir;
  for (const char* name : {"b-2.txt", "a-1.txt", "a-10.txt", "c-3.dat", "a-x.txt"}) WriteFileOrDie(dir.File(name), "");
  FileSystem* fs = DefaultFileSystem();
  SLUICE_ASSERT_OK_AND_ASSIGN(auto all, fs->GetMatchingPaths(dir.File("*.txt")));
  EXPECT_EQ(all, (std::vector<std::string>{dir.File("a-1.txt"), dir.File("a-10.txt"), dir.File("a-x.txt"),
                                           dir.File("b-2.txt")}));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto one_char, fs->GetMatchingPaths(dir.File("a-?.txt")));
  EXPECT_EQ(one_char, (std::vector<std::string>{dir.File("a-1.txt"), dir.File("a-x.txt")}));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto klass, fs->GetMatchingPaths(dir.File("[bc]-[0-9].*")));
  EXPECT_EQ(klass, (std::vector<std::string>{dir.File("b-2.txt"), dir.File("c-3.dat")}));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto none, fs->GetMatchingPaths(dir.File("*.csv")));
  EXPECT_TRUE(none.empty());
  SLUICE_ASSERT_OK_AND_ASSIGN(auto literal, fs->GetMatchingPaths(dir.File("c-3.dat")));
  EXPECT_EQ(literal, std::vector<std::string>{dir.File("c-3.dat")});
  EXPECT_TRUE(MatchesGlob("a/*.txt", "a/b.txt"));
}

TEST(PosixFileSystemTest, GetMatchingPathsMatchesHiddenFilesButNotDotEntriesAsTensorFlowDoes) {
  ScratchDir dir;
  for (const char* name : {".hidden.txt", "a.txt"}) WriteFileOrDie(dir.File(name), "");
  FileSystem* fs = DefaultFileSystem();
  SLUICE_ASSERT_OK_AND_ASSIGN(auto all, fs->GetMatchingPaths(dir.File("*")));
  EXPECT_EQ(all, (std::vector<std::string>{dir.File(".hidden.txt"), dir.File("a.txt")}));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto dotted, fs->GetMatchingPaths(dir.File(".*")));
  EXPECT_EQ(dotted, std::vector<std::string>{dir.File(".hidden.txt")});
  SLUICE_ASSERT_OK_AND_ASSIGN(auto through_dirs, fs->GetMatchingPaths(dir.File("*/a.txt")));
  EXPECT_TRUE(through_dirs.empty());
  SLUICE_ASSERT_OK_AND_ASSIGN(auto named, fs->GetMatchingPaths(dir.File("./a.txt")));
  EXPECT_EQ(named, std::vector<std::string>{dir.File("./a.txt")});
  EXPECT_FALSE(MatchesGlob("*.txt", "a/b.txt"));
  EXPECT_TRUE(MatchesGlob("[!a]?", "bc"));
}

TEST(PosixFileSystemTest, DeleteAndRename) {
  ScratchDir dir;
  WriteFileOrDie(dir.File("x"), "1");
  ASSERT_TRUE(IsOk(DefaultFileSystem()->RenameFile(dir.File("x"), dir.File("y"))));
  EXPECT_TRUE(HasError(DefaultFileSystem()->FileExists(dir.File("x")), Code::kNotFound));
  EXPECT_TRUE(IsOk(DefaultFileSystem()->FileExists(dir.File("y"))));
  ASSERT_TRUE(IsOk(DefaultFileSystem()->DeleteFile(dir.File("y"))));
  EXPECT_TRUE(HasError(DefaultFileSystem()->FileExists(dir.File("y")), Code::kNotFound));
}

TEST(FaultInjectionFileSystemTest, TruncationShortensReadsAndStat) {
  ScratchDir dir;
  const std::string path = dir.File("t");
  WriteFileOrDie(path, "0123456789");
  FaultInjectionFileSystem fs;
  fs.Truncate(path, 4);
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string all, ReadFileToString(&fs, path));
  EXPECT_EQ(all, "0123");
  SLUICE_ASSERT_OK_AND_ASSIGN(uint64_t size, fs.GetFileSize(path));
  EXPECT_EQ(size, 4u);
}

TEST(FaultInjectionFileSystemTest, ReadErrorsFireAtTheirOffsetAndHeal) {
  ScratchDir dir;
  const std::string path = dir.File("r");
  WriteFileOrDie(path, "0123456789");
  FaultInjectionFileSystem fs;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, fs.NewRandomAccessFile(path));
  fs.FailReadsAt(path, 6, errors::Unavailable("disk on fire"), /*times=*/1);
  char buf[16];
  SLUICE_ASSERT_OK_AND_ASSIGN(size_t got, file->Read(0, 6, buf));
  EXPECT_EQ(got, 6u);
  EXPECT_TRUE(HasError(file->Read(4, 4, buf), Code::kUnavailable, "disk on fire"));
  SLUICE_ASSERT_OK_AND_ASSIGN(got, file->Read(4, 4, buf));  // healed
  EXPECT_EQ(std::string(buf, got), "4567");
  EXPECT_EQ(fs.read_calls(path), 3);
}

TEST(FaultInjectionFileSystemTest, OpenAndWriteFaults) {
  ScratchDir dir;
  FaultInjectionFileSystem fs;
  fs.FailOpen(dir.File("o"), errors::PermissionDenied("nope"));
  EXPECT_TRUE(HasError(fs.NewRandomAccessFile(dir.File("o")), Code::kPermissionDenied));
  EXPECT_TRUE(HasError(fs.NewWritableFile(dir.File("o")), Code::kPermissionDenied));
  fs.FailWritesAfter(dir.File("w"), 5, errors::ResourceExhausted("disk full"));
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, fs.NewWritableFile(dir.File("w")));
  EXPECT_TRUE(IsOk(file->Append("12345")));
  EXPECT_TRUE(HasError(file->Append("6"), Code::kResourceExhausted));
  fs.ClearFaults();
  EXPECT_TRUE(IsOk(file->Append("6")));
  EXPECT_TRUE(IsOk(file->Close()));
}

TEST(FaultInjectionFileSystemTest, InjectedErrorsNameThePathAsPosixErrorsDo) {
  ScratchDir dir;
  const std::string path = dir.File("r");
  WriteFileOrDie(path, "0123456789");
  FaultInjectionFileSystem fs;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, fs.NewRandomAccessFile(path));
  fs.FailReadsAt(path, 6, errors::Unavailable("disk on fire"));
  char buf[16];
  Result<size_t> got = file->Read(4, 4, buf);
  EXPECT_TRUE(HasError(got, Code::kUnavailable, path + ": read at offset 4: disk on fire"));
  EXPECT_EQ(got.status().GetPayload("file"), path);
  fs.FailOpen(path, errors::PermissionDenied("Permission denied"));
  EXPECT_TRUE(HasError(fs.Stat(path), Code::kPermissionDenied, path + ": Permission denied"));
  EXPECT_EQ(fs.NewRandomAccessFile(path).status().GetPayload("file"), path);
}

TEST(FaultInjectionFileSystemTest, FullDiskStoresTheShortWriteThenFailsEveryAppend) {
  ScratchDir dir;
  const std::string path = dir.File("w");
  FaultInjectionFileSystem fs;
  fs.FailWritesWhenFullAfter(path, 7);
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, fs.NewWritableFile(path));
  EXPECT_TRUE(IsOk(file->Append("12345")));
  EXPECT_TRUE(HasError(file->Append("6789"), Code::kResourceExhausted, path + ": write: No space left on device"));
  EXPECT_TRUE(HasError(file->Append("x"), Code::kResourceExhausted));
  EXPECT_TRUE(IsOk(file->Close()));
  SLUICE_ASSERT_OK_AND_ASSIGN(std::string stored, ReadFileToString(nullptr, path));
  EXPECT_EQ(stored, "1234567");
}

TEST(FaultInjectionFileSystemTest, VanishedFileIsNotFoundToOpenStatAndFilesAlreadyOpen) {
  ScratchDir dir;
  const std::string path = dir.File("v");
  WriteFileOrDie(path, "0123456789");
  FaultInjectionFileSystem fs;
  SLUICE_ASSERT_OK_AND_ASSIGN(auto file, fs.NewRandomAccessFile(path));
  fs.Vanish(path);
  char buf[16];
  EXPECT_TRUE(HasError(file->Read(0, 4, buf), Code::kNotFound, path));
  EXPECT_TRUE(HasError(fs.NewRandomAccessFile(path), Code::kNotFound, path));
  EXPECT_TRUE(HasError(fs.Stat(path), Code::kNotFound, path));
  fs.ClearFaults();
  SLUICE_ASSERT_OK_AND_ASSIGN(size_t got, file->Read(0, 4, buf));
  EXPECT_EQ(std::string(buf, got), "0123");
}

}  // namespace
}  // namespace sluice::io
