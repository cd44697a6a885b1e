// CsvDataset: records, defaults, column selection, quoted newlines, errors.
#include <gtest/gtest.h>

#include <string>

#include "data/data_test_util.h"
#include "data/sources_test_util.h"

namespace sluice::data {
namespace {

using testing::Elements;
using testing::Must;
using testing::ScratchDir;

std::vector<Tensor> IntFloatString() {
  return {Tensor(DType::kInt32, TensorShape{0}), Tensor::FromVector<float>({-1.0f}), Tensor::FromStrings({"d"})};
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

TEST(CsvDatasetTest, DecodesRecordsWithDefaultsAndQuotedNewlines) {
  ScratchDir dir;
  std::string f = dir.Write("a.csv", "a,b,c\n1,2.5,x\n3,,\"y\nz\"\n");
  CsvDatasetOptions o;
  o.header = true;
  DatasetPtr ds = Must(CsvDataset({f}, IntFloatString(), o));
  EXPECT_EQ(ds->element_spec().dtypes, (std::vector<DType>{DType::kInt32, DType::kFloat32, DType::kString}));
  std::vector<Element> got = Elements(ds);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0][0].scalar<int32_t>(), 1);
  EXPECT_EQ(got[0][1].scalar<float>(), 2.5f);
  EXPECT_EQ(got[1][1].scalar<float>(), -1.0f);
  EXPECT_EQ(got[1][2].scalar<std::string>(), "y\nz");
  EXPECT_EQ(got[1][0].rank(), 0);
}

TEST(CsvDatasetTest, SelectAndExcludeColumnsPickTheSameFields) {
  ScratchDir dir;
  std::string f = dir.Write("a.csv", "1,skip,x\n5,skip,y");
  std::vector<Tensor> defaults{Tensor::FromVector<int64_t>({0}), Tensor::FromStrings({""})};
  CsvDatasetOptions select, exclude;
  select.select_cols = {0, 2};
  exclude.exclude_cols = {1};
  for (const CsvDatasetOptions& o : {select, exclude}) {
    std::vector<Element> got = Elements(Must(CsvDataset({f}, defaults, o)));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1][0].scalar<int64_t>(), 5);
    EXPECT_EQ(got[1][1].scalar<std::string>(), "y");
  }
  CsvDatasetOptions both = select;
  both.exclude_cols = {1};
  EXPECT_EQ(CsvDataset({f}, defaults, both).status().message(), "Either select_cols or exclude_cols should be empty");
}

TEST(CsvDatasetTest, BadFieldNamesFileLineAndColumn) {
  ScratchDir dir;
  std::string f = dir.Write("bad.csv", "a,b,c\n1,2,x\n3,zz,y\n");
  CsvDatasetOptions o;
  o.header = true;
  Status s = FirstError(Must(CsvDataset({f}, IntFloatString(), o)));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "Field 1 in record is not a valid float: zz (file \"" + f + "\", line 3, column 2)");
  EXPECT_EQ(s.GetPayload("file"), f);
  EXPECT_EQ(s.GetPayload("line"), "3");
  EXPECT_EQ(s.GetPayload("column"), "1");
}

TEST(CsvDatasetTest, MissingRequiredFieldAndWrongFieldCountAreInvalidArgument) {
  ScratchDir dir;
  std::string missing = dir.Write("m.csv", ",2,x\n");
  std::string short_row = dir.Write("s.csv", "1,2\n");
  Status s = FirstError(Must(CsvDataset({missing}, IntFloatString())));
  EXPECT_EQ(s.message(), "Field 0 is required but missing in record! (file \"" + missing + "\", line 1, column 1)");
  s = FirstError(Must(CsvDataset({short_row}, IntFloatString())));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Expect 3 fields but have 2 in record"), std::string::npos);
}

TEST(CsvDatasetTest, IgnoreErrorsSkipsBadRecordsAndFilesAndReportsThem) {
  ScratchDir dir;
  std::string f = dir.Write("a.csv", "1,2,x\n3,zz,y\n4,5,w\n");
  CsvDatasetOptions o;
  o.ignore_errors = true;
  auto reporter = std::make_shared<io::CountingReporter>();
  o.reporter = reporter;
  DatasetPtr ds = Must(CsvDataset({dir.Path("missing.csv"), f}, IntFloatString(), o));
  std::vector<Element> got = Elements(ds);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1][0].scalar<int32_t>(), 4);
  EXPECT_EQ(reporter->corruptions(), 2);
  EXPECT_EQ(reporter->records_dropped(), 1);
}

TEST(CsvDatasetTest, MissingFileIsNotFound) {
  ScratchDir dir;
  EXPECT_EQ(FirstError(Must(CsvDataset({dir.Path("none.csv")}, IntFloatString()))).code(), Code::kNotFound);
}

}  // namespace
}  // namespace sluice::data
