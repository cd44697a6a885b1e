// main() of the tests run under mpirun: every rank runs every test on one
// MPI communicator (MpiWorld()); the ranks agree on the exit code (an
// Allreduce of failures), rank 0 prints the usual report, other ranks only
// their failures, prefixed with their rank.
#include <gtest/gtest.h>

#include <cstdio>

#include "distribute/mpi_test_util.h"
#include "sluice/distribute/mpi.h"

namespace sluice::distribute::testing {
namespace {

std::shared_ptr<Communicator>* world = nullptr;

// Prints a failed assertion with the rank that failed it.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.message());
    }
  }

 private:
  int rank_;
};

}  // namespace

Communicator& MpiWorld() { return **world; }

}  // namespace sluice::distribute::testing

int main(int argc, char** argv) {
  using namespace sluice::distribute;
  ::testing::InitGoogleTest(&argc, argv);
  sluice::Result<std::shared_ptr<Communicator>> comm = MakeMpiCommunicator();
  if (!comm.ok()) {
    std::fprintf(stderr, "MPI communicator: %s\n", comm.status().ToString().c_str());
    return 2;
  }
  std::shared_ptr<Communicator> shared = *comm;
  sluice::distribute::testing::world = &shared;
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (shared->rank() != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new sluice::distribute::testing::RankFailurePrinter(shared->rank()));
  }
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  sluice::Result<int64_t> total = shared->Allreduce(failed, ReduceOp::kSum);
  if (!total.ok()) {
    std::fprintf(stderr, "[rank %d] agreeing on the result: %s\n", shared->rank(), total.status().ToString().c_str());
    return 1;
  }
  if (shared->rank() == 0 && *total > 0) std::fprintf(stderr, "%lld rank(s) failed\n", static_cast<long long>(*total));
  sluice::distribute::testing::world = nullptr;
  shared.reset();
  return *total == 0 ? 0 : 1;
}
