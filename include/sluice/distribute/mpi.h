// The MPI communicator (library sluice::mpi, built when CMake finds MPI;
// link it to run sluice's input ranks under mpirun or srun). This header
// does not include <mpi.h>: code that includes it needs no MPI headers.
//
// One communication thread per process makes every MPI call: MPI_Init_thread
// (asking for MPI_THREAD_FUNNELED, so the thread that initialises is the one
// that calls), the nonblocking collectives and messages of every
// MpiCommunicator, and MPI_Finalize at process exit. If MPI was already
// initialised (Horovod, mpi4py), it is reused, never finalised, and must
// provide at least MPI_THREAD_SERIALIZED (FailedPrecondition otherwise).
// Each communicator works on its own MPI_Comm_dup of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN, so an MPI error becomes a Status (Unavailable, naming
// the operation and peer rank) instead of an abort in a library call.
//
// A failed rank: Open MPI 4's mpirun ends the whole job, naming the rank
// that died; a call blocked on it never hangs longer than that.
//
// Thread-safety: as Communicator (every method thread-safe).
#ifndef SLUICE_DISTRIBUTE_MPI_H_
#define SLUICE_DISTRIBUTE_MPI_H_

#include <memory>

#include "sluice/distribute/communicator.h"

namespace sluice::distribute {

// A communicator over every rank of MPI_COMM_WORLD (initialising MPI on the
// communication thread if needed). Errors: FailedPrecondition when MPI was
// initialised by someone else below MPI_THREAD_SERIALIZED, or already
// finalised; Unavailable for an MPI failure.
[[nodiscard]] Result<std::shared_ptr<Communicator>> MakeMpiCommunicator();

// Init() with the MPI communicator registered: under mpirun or srun the
// context's communicator is an MPI one; otherwise as Init() (no MPI).
[[nodiscard]] Result<InputContext> InitMpi();

}  // namespace sluice::distribute

#endif  // SLUICE_DISTRIBUTE_MPI_H_
