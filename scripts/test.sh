#!/usr/bin/env bash
# The README's test command: installs the dependencies, builds, runs every test with ctest, then builds the
# Python package and runs its tests under mpirun (scripts/python-test.sh).
# GPU tests report "skipped: no CUDA device" on machines without one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir "${ALLOY_BUILD_DIR:-build}" --output-on-failure "$@"
bash scripts/python-test.sh
