#!/usr/bin/env bash
# Builds the benchmarks (Release, into build-bench/) and runs one suite.
#
#   bench/run.sh queue     C++ queue benchmark (FIFOQueue vs mutex+deque, TBB,
#                          moodycamel), then the Python one (sluice vs
#                          queue.Queue vs tf.queue), then a table and, last, one
#                          line per target: "ratio <benchmark> vs <peer>: <x>"
#                          (x = sluice's throughput / the peer's; > 1: sluice
#                          is faster).
#   bench/run.sh records   C++ TFRecord read + Example parse benchmark (sluice
#                          vs plain reads, memcpy, libprotobuf), then the
#                          TensorFlow peers (bench/py_records_bench.py) over
#                          the same generated files, then bench/report_records.py:
#                          a table and, last, one "ratio ..." line per target.
#   bench/run.sh image     C++ JPEG decode / decode_and_crop / fused random
#                          resized crop vs libjpeg-turbo direct
#                          (bench/image_benchmark.cc), then the Python peers
#                          (bench/py_image_bench.py: sluice, PIL +
#                          torchvision's chain, OpenCV, tf.image eager and
#                          tf.data) on the same generated JPEGs, then
#                          bench/report_image.py: a table and "ratio ..." lines.
#   bench/run.sh train     the image training input pipeline
#                          (examples/image_pipeline.cc) with 1 and 2 threads
#                          vs TensorFlow's queue pipeline, PyTorch's
#                          DataLoader and the decode_and_crop limit, on the
#                          same generated files (bench/train_suite.sh,
#                          bench/train_bench.py, bench/report_train.py).
#   bench/run.sh data      sluice.data's TFRecord -> parse_example -> batch ->
#                          prefetch pipeline vs tf.data's, the per-element
#                          costs (bench/data_benchmark.cc) and the image
#                          pipeline vs tf.data, the DataLoader and the queue
#                          pipeline (bench/data_suite.sh, bench/py_data_bench.py,
#                          bench/py_data_image_bench.py, bench/report_data.py),
#                          and the global shuffle over record files vs a
#                          sequential read (bench/global_shuffle_bench.py).
#   bench/run.sh compat    sluice.compat.v1's graph-mode image pipeline (a TF 1
#                          program: reader -> parse -> decode_jpeg -> batch,
#                          sess.run) vs the eager one (bench/compat_v1_bench.py);
#                          and CIFAR-10 distorted_inputs native vs op by op vs
#                          TF 1 ("ratio compat_v1 cifar10 pipeline vs tf1: x");
#                          last line "ratio compat_v1 image pipeline vs eager: x".
#   bench/run.sh dist      multi-rank input under mpirun (bench/dist_suite.sh):
#                          MpiCommunicator's 1 MiB ping-pong vs Open MPI's own,
#                          1 trainer fed by 1-3 preprocessing ranks vs one
#                          process, epoch-boundary time; "ratio ..." lines.
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
#   RECORDS_DIR=$BUILD_DIR/records-data   where `records` writes its input
#                   files (deterministic; written once, then reused)
#   IMAGE_DIR=$BUILD_DIR/image-data   where `image` writes its JPEGs
#                   (deterministic; written once, then reused)
#   PY_BUILD_DIR=$BUILD_DIR-py   where `image` builds sluice._core for the
#                   Python peers (staged as in scripts/dev-pytest.sh)
#   SLUICE_BENCH_MALLOC=default  run the C++ benchmark with glibc's malloc
#                   defaults (by default it turns heap trimming off; see
#                   main() in bench/queue_benchmark.cc)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"

suite="${1:-}"
case "$suite" in
  queue|records|image) ;;
  train) exec bash bench/train_suite.sh ;;  # its own build folder (TRAIN_BUILD_DIR)
  data) exec bash bench/data_suite.sh ;;    # its own build folder (DATA_BUILD_DIR)
  compat) ;;
  dist) exec bash bench/dist_suite.sh ;;    # its own build folder (DIST_BUILD_DIR)
  *) echo "usage: bench/run.sh queue|records|image|train|data|compat|dist" >&2; exit 2 ;;
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

out="$BUILD_DIR/bench-results"
mkdir -p "$out"

# Builds sluice._core in $PY_BUILD_DIR (default $BUILD_DIR-py) and stages the
# package in $stage (= $PY_BUILD_DIR/pystage), for PYTHONPATH.
stage_python() {
  PY_BUILD_DIR="${PY_BUILD_DIR:-$BUILD_DIR-py}"
  if [ ! -f "$PY_BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$PY_BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_PYTHON=ON \
      -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DPython_EXECUTABLE="$PY" >/dev/null
  fi
  cmake --build "$PY_BUILD_DIR" -j "$JOBS" --target _core >/dev/null
  stage="$PY_BUILD_DIR/pystage"
  rm -rf "$stage/sluice" && mkdir -p "$stage" && cp -r python/sluice "$stage/sluice"
  cp "$PY_BUILD_DIR"/python/_core*.so "$stage/sluice/"
}

if [ "$suite" = "image" ]; then
  cmake --build "$BUILD_DIR" -j "$JOBS" --target image_benchmark >/dev/null
  IMAGE_DIR="${IMAGE_DIR:-$BUILD_DIR/image-data}"
  cxx_json="$out/image_benchmark.json"
  py_json="$out/py_image_bench.json"
  rm -f "$cxx_json" "$py_json"
  "$BUILD_DIR/bench/image_benchmark" --image_dir="$IMAGE_DIR" --generate_only
  echo "== C++: $BUILD_DIR/bench/image_benchmark --image_dir=$IMAGE_DIR --benchmark_min_time=0.3 --benchmark_repetitions=$REPS --benchmark_enable_random_interleaving=true${FILTER:+ --benchmark_filter=$FILTER}"
  echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
  timeout 1800 "$BUILD_DIR/bench/image_benchmark" --image_dir="$IMAGE_DIR" --benchmark_min_time=0.3 \
    --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
    ${FILTER:+--benchmark_filter="$FILTER"} \
    --benchmark_out="$cxx_json" --benchmark_out_format=json \
    --benchmark_format=console 2>&1 | grep -E '^image/' | grep -vE '_(mean|stddev|cv)( |$)' || true
  py_args=()
  if [ "${SKIP_PY:-0}" = "1" ]; then
    echo "== Python: skipped (SKIP_PY=1)"
  else
    stage_python
    echo "== Python: PYTHONPATH=$stage $PY bench/py_image_bench.py --image-dir $IMAGE_DIR --repetitions $REPS"
    # One thread per library (idle BLAS threads spin, and process_time counts them).
    PYTHONPATH="$stage" TF_CPP_MIN_LOG_LEVEL=3 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
      timeout 1800 "$PY" bench/py_image_bench.py --image-dir "$IMAGE_DIR" \
      --repetitions "$REPS" --json "$py_json" 2> "$out/py_image_bench.stderr" \
      || echo "== Python benchmark failed (see $out/py_image_bench.stderr)"
    py_args=(--python "$py_json")
  fi
  echo
  "$PY" bench/report_image.py --cxx "$cxx_json" "${py_args[@]}"
  exit 0
fi

if [ "$suite" = "compat" ]; then
  # Python only: sluice.compat.v1's graph-mode image pipeline against the eager one.
  stage_python
  echo "== Python: PYTHONPATH=$stage $PY bench/compat_v1_bench.py --data-dir $out --reps $((REPS + 2))"
  PYTHONPATH="$stage" OPENBLAS_NUM_THREADS=1 timeout 1800 "$PY" bench/compat_v1_bench.py --data-dir "$out" \
    --reps "$((REPS + 2))"
  exit 0
fi

if [ "$suite" = "records" ]; then
  cmake --build "$BUILD_DIR" -j "$JOBS" --target records_benchmark >/dev/null
  RECORDS_DIR="${RECORDS_DIR:-$BUILD_DIR/records-data}"
  cxx_json="$out/records_benchmark.json"
  py_json="$out/py_records_bench.json"
  rm -f "$cxx_json" "$py_json"
  "$BUILD_DIR/bench/records_benchmark" --records_dir="$RECORDS_DIR" --generate_only
  echo "== C++: $BUILD_DIR/bench/records_benchmark --records_dir=$RECORDS_DIR --benchmark_repetitions=$REPS --benchmark_enable_random_interleaving=true${FILTER:+ --benchmark_filter=$FILTER}"
  echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
  timeout 1800 "$BUILD_DIR/bench/records_benchmark" --records_dir="$RECORDS_DIR" \
    --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
    ${FILTER:+--benchmark_filter="$FILTER"} \
    --benchmark_out="$cxx_json" --benchmark_out_format=json \
    --benchmark_format=console 2>&1 | grep -E '^(read|parse)/' | grep -vE '_(mean|stddev|cv)( |$)' || true
  py_args=()
  if [ "${SKIP_PY:-0}" = "1" ]; then
    echo "== Python: skipped (SKIP_PY=1)"
  else
    echo "== Python: $PY bench/py_records_bench.py --records-dir $RECORDS_DIR --repetitions $REPS --min-time $PY_MIN_TIME"
    TF_CPP_MIN_LOG_LEVEL=3 timeout 1800 "$PY" bench/py_records_bench.py --records-dir "$RECORDS_DIR" \
      --repetitions "$REPS" --min-time "$PY_MIN_TIME" --json "$py_json" > "$out/py_records_bench.stdout" \
      2> "$out/py_records_bench.stderr" || echo "== Python benchmark failed (see $out/py_records_bench.stderr)"
    py_args=(--python "$py_json")
  fi
  echo
  "$PY" bench/report_records.py --cxx "$cxx_json" "${py_args[@]}"
  exit 0
fi

cmake --build "$BUILD_DIR" -j "$JOBS" --target queue_benchmark >/dev/null
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
