// Built against an installed sluice through sluice::mpi, where sluice was
// built with MPI (run.sh runs it when CMake made it): proves that the MPI
// library links on its own with its MPI dependency. Starts no MPI: it only
// takes MakeMpiCommunicator's address and makes a one-process context.
//   downstream_mpi
#include <cstdio>

#include "sluice/distribute/communicator.h"
#include "sluice/distribute/mpi.h"

int main() {
  auto factory = &sluice::distribute::MakeMpiCommunicator;
  const sluice::distribute::InputContext single;
  std::printf("downstream_mpi: factory %s, %d input pipeline(s)\n", factory != nullptr ? "linked" : "missing",
              single.num_input_pipelines);
  return factory != nullptr && single.num_input_pipelines == 1 ? 0 : 1;
}
