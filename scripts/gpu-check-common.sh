# shellcheck shell=bash
# What every mode of scripts/gpu-check.sh shares (sourced by it, from the repository's root, before the
# mode's own file): the environment, logging, building, finding the GPUs and NCCL, time budgets, bounded
# runs and their status, and the summary's last line.


# NVLink multicast can take the machine's shared GPUs out of service: it stays off for NCCL and for
# anything else that might use it. mpirun runs as root on the GPU machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers and microVMs often forbid the cross-memory attach that Open MPI's shared-memory transport
# uses for large messages (the test suite turns it off the same way).
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}

log() { echo "gpu-check: $*"; }

# " in Suite.Test" for the GoogleTest test that a log shows started and not finished (its last "[ RUN ]"
# line with no "[ OK ]", "[ FAILED ]" or "[ SKIPPED ]" after it; colour codes stripped), else nothing: where
# a run that timed out or crashed was, without the log.
unfinished_test() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" 2>/dev/null |
    awk '/^\[ RUN +\]/ {t = $NF} /^\[ +(OK|FAILED|SKIPPED) +\]/ {t = ""} END {if (t != "") printf " in %s", t}'
}

# The status of one suite run: skipped, out of budget (stopped by what was left of the mode's budget
# rather than by its own cap: too little time, not a hang), timeout, crashed (finished is not 1: it did
# not get to the end), failed, no tests, or ok; the first three name the test they stopped in. Arguments:
# log file, exit code, the limit it ran under, its own cap, finished, failed count, test count.
run_status() {
  local logfile=$1 rc=$2 limit=$3 cap=$4 finished=$5 failed=$6 tests=$7
  if grep -q 'skipped: no CUDA device' "$logfile"; then echo "skipped (no CUDA device)"
  elif { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ "$limit" -lt "$cap" ]; then
    echo "OUT OF BUDGET after ${limit} s$(unfinished_test "$logfile")"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "TIMEOUT after ${limit} s$(unfinished_test "$logfile")"
  elif [ "$finished" != 1 ]; then echo "CRASHED (exit $rc)$(unfinished_test "$logfile")"
  elif [ "$failed" -gt 0 ]; then echo "FAILED"
  elif [ "$rc" -ne 0 ]; then echo "FAILED (exit $rc)"
  elif [ "$tests" -eq 0 ]; then echo "NO TESTS (filter matched nothing)"
  else echo ok
  fi
}

# Tools: the GPU machines carry cmake, ninja and python (with matplotlib) in this virtual environment.
VENV_BIN=/opt/torch/.venv/bin
[ -d "$VENV_BIN" ] && export PATH="$VENV_BIN:$PATH"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="$PATH:/usr/local/cuda/bin"; fi
for tool in cmake ninja; do
  command -v "$tool" >/dev/null || { log "$tool not found on PATH"; exit 1; }
done

# Configures and builds the given targets (all when none); exits on failure. Sets build_status. A mode
# may put configure arguments of its own into configure_args.
build_status=ok
configure_args=()
build() {
  [ "${SKIP_BUILD:-0}" = 1 ] && { build_status="ok (SKIP_BUILD=1: $BUILD_DIR as it was)"; return; }
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments on purpose
  if ! cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${configure_args[@]}" ${CMAKE_ARGS:-} 2>&1 |
       tee "$RESULTS/configure.log"; then
    build_status="FAILED (configure; see $RESULTS/configure.log)"
  elif ! cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}" 2>&1 | tee "$RESULTS/build.log"; then
    build_status="FAILED (see $RESULTS/build.log)"
  fi
  if [ "$build_status" != ok ]; then
    log "build $build_status"
    exit 1
  fi
}

# Sets NGPU and gpu_name; without a GPU prints the skip line and exits 0.
find_gpus() {
  if [ -z "${NGPU:-}" ]; then
    NGPU=0
    command -v nvidia-smi >/dev/null && NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  fi
  if [ "$NGPU" -eq 0 ]; then
    echo "skipped: no CUDA device" | tee "$RESULTS/summary.txt"
    exit 0
  fi
  command -v mpirun >/dev/null || { log "mpirun not found on PATH"; exit 1; }
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  gpu_name=${gpu_name:-GPU}
  log "$NGPU x $gpu_name"
}

# The launcher and environment of the test suites' ctest entries (tests/CMakeLists.txt ALLOY_MPIRUN and
# ALLOY_TEST_ENV, tests/gpu/CMakeLists.txt): ranks share the GPU(s) (the library and the MPIX fixture pick
# device = local rank % device count), oversubscribed, unbound.
# shellcheck disable=SC2054  # "self,vader" is one argument
test_mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader
             --mca btl_vader_single_copy_mechanism none)
test_env=(NCCL_NVLS_ENABLE=0 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none)
NATIVE_BIN=$BUILD_DIR/tests/gpu/alloy_gpu_tests
MPIX_BIN=$BUILD_DIR/tests/mpi_ext/alloy_mpix_gpu_tests

# How the ranks of the rank counts given sit on the GPUs (device = local rank % device count), for the
# summaries: on a machine of 4 GPUs, 4 ranks have one each and 8 share them.
rank_placement() {
  local np shared=0 alone=0
  for np in "$@"; do
    if [ "$np" -gt "$NGPU" ]; then shared=1; else alone=1; fi
  done
  if [ "$shared" = 0 ]; then
    echo "one rank per GPU"
  elif [ "$alone" = 0 ]; then
    echo "ranks share the GPU(s)"
  else
    echo "one rank per GPU up to $NGPU ranks, ranks sharing them above"
  fi
}

# A time budget shared by a mode's runs, so that one call of this script stays within the device limit.
deadline=0
start_budget() { deadline=$(($(date +%s) + $1)); }
# Seconds the next run may take: its own cap, or what is left of the budget (0: nothing left), less the
# seconds of the optional second argument (kept for runs that come later).
run_limit() {
  local cap=$1 left=$((deadline - ${2:-0} - $(date +%s)))
  [ "$left" -lt "$cap" ] && cap=$left
  [ "$cap" -lt 0 ] && cap=0
  echo "$cap"
}

# Runs a command with a time limit, all output into a log, in a session of its own; afterwards kills what
# is left of that session (mpirun signals only the processes it started: a sanitizer's target process, or
# anything else a rank started, would outlive a timeout and hold the GPU). Returns the command's exit
# status (124 or 137: the limit struck).
run_bounded() {
  local limit=$1 logfile=$2 pid rc=0
  shift 2
  if command -v setsid >/dev/null; then
    # Started in the background of this non-interactive shell, setsid execs without forking: the
    # session id is $!.
    setsid timeout -k 10 "$limit" "$@" </dev/null >"$logfile" 2>&1 &
    pid=$!
    wait "$pid" || rc=$?
    pkill -KILL -s "$pid" 2>/dev/null
  else
    timeout -k 10 "$limit" "$@" </dev/null >"$logfile" 2>&1 || rc=$?
  fi
  return "$rc"
}

# The summary's last verdict of hosts and overlap modes: FAIL where a run went wrong, else PASS, saying how
# many runs the budget left out. Arguments: failed (0 or not), runs not run, where to look, the budget's
# variable.
result_line() {
  local bad=$1 not_run=$2 where=$3 budget=$4
  if [ "$bad" -ne 0 ]; then
    echo "result: FAIL (see $where)"
  elif [ "$not_run" -gt 0 ]; then
    echo "result: PASS for the runs made; $not_run not run ($budget spent)"
  else
    echo "result: PASS"
  fi
}

# The built alloy-perf, or nothing. Its place in the build tree, not a search: the tree can also hold
# installed copies (the MPIX suite's installed-build test puts one under tests/mpi_ext/installed).
perf_bin() {
  local bin=$BUILD_DIR/tools/alloy-perf/alloy-perf
  [ -x "$bin" ] && echo "$bin"
}

# Tests a binary's filter selects (listed on one rank; works without a device too).
count_tests() {
  local bin=$1 filter=$2
  timeout 120 "${test_mpirun[@]}" -np 1 "$bin" --gtest_list_tests "--gtest_filter=$filter" 2>/dev/null </dev/null |
    grep -c '^  [A-Za-z0-9_]'
}

# NCCL for --compare nccl: alloy-perf dlopens $ALLOY_PERF_NCCL_LIB, else libnccl.so.2 from the loader path.
# Exports ALLOY_PERF_NCCL_LIB where it finds the wheel; sets nccl_found (1 or 0).
nccl_found=0
find_nccl() {
  if [ -z "${ALLOY_PERF_NCCL_LIB:-}" ]; then
    # The nvidia-nccl wheel of the GPU machines' virtual environment (python3.12 there).
    for candidate in /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2; do
      [ -e "$candidate" ] && export ALLOY_PERF_NCCL_LIB="$candidate"
    done
  fi
  nccl_found=1
  if [ -n "${ALLOY_PERF_NCCL_LIB:-}" ]; then
    log "NCCL: $ALLOY_PERF_NCCL_LIB"
  elif ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
    log "NCCL: libnccl.so.2 from the loader's search path"
  else
    log "NCCL not found: alloy-perf will run without the NCCL columns"
    nccl_found=0
  fi
}

# Says why the mode cannot go on, keeps it as the summary, exits 1.
fail_mode() {
  log "$*"
  { echo "==== gpu-check $MODE summary ===="; echo "FAILED: $*"; } >"$RESULTS/summary.txt"
  exit 1
}
