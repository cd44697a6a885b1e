#!/usr/bin/env bash
# The README's test command: installs what is missing (scripts/install-deps.sh),
# builds sluice with its tests (Release, build/), and runs every test:
#   1. C++: ctest (unit, cross-layer, example and find_package/pkg-config
#      install tests);
#   2. Python: installs the package into .venv and runs pytest.
# Exits non-zero on the first failure, and when pytest collects no test.
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SLUICE_BUILD_DIR:-build}"
jobs="${SLUICE_JOBS:-2}"

echo "== install-deps"
# SLUICE_COMPAT=1: TensorFlow too, the reference the compatibility tests
# compare against (they skip without it; CI always has it).
SLUICE_COMPAT="${SLUICE_COMPAT:-1}" bash scripts/install-deps.sh

echo "== build ($build)"
bash scripts/build.sh

echo "== C++ tests (ctest)"
ctest --test-dir "$build" -j "$jobs" --output-on-failure --no-tests=error

echo "== Python package (pip install into .venv)"
bash scripts/install-python.sh

echo "== Python tests (pytest)"
set +e
.venv/bin/python -m pytest python/src tests -q
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "test.sh: pytest collected no tests: failing, since the Python package must be tested" >&2
  exit 1
fi
exit "$rc"
