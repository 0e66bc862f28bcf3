#!/usr/bin/env bash
# Runs copy-engines cases two processes at a time on GPU 0 (as ranks sharing a GPU do) and prints each
# process's median time per round: about 275 us where a round mixes the compute engine and the copy
# engines (the other process's time slice), 10-25 us where it does not (one H200, driver 580, CUDA 13).
#   bash tools/copy-engines/run-pair.sh BUILD_DIR
set -euo pipefail
bin=${1:-build}/tools/copy-engines/copy-engines
[ -x "$bin" ] || { echo "run-pair.sh: $bin not built (cmake --build BUILD_DIR --target copy-engines)" >&2; exit 1; }
pair() {
  local out
  out=$( ("$bin" "$@" & "$bin" "$@"; wait) | awk '{print $4}' | tr '\n' ' ')
  printf '%-7s %7s %-24s two at once: %s us per round\n' "$1" "$2" "$3" "$out"
}
for method in linear staged; do
  for bytes in 256 1024 1536 4096; do pair "$method" "$bytes" d2h,bell,h2d; done
done
pair linear 256 d2h,bell
pair linear 256 bell,h2d
pair linear 256 d2h,h2d
for bytes in 4096 262144; do pair linear "$bytes" big-d2h,bell,d2d; done
pair linear 4096 d2d,bell
