// Open MPI's own ping-pong, the peer of dist_benchmark's: ranks 0 and 1
// bounce a --bytes message --iters times with plain MPI_Send / MPI_Recv on
// the main thread (no sluice code). Prints "pingpong_mpi <bytes> B: <GiB/s>
// GiB/s, <us> us per round trip" (bytes moved both ways / time).
// With another number of ranks it times MPI_Barrier instead ("barrier_mpi
// <ranks> ranks: <us> us"), the peer of dist_benchmark's epoch boundary.
//   mpirun -n 2 mpi_pingpong [--bytes N] [--iters N]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long bytes = 1 << 20, iters = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--bytes") == 0) bytes = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--iters") == 0) iters = std::atol(argv[i + 1]);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    // Any other size: the latency of MPI_Barrier, the peer of an epoch boundary.
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < iters; ++i) MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) std::printf("barrier_mpi %d ranks: %.1f us\n", size, (MPI_Wtime() - t0) / iters * 1e6);
    MPI_Finalize();
    return 0;
  }
  std::vector<char> buf(static_cast<size_t>(bytes), 'x');
  const int peer = 1 - rank;
  for (int warm = 0; warm < 2; ++warm) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < (warm ? iters : 10); ++i) {
      if (rank == 0) {
        MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      }
    }
    const double t = MPI_Wtime() - t0;
    if (warm && rank == 0) {
      std::printf("pingpong_mpi %ld B: %.3f GiB/s, %.1f us per round trip\n", bytes,
                  2.0 * static_cast<double>(bytes) * static_cast<double>(iters) / t / (1 << 30),
                  t / static_cast<double>(iters) * 1e6);
    }
  }
  MPI_Finalize();
  return 0;
}
