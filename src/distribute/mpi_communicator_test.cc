// MpiCommunicator under mpirun with 1, 2 and 4 ranks (CTest: label mpi).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "distribute/mpi_test_util.h"

namespace sluice::distribute {
namespace {

using testing::MpiWorld;

TEST(MpiCommunicatorTest, CollectivesAgreeOnEveryRank) {
  Communicator& c = MpiWorld();
  const int n = c.size();
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ(c.Allreduce(c.rank() + round, ReduceOp::kSum).value(), n * (n - 1) / 2 + n * round);
    EXPECT_EQ(c.Allreduce(c.rank(), ReduceOp::kMax).value(), n - 1);
    EXPECT_EQ(c.Allreduce(c.rank() + 5, ReduceOp::kMin).value(), 5);
    std::string b = c.rank() == n - 1 ? "from the last rank " + std::to_string(round) : "";
    ASSERT_TRUE(c.Bcast(&b, n - 1).ok());
    EXPECT_EQ(b, "from the last rank " + std::to_string(round));
    Result<std::vector<std::string>> all = c.Allgather(std::string(static_cast<size_t>(c.rank()) * 3, 'r'));
    ASSERT_TRUE(all.ok()) << all.status();
    ASSERT_EQ(all->size(), static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) EXPECT_EQ((*all)[static_cast<size_t>(r)].size(), static_cast<size_t>(r) * 3);
    ASSERT_TRUE(c.Barrier().ok());
  }
}

TEST(MpiCommunicatorTest, AnySourceMessagesArriveInOrderPerSender) {
  Communicator& c = MpiWorld();
  constexpr int kTag = 11, kCount = 50;
  if (c.rank() != 0) {
    for (int i = 0; i < kCount; ++i) ASSERT_TRUE(c.Send(0, kTag, std::to_string(c.rank()) + ":" + std::to_string(i)).ok());
  } else {
    std::map<int, int> next;
    for (int i = 0; i < kCount * (c.size() - 1); ++i) {
      Result<Message> m = c.Recv(kAnySource, kTag);
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_EQ(m->bytes(), std::to_string(m->source) + ":" + std::to_string(next[m->source]++));
    }
  }
  ASSERT_TRUE(c.Barrier().ok());
}

TEST(MpiCommunicatorTest, LargeMessagesLandInAlignedBuffersIntact) {
  Communicator& c = MpiWorld();
  constexpr int kTag = 12;
  std::string big(4 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 + 7);
  const int next = (c.rank() + 1) % c.size(), prev = (c.rank() + c.size() - 1) % c.size();
  // A ring: every rank sends on a thread while receiving here (a send may
  // wait for its receiver, so both are in flight at once).
  std::thread sender([&] { EXPECT_TRUE(c.Send(next, kTag, big).ok()); });
  Result<Message> m = c.Recv(prev, kTag);
  sender.join();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->source, prev);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m->data.raw_data()) % TensorBuffer::kAlignment, 0u);
  EXPECT_TRUE(m->bytes() == big);
  ASSERT_TRUE(c.Barrier().ok());
}

TEST(MpiCommunicatorTest, RecvOnOneThreadDoesNotBlockCollectivesOnAnother) {
  Communicator& c = MpiWorld();
  constexpr int kTag = 13;
  Result<Message> got = errors::Unknown("not received");
  std::thread receiver([&] { got = c.Recv(c.rank(), kTag); });
  // Collectives go on while the receive waits on the communication thread.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(c.Barrier().ok());
  ASSERT_TRUE(c.Send(c.rank(), kTag, "self").ok());
  receiver.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->bytes(), "self");
}

TEST(MpiCommunicatorTest, RanksOutOfRangeAreInvalidArgument) {
  Communicator& c = MpiWorld();
  EXPECT_EQ(c.Send(c.size(), 1, "x").code(), Code::kInvalidArgument);
  EXPECT_EQ(c.Recv(-5, 1).status().code(), Code::kInvalidArgument);
  std::string b;
  EXPECT_EQ(c.Bcast(&b, c.size()).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::distribute
