// FromGenerator: a C++ callable as a dataset source.
#include <gtest/gtest.h>

#include <atomic>

#include "data/data_test_util.h"

namespace sluice::data {
namespace {

using testing::Ints;
using testing::Must;

// A factory of generators counting 0..n-1; counts the generators it made.
GeneratorFactory Counter(int64_t n, std::atomic<int>* made) {
  return [n, made]() -> Result<GeneratorFn> {
    ++*made;
    return GeneratorFn([n, i = int64_t{0}]() mutable -> Result<std::optional<Element>> {
      if (i == n) return std::optional<Element>();
      return std::optional<Element>(Element{Tensor::Scalar<int64_t>(i++)});
    });
  };
}

TEST(FromGeneratorTest, YieldsTheGeneratorsElementsThenEnds) {
  std::atomic<int> made{0};
  DatasetPtr ds = Must(FromGenerator(Counter(4, &made), testing::Int64Scalar()));
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  EXPECT_EQ(ds->DebugName(), "FromGenerator");
  EXPECT_EQ(Ints(ds), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(made.load(), 1);
}

TEST(FromGeneratorTest, EachIteratorGetsAFreshGenerator) {
  std::atomic<int> made{0};
  DatasetPtr ds = Must(Repeat(Must(FromGenerator(Counter(2, &made), testing::Int64Scalar())), 3));
  EXPECT_EQ(Ints(ds), (std::vector<int64_t>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(made.load(), 3);
}

TEST(FromGeneratorTest, AnElementOfTheWrongDtypeIsInvalidArgument) {
  GeneratorFactory f = []() -> Result<GeneratorFn> {
    return GeneratorFn([]() -> Result<std::optional<Element>> {
      return std::optional<Element>(Element{Tensor::Scalar<float>(1.0f)});
    });
  };
  auto it = Must(FromGenerator(f, testing::Int64Scalar()))->MakeIterator();
  Element e;
  bool end = false;
  Status s = it->GetNext(&e, &end);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("component 0"), std::string::npos) << s;
}

TEST(FromGeneratorTest, AnElementOfAnIncompatibleShapeIsInvalidArgument) {
  GeneratorFactory f = []() -> Result<GeneratorFn> {
    return GeneratorFn([]() -> Result<std::optional<Element>> {
      return std::optional<Element>(Element{Tensor::FromVector<int64_t>({1, 2})});
    });
  };
  auto it = Must(FromGenerator(f, testing::Int64Scalar()))->MakeIterator();
  Element e;
  bool end = false;
  EXPECT_EQ(it->GetNext(&e, &end).code(), Code::kInvalidArgument);
}

TEST(FromGeneratorTest, AnErrorIsTheElementsAndTheNextCallGoesOn) {
  GeneratorFactory f = []() -> Result<GeneratorFn> {
    return GeneratorFn([i = 0]() mutable -> Result<std::optional<Element>> {
      ++i;
      if (i == 2) return errors::DataLoss("bad element");
      if (i > 3) return std::optional<Element>();
      return std::optional<Element>(Element{Tensor::Scalar<int64_t>(i)});
    });
  };
  auto it = Must(FromGenerator(f, testing::Int64Scalar()))->MakeIterator();
  Element e;
  bool end = false;
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 1);
  EXPECT_EQ(it->GetNext(&e, &end).code(), Code::kDataLoss);
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 3);
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_TRUE(end);
}

TEST(FromGeneratorTest, AFailingFactoryIsGetNextsError) {
  GeneratorFactory f = []() -> Result<GeneratorFn> { return errors::NotFound("no source"); };
  auto it = Must(FromGenerator(f, testing::Int64Scalar()))->MakeIterator();
  Element e;
  bool end = false;
  EXPECT_EQ(it->GetNext(&e, &end).code(), Code::kNotFound);
}

TEST(FromGeneratorTest, AnEmptyFactoryIsInvalidArgument) {
  EXPECT_EQ(FromGenerator(nullptr, testing::Int64Scalar()).status().code(), Code::kInvalidArgument);
}

TEST(FromGeneratorTest, RunsUnderAParallelMap) {
  std::atomic<int> made{0};
  DatasetPtr ds = Must(Map(Must(FromGenerator(Counter(50, &made), testing::Int64Scalar())), testing::Times(2),
                           testing::Int64Scalar(), MapOptions{.num_parallel_calls = 3}));
  std::vector<int64_t> got = Ints(ds);
  ASSERT_EQ(got.size(), 50u);
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], 2 * i);
}

}  // namespace
}  // namespace sluice::data
