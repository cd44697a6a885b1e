#!/usr/bin/env bash
# bench/run.sh data: the tf.data parse pipeline (TFRecordDataset ->
# map(parse_example) -> batch(64) -> prefetch) of sluice.data vs TensorFlow's
# tf.data on the same generated file (bench/py_data_bench.py), ending with a
# "ratio data_parse vs tf.data: <x>" line; then a global shuffle over record
# files against a sequential read of them (bench/global_shuffle_bench.py),
# ending with a "ratio global_shuffle vs sequential_read: <x>" line.
#   DATA_BUILD_DIR=build-bench-data   where sluice._core is built and staged
#   RECORDS=50000  REPS=3  GS_SMALL=200000  GS_LARGE=2000  (~1 KiB and ~100 KiB records)  GS_REPS=5
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
PYTHONPATH="$stage" exec "$py" bench/global_shuffle_bench.py --small "${GS_SMALL:-200000}" --large "${GS_LARGE:-2000}" \
  --reps "${GS_REPS:-5}"
