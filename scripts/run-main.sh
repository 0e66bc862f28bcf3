#!/usr/bin/env bash
# The README's main job: installs the dependencies, builds, and runs Alloy across every local GPU: the
# benchmark of every collective side by side with NCCL (when libnccl.so.2 can be loaded). On a
# machine without a CUDA device it says so and runs the host-only demo under mpirun instead.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /opt/torch/.venv/bin ] && export PATH="$PATH:/opt/torch/.venv/bin"  # cmake and ninja on the GPU machines
# Machines without a package mirror (the GPU machines here) may lack the test-only packages (Slurm,
# GoogleTest, gfortran) and cannot install them; the build needs none of them, so try it anyway.
bash scripts/install-deps.sh || echo "run-main: install-deps failed (see above); building with what is installed" >&2
bash scripts/build.sh
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=${ALLOY_BUILD_DIR:-build}
ngpu=0
command -v nvidia-smi >/dev/null && ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$ngpu" -eq 0 ]; then
  echo "no CUDA device on this machine: running the host-only demo (communicator creation over PMIx) on 2 ranks"
  mpirun --oversubscribe -np 2 "$build/examples/alloy-hello"
  exit 0
fi
nccl=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -n 1 || true)
[ -n "$nccl" ] && export ALLOY_PERF_NCCL_LIB="$nccl"
mpirun --bind-to none -np "$ngpu" "$build/examples/alloy-hello"
mpirun --bind-to none -np "$ngpu" "$build/tools/alloy-perf/alloy-perf" -o all \
  -b 8 -e 1G -f 8 --compare nccl
