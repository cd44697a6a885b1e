// A job whose preprocessing rank dies mid-stream (CTest
// distribute_mpi_worker_killed): rank 0 trains, reading FromService; rank 1
// serves a long dataset and kills itself (SIGKILL) after 20 elements; any
// other rank serves a short one. The job must end with mpirun's error naming
// rank 1, never hang (the test's TIMEOUT), and rank 0 must not report a
// clean end.
#include <csignal>
#include <cstdio>

#include "sluice/data/datasets.h"
#include "sluice/distribute/mpi.h"
#include "sluice/distribute/service.h"

using namespace sluice;
using namespace sluice::distribute;

int main() {
  Result<std::shared_ptr<Communicator>> comm = MakeMpiCommunicator();
  if (!comm.ok()) {
    std::fprintf(stderr, "%s\n", comm.status().ToString().c_str());
    return 2;
  }
  std::vector<std::string> roles((*comm)->size(), "preprocess");
  roles[0] = "train";
  const ServiceOptions options = ServiceOptionsFromRoles(roles);
  const data::ElementSpec spec{{DType::kInt64}, {PartialShape({})}, {}};
  if ((*comm)->rank() == 0) {
    auto ds = FromService(*comm, options, spec).value();
    auto it = ds->MakeIterator();
    int64_t n = 0;
    while (true) {
      Element e;
      bool end = false;
      Status s = it->GetNext(&e, &end);
      if (!s.ok()) {
        std::fprintf(stderr, "trainer: %s after %lld elements\n", s.ToString().c_str(), static_cast<long long>(n));
        return 1;
      }
      if (end) break;
      ++n;
    }
    std::fprintf(stderr, "trainer: clean end after %lld elements (unexpected)\n", static_cast<long long>(n));
    return 0;
  }
  const bool dies = (*comm)->rank() == 1;
  int64_t served = 0;
  data::DatasetPtr ds = data::Range(0, dies ? (int64_t{1} << 40) : 10).value();
  ds = data::Map(ds, [&served, dies](Element e) -> Result<Element> {
         if (dies && ++served == 20) std::raise(SIGKILL);
         return e;
       }, spec).value();
  Status s = Serve(ds, *comm, options);
  std::fprintf(stderr, "worker %d: %s\n", (*comm)->rank(), s.ToString().c_str());
  return s.ok() ? 0 : 1;
}
