// Errors name the file and record of the element that failed (ElementOrigin):
// readers know it, Map and Filter pass it on.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "data/data_test_util.h"
#include "sluice/io/record_writer.h"

namespace sluice::data {
namespace {

using testing::Must;

std::string TempPath(const std::string& name) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test.begin(), test.end(), '/', '_');  // parameterized tests' names have one
  return ::testing::TempDir() + "/" + test + name;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto w = io::RecordWriter::Open(path);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) ASSERT_TRUE((*w)->Write(r).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

// Fails on the record "bad".
MapFn FailOnBad() {
  return [](Element e) -> Result<Element> {
    if (e[0].scalar<std::string>() == "bad") return errors::InvalidArgument("cannot parse");
    return e;
  };
}

ElementSpec StringScalar() { return ElementSpec{{DType::kString}, {PartialShape({})}, {}}; }

// The first error of a pass over `ds`.
Status FirstError(const DatasetPtr& ds) {
  auto it = ds->MakeIterator();
  while (true) {
    Element e;
    bool end = false;
    Status s = it->GetNext(&e, &end);
    if (!s.ok() || end) return s;
  }
}

class OriginTest : public ::testing::TestWithParam<std::optional<int64_t>> {};

TEST_P(OriginTest, AMapFailureNamesTheFileAndRecordOfItsInput) {
  const std::string a = TempPath("a"), b = TempPath("b");
  WriteRecords(a, {"ok", "ok"});
  WriteRecords(b, {"ok", "ok", "bad", "ok"});
  DatasetPtr ds = Must(Map(Must(TFRecordDataset({a, b})), FailOnBad(), StringScalar(),
                           MapOptions{.num_parallel_calls = GetParam()}));
  Status s = FirstError(ds);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.GetPayload("file"), b);
  EXPECT_EQ(s.GetPayload("record"), "2");
  EXPECT_EQ(s.GetPayload("element"), "4");  // the position in the pass stays
  EXPECT_NE(s.message().find("cannot parse (file \"" + b + "\", record 2)"), std::string::npos) << s;
}

INSTANTIATE_TEST_SUITE_P(SequentialAndParallel, OriginTest, ::testing::Values(std::nullopt, 3));

TEST(ElementOriginTest, PassesThroughMapsAndFilters) {
  const std::string a = TempPath("a");
  WriteRecords(a, {"ok", "drop", "ok", "bad"});
  PredicateFn keep = [](const Element& e) -> Result<bool> { return e[0].scalar<std::string>() != "drop"; };
  MapFn identity = [](Element e) -> Result<Element> { return e; };
  DatasetPtr ds = Must(Map(Must(Filter(Must(Map(Must(TFRecordDataset({a})), identity, StringScalar())), keep)),
                           FailOnBad(), StringScalar(), MapOptions{.num_parallel_calls = 2}));
  Status s = FirstError(ds);
  EXPECT_EQ(s.GetPayload("file"), a);
  EXPECT_EQ(s.GetPayload("record"), "3");
}

TEST(ElementOriginTest, AFilterFailureNamesTheFileAndRecord) {
  const std::string a = TempPath("a");
  WriteRecords(a, {"ok", "bad"});
  PredicateFn fails_on_bad = [](const Element& e) -> Result<bool> {
    if (e[0].scalar<std::string>() == "bad") return errors::InvalidArgument("no predicate");
    return true;
  };
  Status s = FirstError(Must(Filter(Must(TFRecordDataset({a})), fails_on_bad)));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.GetPayload("record"), "1");
  EXPECT_NE(s.message().find(a), std::string::npos) << s;
}

TEST(ElementOriginTest, AnElementNotFromAFileHasNoOrigin) {
  MapFn fail = [](Element) -> Result<Element> { return errors::InvalidArgument("no"); };
  Status s = FirstError(Must(Map(testing::RangeOf(3), fail, testing::Int64Scalar())));
  EXPECT_EQ(s.message(), "no");
  EXPECT_FALSE(s.GetPayload("file").has_value());
}

TEST(ElementOriginTest, AReaderErrorKeepsItsOwnFileAndRecord) {
  const std::string a = TempPath("a");
  WriteRecords(a, {"ok"});
  MapFn fail = [](Element) -> Result<Element> {
    return Status(Code::kDataLoss, "inner").WithPayload("file", "elsewhere").WithPayload("record", "9");
  };
  Status s = FirstError(Must(Map(Must(TFRecordDataset({a})), fail, StringScalar())));
  EXPECT_EQ(s.GetPayload("file"), "elsewhere");
  EXPECT_EQ(s.message(), "inner");
}

}  // namespace
}  // namespace sluice::data
