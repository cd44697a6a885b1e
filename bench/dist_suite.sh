#!/usr/bin/env bash
# bench/run.sh dist: sluice/distribute's costs under mpirun on this machine
# (loopback only), each against a peer measured in the same run:
#   1. transport: a 1 MiB ping-pong through MpiCommunicator (one
#      communication thread, receive into an aligned buffer) against Open
#      MPI's own ping-pong (bench/mpi_pingpong.cc: MPI_Send/MPI_Recv on the
#      main thread), over shared memory (vader) and TCP on lo:
#      "ratio pingpong_1MiB_<btl> vs mpi_pingpong: <x>";
#   2. the image pipeline (examples/distribute_image_pipeline.cc) with one
#      training rank fed by K = 1..3 preprocessing ranks (1 pipeline thread
#      each) against the same pipeline in one process with K threads:
#      "ratio preprocess_<K> vs one_process_<K>_threads: <x>" (images/s;
#      below 1: what the transport and the extra processes cost);
#   3. epoch boundaries: ShardedRecordFiles (RECORD) with 1, 2 and 4 ranks,
#      from the end of a pass through a Barrier to the next pass's first
#      element, against the Barrier alone.
# Rounds interleave the sides (REPS rounds, medians), as the machine's load
# moves between runs. Ranks > cores: --oversubscribe; on a 2-core machine
# the 3- and 4-rank runs time-share the cores (say so when quoting them).
#   DIST_BUILD_DIR=build-bench-dist   REPS=3   IMAGES=256   EPOCHS=2   SIZE=112
set -euo pipefail
cd "$(dirname "$0")/.."
build="${DIST_BUILD_DIR:-build-bench-dist}"
REPS="${REPS:-3}"
IMAGES="${IMAGES:-256}"
EPOCHS="${EPOCHS:-2}"
SIZE="${SIZE:-112}"
command -v mpirun >/dev/null || { echo "bench/run.sh dist: mpirun not found (scripts/install-deps.sh installs Open MPI)" >&2; exit 2; }
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=ON \
  -DSLUICE_BUILD_BENCHMARKS=ON -DSLUICE_BUILD_PYTHON=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target dist_benchmark mpi_pingpong distribute_image_pipeline >/dev/null
out="$build/bench-results"
mkdir -p "$out"
log="$out/dist.log"
: >"$log"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(getconf _NPROCESSORS_ONLN) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD)"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
shm=(--oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader --mca oob_tcp_if_include lo)
tcp=(--oversubscribe --bind-to none --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
run() {  # run KEY COMMAND...: appends "KEY <first number of the matching line>" to the log
  local key="$1" pattern="$2"
  shift 2
  local line
  line="$("$@" 2>&1 | grep -E "$pattern" | tail -1)"
  echo "  $key: $line"
  echo "$key $(sed -E 's/^[^:]*: *([0-9.]+).*/\1/' <<<"$line")" >>"$log"
}
pipeline_args=(--images "$IMAGES" --files 4 --epochs "$EPOCHS" --batch 32 --size "$SIZE" --width 320 --height 240 --quiet)

for round in $(seq 1 "$REPS"); do
  echo "-- round $round"
  for btl in shm tcp; do
    if [ "$btl" = shm ]; then flags=("${shm[@]}"); else flags=("${tcp[@]}"); fi
    run "mpi_pingpong_$btl" '^pingpong_mpi' mpirun -np 2 "${flags[@]}" "$build/bench/mpi_pingpong" --bytes 1048576 --iters 300
    run "sluice_pingpong_$btl" '^pingpong_sluice' mpirun -np 2 "${flags[@]}" "$build/bench/dist_benchmark" pingpong --bytes 1048576 --iters 300
  done
  for k in 1 2 3; do
    run "one_process_${k}_threads" '^images/s' "$build/examples/distribute_image_pipeline" "${pipeline_args[@]}" --threads "$k"
    run "preprocess_$k" '^images/s' mpirun -np $((k + 1)) "${shm[@]}" "$build/examples/distribute_image_pipeline" \
      "${pipeline_args[@]}" --threads 1 --preprocess-ranks "$k"
  done
  for np in 1 2 4; do
    run "epoch_boundary_np$np" '^epoch_boundary' mpirun -np "$np" "${shm[@]}" "$build/bench/dist_benchmark" epoch --records 20000 --epochs 40
  done
done

median() { grep "^$1 " "$log" | awk '{print $2}' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo
echo "== medians of $REPS rounds"
for key in mpi_pingpong_shm sluice_pingpong_shm mpi_pingpong_tcp sluice_pingpong_tcp \
           one_process_1_threads preprocess_1 one_process_2_threads preprocess_2 one_process_3_threads preprocess_3 \
           epoch_boundary_np1 epoch_boundary_np2 epoch_boundary_np4; do
  printf '%-26s %s\n' "$key" "$(median "$key")"
done
echo
ratio() { awk -v a="$(median "$1")" -v b="$(median "$2")" -v name="$3" 'BEGIN { printf "ratio %s: %.3f\n", name, a / b }'; }
ratio sluice_pingpong_shm mpi_pingpong_shm "pingpong_1MiB_shm vs mpi_pingpong"
ratio sluice_pingpong_tcp mpi_pingpong_tcp "pingpong_1MiB_tcp vs mpi_pingpong"
for k in 1 2 3; do ratio "preprocess_$k" "one_process_${k}_threads" "preprocess_$k vs one_process_${k}_threads"; done
