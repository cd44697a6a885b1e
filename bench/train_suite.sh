#!/usr/bin/env bash
# bench/run.sh train: the image training input pipeline
# (examples/image_pipeline.cc: TFRecords of JPEGs -> string_input_producer ->
# one TFRecordReader per thread -> parse -> random resized crop + flip +
# normalise -> shuffle_batch_join), with 1 and 2 threads, against, in the
# same run and over the same files (bench/train_bench.py):
#   - TensorFlow's own queue pipeline doing the same work (tf.compat.v1
#     graph mode, QueueRunners), 1 and 2 threads;
#   - PyTorch's DataLoader (ImageFolder of the same JPEGs, torchvision's
#     RandomResizedCrop/flip/ToTensor/Normalize written out with PIL + numpy
#     + torch, since torchvision is not installed), 2 workers;
#   - the per-core limit: DecodeAndCropJpeg alone of the same boxes on one
#     thread (image_pipeline --measure-limit), times the threads; also the
#     whole fused op (decode + resize + flip + normalise) alone, and a
#     2-thread sluice row with dct_scaling (informative, no ratio target).
# Then bench/report_train.py: a table and "ratio <benchmark> vs <peer>: <x>".
#
# Environment (besides bench/run.sh's REPS, JOBS):
#   TRAIN_BUILD_DIR=build-trainbench   Release build of image_pipeline
#   TRAIN_IMAGES=512    JPEGs of 500x375 at quality 90, written once into
#                       $TRAIN_BUILD_DIR/train-data (deterministic) and reused
#   TRAIN_EPOCHS=8      epochs per measurement (4,096 images): the sluice
#                       and TF runs are timed from the start of their
#                       runners, so a short run also measures start-up and
#                       the final drain (docs/perf/bench-method.md); the
#                       limits are steady-state rates
#   PY_BUILD_DIR=$TRAIN_BUILD_DIR-py   sluice._core for the sluice_py row
#   SKIP_PY=1           sluice rows only
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"

REPS="${REPS:-3}"
JOBS="${JOBS:-2}"
TRAIN_BUILD_DIR="${TRAIN_BUILD_DIR:-build-trainbench}"
TRAIN_IMAGES="${TRAIN_IMAGES:-512}"
TRAIN_EPOCHS="${TRAIN_EPOCHS:-8}"
PY="$here/.venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if [ ! -f "$TRAIN_BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$TRAIN_BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_TESTS=OFF \
    -DSLUICE_BUILD_EXAMPLES=ON -DSLUICE_BUILD_PYTHON=OFF >/dev/null
fi
cmake --build "$TRAIN_BUILD_DIR" -j "$JOBS" --target image_pipeline >/dev/null
bin="$TRAIN_BUILD_DIR/examples/image_pipeline"
data="$TRAIN_BUILD_DIR/train-data"
out="$TRAIN_BUILD_DIR/bench-results"
mkdir -p "$out"
json="$out/train.jsonl"
rm -f "$json"
common=(--images "$TRAIN_IMAGES" --epochs "$TRAIN_EPOCHS" --data-dir "$data" --reuse --quiet)
"$bin" "${common[@]}" --write-jpegs --generate-only

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== data: $TRAIN_IMAGES JPEGs 500x375 q90 in $data; $TRAIN_EPOCHS epochs, batch 32, crops 224x224; $REPS repetitions"

# One JSON line per measurement: {"peer", "threads", "images_per_s"}.
row() { printf '{"peer": "%s", "threads": %s, "images_per_s": %s}\n' "$1" "$2" "$3" >> "$json"; }

for rep in $(seq "$REPS"); do
  limits="$("$bin" "${common[@]}" --measure-limit --threads 1)"
  limit="$(sed -n 's/^decode_and_crop limit: \([0-9.]*\).*/\1/p' <<< "$limits")"
  row decode_and_crop_limit 1 "$limit"
  row fused_op_limit 1 "$(sed -n 's/^fused op limit: \([0-9.]*\).*/\1/p' <<< "$limits")"
  for t in 1 2; do
    ips="$("$bin" "${common[@]}" --threads "$t" | sed -n 's/^images\/s: \([0-9.]*\).*/\1/p')"
    [ -n "$ips" ] || { echo "image_pipeline --threads $t failed" >&2; exit 1; }
    row sluice "$t" "$ips"
  done
  # The same with RandomResizedCropOptions::dct_scaling (large boxes decoded
  # at 1/2..1/8 scale: faster, pixels no longer equal to the separate ops).
  row sluice_dct_scaling 2 "$("$bin" "${common[@]}" --threads 2 --dct-scaling | sed -n 's/^images\/s: \([0-9.]*\).*/\1/p')"
  echo "== rep $rep: decode_and_crop limit $limit/s per thread; sluice $(tail -3 "$json" | head -2 | sed -n 's/.*"threads": \([0-9]*\), "images_per_s": \([0-9.]*\).*/\1t \2/p' | tr '\n' ' ')"
done

if [ "${SKIP_PY:-0}" = "1" ]; then
  echo "== Python peers: skipped (SKIP_PY=1)"
else
  peer() {  # peer THREADS [env...]
    local name="$1" threads="$2"
    shift 2
    env "$@" TF_CPP_MIN_LOG_LEVEL=3 timeout 900 "$PY" bench/train_bench.py "$name" --data-dir "$data" \
      --threads "$threads" --epochs "$TRAIN_EPOCHS" --json "$json" >/dev/null 2>> "$out/train_bench.stderr" \
      || echo "== $name ($threads threads) failed (see $out/train_bench.stderr)"
  }
  rm -f "$out/train_bench.stderr"
  PY_BUILD_DIR="${PY_BUILD_DIR:-$TRAIN_BUILD_DIR-py}"
  if [ ! -f "$PY_BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$PY_BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_PYTHON=ON \
      -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DPython_EXECUTABLE="$PY" >/dev/null
  fi
  stage="$PY_BUILD_DIR/pystage"
  if cmake --build "$PY_BUILD_DIR" -j "$JOBS" --target _core >/dev/null; then
    rm -rf "$stage/sluice" && mkdir -p "$stage" && cp -r python/sluice "$stage/sluice"
    cp "$PY_BUILD_DIR"/python/_core*.so "$stage/sluice/"
  fi
  for rep in $(seq "$REPS"); do
    for t in 1 2; do peer tf "$t"; done
    peer torch 2
    [ -d "$stage/sluice" ] && peer sluice_py 2 PYTHONPATH="$stage"
    echo "== rep $rep: Python peers done"
  done
fi
echo
"$PY" bench/report_train.py "$json"
