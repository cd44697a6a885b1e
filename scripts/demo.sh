#!/usr/bin/env bash
# The README's first command: installs what is missing, builds sluice and runs
# the main job, examples/pipeline.cc: producer threads (a QueueRunner) make
# 4 KiB records -> FIFOQueue -> batcher threads (a second QueueRunner) ->
# FIFOQueue of batches -> a consumer loop under a Coordinator, which ends by
# TensorFlow's OutOfRange cascade. Prints what it moved and how fast.
#   bash scripts/demo.sh [pipeline flags, e.g. --records 500000 --shuffle]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SLUICE_BUILD_DIR:-build}"

bash scripts/install-deps.sh
bash scripts/build.sh pipeline
"$build/examples/pipeline" "$@"
