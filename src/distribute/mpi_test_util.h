// Helpers of the tests run under mpirun (mpi_test_main.cc).
#ifndef SLUICE_SRC_DISTRIBUTE_MPI_TEST_UTIL_H_
#define SLUICE_SRC_DISTRIBUTE_MPI_TEST_UTIL_H_

#include "sluice/distribute/communicator.h"

namespace sluice::distribute::testing {

// The communicator over every rank of the job, made by main().
Communicator& MpiWorld();

}  // namespace sluice::distribute::testing

#endif  // SLUICE_SRC_DISTRIBUTE_MPI_TEST_UTIL_H_
