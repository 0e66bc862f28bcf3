#!/usr/bin/env bash
# Uses an installed tree as the README tells users to: `cmake --install BUILD --prefix PREFIX`, then
# PKG_CONFIG_PATH=PREFIX/LIBDIR/pkgconfig and plain pkg-config (no --define-prefix): mpicc with
# `pkg-config alloy`, mpifort with `pkg-config alloy-fortran` (where the Fortran module was built), and
# CMake's find_package(Alloy) for examples/hello.c. The tree is installed to one prefix and moved to another
# before any of that, so each path the .pc files and the CMake package give must follow the tree: neither
# the configure-time prefix nor the install-time one. Every program runs under mpirun on 2 ranks.
# usage: installed_build.sh BUILD_DIR WORK_DIR EXAMPLES_DIR LIBDIR "MPIRUN COMMAND"
set -euo pipefail
build=$1 work=$2 examples=$3 libdir=$4 mpirun=$5
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/installed-here" >/dev/null
prefix=$work/moved-there
mv "$work/installed-here" "$prefix"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"

# The prefix pkg-config reports must be the moved tree, not /usr/local: this also catches an old .pc whose
# compile would pass only because some Alloy is installed at the configure-time prefix.
pc_prefix=$(pkg-config --variable=prefix alloy)
if [ "$(cd "$pc_prefix" && pwd -P)" != "$(cd "$prefix" && pwd -P)" ]; then
  echo "installed_build: pkg-config alloy gives prefix=$pc_prefix, not the installed tree $prefix" >&2
  exit 1
fi

mpicc "$examples/alltoallv.c" $(pkg-config --cflags --libs alloy) -o "$work/alltoallv-c"
$mpirun -np 2 "$work/alltoallv-c"
if pkg-config --exists alloy-fortran; then
  (cd "$work" && mpifort "$examples/alltoallv.f90" $(pkg-config --cflags --libs alloy-fortran) -o "$work/alltoallv-f")
  $mpirun -np 2 "$work/alltoallv-f"
fi

# find_package(Alloy) through CMAKE_PREFIX_PATH; hello prints the version, which must read as the .pc's.
user=$work/cmake-user
mkdir "$user"
cat >"$user/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.24)
project(alloy_user LANGUAGES C)
find_package(Alloy REQUIRED)
add_executable(hello "$examples/hello.c")
target_link_libraries(hello PRIVATE Alloy::alloy)
EOF
cmake -S "$user" -B "$user/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
grep -q "^Alloy_DIR:PATH=$prefix/" "$user/build/CMakeCache.txt" ||
  { echo "installed_build: find_package(Alloy) did not find the installed tree" >&2; exit 1; }
cmake --build "$user/build" >/dev/null
$mpirun -np 2 "$user/build/hello" | tee "$work/hello.out"
grep -q "Alloy $(pkg-config --modversion alloy) communicator" "$work/hello.out" ||
  { echo "installed_build: hello does not print version $(pkg-config --modversion alloy)" >&2; exit 1; }
