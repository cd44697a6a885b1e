// Init: the launcher and topology from the environment; the MPI
// communicator only where a launcher asked for MPI and sluice::mpi is linked.
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <string>

#include "sluice/distribute/communicator.h"

namespace sluice::distribute {
namespace {

std::atomic<CommunicatorFactory> mpi_factory{nullptr};

// The integer in variable `name`, or `fallback` when unset.
Result<int> IntVar(GetEnvFn getenv_fn, const char* name, int fallback, int min) {
  const char* value = getenv_fn(name);
  if (value == nullptr) return fallback;
  const std::string_view s(value);
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min) {
    return errors::InvalidArgument("environment variable ", name, "=\"", s, "\" is not an integer >= ", min);
  }
  return v;
}

// The first set variable of `names`, as IntVar.
Result<int> FirstVar(GetEnvFn getenv_fn, std::initializer_list<const char*> names, int fallback, int min) {
  for (const char* name : names) {
    if (getenv_fn(name) != nullptr) return IntVar(getenv_fn, name, fallback, min);
  }
  return fallback;
}

const char* RealGetenv(const char* name) { return std::getenv(name); }

}  // namespace

std::string_view LauncherName(Launcher launcher) {
  switch (launcher) {
    case Launcher::kSingle: return "single";
    case Launcher::kMpi: return "mpi";
    case Launcher::kTorchrun: return "torchrun";
    case Launcher::kSlurm: return "slurm";
  }
  return "?";
}

Result<EnvTopology> DetectTopology(GetEnvFn getenv_fn) {
  if (getenv_fn == nullptr) getenv_fn = RealGetenv;
  EnvTopology t;
  const auto set = [&](const char* name) { return getenv_fn(name) != nullptr; };
  if (set("OMPI_COMM_WORLD_SIZE") || set("PMIX_RANK") || set("PMI_SIZE")) {
    t.launcher = Launcher::kMpi;
    SLUICE_ASSIGN_OR_RETURN(t.size, FirstVar(getenv_fn, {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, 1, 1));
    SLUICE_ASSIGN_OR_RETURN(t.rank,
                            FirstVar(getenv_fn, {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}, 0, 0));
    SLUICE_ASSIGN_OR_RETURN(t.local_rank,
                            FirstVar(getenv_fn, {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}, 0, 0));
  } else if (set("WORLD_SIZE")) {
    t.launcher = Launcher::kTorchrun;
    SLUICE_ASSIGN_OR_RETURN(t.size, IntVar(getenv_fn, "WORLD_SIZE", 1, 1));
    SLUICE_ASSIGN_OR_RETURN(t.rank, IntVar(getenv_fn, "RANK", 0, 0));
    SLUICE_ASSIGN_OR_RETURN(t.local_rank, IntVar(getenv_fn, "LOCAL_RANK", 0, 0));
  } else if (set("SLURM_NTASKS")) {
    t.launcher = Launcher::kSlurm;
    SLUICE_ASSIGN_OR_RETURN(t.size, IntVar(getenv_fn, "SLURM_NTASKS", 1, 1));
    SLUICE_ASSIGN_OR_RETURN(t.rank, IntVar(getenv_fn, "SLURM_PROCID", 0, 0));
    SLUICE_ASSIGN_OR_RETURN(t.local_rank, IntVar(getenv_fn, "SLURM_LOCALID", 0, 0));
  }
  if (t.rank >= t.size) {
    return errors::InvalidArgument("rank ", t.rank, " is not below the world size ", t.size, " (launcher ",
                                   LauncherName(t.launcher), ")");
  }
  if (const char* role = getenv_fn("SLUICE_ROLE")) {
    t.role = role;
    if (t.role != "train" && t.role != "preprocess") {
      return errors::InvalidArgument("SLUICE_ROLE=\"", t.role, "\": expected \"train\" or \"preprocess\"");
    }
  }
  return t;
}

void SetMpiCommunicatorFactory(CommunicatorFactory factory) { mpi_factory.store(factory); }

Result<InputContext> Init() {
  SLUICE_ASSIGN_OR_RETURN(EnvTopology t, DetectTopology());
  InputContext ctx;
  ctx.num_input_pipelines = t.size;
  ctx.input_pipeline_id = t.rank;
  ctx.local_rank = t.local_rank;
  ctx.launcher = t.launcher;
  ctx.role = t.role;
  if (t.launcher == Launcher::kMpi) {
    if (CommunicatorFactory factory = mpi_factory.load()) {
      SLUICE_ASSIGN_OR_RETURN(ctx.communicator, factory());
      ctx.num_input_pipelines = ctx.communicator->size();
      ctx.input_pipeline_id = ctx.communicator->rank();
      ctx.local_rank = ctx.communicator->local_rank();
    }
  }
  return ctx;
}

InputContext ContextOf(std::shared_ptr<Communicator> comm, std::string role) {
  InputContext ctx;
  ctx.num_input_pipelines = comm->size();
  ctx.input_pipeline_id = comm->rank();
  ctx.local_rank = comm->local_rank();
  ctx.role = std::move(role);
  ctx.communicator = std::move(comm);
  return ctx;
}

}  // namespace sluice::distribute
