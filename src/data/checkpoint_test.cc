#include "sluice/data/checkpoint.h"

#include <gtest/gtest.h>

#include "data/checkpoint_test_util.h"
#include "data/data_test_util.h"
#include "sluice/data/datasets.h"

namespace sluice::data {
namespace {

using testing::ExpectCheckpointsExact;
using testing::Int64Scalar;
using testing::Must;
using testing::RangeOf;
using testing::Times;

TEST(CheckpointTest, RangeResumesAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return RangeOf(7); });
}

TEST(CheckpointTest, TensorSlicesResumeAtEveryBreakPoint) {
  ExpectCheckpointsExact([] {
    Tensor t(DType::kInt64, TensorShape({5, 2}));
    for (int64_t i = 0; i < 10; ++i) t.flat<int64_t>()[i] = i * i;
    return Must(FromTensorSlices(Element{t}));
  });
}

TEST(CheckpointTest, MapTakeSkipResumeAtEveryBreakPoint) {
  ExpectCheckpointsExact([] { return Must(Take(Must(Skip(Must(Map(RangeOf(20), Times(3), Int64Scalar())), 4)), 9)); });
}

TEST(CheckpointTest, RepeatResumesInsideAndBetweenEpochs) {
  ExpectCheckpointsExact([] { return Must(Repeat(RangeOf(3), 4)); });
}

TEST(CheckpointTest, SeededReshufflingUnderRepeatResumesWithTheSameEpochOrders) {
  // Each epoch's order depends on the shuffle's pass number, which a new
  // process's dataset must continue from the checkpoint.
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Shuffle(RangeOf(10), 4, 42, 7, true)), 3)); });
}

TEST(CheckpointTest, AShuffleOfAShuffleUnderRepeatResumesAfterItsInputEnded) {
  // The outer shuffle's input ends before its buffer drains; the inner
  // shuffle's pass must still reach the checkpoint.
  ExpectCheckpointsExact([] { return Must(Repeat(Must(Shuffle(Must(Shuffle(RangeOf(6), 2, 3, 4, true)), 3, 1, 2, true)), 4)); });
}

TEST(CheckpointTest, FixedSeedShuffleResumes) {
  ExpectCheckpointsExact([] { return Must(Shuffle(RangeOf(12), 5, 1, 2, false)); });
}

TEST(CheckpointTest, RestoreOnAnIteratorThatHasRunStartsFromTheCheckpoint) {
  DatasetPtr ds = RangeOf(10);
  auto it = ds->MakeIterator();
  Element e;
  bool end = false;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(it->GetNext(&e, &end).ok());
  Result<std::string> saved = SaveIterator(*it);
  ASSERT_TRUE(saved.ok()) << saved.status();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(it->GetNext(&e, &end).ok());
  ASSERT_TRUE(RestoreIterator(*it, *saved).ok());
  ASSERT_TRUE(it->GetNext(&e, &end).ok());
  EXPECT_EQ(e[0].scalar<int64_t>(), 3);
}

TEST(CheckpointTest, CorruptBytesAreDataLoss) {
  auto it = RangeOf(5)->MakeIterator();
  Result<std::string> saved = SaveIterator(*it);
  ASSERT_TRUE(saved.ok());
  std::string bytes = *saved;
  bytes[bytes.size() / 2] ^= 1;
  EXPECT_EQ(RestoreIterator(*it, bytes).code(), Code::kDataLoss);
  EXPECT_EQ(RestoreIterator(*it, "not a checkpoint").code(), Code::kDataLoss);
  EXPECT_EQ(RestoreIterator(*it, bytes.substr(0, bytes.size() - 1)).code(), Code::kDataLoss);
}

TEST(CheckpointTest, ACheckpointOfAnotherPipelineIsInvalidArgument) {
  auto it = RangeOf(5)->MakeIterator();
  Result<std::string> saved = SaveIterator(*it);
  ASSERT_TRUE(saved.ok());
  auto other = Must(Map(RangeOf(5), Times(2), Int64Scalar()))->MakeIterator();
  Status s = RestoreIterator(*other, *saved);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Range"), std::string::npos) << s;
}

TEST(CheckpointTest, AStageThatCannotBeSavedIsUnimplementedNamingIt) {
  auto gen = Must(FromGenerator(
      []() -> Result<GeneratorFn> { return GeneratorFn([]() -> Result<std::optional<Element>> { return std::optional<Element>(); }); },
      Int64Scalar()));
  auto it = Must(Map(gen, Times(2), Int64Scalar()))->MakeIterator();
  Result<std::string> saved = SaveIterator(*it);
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(saved.status().code(), Code::kUnimplemented);
}

TEST(CheckpointTest, ParsedStateRoundTripsEveryEntry) {
  IteratorState state;
  IteratorStateWriter w(&state, "a/");
  w.WriteInt("i", -5);
  w.WriteDouble("d", 2.5);
  w.WriteBytes("b", std::string("x\0y", 3));
  w.Child("c").WriteElement("e", Element{Tensor::Scalar<int64_t>(9)});
  Result<IteratorState> parsed = IteratorState::Parse(state.Serialize());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  IteratorStateReader r(&*parsed, "a/");
  int64_t i = 0;
  double d = 0;
  std::string b;
  Element e;
  ASSERT_TRUE(r.ReadInt("i", &i).ok());
  ASSERT_TRUE(r.ReadDouble("d", &d).ok());
  ASSERT_TRUE(r.ReadBytes("b", &b).ok());
  ASSERT_TRUE(r.Child("c").ReadElement("e", &e).ok());
  EXPECT_EQ(i, -5);
  EXPECT_EQ(d, 2.5);
  EXPECT_EQ(b, std::string("x\0y", 3));
  EXPECT_EQ(e[0].scalar<int64_t>(), 9);
  EXPECT_EQ(r.ReadInt("missing", &i).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::data
