// The thread communicator (the protocols' test transport) and DetectTopology.
#include "sluice/distribute/communicator.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

namespace sluice::distribute {
namespace {

// Runs fn(comm) on one thread per rank and joins them.
template <class Fn>
void OnEveryRank(const std::vector<std::shared_ptr<Communicator>>& comms, Fn fn) {
  std::vector<std::thread> threads;
  for (const auto& c : comms) threads.emplace_back([&fn, c] { fn(*c); });
  for (std::thread& t : threads) t.join();
}

TEST(ThreadCommunicatorTest, CollectivesAgreeOnEveryRank) {
  const auto comms = MakeThreadCommunicators(4);
  OnEveryRank(comms, [](Communicator& c) {
    for (int round = 0; round < 50; ++round) {
      Result<int64_t> sum = c.Allreduce(c.rank() + round, ReduceOp::kSum);
      ASSERT_TRUE(sum.ok()) << sum.status();
      EXPECT_EQ(*sum, 6 + 4 * round);
      EXPECT_EQ(c.Allreduce(c.rank(), ReduceOp::kMax).value(), 3);
      EXPECT_EQ(c.Allreduce(c.rank() + 1, ReduceOp::kMin).value(), 1);
      std::string b = c.rank() == 2 ? "from two " + std::to_string(round) : "";
      ASSERT_TRUE(c.Bcast(&b, 2).ok());
      EXPECT_EQ(b, "from two " + std::to_string(round));
      Result<std::vector<std::string>> all = c.Allgather(std::string(static_cast<size_t>(c.rank()), 'x'));
      ASSERT_TRUE(all.ok());
      for (int r = 0; r < 4; ++r) EXPECT_EQ((*all)[static_cast<size_t>(r)], std::string(static_cast<size_t>(r), 'x'));
      ASSERT_TRUE(c.Barrier().ok());
    }
  });
}

TEST(ThreadCommunicatorTest, MessagesArriveInOrderPerSourceAndTag) {
  const auto comms = MakeThreadCommunicators(3);
  OnEveryRank(comms, [](Communicator& c) {
    if (c.rank() > 0) {
      for (int i = 0; i < 100; ++i) ASSERT_TRUE(c.Send(0, 7, std::to_string(c.rank()) + ":" + std::to_string(i)).ok());
      ASSERT_TRUE(c.Send(0, 8, "done").ok());
      return;
    }
    std::map<int, int> next;
    for (int i = 0; i < 200; ++i) {
      Result<Message> m = c.Recv(kAnySource, 7);
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_EQ(m->bytes(), std::to_string(m->source) + ":" + std::to_string(next[m->source]++));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(m->data.raw_data()) % TensorBuffer::kAlignment, 0u);
    }
    EXPECT_EQ(c.Recv(1, 8).value().bytes(), "done");
    EXPECT_EQ(c.Recv(2, 8).value().bytes(), "done");
  });
}

TEST(ThreadCommunicatorTest, CancelWakesABlockedRecvWithTheGivenStatus) {
  const auto comms = MakeThreadCommunicators(2);
  std::thread waiter([&] {
    Result<Message> m = comms[0]->Recv(1, 3);
    EXPECT_EQ(m.status().code(), Code::kAborted);
  });
  comms[0]->Cancel(errors::Aborted("rank 1 failed"));
  waiter.join();
  EXPECT_EQ(comms[0]->Barrier().code(), Code::kAborted);
  EXPECT_EQ(comms[1]->Send(5, 0, "x").code(), Code::kInvalidArgument);
}

// ---- DetectTopology over fake environments.

std::map<std::string, std::string>* fake_env = nullptr;
const char* FakeGetenv(const char* name) {
  auto it = fake_env->find(name);
  return it == fake_env->end() ? nullptr : it->second.c_str();
}

Result<EnvTopology> Detect(std::map<std::string, std::string> env) {
  fake_env = &env;
  Result<EnvTopology> t = DetectTopology(FakeGetenv);
  fake_env = nullptr;
  return t;
}

TEST(DetectTopologyTest, NothingSetIsOneProcess) {
  EnvTopology t = Detect({}).value();
  EXPECT_EQ(t.launcher, Launcher::kSingle);
  EXPECT_EQ(t.size, 1);
  EXPECT_EQ(t.rank, 0);
  EXPECT_EQ(t.role, "train");
}

TEST(DetectTopologyTest, MpirunVariablesWinOverTorchrunAndSlurm) {
  EnvTopology t = Detect({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "3"},
                          {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"WORLD_SIZE", "2"}, {"SLURM_NTASKS", "9"}})
                      .value();
  EXPECT_EQ(t.launcher, Launcher::kMpi);
  EXPECT_EQ(t.size, 4);
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.local_rank, 1);
}

TEST(DetectTopologyTest, SrunWithPmiIsMpi) {
  EnvTopology t = Detect({{"PMI_SIZE", "8"}, {"PMI_RANK", "5"}, {"SLURM_LOCALID", "2"}}).value();
  EXPECT_EQ(t.launcher, Launcher::kMpi);
  EXPECT_EQ(t.size, 8);
  EXPECT_EQ(t.rank, 5);
  EXPECT_EQ(t.local_rank, 2);
}

TEST(DetectTopologyTest, TorchrunVariables) {
  EnvTopology t =
      Detect({{"WORLD_SIZE", "4"}, {"RANK", "2"}, {"LOCAL_RANK", "0"}, {"SLUICE_ROLE", "preprocess"}}).value();
  EXPECT_EQ(t.launcher, Launcher::kTorchrun);
  EXPECT_EQ(t.size, 4);
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(t.role, "preprocess");
}

TEST(DetectTopologyTest, SlurmWithoutMpi) {
  EnvTopology t = Detect({{"SLURM_NTASKS", "3"}, {"SLURM_PROCID", "1"}}).value();
  EXPECT_EQ(t.launcher, Launcher::kSlurm);
  EXPECT_EQ(t.size, 3);
  EXPECT_EQ(t.rank, 1);
}

TEST(DetectTopologyTest, BadValuesAreInvalidArgumentNamingTheVariable) {
  Result<EnvTopology> t = Detect({{"WORLD_SIZE", "four"}});
  EXPECT_EQ(t.status().code(), Code::kInvalidArgument);
  EXPECT_NE(t.status().message().find("WORLD_SIZE"), std::string::npos);
  EXPECT_EQ(Detect({{"WORLD_SIZE", "2"}, {"RANK", "2"}}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Detect({{"SLUICE_ROLE", "trainer"}}).status().code(), Code::kInvalidArgument);
}

TEST(InitTest, WithoutALauncherIsOneProcessWithoutCommunicator) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("WORLD_SIZE") || std::getenv("SLURM_NTASKS") ||
      std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK")) {
    GTEST_SKIP() << "launched under a launcher";
  }
  InputContext ctx = Init().value();
  EXPECT_EQ(ctx.num_input_pipelines, 1);
  EXPECT_EQ(ctx.input_pipeline_id, 0);
  EXPECT_EQ(ctx.communicator, nullptr);
}

}  // namespace
}  // namespace sluice::distribute
