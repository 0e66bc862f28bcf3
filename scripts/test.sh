#!/usr/bin/env bash
# The README's test command: installs the dependencies, builds, and runs every test with ctest.
# GPU tests report "skipped: no CUDA device" on machines without one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir "${ALLOY_BUILD_DIR:-build}" --output-on-failure "$@"
