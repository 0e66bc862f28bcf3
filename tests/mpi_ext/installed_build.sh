#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds the examples as an outside user would:
# mpicc with `pkg-config alloy`, mpifort with `pkg-config alloy-fortran` (where the Fortran module was
# built), and runs each under mpirun on 2 ranks. The .pc files name the configured prefix; pkg-config's
# --define-prefix points them at the scratch one.
# usage: installed_build.sh BUILD_DIR WORK_DIR EXAMPLES_DIR "MPIRUN COMMAND"
set -euo pipefail
build=$1 work=$2 examples=$3 mpirun=$4
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
pc() { pkg-config --define-prefix "$@"; }
mpicc "$examples/alltoallv.c" $(pc --cflags --libs alloy) -o "$work/alltoallv-c"
$mpirun -np 2 "$work/alltoallv-c"
if pc --exists alloy-fortran; then
  (cd "$work" && mpifort "$examples/alltoallv.f90" $(pc --cflags --libs alloy-fortran) -o "$work/alltoallv-f")
  $mpirun -np 2 "$work/alltoallv-f"
fi
