#include "sluice/ops/decode_csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::ops {
namespace {

using testing::Dims;
using testing::TestdataPath;
using testing::Values;

Tensor Required(DType d) { return Tensor(d, TensorShape{0}); }

Result<std::vector<Tensor>> Decode(const std::vector<std::string>& lines, const std::vector<Tensor>& defaults,
                                   const DecodeCSVOptions& options = {}) {
  return DecodeCSV(Tensor::FromStrings(lines), defaults, options);
}

TEST(DecodeCSVTest, ConvertsEachColumnToItsDefaultsType) {
  auto r = Decode({"1,2,3.5,4.25,abc", "-5,6000000000,-1e3,inf,"},
                  {Required(DType::kInt32), Required(DType::kInt64), Required(DType::kFloat32),
                   Required(DType::kFloat64), Tensor::String("dflt")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ(Values<int32_t>((*r)[0]), (std::vector<int32_t>{1, -5}));
  EXPECT_EQ(Values<int64_t>((*r)[1]), (std::vector<int64_t>{2, 6000000000}));
  EXPECT_EQ(Values<float>((*r)[2]), (std::vector<float>{3.5f, -1000.0f}));
  EXPECT_EQ((*r)[3].data<double>()[0], 4.25);
  EXPECT_TRUE(std::isinf((*r)[3].data<double>()[1]));
  EXPECT_EQ(Values<std::string>((*r)[4]), (std::vector<std::string>{"abc", "dflt"}));
}

TEST(DecodeCSVTest, OutputsTakeTheRecordsShape) {
  Tensor records(DType::kString, TensorShape{2, 1});
  records.data<std::string>()[0] = "1";
  records.data<std::string>()[1] = "2";
  auto r = DecodeCSV(records, std::vector<Tensor>{Required(DType::kInt64)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Dims((*r)[0]), (std::vector<int64_t>{2, 1}));
}

TEST(DecodeCSVTest, EmptyFieldsAndNaValueTakeDefaults) {
  DecodeCSVOptions opt;
  opt.na_value = "NA";
  auto r = Decode({",NA,x", "3, 4 ,"}, {Tensor::FromVector<int32_t>({7}), Tensor::FromVector<float>({0.5f}),
                                        Tensor::FromStrings({"z"})},
                  opt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>((*r)[0]), (std::vector<int32_t>{7, 3}));
  EXPECT_EQ(Values<float>((*r)[1]), (std::vector<float>{0.5f, 4.0f}));
  EXPECT_EQ(Values<std::string>((*r)[2]), (std::vector<std::string>{"x", "z"}));
}

TEST(DecodeCSVTest, MissingRequiredFieldNamesFieldAndRecord) {
  auto r = Decode({"1,2,3", "1,2,3", "1,2,3", "1,2,"},
                  {Required(DType::kInt32), Required(DType::kInt32), Required(DType::kInt32)});
  EXPECT_STATUS(r.status(), Code::kInvalidArgument, "Field 2 is required but missing in record 3!");
  EXPECT_EQ(r.status().GetPayload("record"), "3");
  EXPECT_EQ(r.status().GetPayload("field"), "2");
}

TEST(DecodeCSVTest, WrongFieldCountIsInvalidArgument) {
  std::vector<Tensor> d3 = {Required(DType::kInt32), Required(DType::kInt32), Required(DType::kInt32)};
  EXPECT_STATUS(Decode({"1,2,3,4"}, d3).status(), Code::kInvalidArgument, "Expect 3 fields but have 4 in record 0");
  EXPECT_STATUS(Decode({"1,2,3", "1,2"}, d3).status(), Code::kInvalidArgument, "Expect 3 fields but have 2 in record 1");
  EXPECT_STATUS(Decode({""}, d3).status(), Code::kInvalidArgument, "Expect 3 fields but have 0 in record 0");
}

TEST(DecodeCSVTest, BadNumbersNameTheType) {
  EXPECT_STATUS(Decode({"1,x1"}, {Required(DType::kInt32), Required(DType::kInt32)}).status(), Code::kInvalidArgument,
                "Field 1 in record 0 is not a valid int32: x1");
  EXPECT_STATUS(Decode({"3000000000"}, {Required(DType::kInt32)}).status(), Code::kInvalidArgument,
                "is not a valid int32: 3000000000");
  EXPECT_STATUS(Decode({"1.5"}, {Required(DType::kInt64)}).status(), Code::kInvalidArgument,
                "is not a valid int64: 1.5");
  EXPECT_STATUS(Decode({"1.5f"}, {Required(DType::kFloat32)}).status(), Code::kInvalidArgument,
                "is not a valid float: 1.5f");
  EXPECT_STATUS(Decode({"--1"}, {Required(DType::kFloat64)}).status(), Code::kInvalidArgument,
                "is not a valid double: --1");
}

TEST(DecodeCSVTest, NumbersAcceptBlanksSignsExponentsAndSpecials) {
  auto r = Decode({" 12 ,+2.5e2, -nan,1e40", "-0,.5,NaN,-1e-50"},
                  {Required(DType::kInt64), Required(DType::kFloat32), Required(DType::kFloat32),
                   Required(DType::kFloat32)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>((*r)[0]), (std::vector<int64_t>{12, 0}));
  EXPECT_EQ(Values<float>((*r)[1]), (std::vector<float>{250.0f, 0.5f}));
  EXPECT_TRUE(std::isnan((*r)[2].data<float>()[0]));
  EXPECT_TRUE(std::isnan((*r)[2].data<float>()[1]));
  EXPECT_EQ((*r)[3].data<float>()[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ((*r)[3].data<float>()[1], 0.0f);
}

// Expected values and rejections checked against tf.io.decode_csv in TF 2.21.
TEST(DecodeCSVTest, IntegersAcceptOneLeadingPlusAsTensorFlowDoes) {
  for (DType d : {DType::kInt32, DType::kInt64}) {
    auto r = Decode({"+5", "+0", " +5", "+05 ", "\t+7", "+2147483647"}, {Required(d)});
    ASSERT_TRUE(r.ok()) << r.status();
    const std::vector<int64_t> want = {5, 0, 5, 5, 7, 2147483647};
    for (size_t i = 0; i < want.size(); ++i) {
      const int64_t got = d == DType::kInt32 ? (*r)[0].data<int32_t>()[i] : (*r)[0].data<int64_t>()[i];
      EXPECT_EQ(got, want[i]) << "row " << i;
    }
    for (const char* bad : {"+", "+-5", "++5", "+ 5", " + 5", "-+5", "5+", "+0x10"}) {
      EXPECT_STATUS(Decode({bad}, {Required(d)}).status(), Code::kInvalidArgument, "is not a valid int");
    }
  }
  EXPECT_STATUS(Decode({"+2147483648"}, {Required(DType::kInt32)}).status(), Code::kInvalidArgument,
                "is not a valid int32");
  auto big = Decode({"+9223372036854775807"}, {Required(DType::kInt64)});
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ((*big)[0].data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  EXPECT_STATUS(Decode({"+9223372036854775808"}, {Required(DType::kInt64)}).status(), Code::kInvalidArgument,
                "is not a valid int64");
}

TEST(DecodeCSVTest, HexFloatsParseAsTensorFlowDoes) {
  const std::vector<std::string> in = {"0x1p3", "0X1P3", "+0x1p3", "-0x1p3", "0x1.8p1",
                                       "0x10", "0x.8p1", " 0x1p3 ", "0x1P+3", "0x1p-149", "0x1."};
  const std::vector<double> want = {8, 8, 8, -8, 3, 16, 1, 8, 8, 0x1p-149, 1};
  auto r = Decode(in, {Required(DType::kFloat32)});
  ASSERT_TRUE(r.ok()) << r.status();
  auto r64 = Decode(in, {Required(DType::kFloat64)});
  ASSERT_TRUE(r64.ok()) << r64.status();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*r)[0].data<float>()[i], static_cast<float>(want[i])) << in[i];
    EXPECT_EQ((*r64)[0].data<double>()[i], want[i]) << in[i];
  }
  // Out of float's range: inf and 0 (round to even), as TF gives.
  auto edge = Decode({"0x1p1000", "0x1p-150"}, {Required(DType::kFloat32)});
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_EQ((*edge)[0].data<float>()[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ((*edge)[0].data<float>()[1], 0.0f);
  for (DType d : {DType::kFloat32, DType::kFloat64}) {
    for (const char* bad : {"0x", "0x1p", "0x-1", "0xinf", "+-0x1", "0x1q", "0x 1"}) {
      EXPECT_STATUS(Decode({bad}, {Required(d)}).status(), Code::kInvalidArgument, "is not a valid");
    }
  }
}

TEST(DecodeCSVTest, QuotedFieldsMayHoldDelimitersNewlinesAndDoubledQuotes) {
  auto r = Decode({"\"a,b\",\"say \"\"hi\"\"\",\"line1\nline2\",\"\""},
                  {Required(DType::kString), Required(DType::kString), Required(DType::kString),
                   Tensor::String("empty")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>((*r)[0]), std::vector<std::string>{"a,b"});
  EXPECT_EQ(Values<std::string>((*r)[1]), std::vector<std::string>{"say \"hi\""});
  EXPECT_EQ(Values<std::string>((*r)[2]), std::vector<std::string>{"line1\nline2"});
  EXPECT_EQ(Values<std::string>((*r)[3]), std::vector<std::string>{"empty"});  // "" is an empty field
}

TEST(DecodeCSVTest, QuoteErrorsAreInvalidArgument) {
  std::vector<Tensor> d2 = {Required(DType::kString), Required(DType::kString)};
  EXPECT_STATUS(Decode({"a\"b,c"}, d2).status(), Code::kInvalidArgument,
                "Unquoted fields cannot have quotes/CRLFs inside (record 0, field 0)");
  EXPECT_STATUS(Decode({"x,y", "\"a\"b\",c"}, d2).status(), Code::kInvalidArgument,
                "Quote inside a string has to be escaped by another quote (record 1, field 0)");
  EXPECT_STATUS(Decode({"\"abc"}, d2).status(), Code::kInvalidArgument,
                "Quoted field has to end with quote followed by delim or end (record 0, field 0)");
}

TEST(DecodeCSVTest, WithoutQuoteDelimQuotesAreOrdinaryCharacters) {
  DecodeCSVOptions opt;
  opt.use_quote_delim = false;
  opt.field_delim = "\t";
  auto r = Decode({"\"a\"\tb,c"}, {Required(DType::kString), Required(DType::kString)}, opt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>((*r)[0]), std::vector<std::string>{"\"a\""});
  EXPECT_EQ(Values<std::string>((*r)[1]), std::vector<std::string>{"b,c"});
}

TEST(DecodeCSVTest, SelectColsKeepsOnlyTheNamedColumns) {
  DecodeCSVOptions opt;
  opt.select_cols = {1, 3};
  auto r = Decode({"a,1,b,2,c,d", "a,3,b,4"}, {Required(DType::kInt32), Required(DType::kInt32)}, opt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>((*r)[0]), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(Values<int32_t>((*r)[1]), (std::vector<int32_t>{2, 4}));
  EXPECT_STATUS(Decode({"a,1,b"}, {Required(DType::kInt32), Required(DType::kInt32)}, opt).status(),
                Code::kInvalidArgument, "Expect 2 fields but have 1 in record 0");
}

TEST(DecodeCSVTest, TrailingDelimiterIsAnEmptyLastField) {
  auto r = Decode({"1,"}, {Required(DType::kInt32), Tensor::FromVector<int32_t>({9})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>((*r)[1]), std::vector<int32_t>{9});
}

TEST(DecodeCSVTest, BadOptionsAreInvalidArgument) {
  DecodeCSVOptions delim;
  delim.field_delim = ",;";
  EXPECT_STATUS(Decode({"1"}, {Required(DType::kInt32)}, delim).status(), Code::kInvalidArgument,
                "field_delim should be only 1 char");
  EXPECT_STATUS(Decode({"1"}, {Tensor::FromVector<int32_t>({1, 2})}).status(), Code::kInvalidArgument,
                "There should only be 1 default per field but field 0 has 2");
  EXPECT_STATUS(Decode({"1"}, {Required(DType::kBool)}).status(), Code::kInvalidArgument, "unsupported dtype bool");
  DecodeCSVOptions cols;
  cols.select_cols = {2, 1};
  EXPECT_STATUS(Decode({"1"}, {Required(DType::kInt32), Required(DType::kInt32)}, cols).status(),
                Code::kInvalidArgument, "select_cols is not strictly increasing.");
  cols.select_cols = {1};
  EXPECT_STATUS(Decode({"1"}, {Required(DType::kInt32), Required(DType::kInt32)}, cols).status(),
                Code::kInvalidArgument, "Length of select_cols and record_defaults do not match.");
  EXPECT_STATUS(DecodeCSV(Tensor::Scalar<int32_t>(1), std::vector<Tensor>{Required(DType::kInt32)}).status(),
                Code::kInvalidArgument, "records must be a string tensor");
}

// --- tests/data CSVs -------------------------------------------------------------------

// Splits CSV text into records at newlines outside quotes (a record may span
// lines), dropping the header.
std::vector<std::string_view> CsvRecords(const std::string& text) {
  std::vector<std::string_view> out;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') quoted = !quoted;
    if (text[i] == '\n' && !quoted) {
      out.push_back(std::string_view(text).substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < text.size()) out.push_back(std::string_view(text).substr(start));
  out.erase(out.begin());
  return out;
}

TEST(DecodeCSVTest, TfxMultiLineStringKeepsTheQuotedNewlines) {
  const std::string text = testing::ReadFileOrDie(TestdataPath("csv/tfx/csv_multi_line_string/data.csv"));
  const std::vector<std::string_view> recs = CsvRecords(text);
  ASSERT_EQ(recs.size(), 3u);
  std::vector<Tensor> d(4, Required(DType::kString));
  auto r = DecodeCSV(recs, d);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<std::string> b = Values<std::string>((*r)[1]);
  EXPECT_EQ(b[0], "2");
  EXPECT_EQ(b[1], "\"2,\n\"3\",\n4\n5\"");
  EXPECT_EQ(b[1].size(), 13u);
  EXPECT_EQ(Values<std::string>((*r)[3]), (std::vector<std::string>{"4", "7", "4"}));
}

TEST(DecodeCSVTest, TfxEmptyColumnNeedsADefault) {
  const std::string text = testing::ReadFileOrDie(TestdataPath("csv/tfx/csv_empty/data.csv"));
  const std::vector<std::string_view> recs = CsvRecords(text);
  ASSERT_EQ(recs.size(), 3u);
  std::vector<Tensor> d = {Required(DType::kInt64), Required(DType::kString), Required(DType::kString),
                           Required(DType::kFloat32)};
  EXPECT_STATUS(DecodeCSV(recs, d).status(), Code::kInvalidArgument, "Field 1 is required but missing in record 0!");
  d[1] = Tensor::String("");
  d[2] = Tensor::String("?");
  auto r = DecodeCSV(recs, d);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Values<std::string>((*r)[2]), (std::vector<std::string>{"x", "y", "?"}));
  EXPECT_EQ(Values<float>((*r)[3]), (std::vector<float>{0.1f, 0.2f, 0.3f}));
}

TEST(DecodeCSVTest, TfxUtilsCsvNullIsANaValue) {
  const std::string text = testing::ReadFileOrDie(TestdataPath("csv/tfx/utils_test.csv"));
  const std::vector<std::string_view> recs = CsvRecords(text);
  ASSERT_EQ(recs.size(), 1u);
  DecodeCSVOptions opt;
  opt.na_value = "null";
  auto r = DecodeCSV(recs, std::vector<Tensor>(4, Tensor::FromVector<int32_t>({-1})), opt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>((*r)[1]), std::vector<int32_t>{-1});
  EXPECT_EQ(Values<int32_t>((*r)[3]), std::vector<int32_t>{3});
}

}  // namespace
}  // namespace sluice::ops
