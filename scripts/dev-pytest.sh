#!/usr/bin/env bash
# Developer loop for the Python package without `pip install`: builds the
# extension sluice._core in its own CMake folder, stages it beside a copy of
# python/sluice/, and runs pytest on that copy. Several developers (or
# agents) can run it at once, each with its own folder.
#   bash scripts/dev-pytest.sh build-mine python/src/test_io.py -q -k tfrecord
# First argument: the build folder; the rest go to pytest (default: all
# Python tests). Assumes scripts/install-deps.sh ran (.venv).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: dev-pytest.sh BUILD_DIR [pytest args...]}"
shift
py="$PWD/.venv/bin/python"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_PYTHON=ON \
    -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DPython_EXECUTABLE="$py" >/dev/null
fi
cmake --build "$build" -j "${SLUICE_JOBS:-2}" --target _core
# sluice._mpi exists where CMake found MPI.
if grep -q "^build python/_mpi" "$build/build.ninja" 2>/dev/null; then
  cmake --build "$build" -j "${SLUICE_JOBS:-2}" --target _mpi
fi
stage="$build/pystage"
rm -rf "$stage/sluice"
mkdir -p "$stage"
cp -r python/sluice "$stage/sluice"
cp "$build"/python/_core*.so "$stage/sluice/"
cp "$build"/python/_mpi*.so "$stage/sluice/" 2>/dev/null || true
((${#@})) || set -- python/src tests -q
SLUICE_DEV_STAGE="$PWD/$stage" PYTHONPATH="$PWD/$stage" exec "$py" -m pytest "$@"
