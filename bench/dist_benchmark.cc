// sluice/distribute's costs under mpirun (bench/dist_suite.sh):
//   pingpong   ranks 0 and 1 bounce a --bytes message --iters times through
//              MpiCommunicator (Send, then Recv into an aligned buffer; every
//              MPI call on the communication thread): the transport's
//              overhead over mpi_pingpong's plain MPI_Send / MPI_Recv.
//              Prints "pingpong_sluice <bytes> B: <GiB/s> GiB/s, <us> us per round trip".
//   epoch      every rank passes over ShardedRecordFiles (RECORD, --records
//              records of 100 B in 4 files) --epochs times; an epoch boundary
//              is the time from the end of one pass (after a Barrier that
//              lines the ranks up), through a Barrier (the step every rank
//              takes together), to the first element of the next. Prints "epoch_boundary <ranks> ranks: <us> us (barrier
//              alone <us> us)" from rank 0.
//   dist_benchmark pingpong|epoch [--bytes N] [--iters N] [--records N] [--epochs N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "sluice/distribute/datasets.h"
#include "sluice/distribute/mpi.h"
#include "sluice/io/record_index.h"
#include "sluice/io/record_writer.h"

namespace {

using namespace sluice;
using namespace sluice::distribute;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int PingPong(Communicator& c, long bytes, long iters) {
  if (c.size() < 2) return std::fprintf(stderr, "pingpong needs 2 ranks\n"), 2;
  const std::string payload(static_cast<size_t>(bytes), 'x');
  double t = 0;
  for (int warm = 0; warm < 2; ++warm) {
    if (!c.Barrier().ok()) return 1;
    const auto t0 = Clock::now();
    for (long i = 0; i < (warm ? iters : 10); ++i) {
      if (c.rank() == 0) {
        if (!c.Send(1, 0, payload).ok() || !c.Recv(1, 0).ok()) return 1;
      } else if (c.rank() == 1) {
        Result<Message> m = c.Recv(0, 0);
        if (!m.ok() || !c.Send(0, 0, m->bytes()).ok()) return 1;
      }
    }
    t = Seconds(t0);
  }
  if (c.rank() == 0) {
    std::printf("pingpong_sluice %ld B: %.3f GiB/s, %.1f us per round trip\n", bytes,
                2.0 * static_cast<double>(bytes) * static_cast<double>(iters) / t / (1 << 30),
                t / static_cast<double>(iters) * 1e6);
  }
  return 0;
}

int Epochs(const std::shared_ptr<Communicator>& c, long records, long epochs) {
  namespace fs = std::filesystem;
  std::string dir;
  if (c->rank() == 0) {
    std::string tmpl = (fs::temp_directory_path() / "sluice_dist_bench_XXXXXX").string();
    dir = mkdtemp(tmpl.data());
    for (int f = 0; f < 4; ++f) {
      auto w = io::RecordWriter::Open(dir + "/f" + std::to_string(f)).value();
      for (long i = f; i < records; i += 4) (void)w->Write(std::string(100, 'r'));
      (void)w->Close();
      (void)io::RecordIndex::LoadOrBuild(dir + "/f" + std::to_string(f));
    }
  }
  if (!c->Bcast(&dir, 0).ok()) return 1;
  std::vector<std::string> files;
  for (int f = 0; f < 4; ++f) files.push_back(dir + "/f" + std::to_string(f));
  DistributeOptions options;
  options.policy = ShardingPolicy::kRecord;
  options.seed = 1;
  auto ds = ShardedRecordFiles(files, options, ContextOf(c));
  if (!ds.ok()) return std::fprintf(stderr, "%s\n", ds.status().ToString().c_str()), 1;
  double boundary = 0, barrier = 0;
  Clock::time_point boundary_start;
  for (long e = 0; e < epochs; ++e) {
    auto it = (*ds)->MakeIterator();
    Element x;
    bool end = false;
    if (e > 0) {
      if (!it->GetNext(&x, &end).ok()) return 1;  // the first element closes the boundary
      boundary += Seconds(boundary_start);
    }
    while (it->GetNext(&x, &end).ok() && !end) {
    }
    // Ranks sharing cores end their passes at different times: line them up
    // first, so that the boundary is the step's own cost, not their skew.
    if (!c->Barrier().ok()) return 1;
    auto t0 = Clock::now();
    if (!c->Barrier().ok()) return 1;
    barrier += Seconds(t0);
    boundary_start = t0;
  }
  if (c->rank() == 0) {
    std::printf("epoch_boundary %d ranks: %.1f us (barrier alone %.1f us)\n", c->size(),
                boundary / static_cast<double>(epochs - 1) * 1e6, barrier / static_cast<double>(epochs) * 1e6);
    fs::remove_all(dir);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: dist_benchmark pingpong|epoch [flags]\n"), 2;
  const std::string mode = argv[1];
  long bytes = 1 << 20, iters = 200, records = 10000, epochs = 50;
  for (int i = 2; i + 1 < argc; i += 2) {
    const long v = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--bytes") == 0) bytes = v;
    if (std::strcmp(argv[i], "--iters") == 0) iters = v;
    if (std::strcmp(argv[i], "--records") == 0) records = v;
    if (std::strcmp(argv[i], "--epochs") == 0) epochs = v;
  }
  Result<std::shared_ptr<Communicator>> comm = MakeMpiCommunicator();
  if (!comm.ok()) return std::fprintf(stderr, "%s\n", comm.status().ToString().c_str()), 1;
  if (mode == "pingpong") return PingPong(**comm, bytes, iters);
  if (mode == "epoch") return Epochs(*comm, records, std::max(2L, epochs));
  return std::fprintf(stderr, "unknown mode %s\n", mode.c_str()), 2;
}
