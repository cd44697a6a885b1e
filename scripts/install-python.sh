#!/usr/bin/env bash
# Installs the sluice Python package into .venv, so that `import sluice` works
# with .venv/bin/python. Used by scripts/demo.sh and scripts/test.sh; assumes
# scripts/install-deps.sh ran. Incremental: the extension's build folder
# (build-py/) is kept, so a second run only rebuilds what changed.
#   bash scripts/install-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# --no-build-isolation: build with the pinned scikit-build-core and nanobind
# already in .venv, offline and incrementally.
CMAKE_BUILD_PARALLEL_LEVEL="${SLUICE_JOBS:-2}" .venv/bin/python -m pip install -q \
  --disable-pip-version-check --no-input --no-build-isolation .
