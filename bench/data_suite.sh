#!/usr/bin/env bash
# bench/run.sh data: sluice.data against its peers, in one run:
#   1. the tf.data parse pipeline (TFRecordDataset -> map(parse_example) ->
#      batch(64) -> prefetch) vs tf.data on the same generated file
#      (bench/py_data_bench.py: "ratio data_parse vs tf.data: <x>");
#   2. the C++ per-element costs (bench/data_benchmark.cc): a chain of 5
#      identity maps against the bare source, a CPU-bound parallel map with 1
#      and 2 threads, uint8 image batches;
#   3. the image pipeline (TFRecordDataset -> parse -> fused random resized
#      crop -> batch 64 -> prefetch, AUTOTUNE) vs tf.data, PyTorch's
#      DataLoader (0, 1, 2 workers) and sluice's queue pipeline, each in a
#      process of its own (images/s, time to first batch, peak RSS), over
#      bench/train_suite.sh's generated files (bench/py_data_image_bench.py);
#   4. Dataset.from_record_files(files).shuffle_globally(seed) against a
#      sequential TFRecordDataset read of the same files in the page cache
#      (bench/global_shuffle_bench.py: "ratio global_shuffle vs
#      sequential_read: <x>");
#   5. AUTOTUNE from a cold start against a grid of hand-set parallelism on
#      the image pipeline (bench/autotune_bench.py: "ratio autotune vs
#      grid-best: <x>");
#   6. checkpoint size and save/restore time of the image pipeline with a
#      10,000-element shuffle buffer against tf.data's own checkpoint
#      (tf.train.Checkpoint(iterator=...)) of the same pipeline
#      (bench/checkpoint_benchmark.cc, bench/py_checkpoint_bench.py: "ratio
#      checkpoint size image pipeline vs tf.data: <x>", save and restore
#      times, and sluice's size against the 1 MB limit);
#   7. the image pipeline with Options.ram_budget (256 MB) against the same
#      without a budget: the cost of the budget's accounting
#      (bench/budget_bench.py: "ratio data_budget_accounting vs no_budget: <x>");
# then bench/report_data.py: a table and the "ratio ..." lines of 2 and 3,
# and the ratio lines of 1, 4, 5 and 6 repeated, so that the run ends with one
# line per target.
#   DATA_BUILD_DIR=build-bench-data   Release build of sluice._core,
#                       image_pipeline (the file generator) and data_benchmark
#   RECORDS=50000       records of the parse pipeline
#   REPS=3              repetitions of each measurement
#   TRAIN_IMAGES=512    JPEGs of 500x375 q90, written once into
#                       $DATA_BUILD_DIR/train-data and reused
#   DATA_EPOCHS=4       epochs per image pipeline measurement
#   SKIP_PARSE=1        skip part 1;  SKIP_IMAGE=1  skip part 3
#   GS_SMALL=200000 GS_LARGE=2000 GS_REPS=5   part 4: records of ~1 KiB and
#                       ~100 KiB over 8 files, passes of each pipeline
#   SKIP_GSHUFFLE=1     skip part 4
#   AUTOTUNE_SECONDS=10  AUTOTUNE_REPS=2   part 5;  SKIP_AUTOTUNE=1  skip it
#   CKPT_RECORDS=12000  CKPT_REPS=3   part 6: ~100 KiB JPEG Example records
#                       (written once into $DATA_BUILD_DIR/ckpt-data);
#                       SKIP_CHECKPOINT=1  skip it
#   BUDGET_REPS=3  BUDGET_BATCHES=24   part 7;  SKIP_BUDGET=1  skip it
# The DataLoader rows need torch and Pillow (bench/requirements-peers.txt;
# or put them on PYTHONPATH); without them they are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${DATA_BUILD_DIR:-build-bench-data}"
py="$PWD/.venv/bin/python"
REPS="${REPS:-3}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BUILD_PYTHON=ON \
  -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=ON -DSLUICE_BUILD_BENCHMARKS=ON -DPython_EXECUTABLE="$py" >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target _core image_pipeline data_benchmark checkpoint_benchmark >/dev/null
stage="$build/pystage"
rm -rf "$stage/sluice"
mkdir -p "$stage"
cp -r python/sluice "$stage/sluice"
cp "$build"/python/_core*.so "$stage/sluice/"
export PYTHONPATH="$PWD/$stage${PYTHONPATH:+:$PYTHONPATH}"
export TF_CPP_MIN_LOG_LEVEL=3
# One BLAS thread: idle OpenBLAS threads spin, and CPU times count them.
export OPENBLAS_NUM_THREADS=1
out="$build/bench-results"
mkdir -p "$out"
rm -f "$out/ratios.log"
touch "$out/ratios.log"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(getconf _NPROCESSORS_ONLN) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "${SKIP_PARSE:-0}" != "1" ]; then
  echo "== parse pipeline: bench/py_data_bench.py --records ${RECORDS:-50000} --reps $REPS"
  "$py" bench/py_data_bench.py --records "${RECORDS:-50000}" --reps "$REPS" | tee -a "$out/ratios.log"
fi

if [ "${SKIP_GSHUFFLE:-0}" != "1" ]; then
  echo "== global shuffle: bench/global_shuffle_bench.py --small ${GS_SMALL:-200000} --large ${GS_LARGE:-2000} --reps ${GS_REPS:-5}"
  "$py" bench/global_shuffle_bench.py --small "${GS_SMALL:-200000}" --large "${GS_LARGE:-2000}" --reps "${GS_REPS:-5}" \
    | tee -a "$out/ratios.log"
fi

if [ "${SKIP_AUTOTUNE:-0}" != "1" ]; then
  echo "== AUTOTUNE vs a grid: bench/autotune_bench.py --seconds ${AUTOTUNE_SECONDS:-10} --reps ${AUTOTUNE_REPS:-2}"
  "$py" bench/autotune_bench.py --seconds "${AUTOTUNE_SECONDS:-10}" --reps "${AUTOTUNE_REPS:-2}" | tee -a "$out/ratios.log"
fi

if [ "${SKIP_CHECKPOINT:-0}" != "1" ]; then
  echo "== checkpoint: bench/py_checkpoint_bench.py --records ${CKPT_RECORDS:-12000} --buffer 10000 --reps ${CKPT_REPS:-3}"
  "$py" bench/py_checkpoint_bench.py --bin "$build/bench/checkpoint_benchmark" --data-dir "$build/ckpt-data" \
    --records "${CKPT_RECORDS:-12000}" --buffer 10000 --reps "${CKPT_REPS:-3}" | tee -a "$out/ratios.log"
fi

if [ "${SKIP_BUDGET:-0}" != "1" ]; then
  echo "== memory budget accounting: bench/budget_bench.py --reps ${BUDGET_REPS:-3} --batches ${BUDGET_BATCHES:-24}"
  "$py" bench/budget_bench.py --reps "${BUDGET_REPS:-3}" --batches "${BUDGET_BATCHES:-24}" | tee -a "$out/ratios.log"
fi

cxx_json="$out/data_benchmark.json"
echo "== C++: $build/bench/data_benchmark --benchmark_repetitions=$REPS"
"$build/bench/data_benchmark" --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
  --benchmark_out="$cxx_json" --benchmark_out_format=json --benchmark_format=console 2>&1 \
  | grep -E '^data/' | grep -vE '_(mean|stddev|cv)( |$)' || true

image_args=()
if [ "${SKIP_IMAGE:-0}" != "1" ]; then
  data="$build/train-data"
  "$build/examples/image_pipeline" --images "${TRAIN_IMAGES:-512}" --data-dir "$data" --reuse --quiet \
    --write-jpegs --generate-only
  workers=(0 1 2)
  if ! "$py" -c "import torch, PIL" >/dev/null 2>&1; then
    echo "== torch or PIL is not importable: DataLoader rows skipped"
    workers=()
  fi
  image_json="$out/data_image.jsonl"
  rm -f "$image_json"
  echo "== image pipeline: bench/py_data_image_bench.py all --data-dir $data --epochs ${DATA_EPOCHS:-4} --reps $REPS"
  "$py" bench/py_data_image_bench.py all --data-dir "$data" --epochs "${DATA_EPOCHS:-4}" --reps "$REPS" \
    --torch-workers "${workers[@]}" --json "$image_json" >/dev/null
  image_args=(--image "$image_json")
fi

echo
"$py" bench/report_data.py --cxx "$cxx_json" "${image_args[@]}"
grep '^ratio ' "$out/ratios.log" || true
