// sluice._mpi: the MPI communicator's factory for sluice._core, built only
// when MPI is found. Only this extension links an MPI library; _core gets
// MakeMpiCommunicator through a capsule (sluice.distribute.init()), so
// importing sluice never loads MPI.
#include <nanobind/nanobind.h>

#include "sluice/distribute/mpi.h"

namespace nb = nanobind;

NB_MODULE(_mpi, m) {
  m.doc() = "sluice's MPI communicator (used by sluice.distribute.init under mpirun or srun).";
  m.def("communicator_factory", [] {
    sluice::distribute::CommunicatorFactory factory = &sluice::distribute::MakeMpiCommunicator;
    return nb::steal(PyCapsule_New(reinterpret_cast<void*>(factory), "sluice.distribute.CommunicatorFactory", nullptr));
  }, "A capsule holding the factory of MPI communicators (for _core.data.dist_init).");
}
