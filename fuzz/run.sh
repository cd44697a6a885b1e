#!/usr/bin/env bash
# Builds the libFuzzer targets (clang) and runs each for a bounded time on a
# seed corpus made from tests/data (fuzz/make_seed_corpus.py).
# Fails if any fuzzer finds a crash, a leak, a sanitizer report or a timeout;
# the reproducer is left in $BUILD_DIR/fuzz-artifacts/.
#
#   bash fuzz/run.sh                      every fuzzer, 30 s each
#   FUZZ_SECONDS=300 bash fuzz/run.sh record_reader_fuzzer
#
# Environment: BUILD_DIR (build-fuzz), FUZZ_SECONDS (30), JOBS (2),
# SLUICE_TESTDATA_DIR (tests/data).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build-fuzz}"
FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
JOBS="${JOBS:-2}"
TESTDATA="${SLUICE_TESTDATA_DIR:-$PWD/tests/data}"

mkdir -p "$BUILD_DIR"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLUICE_BUILD_FUZZERS=ON -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF >"$BUILD_DIR/configure.log" 2>&1 || {
    cat "$BUILD_DIR/configure.log"; exit 1; }
fi
fuzzers=("$@")
if ((${#fuzzers[@]} == 0)); then
  for src in fuzz/*_fuzzer.cc; do fuzzers+=("$(basename "$src" .cc)"); done
fi
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${fuzzers[@]}"

seeds="$BUILD_DIR/fuzz-seeds"
rm -rf "$seeds"
python3 fuzz/make_seed_corpus.py "$TESTDATA" "$seeds"
artifacts="$BUILD_DIR/fuzz-artifacts"
mkdir -p "$artifacts"

for f in "${fuzzers[@]}"; do
  # A fresh working corpus per run: the seeds, plus what this run finds.
  corpus="$BUILD_DIR/fuzz-corpus/$f"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  [ -d "$seeds/$f" ] && cp "$seeds/$f"/* "$corpus/"
  echo "== fuzz $f: ${FUZZ_SECONDS} s, $(ls "$corpus" | wc -l) seeds"
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: a
  # runaway allocation is a bug; the log is kept short unless it fails.
  if ! "$BUILD_DIR/fuzz/$f" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$f-" \
      "$corpus" >"$BUILD_DIR/fuzz-$f.log" 2>&1; then
    tail -60 "$BUILD_DIR/fuzz-$f.log"
    echo "fuzz/run.sh: $f failed; reproducer(s): $(ls "$artifacts" | grep "^$f-" | tr '\n' ' ')" >&2
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|new_units_added)' "$BUILD_DIR/fuzz-$f.log" | tr '\n' ' '
  echo
done
