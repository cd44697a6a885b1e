// Communicator: how the input pipelines of one job (its "ranks") talk.
// Collectives for agreement at start-up and at epoch ends (Barrier, Bcast,
// Allgather, Allreduce) and tagged byte messages for the dispatcher and the
// preprocessing ranks (Send, Recv). Implementations:
//   - MakeThreadCommunicators: N ranks as threads of one process (tests);
//   - MpiCommunicator (sluice/distribute/mpi.h, library sluice::mpi, built
//     when MPI is found): one communication thread makes every MPI call.
//
// Contract for collectives: every rank calls the same collectives in the
// same order (as MPI requires); a rank's collectives are called by one of
// its threads at a time. Send and Recv may be called from any thread at any
// time, also while a collective is in progress on another thread.
//
// Errors: Cancelled (or the status given to Cancel) once Cancel was called;
// Unavailable or Aborted naming the peer rank for a transport failure;
// InvalidArgument for a rank out of range.
//
// Thread-safety: every method is thread-safe (see the contract above).
#ifndef SLUICE_DISTRIBUTE_COMMUNICATOR_H_
#define SLUICE_DISTRIBUTE_COMMUNICATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/tensor.h"

namespace sluice::distribute {

enum class ReduceOp { kSum, kMin, kMax };

// Recv's source for "any rank" (MPI_ANY_SOURCE).
inline constexpr int kAnySource = -1;

// A received message. `data` is a uint8 tensor of the message's bytes, so
// its buffer is 64-byte aligned (TensorBuffer::kAlignment): tensors can be
// views into it.
struct Message {
  int source = -1;
  int tag = 0;
  Tensor data;

  std::string_view bytes() const {
    return {static_cast<const char*>(data.raw_data()), static_cast<size_t>(data.num_elements())};
  }
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The rank among the ranks of this machine.
  virtual int local_rank() const = 0;

  // Collectives (see the contract in the file comment). Each blocks until
  // every rank has joined, or Cancel.
  [[nodiscard]] virtual Status Barrier() = 0;
  // root's *bytes into every rank's *bytes.
  [[nodiscard]] virtual Status Bcast(std::string* bytes, int root) = 0;
  // Every rank's bytes, indexed by rank.
  [[nodiscard]] virtual Result<std::vector<std::string>> Allgather(std::string_view bytes) = 0;
  [[nodiscard]] virtual Result<int64_t> Allreduce(int64_t value, ReduceOp op) = 0;

  // Sends `bytes` to `dest` with `tag` (>= 0). May return before `dest`
  // receives (the bytes are copied or sent). Messages between two ranks with
  // one tag arrive in order.
  [[nodiscard]] virtual Status Send(int dest, int tag, std::string_view bytes) = 0;
  // Blocks until a message with `tag` from `source` (or kAnySource)
  // arrives, or Cancel.
  [[nodiscard]] virtual Result<Message> Recv(int source, int tag) = 0;

  // Wakes every blocked call, which then returns `why` (as do later calls).
  // Local: other ranks are not told.
  virtual void Cancel(Status why) = 0;
};

// `n` communicators, one per rank, joined in this process: rank i is
// result[i]. For tests; each is used by the threads playing its rank.
std::vector<std::shared_ptr<Communicator>> MakeThreadCommunicators(int n);

// ---- Launch and Init ------------------------------------------------------------

// Who launched this process, as Init found out.
enum class Launcher { kSingle, kMpi, kTorchrun, kSlurm };
std::string_view LauncherName(Launcher launcher);

// Rank and size read from the environment, without talking to anyone.
struct EnvTopology {
  Launcher launcher = Launcher::kSingle;
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  // SLUICE_ROLE: "train" (default) or "preprocess" (a preprocessing rank).
  std::string role = "train";
};

// Reads the environment through `getenv` (tests pass a fake one):
//   - MPI when OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE is set (mpirun,
//     srun --mpi): rank and size from OMPI_COMM_WORLD_RANK/SIZE,
//     PMIX_RANK, PMI_RANK/PMI_SIZE (or SLURM_*);
//   - else torchrun when WORLD_SIZE is set (RANK, WORLD_SIZE, LOCAL_RANK);
//   - else Slurm when SLURM_NTASKS is set (SLURM_PROCID, SLURM_LOCALID);
//   - else a single process.
// InvalidArgument for a malformed or out-of-range value, naming the variable.
using GetEnvFn = const char* (*)(const char*);
[[nodiscard]] Result<EnvTopology> DetectTopology(GetEnvFn getenv_fn = nullptr);

// What every rank's input pipeline knows about the job: tf.distribute's
// InputContext (num_input_pipelines, input_pipeline_id) plus the
// communicator, null when there is none (a single process, or a launcher
// without MPI: static policies only, and the seed must be given).
struct InputContext {
  int num_input_pipelines = 1;
  int input_pipeline_id = 0;
  int local_rank = 0;
  Launcher launcher = Launcher::kSingle;
  std::string role = "train";
  std::shared_ptr<Communicator> communicator;
};

// Makes the MPI communicator (registered by sluice::mpi, see mpi.h).
using CommunicatorFactory = Result<std::shared_ptr<Communicator>> (*)();
// Registers the factory Init uses under an MPI launcher. Thread-safe.
void SetMpiCommunicatorFactory(CommunicatorFactory factory);

// The job's InputContext, from DetectTopology. Under an MPI launcher it
// makes the MPI communicator when a factory is registered (InitMpi does
// that), else it works from the environment alone. Never starts MPI
// otherwise. Errors: DetectTopology's; the factory's (an MPI failure).
// Thread-safe; each call makes a new context (MPI is initialised once).
[[nodiscard]] Result<InputContext> Init();

// An InputContext over `comm` (e.g. a thread communicator in tests).
InputContext ContextOf(std::shared_ptr<Communicator> comm, std::string role = "train");

}  // namespace sluice::distribute

#endif  // SLUICE_DISTRIBUTE_COMMUNICATOR_H_
