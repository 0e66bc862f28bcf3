#!/usr/bin/env bash
# Configures and builds Alloy into ${ALLOY_BUILD_DIR:-build} with every core. Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ALLOY_BUILD_DIR:-build}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake "$build" "$@"
fi
cmake --build "$build" --parallel "$(nproc)"
