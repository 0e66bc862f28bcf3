#!/usr/bin/env bash
# Builds Alloy, runs its GPU tests, and benchmarks every collective against NCCL on all GPUs of this
# machine (one MPI rank per GPU): a check pass (alloy-perf -c, results compared with a host reference)
# and a timing pass. Writes logs, JSON, a plot and a summary into $OUT (default ./results) and prints
# the summary last. Run from the repository root. Without a GPU it builds, says
# "skipped: no CUDA device" and exits 0. See docs/benchmarks.md.
#
# Settings (environment):
#   ALLOY_PERF_OPS            collectives, comma separated (default: all eight)
#   ALLOY_PERF_TYPES          data types (default float)      ALLOY_PERF_REDOPS  operators (default sum)
#   ALLOY_PERF_MINBYTES       smallest size (default 8)       ALLOY_PERF_MAXBYTES largest (default 1G)
#   ALLOY_PERF_FACTOR         size step of the timing pass (default 2)
#   ALLOY_PERF_CHECK_MAXBYTES largest size checked (default: ALLOY_PERF_MAXBYTES)
#   ALLOY_PERF_CHECK_FACTOR   size step of the check pass (default 8: the host reference is slow)
#   ALLOY_PERF_WARMUP, ALLOY_PERF_ITERS  warm-up and timed iterations (default 5, 20)
#   ALLOY_PERF_ARGS           extra alloy-perf arguments for both passes (e.g. "-G 1")
#   ALLOY_PERF_TIMEOUT        seconds allowed for each alloy-perf run (default 900)
#   ALLOY_PERF_NCCL_LIB       NCCL to compare with (default: the one in /opt/torch/.venv, else the loader's)
#   NGPU                      ranks to run (default: every GPU nvidia-smi lists)
#   BUILD_DIR                 build folder (default build-gpu); SKIP_BUILD=1 reuses it as it is
#   CMAKE_ARGS                extra arguments for the cmake configure step
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
RESULTS=${OUT:-./results}
mkdir -p "$RESULTS" && RESULTS=$(cd "$RESULTS" && pwd) || exit 1

# NVLink multicast can take the machine's shared GPUs out of service: it stays off for NCCL and for
# anything else that might use it. mpirun runs as root on the GPU machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers and microVMs often forbid the cross-memory attach that Open MPI's shared-memory transport
# uses for large messages (the test suite turns it off the same way).
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}

log() { echo "gpu-check: $*"; }

# Tools: the GPU machines carry cmake, ninja and python (with matplotlib) in this virtual environment.
VENV_BIN=/opt/torch/.venv/bin
[ -d "$VENV_BIN" ] && export PATH="$VENV_BIN:$PATH"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="$PATH:/usr/local/cuda/bin"; fi
for tool in cmake ninja; do
  command -v "$tool" >/dev/null || { log "$tool not found on PATH"; exit 1; }
done

# NCCL for --compare nccl: alloy-perf dlopens $ALLOY_PERF_NCCL_LIB, else libnccl.so.2 from the loader path.
if [ -z "${ALLOY_PERF_NCCL_LIB:-}" ]; then
  # The nvidia-nccl wheel of the GPU machines' virtual environment (python3.12 there).
  for candidate in /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2; do
    [ -e "$candidate" ] && export ALLOY_PERF_NCCL_LIB="$candidate"
  done
fi
if [ -n "${ALLOY_PERF_NCCL_LIB:-}" ]; then
  log "NCCL: $ALLOY_PERF_NCCL_LIB"
elif ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
  log "NCCL: libnccl.so.2 from the loader's search path"
else
  log "NCCL not found: alloy-perf will run without the NCCL columns"
fi

# Build.
BUILD_DIR=${BUILD_DIR:-build-gpu}
build_status=ok
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments on purpose
  if ! cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} 2>&1 | tee "$RESULTS/configure.log"; then
    build_status="FAILED (configure; see $RESULTS/configure.log)"
  elif ! cmake --build "$BUILD_DIR" -j "$(nproc)" 2>&1 | tee "$RESULTS/build.log"; then
    build_status="FAILED (see $RESULTS/build.log)"
  fi
fi
if [ "$build_status" != ok ]; then
  log "build $build_status"
  exit 1
fi

# GPUs.
if [ -z "${NGPU:-}" ]; then
  NGPU=0
  command -v nvidia-smi >/dev/null && NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi
if [ "$NGPU" -eq 0 ]; then
  echo "skipped: no CUDA device"
  exit 0
fi
command -v mpirun >/dev/null || { log "mpirun not found on PATH"; exit 1; }
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
log "$NGPU x $gpu_name"

# GPU tests (written with the library; labelled gpu).
ctest --test-dir "$BUILD_DIR" -L gpu --output-on-failure --timeout "${CTEST_TIMEOUT:-600}" 2>&1 | tee "$RESULTS/ctest.log"
ctest_rc=${PIPESTATUS[0]}
if grep -q 'No tests were found' "$RESULTS/ctest.log"; then
  tests_line="no tests labelled gpu"
elif line=$(grep -E '% tests passed(, [0-9]+ tests? failed)? out of [0-9]+' "$RESULTS/ctest.log" | tail -1); then
  # "100% tests passed, 0 tests failed out of 9", or without the failed part when none failed
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  failed=0
  [[ $line =~ ([0-9]+)\ tests?\ failed ]] && failed=${BASH_REMATCH[1]}
  tests_line="$((total - failed)) passed, $failed failed"
else
  tests_line="ctest exited $ctest_rc without a result line (see $RESULTS/ctest.log)"
fi
[ "$ctest_rc" -ne 0 ] && tests_line="$tests_line (ctest exit $ctest_rc)"

# Benchmarks: one alloy-perf run per collective and pass, so that a failure in one collective leaves
# the others' results intact.
PERF_BIN=$(find "$BUILD_DIR" -type f -name alloy-perf -perm -u+x 2>/dev/null | head -1)
OPS=${ALLOY_PERF_OPS:-allreduce,reduce,broadcast,allgather,reducescatter,alltoall,alltoallv,sendrecv}
MINB=${ALLOY_PERF_MINBYTES:-8}
MAXB=${ALLOY_PERF_MAXBYTES:-1G}
common=(-d "${ALLOY_PERF_TYPES:-float}" --redop "${ALLOY_PERF_REDOPS:-sum}" --compare nccl)
# shellcheck disable=SC2206  # ALLOY_PERF_ARGS is a list of arguments on purpose
common+=(${ALLOY_PERF_ARGS:-})
check_args=(-b "$MINB" -e "${ALLOY_PERF_CHECK_MAXBYTES:-$MAXB}" -f "${ALLOY_PERF_CHECK_FACTOR:-8}" -w 1 -n 2 -c 1)
perf_args=(-b "$MINB" -e "$MAXB" -f "${ALLOY_PERF_FACTOR:-2}" -w "${ALLOY_PERF_WARMUP:-5}" -n "${ALLOY_PERF_ITERS:-20}")
mpirun_cmd=(mpirun -np "$NGPU" --bind-to none)
# Open MPI forwards only the variables named with -x to ranks on other hosts; name the ones that matter.
if mpirun --version 2>&1 | grep -q 'Open MPI'; then
  for v in NCCL_NVLS_ENABLE ALLOY_PERF_NCCL_LIB PATH LD_LIBRARY_PATH; do
    [ -n "${!v:-}" ] && mpirun_cmd+=(-x "$v")
  done
fi

# Runs one pass of one collective; prints its outcome word for the summary.
run_pass() {
  local pass=$1 op=$2; shift 2
  local base="$RESULTS/$pass-$op"
  log "$pass $op: ${mpirun_cmd[*]} alloy-perf -o $op $*" >&2
  timeout "${ALLOY_PERF_TIMEOUT:-900}" "${mpirun_cmd[@]}" "$PERF_BIN" -o "$op" "$@" --json "$base.json" \
    </dev/null 2>&1 | tee "$base.log" >&2
  local rc=${PIPESTATUS[0]}
  case $rc in
    0) echo ok ;;
    3) echo "WRONG RESULTS" ;;  # alloy-perf's exit status when a check found wrong elements
    124) echo "TIMEOUT" ;;
    *) echo "FAILED (exit $rc)" ;;
  esac
}

declare -A outcome
runs_ok=1
if [ -z "$PERF_BIN" ]; then
  log "alloy-perf was not built"
  runs_ok=0
else
  IFS=, read -ra op_list <<<"$OPS"
  for op in "${op_list[@]}"; do
    outcome[$op]="check $(run_pass check "$op" "${common[@]}" "${check_args[@]}"), timing $(run_pass perf "$op" "${common[@]}" "${perf_args[@]}")"
    [ "${outcome[$op]}" = "check ok, timing ok" ] || runs_ok=0
  done
fi

# Plot and ratios from whatever JSON the runs left (a failed run still leaves the rows it finished).
shopt -s nullglob
perf_json=("$RESULTS"/perf-*.json)
check_json=("$RESULTS"/check-*.json)
ratio_table="(no timing results)"
if [ ${#perf_json[@]} -gt 0 ]; then
  python3 scripts/plot-perf.py --png "$RESULTS/busbw.png" "${perf_json[@]}" 2>&1 | tee "$RESULTS/plot.log"
  ratio_table=$(python3 scripts/plot-perf.py --summary "${perf_json[@]}" --check "${check_json[@]}" 2>&1)
fi

{
  echo
  echo "==== gpu-check summary ===="
  echo "machine: $NGPU x $gpu_name; NCCL: ${ALLOY_PERF_NCCL_LIB:-libnccl.so.2 (loader path)}"
  echo "build: $build_status"
  echo "tests (ctest -L gpu): $tests_line"
  for op in "${op_list[@]:-}"; do [ -n "$op" ] && echo "alloy-perf $op: ${outcome[$op]:-not run}"; done
  echo "$ratio_table"
  echo "results: $RESULTS"
} | tee "$RESULTS/summary.txt"

[ "$ctest_rc" -eq 0 ] && [ "$runs_ok" -eq 1 ]
