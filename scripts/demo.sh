#!/usr/bin/env bash
# The README's first command: installs what is missing, builds sluice,
# installs the Python package into .venv (scripts/install-python.sh) and runs
# the main job, examples/image_pipeline.cc: TensorFlow 1's classic input
# pipeline without TensorFlow. It generates JPEG images with labels into
# TFRecord files, then string_input_producer(shuffle, num_epochs) -> one
# TFRecordReader per thread -> parse_single_example -> random resized crop
# (decode only the box, resize to 224x224, flip, normalise) ->
# shuffle_batch_join -> a training loop under a Coordinator that ends at the
# last epoch by TensorFlow's OutOfRange cascade. Prints images/s and checks
# every image it received.
#   bash scripts/demo.sh [flags, e.g. --images 2048 --epochs 3 --threads 2]
# (examples/pipeline.cc, the queue-only job of earlier versions, is still
# built and run by ctest.)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SLUICE_BUILD_DIR:-build}"

bash scripts/install-deps.sh
bash scripts/build.sh image_pipeline
bash scripts/install-python.sh
"$build/examples/image_pipeline" "$@"
