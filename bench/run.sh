#!/usr/bin/env bash
# Builds the benchmarks (Release, into build-bench/) and runs one suite.
#
#   bench/run.sh queue     C++ queue benchmark (FIFOQueue vs mutex+deque, TBB,
#                          moodycamel), then the Python one (sluice vs
#                          queue.Queue vs tf.queue), then a table and, last, one
#                          line per target: "ratio <benchmark> vs <peer>: <x>"
#                          (x = sluice's throughput / the peer's; > 1: sluice
#                          is faster).
#
# Environment:
#   REPS=3          repetitions of each C++ benchmark and Python measurement
#                   (the table shows the median; the C++ repetitions run in
#                   random order, so that a burst of load on the shared
#                   machine spreads over all the queues)
#   FILTER=regex    only the C++ benchmarks matching it (default: all)
#   PY_MIN_TIME=0.4 seconds per Python measurement
#   JOBS=2          build parallelism (the shared machine has 2 cores)
#   BUILD_DIR=build-bench
#   SKIP_PY=1       skip the Python benchmark
#   SLUICE_BENCH_MALLOC=default  run the C++ benchmark with glibc's malloc
#                   defaults (by default it turns heap trimming off; see
#                   main() in bench/queue_benchmark.cc)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"

suite="${1:-}"
case "$suite" in
  queue) ;;
  *) echo "usage: bench/run.sh queue" >&2; exit 2 ;;
esac

REPS="${REPS:-3}"
JOBS="${JOBS:-2}"
BUILD_DIR="${BUILD_DIR:-build-bench}"
PY_MIN_TIME="${PY_MIN_TIME:-0.4}"
PY="$here/.venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_BENCHMARKS=ON \
    -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DSLUICE_BUILD_PYTHON=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$JOBS" --target queue_benchmark >/dev/null

out="$BUILD_DIR/bench-results"
mkdir -p "$out"
cxx_json="$out/queue_benchmark.json"
py_json="$out/py_queue_bench.json"
rm -f "$cxx_json" "$py_json"

echo "== C++: $BUILD_DIR/bench/queue_benchmark --benchmark_repetitions=$REPS --benchmark_enable_random_interleaving=true${FILTER:+ --benchmark_filter=$FILTER}"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 1800 "$BUILD_DIR/bench/queue_benchmark" \
  --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
  ${FILTER:+--benchmark_filter="$FILTER"} \
  --benchmark_out="$cxx_json" --benchmark_out_format=json \
  --benchmark_format=console 2>&1 | grep -E '^(queue|deqcost)/' | grep -vE '_(mean|stddev|cv)( |$)' || true

py_args=()
if [ "${SKIP_PY:-0}" = "1" ]; then
  echo "== Python: skipped (SKIP_PY=1)"
else
  if ! "$PY" -c "import sluice.queue" >/dev/null 2>&1; then
    echo "== Python: sluice is not importable from $PY (build it: $PY -m pip install --no-build-isolation .); sluice rows skipped"
  fi
  if ! "$PY" -c "import tensorflow" >/dev/null 2>&1; then
    echo "== Python: tensorflow not installed (SLUICE_PEERS=1 scripts/install-deps.sh); tf.queue rows skipped"
  fi
  echo "== Python: $PY bench/py_queue_bench.py --repetitions $REPS --min-time $PY_MIN_TIME"
  TF_CPP_MIN_LOG_LEVEL=3 timeout 1200 "$PY" bench/py_queue_bench.py --repetitions "$REPS" --min-time "$PY_MIN_TIME" \
    --json "$py_json" 2> "$out/py_queue_bench.stderr" || echo "== Python benchmark failed (see $out/py_queue_bench.stderr)"
  py_args=(--python "$py_json")
fi

echo
"$PY" bench/report.py --cxx "$cxx_json" "${py_args[@]}"
