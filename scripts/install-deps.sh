#!/usr/bin/env bash
# Installs everything sluice needs to build, test and benchmark on Debian 12,
# and a Python virtual environment at .venv/ with the pinned build and test
# tools (python/requirements-dev.txt).
# Idempotent: installs only what is missing; runs `apt-get update` only then.
#   bash scripts/install-deps.sh                  system packages + .venv
#   SLUICE_COMPAT=1 bash scripts/install-deps.sh  also TensorFlow, the compatibility tests' reference
#   SLUICE_PEERS=1 bash scripts/install-deps.sh   also every benchmark peer (TensorFlow, PyTorch,
#                                                 Pillow, OpenCV)
# Needs root or sudo for apt-get (only when a package is missing).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

APT_PACKAGES=(
  # build
  build-essential cmake ninja-build pkg-config git
  # C++ tests and benchmarks (libprotobuf: only the tests that cross-check
  # the Example parser against protobuf's own)
  libgtest-dev libgmock-dev libbenchmark-dev libprotobuf-dev protobuf-compiler
  # clang: -Wthread-safety, and the TSan/ASan/UBSan runtimes
  clang libclang-rt-14-dev
  # Python extension and the .venv
  python3 python3-venv python3-dev
  # benchmark peers, readers, image ops
  libtbb-dev libconcurrentqueue-dev
  zlib1g-dev libjpeg62-turbo-dev libpng-dev
  # multi-rank input (src/distribute's sluice_mpi and its mpirun tests):
  # Open MPI only, as a second MPI would make mpicc/mpirun alternatives links
  openmpi-bin libopenmpi-dev
  # the test that renders `sluice doctor`'s HTML report (headless)
  chromium
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=()
  [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python: a virtual environment in the repo, with pinned build and test tools.
# A .venv whose interpreter no longer runs (moved, or its Python removed) is
# made again.
PY="${PYTHON:-python3}"
if ! "$here/.venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  echo "install-deps: creating $here/.venv with $("$PY" --version 2>&1)"
  rm -rf "$here/.venv"
  "$PY" -m venv "$here/.venv"
fi
pip=("$here/.venv/bin/python" -m pip install -q --disable-pip-version-check --no-input)
"${pip[@]}" -r "$here/python/requirements-dev.txt"
if [ "${SLUICE_PEERS:-0}" = "1" ]; then
  "${pip[@]}" -r "$here/bench/requirements-peers.txt"
elif [ "${SLUICE_COMPAT:-0}" = "1" ]; then
  "${pip[@]}" -r "$here/python/requirements-compat.txt"
fi
