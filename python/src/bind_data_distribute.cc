// _core.data's multi-rank input (sluice/distribute/), for sluice/distribute.py.
//
//   DistContext                       an InputContext (and its communicator)
//   dist_init(mpi_factory)            Init(); mpi_factory: None or the capsule of
//                                     sluice._mpi (MakeMpiCommunicator)
//   dist_thread_contexts(n, roles)    n contexts joined in this process (tests)
//   dist_sharded_record_files(...)    a Dataset handle (collective)
//   ShardedIterator(ds)               one pass: next(), state(), count(), close()
//   dist_barrier(ctx), dist_allreduce(ctx, value, op)
//   dist_serve(ds, ctx, ...)          Serve: blocks (without the GIL) until sent;
//                                     Ctrl-C cancels the context's communicator
//   dist_from_service(ctx, ..., ds)   FromService with ds's element_spec
//
// No MPI here: the MPI communicator is made by the separate extension
// sluice._mpi (built when MPI is found), whose factory function comes in
// as a capsule, so _core never links an MPI library.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bind_data.h"
#include "sluice/core/mutex.h"
#include "sluice/distribute/datasets.h"
#include "sluice/distribute/service.h"

namespace sluice::python {
namespace {

namespace dist = sluice::distribute;

// The capsule's name: sluice._mpi makes it around MakeMpiCommunicator.
constexpr const char* kFactoryCapsule = "sluice.distribute.CommunicatorFactory";

struct ShardedIteratorHandle {
  std::unique_ptr<dist::ShardedIterator> it;
};

template <class T>
T Must(Result<T> r) {
  ThrowIfError(r.status());
  return std::move(*r);
}

dist::ReduceOp ReduceOpOf(const std::string& name) {
  if (name == "sum") return dist::ReduceOp::kSum;
  if (name == "min") return dist::ReduceOp::kMin;
  if (name == "max") return dist::ReduceOp::kMax;
  throw nb::value_error(("op must be 'sum', 'min' or 'max', not '" + name + "'").c_str());
}

dist::Communicator& CommOf(const dist::InputContext& ctx) {
  if (!ctx.communicator) throw nb::value_error("this context has no communicator (not launched by mpirun or srun)");
  return *ctx.communicator;
}

// Serve checks the ranks (disjoint, in range); Python fills them from the roles.
dist::ServiceOptions ServiceOptionsOf(std::vector<int> workers, std::vector<int> trainers,
                                      int max_outstanding_requests, int tag) {
  if (max_outstanding_requests < 1) throw nb::value_error("max_outstanding_requests must be >= 1");
  dist::ServiceOptions o;
  o.workers = std::move(workers);
  o.trainers = std::move(trainers);
  o.max_outstanding_requests = max_outstanding_requests;
  o.tag = tag;
  return o;
}

// Serve's outcome, set by the thread that runs it.
struct ServeOutcome {
  Mutex mu;
  CondVar done_cv;
  bool done SLUICE_GUARDED_BY(mu) = false;
  Status status SLUICE_GUARDED_BY(mu);
};

// Runs Serve on a thread of its own while the caller waits without the GIL,
// so that Ctrl-C (on the main thread) is seen: it cancels the communicator,
// which ends Serve, and is raised once the thread is joined.
void ServeInterruptibly(data::DatasetPtr dataset, std::shared_ptr<dist::Communicator> comm,
                        const dist::ServiceOptions& options) {
  auto outcome = std::make_shared<ServeOutcome>();
  std::thread server([outcome, dataset = std::move(dataset), comm, options] {
    Status s = dist::Serve(dataset, comm, options);
    MutexLock lock(&outcome->mu);
    outcome->status = std::move(s);
    outcome->done = true;
    outcome->done_cv.SignalAll();
  });
  const auto join = [&] {
    GilRelease release;
    server.join();
  };
  try {
    WaitInterruptibly(std::nullopt, [&](std::optional<std::chrono::nanoseconds> chunk) {
      MutexLock lock(&outcome->mu);
      if (!chunk) {
        while (!outcome->done) outcome->done_cv.Wait(&outcome->mu);
      } else if (!outcome->done) {
        outcome->done_cv.WaitFor(&outcome->mu, *chunk);
      }
      return outcome->done;
    });
  } catch (nb::python_error&) {
    comm->Cancel(errors::Cancelled("sluice.distribute.serve was interrupted"));
    join();
    throw;
  }
  join();
  Status s;
  {
    MutexLock lock(&outcome->mu);
    s = outcome->status;
  }
  ThrowIfError(s);
}

}  // namespace

void BindDataDistribute(nb::module_& d) {
  nb::class_<dist::InputContext>(d, "DistContext")
      .def_ro("num_input_pipelines", &dist::InputContext::num_input_pipelines)
      .def_ro("input_pipeline_id", &dist::InputContext::input_pipeline_id)
      .def_ro("local_rank", &dist::InputContext::local_rank)
      .def_ro("role", &dist::InputContext::role)
      .def_prop_ro("launcher", [](const dist::InputContext& c) { return std::string(dist::LauncherName(c.launcher)); })
      .def_prop_ro("has_communicator", [](const dist::InputContext& c) { return c.communicator != nullptr; });

  d.def("dist_init", [](nb::object factory) {
    if (!factory.is_none()) {
      void* p = PyCapsule_GetPointer(factory.ptr(), kFactoryCapsule);
      if (p == nullptr) throw nb::python_error();
      dist::SetMpiCommunicatorFactory(reinterpret_cast<dist::CommunicatorFactory>(p));
    }
    Result<dist::InputContext> ctx = [] {
      GilRelease release;
      return dist::Init();
    }();
    return Must(std::move(ctx));
  }, nb::arg("mpi_factory").none());

  d.def("dist_thread_contexts", [](int n, std::vector<std::string> roles) {
    if (n < 1) throw nb::value_error("n must be >= 1");
    if (!roles.empty() && roles.size() != static_cast<size_t>(n)) throw nb::value_error("one role per rank");
    std::vector<dist::InputContext> out;
    for (auto& comm : dist::MakeThreadCommunicators(n)) {
      out.push_back(dist::ContextOf(comm, roles.empty() ? "train" : roles[out.size()]));
    }
    return out;
  }, nb::arg("n"), nb::arg("roles") = std::vector<std::string>());

  d.def("dist_sharded_record_files", [](std::vector<std::string> files, const std::string& policy,
                                        std::optional<uint64_t> seed, const std::string& uneven, bool shuffle,
                                        bool balance_records, bool check_consistency, int64_t split_records,
                                        std::optional<std::string> resume, const dist::InputContext& ctx) {
    dist::DistributeOptions options;
    options.policy = Must(dist::ParseShardingPolicy(policy));
    options.seed = seed;
    options.uneven = Must(dist::ParseUneven(uneven));
    options.shuffle = shuffle;
    options.balance_records = balance_records;
    options.check_consistency = check_consistency;
    options.split_records = split_records;
    if (resume) options.resume = Must(dist::DistributedState::Parse(*resume));
    Result<data::DatasetPtr> r = [&] {
      GilRelease release;
      return dist::ShardedRecordFiles(std::move(files), std::move(options), ctx);
    }();
    return Wrap(std::move(r));
  }, nb::arg("filenames"), nb::arg("policy"), nb::arg("seed").none(), nb::arg("uneven"), nb::arg("shuffle"),
     nb::arg("balance_records"), nb::arg("check_consistency"), nb::arg("split_records"), nb::arg("resume").none(),
     nb::arg("context"));

  d.def("dist_barrier", [](const dist::InputContext& ctx) {
    dist::Communicator& comm = CommOf(ctx);
    Status s;
    {
      GilRelease release;
      s = comm.Barrier();
    }
    ThrowIfError(s);
  }, nb::arg("context"));
  d.def("dist_allreduce", [](const dist::InputContext& ctx, int64_t value, const std::string& op) {
    dist::Communicator& comm = CommOf(ctx);
    const dist::ReduceOp reduce = ReduceOpOf(op);
    Result<int64_t> r = [&] {
      GilRelease release;
      return comm.Allreduce(value, reduce);
    }();
    return Must(std::move(r));
  }, nb::arg("context"), nb::arg("value"), nb::arg("op"));

  d.def("dist_serve", [](const DataDatasetHandle& h, const dist::InputContext& ctx, std::vector<int> workers,
                         std::vector<int> trainers, int max_outstanding_requests, int tag) {
    CommOf(ctx);
    dist::ServiceOptions o =
        ServiceOptionsOf(std::move(workers), std::move(trainers), max_outstanding_requests, tag);
    ServeInterruptibly(h.ds, ctx.communicator, o);
  }, nb::arg("dataset"), nb::arg("context"), nb::arg("workers"), nb::arg("trainers"),
     nb::arg("max_outstanding_requests"), nb::arg("tag"));
  d.def("dist_from_service", [](const dist::InputContext& ctx, std::vector<int> workers, std::vector<int> trainers,
                                int max_outstanding_requests, int tag, const DataDatasetHandle& like) {
    CommOf(ctx);
    dist::ServiceOptions o =
        ServiceOptionsOf(std::move(workers), std::move(trainers), max_outstanding_requests, tag);
    return Wrap(dist::FromService(ctx.communicator, o, like.ds->element_spec()));
  }, nb::arg("context"), nb::arg("workers"), nb::arg("trainers"), nb::arg("max_outstanding_requests"),
     nb::arg("tag"), nb::arg("like"));

  // No threads of its own (a DYNAMIC pass waits on the dispatcher without
  // the GIL): a plain handle, as RecordFilesIterator.
  nb::class_<ShardedIteratorHandle>(d, "ShardedIterator", "One epoch of a sharded dataset. One thread at a time.")
      .def("__init__", [](ShardedIteratorHandle* self, const DataDatasetHandle& h) {
        std::unique_ptr<dist::ShardedIterator> it = dist::MakeShardedIterator(h.ds);
        if (!it) throw nb::type_error("not a dataset of sluice.distribute.shard");
        new (self) ShardedIteratorHandle{std::move(it)};
      })
      .def("next", [](ShardedIteratorHandle& h) { return NextOrNone(h.it.get()); })
      .def("state", [](const ShardedIteratorHandle& h) {
        if (!h.it) throw nb::value_error("the iterator is closed");
        Result<dist::DistributedState> state = [&] {
          nb::gil_scoped_release release;  // DYNAMIC asks rank 0
          return h.it->state();
        }();
        return Must(std::move(state)).Serialize();
      })
      .def("count", [](const ShardedIteratorHandle& h) {
        if (!h.it) throw nb::value_error("the iterator is closed");
        return h.it->count();
      })
      .def("close", [](ShardedIteratorHandle& h) { h.it.reset(); });
}

}  // namespace sluice::python
