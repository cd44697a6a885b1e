#!/usr/bin/env bash
# Configures and builds sluice (Release, C++ tests and examples) into build/
# (or $SLUICE_BUILD_DIR). Extra arguments are build targets.
# Used by scripts/test.sh and scripts/demo.sh; assumes install-deps.sh ran.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SLUICE_BUILD_DIR:-build}"
jobs="${SLUICE_JOBS:-2}"
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSLUICE_BUILD_TESTS=ON -DSLUICE_BUILD_EXAMPLES=ON >"$build/configure.log" 2>&1 || {
  cat "$build/configure.log"; exit 1; }
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
