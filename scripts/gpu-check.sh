#!/usr/bin/env bash
# Builds Alloy and checks it on the GPUs of this machine, in one of three modes. Every mode writes its
# logs into $OUT (default ./results), prints its summary last (also kept as summary.txt), and without a
# GPU builds, says "skipped: no CUDA device" and exits 0. Run from anywhere in the repository. See
# docs/benchmarks.md.
#
#   bash scripts/gpu-check.sh [check]   build, the GPU test suites (ctest -L gpu), then every collective
#                                       benchmarked against NCCL on all GPUs (one MPI rank per GPU): a check
#                                       pass (alloy-perf -c, results compared with a host reference) and a
#                                       timing pass, with JSON, a plot and the Alloy/NCCL ratios
#   bash scripts/gpu-check.sh stress    build the two GPU suites, then run a focused subset of each
#                                       (STRESS_*_FILTER) ALLOY_TEST_REPEAT times on fresh seeds, at 2, 3
#                                       and 4 ranks sharing the GPU(s); a table of failed repetitions
#   bash scripts/gpu-check.sh sanitize  build, then compute-sanitizer memcheck, racecheck and synccheck over
#                                       a reduced suite (both protocols of alltoall(v), allreduce, send/recv)
#                                       on 2 ranks; the ERROR SUMMARY counts per tool
#
# Settings (environment), all modes:
#   BUILD_DIR                 build folder (default build-gpu); SKIP_BUILD=1 reuses it as it is
#   CMAKE_ARGS                extra arguments for the cmake configure step (e.g. -DCMAKE_CUDA_FLAGS=-lineinfo
#                             for source lines in sanitizer reports)
#   NGPU                      GPUs to use (default: every GPU nvidia-smi lists)
# check mode:
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
#   CTEST_TIMEOUT             default ctest timeout (600)
# stress mode:
#   STRESS_RANKS              rank counts, space separated (default "2 3 4")
#   STRESS_REPEAT             repetitions per run (default 20)
#   STRESS_NATIVE_FILTER      --gtest_filter for alloy_gpu_tests (default: see below)
#   STRESS_MPIX_FILTER        --gtest_filter for alloy_mpix_gpu_tests (default: see below)
#   STRESS_TIMEOUT_MS         ALLOY_TIMEOUT_MS of the ranks (default 30000)
#   STRESS_RUN_TIMEOUT        seconds one suite run (all its repetitions) may take (default 240)
#   STRESS_BUDGET             seconds all runs together may take after the build (default 480); runs
#                             that no longer fit are reported as not run
# sanitize mode:
#   SANITIZE_TOOLS            compute-sanitizer tools, in order (default "memcheck racecheck synccheck")
#   SANITIZE_RANKS            ranks (default 2)
#   SANITIZE_FILTER           --gtest_filter for alloy_gpu_tests (default: the *.BothProtocols tests)
#   SANITIZE_ARGS             extra compute-sanitizer arguments for every tool
#   SANITIZE_TIMEOUT_MS       ALLOY_TIMEOUT_MS of the ranks (default 120000: tools slow kernels 10-100x)
#   SANITIZE_RUN_TIMEOUT      seconds one tool's run may take (default 160)
#   SANITIZE_BUDGET           seconds all tools together may take after the build (default 480)
#   COMPUTE_SANITIZER         the tool (default: compute-sanitizer on PATH, else /usr/local/cuda/bin/)
set -uo pipefail

usage() { sed -n '2,/^set -uo pipefail/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

MODE=${1:-check}
case $MODE in
  check | stress | sanitize) ;;
  -h | --help | help) usage; exit 0 ;;
  *) echo "gpu-check: unknown mode '$MODE' (check, stress or sanitize)" >&2; exit 2 ;;
esac

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
RESULTS=${OUT:-./results}
mkdir -p "$RESULTS" && RESULTS=$(cd "$RESULTS" && pwd) || exit 1
BUILD_DIR=${BUILD_DIR:-build-gpu}

# ---------------------------------------------------------------------------------------------------
# Shared set-up.

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

# Configures and builds the given targets (all when none); exits on failure. Sets build_status.
build_status=ok
build() {
  [ "${SKIP_BUILD:-0}" = 1 ] && { build_status="ok (SKIP_BUILD=1: $BUILD_DIR as it was)"; return; }
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments on purpose
  if ! cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} 2>&1 | tee "$RESULTS/configure.log"; then
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

# A time budget shared by a mode's runs, so that one call of this script stays within the device limit.
deadline=0
start_budget() { deadline=$(($(date +%s) + $1)); }
# Seconds the next run may take: its own cap, or what is left of the budget (0: nothing left).
run_limit() {
  local cap=$1 left=$((deadline - $(date +%s)))
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

# Tests a binary's filter selects (listed on one rank; works without a device too).
count_tests() {
  local bin=$1 filter=$2
  timeout 120 "${test_mpirun[@]}" -np 1 "$bin" --gtest_list_tests "--gtest_filter=$filter" 2>/dev/null </dev/null |
    grep -c '^  [A-Za-z0-9_]'
}

# ---------------------------------------------------------------------------------------------------
# check: build, ctest -L gpu, alloy-perf against NCCL.

mode_check() {
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

  build
  find_gpus

  # GPU tests (written with the library; labelled gpu).
  ctest --test-dir "$BUILD_DIR" -L gpu --output-on-failure --timeout "${CTEST_TIMEOUT:-600}" 2>&1 | tee "$RESULTS/ctest.log"
  local ctest_rc=${PIPESTATUS[0]} tests_line line total failed
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
  local OPS=${ALLOY_PERF_OPS:-allreduce,reduce,broadcast,allgather,reducescatter,alltoall,alltoallv,sendrecv}
  local MINB=${ALLOY_PERF_MINBYTES:-8}
  local MAXB=${ALLOY_PERF_MAXBYTES:-1G}
  local common=(-d "${ALLOY_PERF_TYPES:-float}" --redop "${ALLOY_PERF_REDOPS:-sum}" --compare nccl)
  # shellcheck disable=SC2206  # ALLOY_PERF_ARGS is a list of arguments on purpose
  common+=(${ALLOY_PERF_ARGS:-})
  local check_args=(-b "$MINB" -e "${ALLOY_PERF_CHECK_MAXBYTES:-$MAXB}" -f "${ALLOY_PERF_CHECK_FACTOR:-8}" -w 1 -n 2 -c 1)
  local perf_args=(-b "$MINB" -e "$MAXB" -f "${ALLOY_PERF_FACTOR:-2}" -w "${ALLOY_PERF_WARMUP:-5}" -n "${ALLOY_PERF_ITERS:-20}")
  mpirun_cmd=(mpirun -np "$NGPU" --bind-to none)
  # Open MPI forwards only the variables named with -x to ranks on other hosts; name the ones that matter.
  if mpirun --version 2>&1 | grep -q 'Open MPI'; then
    for v in NCCL_NVLS_ENABLE ALLOY_PERF_NCCL_LIB PATH LD_LIBRARY_PATH; do
      [ -n "${!v:-}" ] && mpirun_cmd+=(-x "$v")
    done
  fi

  declare -A outcome
  local runs_ok=1 op_list=() op
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
  local perf_json=("$RESULTS"/perf-*.json) check_json=("$RESULTS"/check-*.json)
  local ratio_table="(no timing results)"
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
}

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

# ---------------------------------------------------------------------------------------------------
# stress: a focused subset of both GPU suites, repeated on fresh seeds at several rank counts.

# alloy_gpu_tests: random alltoallv matrices with shifted (gapped, shuffled) displacements, blocks around
# the slot size, sizes at every protocol boundary (pages, low-latency chunk and limit, slot) for alltoall
# and allreduce, several communicators on one stream and in one group, and the ordering, low-latency
# wrap-around, group validation and residency suites. Never Faults.* (slow by design).
STRESS_NATIVE_DEFAULT="AlltoAllv.RandomMatrices:AlltoAllv.MatchesMpiAlltoallv:AlltoAllv.BlocksCrossingSlotSize"
STRESS_NATIVE_DEFAULT+=":AlltoAll.ProtocolBoundarySizes:AllReduce.ProtocolBoundarySizes"
STRESS_NATIVE_DEFAULT+=":MultiComm.AlternatingAlltoAllOnOneStream:MultiComm.GroupSpanningTwoCommunicatorsPostedInOppositeOrders"
STRESS_NATIVE_DEFAULT+=":StreamOrder.*:LowLatencyWrap.*:GroupValidation.*:Residency.*-Faults.*"
# alloy_mpix_gpu_tests: every MPI_IN_PLACE path on GPU memory, and MPIX alltoallv over random count
# matrices with gaps for every predefined datatype.
STRESS_MPIX_DEFAULT="MpixCollectives.InPlacePaths:MpixAlltoallv.InPlace:MpixAlltoallv.EveryPredefinedType"

# Runs one suite at one rank count with ALLOY_TEST_REPEAT; appends its row to stress_rows and any failed
# repetitions to stress_failures.
stress_rows=()
stress_failures=()
stress_bad=0
stress_run() {
  local suite=$1 bin=$2 filter=$3 np=$4 repeat=$5
  local logfile="$RESULTS/stress-$suite-np$np.log" tests limit rc=0 start seconds
  tests=$(count_tests "$bin" "$filter")
  limit=$(run_limit "${STRESS_RUN_TIMEOUT:-240}")
  if [ "$limit" -lt 10 ]; then
    stress_rows+=("$(printf '%-7s %5s %5s %9s %7s  %s' "$suite" "$np" "$tests" "0/$repeat" "-" "NOT RUN (time budget spent)")")
    stress_bad=1
    return
  fi
  log "stress $suite np$np: $repeat repetitions of $tests test(s), at most $limit s" >&2
  start=$(date +%s)
  run_bounded "$limit" "$logfile" env "${test_env[@]}" ALLOY_TIMEOUT_MS="${STRESS_TIMEOUT_MS:-30000}" \
    ALLOY_TEST_REPEAT="$repeat" "${test_mpirun[@]}" -np "$np" "$bin" "--gtest_filter=$filter" --gtest_color=no || rc=$?
  seconds=$(($(date +%s) - start))
  local passed failed done_reps status
  passed=$(grep -c '^\[alloy\] iteration [0-9]* seed [0-9a-fx]*: PASSED' "$logfile")
  failed=$(grep -c '^\[alloy\] iteration [0-9]* seed [0-9a-fx]*: FAILED' "$logfile")
  done_reps=$((passed + failed))
  if grep -q 'skipped: no CUDA device' "$logfile"; then
    status="skipped (no CUDA device)"
  elif { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ "$limit" -lt "${STRESS_RUN_TIMEOUT:-240}" ]; then
    # Stopped by what was left of STRESS_BUDGET, not by its own cap: too little time, not a hang.
    status="OUT OF BUDGET after ${limit} s"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    status="TIMEOUT after ${limit} s"
  elif [ "$done_reps" -lt "$repeat" ]; then
    status="CRASHED (exit $rc)"
  elif [ "$failed" -gt 0 ]; then
    status="FAILED"
  elif [ "$rc" -ne 0 ]; then
    status="FAILED (exit $rc)"
  elif [ "$tests" -eq 0 ]; then
    status="NO TESTS (filter matched nothing)"
  else
    status=ok
  fi
  [ "$status" = ok ] || stress_bad=1
  # A repetition cut short by a timeout or a crash counts as failed; the ones after it as not run.
  case $status in TIMEOUT* | CRASHED*) failed=$((failed + 1)) ;; esac
  stress_rows+=("$(printf '%-7s %5s %5s %9s %7s  %-34s %5s s' "$suite" "$np" "$tests" "$done_reps/$repeat" "$failed" "$status" "$seconds")")
  # Failed repetitions with their seeds and the tests rank 0 saw fail in them.
  local line
  while IFS= read -r line; do
    [ -n "$line" ] && stress_failures+=("$suite np$np $line")
  done < <(sed 's/\x1b\[[0-9;]*m//g' "$logfile" | awk '
    /^\[alloy\] iteration [0-9]+ seed [0-9a-fx]+$/ { it = $3; seed = $5; names = ""; open = 1; next }
    /^\[ RUN      \] / { running = $4; next }
    /^\[  FAILED  \] [^ ]+ \([0-9]+ ms\)$/ { names = names == "" ? $4 : names ":" $4; next }
    /^\[alloy\] iteration [0-9]+ seed [0-9a-fx]+: (PASSED|FAILED)/ { open = 0 }
    /^\[alloy\] iteration [0-9]+ seed [0-9a-fx]+: FAILED/ {
      print "iteration " it ": ALLOY_TEST_SEED=" seed (names == "" ? "" : " --gtest_filter=" names)
    }
    END {
      if (open) print "iteration " it ": ALLOY_TEST_SEED=" seed " (cut short in " running ")"
    }')
}

mode_stress() {
  build alloy_gpu_tests alloy_mpix_gpu_tests
  find_gpus
  local repeat=${STRESS_REPEAT:-20} ranks=${STRESS_RANKS:-2 3 4}
  local native_filter=${STRESS_NATIVE_FILTER:-$STRESS_NATIVE_DEFAULT}
  local mpix_filter=${STRESS_MPIX_FILTER:-$STRESS_MPIX_DEFAULT}
  local np
  start_budget "${STRESS_BUDGET:-480}"
  for np in $ranks; do
    stress_run native "$NATIVE_BIN" "$native_filter" "$np" "$repeat"
    stress_run mpix "$MPIX_BIN" "$mpix_filter" "$np" "$repeat"
  done

  local failed_reps=0 row
  for row in "${stress_failures[@]}"; do [ -n "$row" ] && failed_reps=$((failed_reps + 1)); done
  {
    echo
    echo "==== gpu-check stress summary ===="
    echo "machine: $NGPU x $gpu_name; ranks share the GPU(s); ALLOY_TIMEOUT_MS=${STRESS_TIMEOUT_MS:-30000}"
    echo "build: $build_status"
    echo "native filter: $native_filter"
    echo "mpix filter:   $mpix_filter"
    printf '%-7s %5s %5s %9s %7s  %-34s %7s\n' suite ranks tests reps failed status time
    for row in "${stress_rows[@]}"; do echo "$row"; done
    if [ "$failed_reps" -gt 0 ]; then
      echo "failed repetitions (replay: the same mpirun -np N and binary with these variables and filter):"
      for row in "${stress_failures[@]}"; do echo "  $row"; done
    fi
    if [ "$stress_bad" -eq 0 ]; then
      echo "result: PASS ($repeat repetitions at ranks ${ranks// /, }, 0 failures)"
    else
      echo "result: FAIL ($failed_reps failed repetition(s); see the status column and $RESULTS/stress-*.log)"
    fi
    echo "results: $RESULTS"
  } | tee "$RESULTS/summary.txt"
  [ "$stress_bad" -eq 0 ]
}

# ---------------------------------------------------------------------------------------------------
# sanitize: compute-sanitizer over a reduced suite, one instance per rank.

# One small (low-latency) and one large (bulk, over a slot per peer) call of alltoall, alltoallv,
# allreduce (each algorithm) and a send/recv ring.
SANITIZE_DEFAULT="AlltoAll.BothProtocols:AlltoAllv.BothProtocols:AllReduce.BothProtocols:SendRecv.BothProtocols"

mode_sanitize() {
  build alloy_gpu_tests
  find_gpus
  local sanitizer=${COMPUTE_SANITIZER:-}
  if [ -z "$sanitizer" ]; then
    sanitizer=$(command -v compute-sanitizer || true)
    [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
  fi
  [ -n "$sanitizer" ] || { log "compute-sanitizer not found (PATH, /usr/local/cuda/bin; or set COMPUTE_SANITIZER)"; exit 1; }
  local np=${SANITIZE_RANKS:-2} filter=${SANITIZE_FILTER:-$SANITIZE_DEFAULT} tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck}
  local tests tool rows=() bad=0
  tests=$(count_tests "$NATIVE_BIN" "$filter")
  start_budget "${SANITIZE_BUDGET:-480}"
  for tool in $tools; do
    local base="$RESULTS/sanitize-$tool" limit rc=0 start seconds
    rm -f "$base".rank*.log
    limit=$(run_limit "${SANITIZE_RUN_TIMEOUT:-160}")
    if [ "$limit" -lt 10 ]; then
      rows+=("$(printf '%-10s %-13s %-34s %s' "$tool" "-" "NOT RUN (time budget spent)" "-")")
      bad=1
      continue
    fi
    log "sanitize $tool: $np ranks, $tests test(s), at most $limit s" >&2
    start=$(date +%s)
    # One sanitizer per rank, each writing rank-numbered output (its reports and the rank's own).
    # shellcheck disable=SC2086,SC2016  # SANITIZE_ARGS is a list; the rank's shell expands its rank
    run_bounded "$limit" "$base.log" env "${test_env[@]}" ALLOY_TIMEOUT_MS="${SANITIZE_TIMEOUT_MS:-120000}" \
      "${test_mpirun[@]}" -np "$np" \
      sh -c 'out=$1; shift; exec "$@" >"$out.rank${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}.log" 2>&1' sh "$base" \
      "$sanitizer" --tool "$tool" --error-exitcode 99 ${SANITIZE_ARGS:-} "$NATIVE_BIN" "--gtest_filter=$filter" \
      --gtest_color=no || rc=$?
    seconds=$(($(date +%s) - start))
    # The ranks' output after mpirun's own, rank by rank.
    local f errors=0 summaries=0 n test_result="-" status
    for f in "$base".rank*.log; do
      [ -e "$f" ] || continue
      { echo "==== ${f##*/} ===="; cat "$f"; } >>"$base.log"
      # memcheck and synccheck end on "ERROR SUMMARY: N errors", racecheck on
      # "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
      while read -r n; do
        errors=$((errors + n))
        summaries=$((summaries + 1))
      done < <(sed -n -E -e 's/.*ERROR SUMMARY: ([0-9]+) errors?.*/\1/p' \
                         -e 's/.*RACECHECK SUMMARY: .*\(([0-9]+) errors?,.*/\1/p' "$f")
    done
    if [ -e "$base.rank0.log" ]; then
      if grep -q 'skipped: no CUDA device' "$base.rank0.log"; then test_result="skipped"
      elif grep -q '^\[  FAILED  \]' "$base.rank0.log"; then test_result="tests FAILED"
      elif grep -q '^\[  PASSED  \]' "$base.rank0.log"; then test_result="tests passed"
      fi
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status="TIMEOUT after $limit s"
    elif [ "$summaries" -lt "$np" ]; then status="INCOMPLETE ($summaries of $np ERROR SUMMARY lines; exit $rc)"
    elif [ "$errors" -gt 0 ]; then status="ERRORS"
    elif [ "$rc" -ne 0 ]; then status="FAILED (exit $rc)"
    else status=ok
    fi
    [ "$status" = ok ] || bad=1
    [ "$summaries" -eq 0 ] && errors="-"
    rows+=("$(printf '%-10s %-13s %-34s %s' "$tool" "$errors" "$status" "$test_result, $seconds s")")
  done
  {
    echo
    echo "==== gpu-check sanitize summary ===="
    echo "machine: $NGPU x $gpu_name; $np ranks; ALLOY_TIMEOUT_MS=${SANITIZE_TIMEOUT_MS:-120000}; $sanitizer"
    echo "build: $build_status"
    echo "filter: $filter ($tests tests)"
    printf '%-10s %-13s %-34s %s\n' tool "ERROR SUMMARY" status "tests, time"
    for row in "${rows[@]}"; do echo "$row"; done
    [ "$bad" -eq 0 ] && echo "result: PASS (0 errors)" || echo "result: FAIL (see $RESULTS/sanitize-*.log)"
    echo "results: $RESULTS"
  } | tee "$RESULTS/summary.txt"
  [ "$bad" -eq 0 ]
}

# ---------------------------------------------------------------------------------------------------

case $MODE in
  check) mode_check ;;
  stress) mode_stress ;;
  sanitize) mode_sanitize ;;
esac
