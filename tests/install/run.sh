#!/usr/bin/env bash
# Installs a built sluice into a fresh prefix and builds this folder's
# downstream program against it twice: with CMake (find_package(sluice),
# sluice::sluice) and with pkg-config (pkg-config --cflags --libs sluice);
# and, with CMake, a program linked against one layer (sluice::core alone:
# CMakeLists.txt checks that it pulls no other sluice library), and one
# against sluice::mpi where sluice was built with MPI (also through
# pkg-config sluice-mpi). Runs them all.
# Called by ctest (tests/CMakeLists.txt) as
#   run.sh <sluice build dir> <scratch dir> <cmake> <c++ compiler> <generator>
set -euo pipefail
build="$1"; work="$2"; cmake="${3:-cmake}"; cxx="${4:-c++}"; generator="${5:-Ninja}"
here="$(cd "$(dirname "$0")" && pwd)"

rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log"
echo "installed into $prefix:"
(cd "$prefix" && find . -name 'sluiceConfig*.cmake' -o -name 'sluice*.pc' -o -name 'libsluice*' | sort)

echo "--- find_package(sluice)"
"$cmake" -S "$here" -B "$work/cmake-build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" || {
  cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/cmake-build"
"$work/cmake-build/downstream" "$work"
"$work/cmake-build/downstream_core"
# sluice::mpi where sluice was built with MPI.
if [ -e "$build/src/distribute/libsluice_mpi.a" ]; then
  [ -x "$work/cmake-build/downstream_mpi" ] || { echo "sluice::mpi was built but not installed"; exit 1; }
  "$work/cmake-build/downstream_mpi"
fi

echo "--- pkg-config sluice"
pc="$(find "$prefix" -name sluice.pc -print -quit)"
[ -n "$pc" ] || { echo "no sluice.pc under $prefix"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
flags="$(pkg-config --cflags --libs sluice)"
echo "pkg-config --cflags --libs sluice: $flags"
# shellcheck disable=SC2086  # the flags are words
"$cxx" -O1 "$here/main.cc" $flags -o "$work/downstream-pc"
"$work/downstream-pc" "$work"
if [ -e "$build/src/distribute/libsluice_mpi.a" ]; then
  echo "--- pkg-config sluice-mpi"
  [ -e "$(dirname "$pc")/sluice-mpi.pc" ] || { echo "sluice::mpi was installed without sluice-mpi.pc"; exit 1; }
  mflags="$(pkg-config --cflags --libs sluice-mpi)"
  echo "pkg-config --cflags --libs sluice-mpi: $mflags"
  # shellcheck disable=SC2086
  "$cxx" -O1 "$here/mpi_only.cc" $mflags -o "$work/downstream-mpi-pc"
  "$work/downstream-mpi-pc"
fi
echo "install test: OK"
