#!/usr/bin/env bash
# bench/run.sh data: the tf.data parse pipeline (TFRecordDataset ->
# map(parse_example) -> batch(64) -> prefetch) of sluice.data vs TensorFlow's
# tf.data on the same generated file (bench/py_data_bench.py), ending with a
# "ratio data_parse vs tf.data: <x>" line; then AUTOTUNE against a grid of
# hand-set parallelism on the image pipeline (bench/autotune_bench.py).
#   DATA_BUILD_DIR=build-bench-data   where sluice._core is built and staged
#   RECORDS=50000  REPS=3
#   AUTOTUNE_SECONDS=10  AUTOTUNE_REPS=2  SKIP_AUTOTUNE=1 (skip it)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${DATA_BUILD_DIR:-build-bench-data}"
py="$PWD/.venv/bin/python"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_PYTHON=ON \
    -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DPython_EXECUTABLE="$py" >/dev/null
fi
cmake --build "$build" -j "${JOBS:-2}" --target _core >/dev/null
stage="$build/pystage"
rm -rf "$stage/sluice"
mkdir -p "$stage"
cp -r python/sluice "$stage/sluice"
cp "$build"/python/_core*.so "$stage/sluice/"
PYTHONPATH="$stage" "$py" bench/py_data_bench.py --records "${RECORDS:-50000}" --reps "${REPS:-3}"
# AUTOTUNE vs a hand-tuned grid on the image pipeline (bench/autotune_bench.py):
# ends with "ratio autotune vs grid-best: <x>".
if [ -z "${SKIP_AUTOTUNE:-}" ]; then
  PYTHONPATH="$stage" "$py" bench/autotune_bench.py --seconds "${AUTOTUNE_SECONDS:-10}" --reps "${AUTOTUNE_REPS:-2}"
fi
