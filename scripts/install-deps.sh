#!/usr/bin/env bash
# Installs everything sluice needs to build, test and benchmark on Debian 12.
# Idempotent: safe to run again; installs only what is missing.
#   scripts/install-deps.sh          system packages + .venv with the Python build/test tools
#   SLUICE_PEERS=1 scripts/install-deps.sh   also the benchmark peers (TensorFlow, ...)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  libtbb-dev libconcurrentqueue-dev
  zlib1g-dev libjpeg62-turbo-dev libpng-dev
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python: a virtual environment in the repo, with pinned build and test tools.
PY="${PYTHON:-python3}"
if [ ! -x "$here/.venv/bin/python" ]; then
  "$PY" -m venv "$here/.venv"
fi
"$here/.venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/python/requirements-dev.txt"
if [ "${SLUICE_PEERS:-0}" = "1" ]; then
  "$here/.venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/bench/requirements-peers.txt"
fi
