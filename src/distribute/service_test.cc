// Preprocessing ranks over thread communicators: every element once, several
// workers and trainers, errors carried to the trainer, the wire format.
#include "sluice/distribute/service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "sluice/data/datasets.h"

namespace sluice::distribute {
namespace {

data::ElementSpec Int64Scalar() { return data::ElementSpec{{DType::kInt64}, {PartialShape({})}, {}}; }

// Runs a service with `roles` (one per rank): worker w serves
// shard w of range(n); returns what each trainer read (and its final status).
struct ServiceRun {
  std::map<int, std::vector<int64_t>> read;
  std::map<int, Status> status;
};

ServiceRun RunService(const std::vector<std::string>& roles, int64_t n, int credits = 4,
               data::MapFn fail = nullptr) {
  const auto comms = MakeThreadCommunicators(static_cast<int>(roles.size()));
  ServiceOptions options = ServiceOptionsFromRoles(roles);
  options.max_outstanding_requests = credits;
  ServiceRun run;
  std::vector<std::vector<int64_t>> read(roles.size());
  std::vector<Status> status(roles.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < roles.size(); ++r) {
    threads.emplace_back([&, r] {
      auto comm = comms[r];
      if (roles[r] == "preprocess") {
        const int w = static_cast<int>(std::find(options.workers.begin(), options.workers.end(), r) -
                                       options.workers.begin());
        data::DatasetPtr ds = data::Shard(data::Range(0, n).value(), static_cast<int64_t>(options.workers.size()), w).value();
        if (fail) ds = data::Map(ds, fail, Int64Scalar()).value();
        status[r] = Serve(ds, comm, options);
        return;
      }
      auto ds = FromService(comm, options, Int64Scalar());
      ASSERT_TRUE(ds.ok()) << ds.status();
      auto it = (*ds)->MakeIterator();
      while (true) {
        Element e;
        bool end = false;
        status[r] = it->GetNext(&e, &end);
        if (!status[r].ok() || end) break;
        read[r].push_back(e[0].scalar<int64_t>());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t r = 0; r < roles.size(); ++r) {
    if (roles[r] == "train") run.read[static_cast<int>(r)] = read[r];
    run.status[static_cast<int>(r)] = status[r];
  }
  return run;
}

TEST(ServiceTest, OneTrainerGetsEveryElementOfThreeWorkersOnce) {
  const ServiceRun run = RunService({"train", "preprocess", "preprocess", "preprocess"}, 300);
  std::vector<int64_t> got = run.read.at(0);
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), 300u);
  for (int64_t i = 0; i < 300; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], i);
  for (const auto& [rank, s] : run.status) EXPECT_TRUE(s.ok()) << "rank " << rank << ": " << s;
}

TEST(ServiceTest, TwoTrainersShareTheElementsFirstComeFirstServed) {
  const ServiceRun run = RunService({"preprocess", "train", "preprocess", "train"}, 200, /*credits=*/1);
  std::vector<int64_t> all = run.read.at(1);
  all.insert(all.end(), run.read.at(3).begin(), run.read.at(3).end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), 200u);
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ(all[static_cast<size_t>(i)], i);
}

TEST(ServiceTest, FewerCreditsThanWorkersStillEndsEveryStream) {
  const ServiceRun run = RunService({"train", "preprocess", "preprocess", "preprocess"}, 30, /*credits=*/1);
  EXPECT_EQ(run.read.at(0).size(), 30u);
}

TEST(ServiceTest, AWorkersErrorReachesTheTrainerNamingTheRank) {
  data::MapFn fail = [](Element e) -> Result<Element> {
    if (e[0].scalar<int64_t>() == 7) return errors::DataLoss("bad record 7");
    return e;
  };
  const ServiceRun run = RunService({"train", "preprocess"}, 20, 2, fail);
  EXPECT_EQ(run.status.at(0).code(), Code::kDataLoss);
  EXPECT_NE(run.status.at(0).message().find("bad record 7 (on preprocessing rank 1)"), std::string::npos)
      << run.status.at(0);
  EXPECT_EQ(run.status.at(1).code(), Code::kDataLoss);
  EXPECT_EQ(run.read.at(0).size(), 7u);
}

TEST(ServiceTest, BadRolesAreInvalidArgument) {
  const auto comms = MakeThreadCommunicators(2);
  ServiceOptions options;
  options.workers = {0};
  options.trainers = {0};
  EXPECT_EQ(FromService(comms[0], options, Int64Scalar()).status().code(), Code::kInvalidArgument);
  options.trainers = {1};
  EXPECT_EQ(FromService(comms[0], options, Int64Scalar()).status().code(), Code::kInvalidArgument);
  options.trainers = {};
  EXPECT_EQ(Serve(data::Range(0, 1).value(), comms[0], options).code(), Code::kInvalidArgument);
}

TEST(WireFormatTest, ElementsRoundTripWithNumericComponentsAlignedAndShared) {
  Tensor f(DType::kFloat32, TensorShape{3, 5});
  for (int i = 0; i < 15; ++i) f.data<float>()[i] = static_cast<float>(i) * 0.5f;
  const Element in{f, Tensor::Scalar<int64_t>(-9), Tensor::FromStrings({"a", "", "long string"}),
                   Tensor(DType::kUInt8, TensorShape{0})};
  const std::string bytes = EncodeElement(in);
  Message m;
  m.source = 3;
  m.data = Tensor(DType::kUInt8, TensorShape{static_cast<int64_t>(bytes.size())});
  std::memcpy(m.data.raw_data(), bytes.data(), bytes.size());
  Element out;
  ASSERT_TRUE(DecodeElement(m, &out).ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(ValuesEqual(out[0], f));
  EXPECT_EQ(out[0].shape(), f.shape());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(out[0].raw_data()) % TensorBuffer::kAlignment, 0u);
  EXPECT_EQ(out[1].scalar<int64_t>(), -9);
  EXPECT_EQ(out[2].flat<std::string>()[2], "long string");
  EXPECT_EQ(out[3].num_elements(), 0);
}

TEST(WireFormatTest, TruncatedMessagesAreDataLossNamingTheSender) {
  const std::string bytes = EncodeElement(Element{Tensor::Scalar<int64_t>(1)});
  for (size_t cut : {size_t{0}, size_t{6}, size_t{20}}) {
    Message m;
    m.source = 5;
    m.data = Tensor(DType::kUInt8, TensorShape{static_cast<int64_t>(cut)});
    std::memcpy(m.data.raw_data(), bytes.data(), cut);
    Element out;
    Status s = DecodeElement(m, &out);
    EXPECT_EQ(s.code(), Code::kDataLoss) << cut;
    EXPECT_NE(s.message().find("rank 5"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice::distribute
