#!/usr/bin/env bash
# Builds Alloy and checks it on the GPUs of this machine, in one of seven modes. Every mode writes its
# logs into $OUT (default ./results), prints its summary last (also kept as summary.txt), and without a
# GPU builds (nccl and versus modes do not), says "skipped: no CUDA device" and exits 0. Run from anywhere
# in the repository. See docs/benchmarks.md.
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
#   bash scripts/gpu-check.sh hosts     the path between hosts on this one machine split into virtual hosts
#                                       (ALLOY_HOSTID per rank): unpack .whl/libucx_cu13-*.whl if there
#                                       (scripts/ucx-wheel.sh; else a system UCX with headers), build with UCX
#                                       ON, run what crosses hosts in both GPU suites (HOSTS_*_FILTER) in
#                                       several layouts over UCX tcp and shared memory, then every
#                                       collective with alloy-perf against NCCL (NCCL_HOSTID per rank, socket
#                                       transport) and ucx_perftest's bandwidth; a table and the target
#                                       ratios per collective (the ceiling ratio for each at 2 ranks), and UCX's
#                                       own both-ways bandwidth (tools/ucx-both-ways) beside them
#   bash scripts/gpu-check.sh overlap   compute beside a collective between virtual hosts: the hosts mode's
#                                       UCX and build (alloy-perf only), then per layout one job of
#                                       alloy-perf -O -c (a compute load of ~20 ms on a second stream while
#                                       the collective loops beside it) with NCCL's socket path beside Alloy,
#                                       alltoallv and alltoall at 64 KB-64 MB; a table last: per size the
#                                       load's slowdown beside Alloy and beside NCCL
#   bash scripts/gpu-check.sh nccl      Alloy's libnccl.so.2 (docs/nccl-compat.md) built from the wheel's
#                                       nccl.h: its ctests, nccl-tests (NVIDIA's source in
#                                       .thirdparty/nccl-tests, carried) with -c 1 for every operation, and
#                                       torch.distributed, a ctypes wrapper in a CUDA graph and CuPy on it
#                                       (tests/nccl_frameworks); scripts/gpu-check-nccl.sh
#   bash scripts/gpu-check.sh versus    NVIDIA's nccl-tests built once against NVIDIA's NCCL (the wheel), every
#                                       operation run on it and then on Alloy's libnccl.so.2 (LD_LIBRARY_PATH
#                                       picks the library), one rank per GPU, -c 1; alltoallv with alloy-perf
#                                       against NCCL; one allreduce per CUDA graph replay on both
#                                       (tests/nccl_frameworks/graph_allreduce_time.py); per operation a table,
#                                       the worst Alloy/NCCL ratio of each size class against its target and
#                                       a plot (scripts/versus-table.py); the logs packed in one tarball;
#                                       scripts/gpu-check-versus.sh
#   bash scripts/gpu-check.sh python    the alloy Python package built with the machine's Python (CuPy,
#                                       PyTorch, mpi4py; its build tools as wheels in .whl/), its tests under
#                                       mpirun at 2 and NGPU ranks, one per GPU, and the Python layer's cost
#                                       per call (python/benchmarks/call_cost.py); scripts/gpu-check-python.sh
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
# hosts mode:
#   HOSTS_RUNS                runs in order, LAYOUT:TLS, space separated (default "2h:tcp 2x2:tcp 2h:shm
#                             2x2:shm 2+1:tcp 3h:tcp 4h:tcp 2+1:shm 3h:shm 4h:shm"); each runs both suites.
#                             Layouts: 2h, 3h, 4h (one rank per host), 2x2 (4 ranks, host = rank % 2), 2+1
#                             (hosts {0,1},{2}), or a map of each rank's host such as 0,0,1,1. TLS: tcp,
#                             shm (UCX_TLS=posix,sysv,self) or a UCX_TLS value as it is
#   HOSTS_NATIVE_FILTER       --gtest_filter for alloy_gpu_tests (default: every collective, send/recv,
#                             graphs, MultiComm, BadInput, StreamOrder, CrossHost, the abort test)
#   HOSTS_MPIX_FILTER         --gtest_filter for alloy_mpix_gpu_tests (default: every collective, and the
#                             enqueue and rejection cases, which stay agreed across hosts)
#   HOSTS_TIMEOUT_MS          ALLOY_TIMEOUT_MS of the ranks (default 30000); the ranks also get ALLOY_NET=ucx
#                             (unless ALLOY_NET is set), so that a UCX that cannot start fails loudly, and
#                             UCX's memory hooks off (UCX_MEM_MALLOC_HOOKS=n UCX_MEM_MMAP_HOOK_MODE=none
#                             UCX_MEM_EVENTS=no unless set; docs/environment.md)
#   HOSTS_RUN_TIMEOUT         seconds one suite run may take (default 120)
#   HOSTS_BUDGET              seconds all runs together may take after the build (default 500); test runs
#                             that no longer fit are reported as "not run (budget)"
#   HOSTS_PERF_RESERVE        seconds of HOSTS_BUDGET the test runs leave to the benchmark (default 360;
#                             none when HOSTS_PERF=0)
#   HOSTS_PERF                0 skips the benchmark (default 1)
#   HOSTS_PERF_TLS            transports of the benchmark (default "tcp shm")
#   HOSTS_PERF_LAYOUT         virtual hosts of the benchmark's ranks, a layout as in HOSTS_RUNS (default 2h:
#                             2 ranks, one per host; 2x2 puts 2 ranks on each, where the hierarchical
#                             schedules run)
#   HOSTS_PERF_MINBYTES, HOSTS_PERF_MAXBYTES, HOSTS_PERF_FACTOR  alloy-perf sizes (default 16, 256M, 4)
#   HOSTS_PERF_WARMUP, HOSTS_PERF_ITERS  alloy-perf iterations (default 5, 20)
#   HOSTS_PERF_EXTRA          more alloy-perf arguments, space separated (e.g. --relay)
#   HOSTS_PERF_OPS            collectives of the benchmark, comma separated (default: all eight)
#   HOSTS_PERF_TIMEOUT        seconds one alloy-perf run may take (default 180)
#   HOSTS_PERF_CEILING        0 skips ucx_perftest and ucx-both-ways (the ceiling ratio then reads "not
#                             measured"), for runs that compare Alloy's settings only (default 1)
#   HOSTS_PERFTEST_BYTES, HOSTS_PERFTEST_ITERS, HOSTS_PERFTEST_PORT  ucx_perftest's message size,
#                             iterations and first TCP port (default 67108864, 20, 13350)
#   UCXWHEEL_DIR              where scripts/ucx-wheel.sh unpacks the wheel (default /tmp/ucx-wheel)
#   ALLOY_PERF_NCCL_LIB       as in check mode
# overlap mode (also HOSTS_TIMEOUT_MS, UCXWHEEL_DIR, ALLOY_PERF_NCCL_LIB as in hosts mode):
#   OVERLAP_LAYOUTS           layouts as in HOSTS_RUNS, one alloy-perf job each (default "2h 2x2"). NCCL
#                             refuses two ranks of one GPU in one host, so where a layout puts several
#                             ranks on a host NCCL's ranks each claim a host of their own (NCCL_HOSTID)
#   OVERLAP_TLS               UCX transport of Alloy: tcp, shm or a UCX_TLS value (default tcp)
#   OVERLAP_OPS               collectives, comma separated (default alltoallv,alltoall)
#   OVERLAP_MINBYTES, OVERLAP_MAXBYTES, OVERLAP_FACTOR  sizes (default 64K, 64M, 4)
#   OVERLAP_MS, OVERLAP_REPS, OVERLAP_KERNELS  alloy-perf -O, --overlap_reps, --overlap_kernels (default
#                             20, 5, 100)
#   OVERLAP_WARMUP, OVERLAP_ITERS  iterations of the collective timed alone (default 2, 10)
#   OVERLAP_CHECK             1: alloy-perf -c, every collective's output checked, also after the
#                             overlapped calls (default 1); 0: not checked
#   OVERLAP_TIMEOUT           seconds one alloy-perf job may take (default 100)
#   OVERLAP_BUDGET            seconds all jobs together may take after the build (default 170)
# nccl mode:
#   NCCL_TESTS_NP, NCCL_TESTS_MAXBYTES, NCCL_TESTS_TIMEOUT  ranks, largest size (-e) and seconds of each
#                             nccl-tests run (default 2, 16M, 60)
#   FRAMEWORK_TIMEOUT         seconds of each framework test run (default 120)
#   NCCL_BUDGET               seconds all runs together may take after the build (default 420)
# versus mode (also ALLOY_PERF_NCCL_LIB: NVIDIA's NCCL, as in check mode):
#   VERSUS_OPS                nccl-tests operations, space separated (default "all_reduce reduce_scatter
#                             broadcast all_gather alltoall sendrecv reduce")
#   VERSUS_MINBYTES, VERSUS_MAXBYTES, VERSUS_FACTOR  sizes of every run (default 8, 1G, 4)
#   VERSUS_WARMUP, VERSUS_ITERS  warm-up and timed iterations (default 5, 20)
#   VERSUS_ENV                Alloy's settings in every Alloy run, VAR=value separated by spaces (e.g.
#                             "ALLOY_CHANNELS=18"); NCCL's runs never get them
#   VERSUS_ALLOY_VARIANTS     more Alloy configurations for A/B runs of one build, ';' separated, each VAR=value
#                             words added to VERSUS_ENV (e.g. "ALLOY_CHANNELS=18;ALLOY_CHANNELS=32"): each runs
#                             all that Alloy runs once more, as alloy-v1, alloy-v2... (default none)
#   VERSUS_TIMEOUT            seconds of each run (default 90)
#   VERSUS_BUDGET             seconds all runs together may take after the builds (default 420); the
#                             nccl-tests runs keep 20 s + 40 s per Alloy configuration for the runs after them
#   VERSUS_PROFILE            1: then nsys (every rank) over Alloy's all_reduce at 512 MB and 1 MB and
#                             broadcast at 128 MB, and ncu (rank 0) over its all_reduce at 512 MB, where found,
#                             within VERSUS_BUDGET; kernel summaries in prof-summary.txt (default 0)
#   VERSUS_NCU_KERNELS        ncu's -k (default regex:reduceKernel|slotReduceKernel|p2pKernel)
set -uo pipefail

usage() { sed -n '2,/^set -uo pipefail/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

MODE=${1:-check}
case $MODE in
  check | stress | sanitize | hosts | overlap | nccl | versus | python) ;;
  -h | --help | help) usage; exit 0 ;;
  *) echo "gpu-check: unknown mode '$MODE' (check, stress, sanitize, hosts, overlap, nccl, versus or python)" >&2
     exit 2 ;;
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

# The status of one suite run: skipped, out of budget (stopped by what was left of the mode's budget
# rather than by its own cap: too little time, not a hang), timeout, crashed (finished is not 1: it did
# not get to the end), failed, no tests, or ok. Arguments: log file, exit code, the limit it ran under,
# its own cap, finished, failed count, test count.
run_status() {
  local logfile=$1 rc=$2 limit=$3 cap=$4 finished=$5 failed=$6 tests=$7
  if grep -q 'skipped: no CUDA device' "$logfile"; then echo "skipped (no CUDA device)"
  elif { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ "$limit" -lt "$cap" ]; then echo "OUT OF BUDGET after ${limit} s"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "TIMEOUT after ${limit} s"
  elif [ "$finished" != 1 ]; then echo "CRASHED (exit $rc)"
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

# ---------------------------------------------------------------------------------------------------
# check: build, ctest -L gpu, alloy-perf against NCCL.

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

mode_check() {
  find_nccl
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
  PERF_BIN=$(perf_bin)
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
STRESS_MPIX_DEFAULT="MpixCollectives.InPlacePaths:MpixAlltoallv.InPlace:MpixAlltoallv.EveryPredefinedType:MpixRejection.EveryCaseStopsEveryRank"

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
  status=$(run_status "$logfile" "$rc" "$limit" "${STRESS_RUN_TIMEOUT:-240}" "$([ "$done_reps" -ge "$repeat" ] && echo 1)" \
    "$failed" "$tests")
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
# hosts: what crosses hosts (UCX, through the proxy thread and host staging), on this one machine split
# into virtual hosts: each rank gets its ALLOY_HOSTID from a wrapper, as NCCL's ranks get NCCL_HOSTID.

# Cross-host operations of the native suite: every collective and send/recv in every form (graphs,
# several communicators, bad arguments, stream order), and the cross-host suite itself.
HOSTS_NATIVE_DEFAULT="AlltoAll*:SendRecv*:AllReduce.*:Reduce.*:ReduceScatter.*:Broadcast.*:AllGather.*"
HOSTS_NATIVE_DEFAULT+=":CudaGraph.*:MultiComm.*:BadInput.*:StreamOrder.*:CrossHost.*:Faults.AbortStopsAWaitingKernel"
# MPIX: every collective, and the enqueue and rejection cases (which stay agreed across hosts).
HOSTS_MPIX_DEFAULT="MpixAlltoallv.*:MpixCollectives.*:MpixEnqueue*:MpixRejection*"
# Runs in order, most informative first: LAYOUT:TLS, both suites each.
HOSTS_RUNS_DEFAULT="2h:tcp 2x2:tcp 2h:shm 2x2:shm 2+1:tcp 3h:tcp 4h:tcp 2+1:shm 3h:shm 4h:shm"

# The virtual host of each rank, in rank order, for a layout name; a list such as 0,0,1,1 is its own map.
hosts_map() {
  case $1 in
    2h) echo 0,1 ;;
    3h) echo 0,1,2 ;;
    4h) echo 0,1,2,3 ;;
    2x2) echo 0,1,0,1 ;;  # interleaved: a host's ranks are not contiguous
    2+1) echo 0,0,1 ;;    # uneven: hosts {0,1} and {2}
    *) [[ $1 =~ ^[0-9]+(,[0-9]+)+$ ]] && echo "$1" ;;
  esac
}

# UCX_TLS of a transport name: tcp, shm (shared memory, without cma: containers often forbid it), or a
# UCX_TLS value as it is.
hosts_tls() {
  case $1 in
    shm) echo posix,sysv,self ;;
    *) echo "$1" ;;
  esac
}

# Starts "$@" with ALLOY_HOSTID (and NCCL_HOSTID, for alloy-perf's NCCL) from the map given first, indexed
# by the rank Open MPI gives the process; says which host it took, on stderr. With HOSTS_NCCL_PER_RANK=1
# NCCL's host is the rank's own (see hosts_alloy_perf).
# shellcheck disable=SC2016  # expanded by the rank's shell
hosts_wrapper=(sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}; h=$(echo "$1" | cut -d, -f$((r + 1))); shift
[ -n "$h" ] || { echo "hosts wrapper: no host for rank $r" >&2; exit 1; }
n=vhost$h; [ "${HOSTS_NCCL_PER_RANK:-0}" = 1 ] && n=rank$r
echo "vhost: rank $r ALLOY_HOSTID=vhost$h NCCL_HOSTID=$n" >&2
ALLOY_HOSTID=vhost$h NCCL_HOSTID=$n exec "$@"' sh)
# Ranks of a map: one per entry.
hosts_ranks() { echo $(($(tr -cd , <<<"$1" | wc -c) + 1)); }
# MPI's own traffic stays off UCX (ob1 over the shared-memory BTL), so that UCX_TLS and the UCX that is
# loaded concern Alloy alone.
hosts_mpirun=("${test_mpirun[@]}" --mca pml ob1)
# ALLOY_NET=ucx: a UCX that cannot start fails communicator creation loudly instead of leaving every
# cross-host call alloyNotSupported (an ALLOY_NET of the caller's own is kept).
# UCX's memory hooks off (docs/environment.md, "UCX's memory hooks"): with them on, a proxy thread can sit
# in UCX's hooked mmap until its peer times out. A caller's own values are kept.
hosts_env=(ALLOY_NET="${ALLOY_NET:-ucx}" ALLOY_TIMEOUT_MS="${HOSTS_TIMEOUT_MS:-30000}"
           UCX_MEM_MALLOC_HOOKS="${UCX_MEM_MALLOC_HOOKS:-n}" UCX_MEM_MMAP_HOOK_MODE="${UCX_MEM_MMAP_HOOK_MODE:-none}"
           UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}")

# UCX to build against: the wheel in .whl/ (unpacked by scripts/ucx-wheel.sh), else a system UCX with
# headers. Sets ucx_source; without either, says so and exits 1.
ucx_source=
hosts_setup_ucx() {
  local wheels=()
  shopt -s nullglob
  wheels=(.whl/libucx_cu13-*.whl)
  shopt -u nullglob
  if [ ${#wheels[@]} -gt 1 ]; then
    hosts_fail "more than one wheel in .whl/ (keep one): ${wheels[*]}"
  elif [ ${#wheels[@]} -eq 1 ]; then
    # shellcheck disable=SC1091  # checked on its own
    source scripts/ucx-wheel.sh "${wheels[0]}" || hosts_fail "could not unpack ${wheels[0]} (scripts/ucx-wheel.sh)"
    ucx_source="UCX $UCXWHEEL_VERSION from ${wheels[0]##*/} (unpacked in $UCXWHEEL_DIR)"
  elif command -v pkg-config >/dev/null && pkg-config --exists ucx; then
    ucx_source="system UCX $(pkg-config --modversion ucx) ($(pkg-config --variable=libdir ucx))"
  else
    hosts_fail "no UCX to build against: put pip's libucx-cu13 wheel into .whl/ (docs/benchmarks.md) or install UCX with its headers (libucx-dev)"
  fi
  log "$ucx_source"
}

# Says why the mode cannot go on, keeps it as the summary, exits 1.
hosts_fail() {
  log "$*"
  { echo "==== gpu-check $MODE summary ===="; echo "FAILED: $*"; } >"$RESULTS/summary.txt"
  exit 1
}

# After the build: UCX must be ON in the build (else every cross-host call is alloyNotSupported and the
# whole mode measures nothing), and the binary given (default: the native test suite) must load the UCX
# chosen above. Sets ucx_build.
ucx_build=
hosts_check_ucx_build() {
  local cache="$BUILD_DIR/CMakeCache.txt" bin=${1:-$NATIVE_BIN} version libucp built_with said
  if ! grep -q '^ALLOY_WITH_UCX:BOOL=ON' "$cache" 2>/dev/null || ! grep -q '^UCX_FOUND:INTERNAL=1' "$cache"; then
    said=$(grep -o 'UCX O[NF]F* (.*' "$RESULTS/configure.log" 2>/dev/null | tail -1)
    hosts_fail "the build in $BUILD_DIR has UCX OFF${said:+ (configure: $said; see $RESULTS/configure.log)}"
  fi
  version=$(sed -n 's/^UCX_VERSION:INTERNAL=//p' "$cache")
  # The library the build linked (its headers came from the same pkg-config answer).
  built_with=$(sed -n 's/^pkgcfg_lib_UCX_ucp:FILEPATH=//p' "$cache")
  if [ -n "${UCXWHEEL_DIR:-}" ] && [[ $(readlink -f "$built_with") != "$(readlink -f "$UCXWHEEL_DIR")"/* ]]; then
    hosts_fail "$BUILD_DIR was built against ${built_with:-an unknown UCX}, not the wheel in $UCXWHEEL_DIR (SKIP_BUILD=1 on an old build folder?)"
  fi
  [ -x "$bin" ] || hosts_fail "$bin was not built"
  libucp=$(ldd "$bin" 2>/dev/null | awk '$1 ~ /^libucp\.so/ { print $3 }')
  if [ -z "$libucp" ] || [ "$libucp" = "not" ]; then  # "libucp.so.0 => not found"
    hosts_fail "$bin does not load libucp (ldd: $(ldd "$bin" 2>&1 | grep ucp))"
  fi
  if [ -n "${UCXWHEEL_DIR:-}" ] && [[ $(readlink -f "$libucp") != "$(readlink -f "$UCXWHEEL_DIR")"/* ]]; then
    hosts_fail "$bin loads $libucp, not the wheel's UCX in $UCXWHEEL_DIR (a stale $BUILD_DIR? remove it)"
  fi
  ucx_build="UCX ON (UCX $version); $(basename "$bin") loads $libucp"
  log "$ucx_build"
}

# One suite in one layout over one transport. Appends its row to hosts_rows; sets hosts_bad on failure.
hosts_rows=()
hosts_bad=0
hosts_not_run=0
declare -A hosts_tests  # tests a suite's filter selects, listed once per suite
hosts_run() {
  local layout=$1 tlsname=$2 suite=$3 bin=$4 filter=$5
  local map tls np tests limit rc=0 start seconds status passed=0 failed=0 logfile
  map=$(hosts_map "$layout")
  tls=$(hosts_tls "$tlsname")
  np=$(hosts_ranks "$map")
  logfile="$RESULTS/hosts-${layout//[^A-Za-z0-9]/_}-${tlsname//[^A-Za-z0-9]/_}-$suite.log"
  [ -n "${hosts_tests[$suite]:-}" ] || hosts_tests[$suite]=$(count_tests "$bin" "$filter")
  tests=${hosts_tests[$suite]}
  local what shown=$layout
  [[ $layout == *,* ]] && shown=map
  what=$(printf '%-5s %-9s %-17s %-6s %5s' "$shown" "[$map]" "$tls" "$suite" "$tests")
  limit=$(run_limit "${HOSTS_RUN_TIMEOUT:-120}" "$hosts_reserve")
  if [ "$limit" -lt 10 ]; then
    hosts_rows+=("$(printf '%s %6s %6s  %s' "$what" - - "not run (budget)")")
    hosts_not_run=$((hosts_not_run + 1))
    return
  fi
  log "hosts $layout [$map] UCX_TLS=$tls $suite: $np ranks, $tests test(s), at most $limit s" >&2
  start=$(date +%s)
  run_bounded "$limit" "$logfile" env "${test_env[@]}" "${hosts_env[@]}" UCX_TLS="$tls" \
    "${hosts_mpirun[@]}" -np "$np" "${hosts_wrapper[@]}" "$map" "$bin" "--gtest_filter=$filter" --gtest_color=no || rc=$?
  seconds=$(($(date +%s) - start))
  # Rank 0's GoogleTest totals: "[  PASSED  ] 12 tests." and "[  FAILED  ] 2 tests, listed below:".
  local line
  line=$(grep -E '^\[  PASSED  \] [0-9]+ tests?\.' "$logfile" | tail -1) && passed=$(awk '{print $4}' <<<"$line")
  line=$(grep -E '^\[  FAILED  \] [0-9]+ tests?, listed below' "$logfile" | tail -1) && failed=$(awk '{print $4}' <<<"$line")
  status=$(run_status "$logfile" "$rc" "$limit" "${HOSTS_RUN_TIMEOUT:-120}" \
    "$(grep -qE '^\[==========\] [0-9]+ tests? from .* ran\.' "$logfile" && echo 1)" "$failed" "$tests")
  case $status in ok | skipped*) ;; *) hosts_bad=1 ;; esac
  hosts_rows+=("$(printf '%s %6s %6s  %-30s %4s s' "$what" "$passed" "$failed" "$status" "$seconds")")
}

# ucx_perftest between two processes of this machine: UCP tag bandwidth, host memory, 64 MB messages, over
# UCX_TLS=$2. Prints the overall bandwidth in GB/s (10^9 bytes, as alloy-perf's), or nothing.
hosts_perftest() {
  local tlsname=$1 tls=$2 port=$3 perftest=$4
  local log="$RESULTS/hosts-perftest-${tlsname//[^A-Za-z0-9]/_}.log" limit server
  local args=(-t tag_bw -s "${HOSTS_PERFTEST_BYTES:-67108864}" -n "${HOSTS_PERFTEST_ITERS:-20}" -p "$port")
  limit=$(run_limit 30)
  [ "$limit" -lt 5 ] && { echo "not run (budget)" >"$log"; return; }
  log "ucx_perftest UCX_TLS=$tls: ${args[*]}" >&2
  UCX_TLS=$tls timeout -k 5 "$limit" "$perftest" "${args[@]}" </dev/null >"$log.server" 2>&1 &
  server=$!
  # The client gives up at once when nobody listens yet (the server's "Waiting for connection" sits in
  # its stdio buffer until it exits): try again while the server lives.
  local attempt
  for attempt in 1 2 3 4 5; do
    sleep 1
    UCX_TLS=$tls timeout -k 5 "$limit" "$perftest" 127.0.0.1 "${args[@]}" </dev/null >"$log" 2>&1 && break
    grep -q '^Final:' "$log" && break
    kill -0 "$server" 2>/dev/null || break
    log "ucx_perftest UCX_TLS=$tls: client attempt $attempt failed: $(grep -m1 -i 'error\|fail' "$log")" >&2
  done
  # A served server exits by itself; one left waiting is ended.
  for _ in $(seq 25); do
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
  done
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  { echo "==== server ===="; cat "$log.server"; } >>"$log" && rm -f "$log.server"
  # "Final: iterations lat50 lat-avg lat-overall bw-avg bw-overall rate-avg rate-overall", bandwidth in
  # MB/s of 2^20 bytes.
  awk '$1 == "Final:" { printf "%.3f\n", $7 * 1048576 / 1e9; exit }' "$log"
}

# tools/ucx-both-ways over UCX_TLS=$2 between 2 ranks: UCX's own tag bandwidth with one worker per process,
# one way, then both ways at once (the traffic of an alltoall between 2 hosts), ucx_perftest's message
# size and iterations. Prints "ONE_WAY BOTH_WAYS" in GB/s, or nothing.
hosts_both_ways() {
  local tlsname=$1 tls=$2 bin=$BUILD_DIR/tools/ucx-both-ways/ucx-both-ways
  local log="$RESULTS/hosts-both-ways-${tlsname//[^A-Za-z0-9]/_}.log" limit
  [ -x "$bin" ] || { echo "not built" >"$log"; return; }
  limit=$(run_limit 60)
  [ "$limit" -lt 5 ] && { echo "not run (budget)" >"$log"; return; }
  run_bounded "$limit" "$log" env UCX_TLS="$tls" "${hosts_mpirun[@]}" -np 2 "$bin" \
    -s "${HOSTS_PERFTEST_BYTES:-67108864}" -n "${HOSTS_PERFTEST_ITERS:-20}"
  awk '$1 == "Final:" { print $2, $3; exit }' "$log"
}

# alloy-perf with NCCL beside Alloy in one job, its ranks on the virtual hosts of MAP (as hosts_map prints
# them), over UCX_TLS=TLS, for at most CAP seconds (less where the budget has less left); the remaining
# arguments go to alloy-perf. Writes BASE.log and BASE.json; prints the run's outcome. NCCL takes its
# inter-node path in miniature: its socket transport over loopback, IB off. It refuses two ranks of one
# GPU in one host ("Duplicate GPU detected"), so where MAP puts several ranks on a host, NCCL's ranks each
# claim a host of their own.
hosts_alloy_perf() {
  local base=$1 tls=$2 map=$3 cap=$4 limit rc=0 np per_rank=0
  shift 4
  np=$(hosts_ranks "$map")
  [ "$(tr , '\n' <<<"$map" | sort -u | wc -l)" -lt "$np" ] && per_rank=1
  limit=$(run_limit "$cap")
  [ "$limit" -lt 10 ] && { echo "not run (budget)"; return; }
  log "alloy-perf UCX_TLS=$tls, $np ranks on hosts [$map]: $*, at most $limit s" >&2
  run_bounded "$limit" "$base.log" env "${test_env[@]}" "${hosts_env[@]}" UCX_TLS="$tls" NCCL_IB_DISABLE=1 \
    NCCL_SOCKET_IFNAME=lo HOSTS_NCCL_PER_RANK=$per_rank "${hosts_mpirun[@]}" -np "$np" "${hosts_wrapper[@]}" \
    "$map" "$PERF_BIN" "$@" --json "$base.json" || rc=$?
  case $rc in
    0) echo ok ;;
    2) echo "FAILED: alloy-perf refused its arguments ($(grep -m1 '^alloy-perf: ' "$base.log"))" ;;
    3) echo "WRONG RESULTS" ;;
    124 | 137) echo "TIMEOUT after $limit s" ;;
    *) echo "FAILED (exit $rc; see ${base##*/}.log)" ;;
  esac
}

# alloy-perf over the ranks of HOSTS_PERF_LAYOUT (2 ranks as 2 virtual hosts by default) with NCCL beside it
# in the same job, over UCX_TLS=$2. Prints the run's outcome.
hosts_perf_run() {
  local tlsname=$1 tls=$2
  local ops=${HOSTS_PERF_OPS:-allreduce,reduce,broadcast,allgather,reducescatter,alltoall,alltoallv,sendrecv}
  # shellcheck disable=SC2086  # HOSTS_PERF_EXTRA is a list of arguments on purpose
  hosts_alloy_perf "$RESULTS/hosts-perf-${tlsname//[^A-Za-z0-9]/_}" "$tls" "$(hosts_map "${HOSTS_PERF_LAYOUT:-2h}")" \
    "${HOSTS_PERF_TIMEOUT:-180}" \
    -o "$ops" -b "${HOSTS_PERF_MINBYTES:-16}" -e "${HOSTS_PERF_MAXBYTES:-256M}" -f "${HOSTS_PERF_FACTOR:-4}" \
    -w "${HOSTS_PERF_WARMUP:-5}" -n "${HOSTS_PERF_ITERS:-20}" --compare nccl ${HOSTS_PERF_EXTRA:-}
}

# The three ratios, per transport, from alloy-perf's JSON and ucx_perftest's bandwidth, and beside them
# Alloy against UCX's own both-ways bandwidth (no target: the issue's third target is against
# ucx_perftest). Arguments: groups of five: transport name, UCX_TLS, JSON file, ucx_perftest GB/s (or a
# reason it is missing), ucx-both-ways' both-ways GB/s (or empty).
hosts_ratios() {
  python3 - "$@" <<'PY'
import json
import math
import os
import sys

KB, MB = 1 << 10, 1 << 20
SMALL_LO, SMALL_HI, LARGE_LO = 8, 64 * KB, 16 * MB
TARGET_TIME, TARGET_BUSBW, TARGET_CEILING = 0.25, 1.5, 0.8


def human(n):
    for unit, size in (("GB", 1 << 30), ("MB", MB), ("KB", KB)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def ok(m):
    return m is not None and m.get("status") == "ok" and m.get("time_us")


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def verdict(value, target, higher):
    return "met" if (value >= target if higher else value <= target) else "NOT MET"


def band_text(rows):
    sizes = sorted(r["size_bytes"] for r in rows)
    return f"{human(sizes[0])}-{human(sizes[-1])}, {len(sizes)} sizes"


def why_missing(rows, doc):
    """Why no pair of Alloy and NCCL numbers exists in these rows."""
    if not rows:
        return "no rows at these sizes"
    if not any(ok(r["alloy"]) for r in rows):
        first = next((r["alloy"].get("message") for r in rows if r["alloy"]), "") or ""
        return "not supported by alloy" + (f" ({first.strip()})" if first else "")
    nccl = doc.get("nccl") or {}
    if not nccl.get("loaded"):
        return "no NCCL (" + (nccl.get("reason") or "not loaded") + ")"
    return "NCCL has no numbers at these sizes"


def against_nccl(label, what, band, doc, target, busbw):
    """One ratio line against NCCL over the rows of a size band: time (lower is better), or bus
    bandwidth (higher is better; both move the same bytes, so it is NCCL's time over Alloy's)."""
    pairs = [r for r in band if ok(r["alloy"]) and ok(r.get("nccl"))]
    if not pairs:
        return f"{label}{what} n/a: {why_missing(band, doc)}"
    a, n = ("nccl", "alloy") if busbw else ("alloy", "nccl")
    per = [(r[a]["time_us"] / r[n]["time_us"], r["size_bytes"]) for r in pairs]
    g = geomean([v for v, _ in per])
    worst = min(per) if busbw else max(per)
    return (f"{label}{what} {g:5.2f}x  geomean over {band_text(pairs)}; worst {worst[0]:.2f}x at {human(worst[1])}; "
            f"target {'>=' if busbw else '<='} {target}: {verdict(g, target, busbw)}")


def number(text):
    """The float in text, or None where text is a reason instead of a measurement."""
    try:
        return float(text)
    except ValueError:
        return None


def ratios(op, rows, doc, ceiling, both_ways):
    out = []
    small = [r for r in rows if SMALL_LO <= r["size_bytes"] <= SMALL_HI]
    large = [r for r in rows if r["size_bytes"] >= LARGE_LO]
    label = f"  {op:<9} "
    out.append(against_nccl(label, "time alloy/nccl    ", small, doc, TARGET_TIME, False))
    out.append(against_nccl(label, "busbw alloy/nccl   ", large, doc, TARGET_BUSBW, True))
    if doc.get("nranks") != 2:
        out.append(f"{label}alloy/ucx_perftest  n/a: the ceiling is compared at 2 ranks as 2 hosts only")
        return out
    measured = [r for r in large if ok(r["alloy"])]
    # 2 ranks as 2 hosts: every collective's busbw is what one rank sends to the other host per second
    # (nccl-tests' factors are 1 at 2 ranks), so each is held against the transport's one-way ceiling.
    best = max(measured, key=lambda r: r["alloy"].get("busbw_gbs") or 0) if measured else None
    gbs = (best["alloy"].get("busbw_gbs") or 0) if best else 0
    perftest = number(ceiling)
    if perftest is None:
        out.append(f"{label}alloy/ucx_perftest  n/a: {ceiling}")
    elif measured and perftest > 0:
        out.append(f"{label}alloy/ucx_perftest  {gbs / perftest:5.2f}x  alloy {gbs:.2f} GB/s to the other host at "
                   f"{human(best['size_bytes'])} (best of {band_text(measured)}) / ucx_perftest {perftest:.2f} GB/s; "
                   f"target >= {TARGET_CEILING}: {verdict(gbs / perftest, TARGET_CEILING, True)}")
    else:
        out.append(f"{label}alloy/ucx_perftest  n/a: " +
                   (why_missing(large, doc) if not measured else "ucx_perftest measured 0 GB/s"))
    both_ways = number(both_ways) or 0
    if measured and both_ways > 0:
        out.append(f"{label}alloy/ucx both ways {gbs / both_ways:5.2f}x  alloy {gbs:.2f} GB/s / UCX's own "
                   f"{both_ways:.2f} GB/s per direction with both directions at once, one worker per process "
                   f"(no target)")
    return out


args = sys.argv[1:]
for i in range(0, len(args) - 4, 5):
    name, tls, path, ceiling, both_ways = args[i:i + 5]
    if not os.path.exists(path):
        print(f"UCX_TLS={tls}: no alloy-perf results ({os.path.basename(path)} missing)")
        continue
    with open(path) as f:
        doc = json.load(f)
    nccl = doc.get("nccl") or {}
    version = nccl.get("version")
    if isinstance(version, int) and version >= 10000:  # NCCL_VERSION_CODE: 22809 is 2.28.9
        version = f"{version // 10000}.{version % 10000 // 100}.{version % 100}"
    nccl_text = (f"NCCL {version}" if nccl.get("loaded") else "no NCCL: " + (nccl.get("reason") or "not loaded"))
    complete = "" if doc.get("complete") else ", run cut short: rows measured so far"
    layout = os.environ.get("HOSTS_PERF_LAYOUT", "2h")
    print(f"UCX_TLS={tls} ({doc.get('nranks')} ranks, virtual hosts {layout}; {nccl_text}{complete}):")
    if doc.get("alloy_unavailable"):
        print(f"  alloy unavailable: {doc['alloy_unavailable'].strip()}")
    ops = list(dict.fromkeys(r["op"] for r in doc.get("rows", [])))  # in the order they ran
    if not ops:
        print("  no rows")
    for op in ops:
        rows = [r for r in doc.get("rows", []) if r["op"] == op]
        for line in ratios(op, rows, doc, ceiling, both_ways):
            print(line)
PY
}

# The benchmark: ucx_perftest's ceiling, then alloy-perf with NCCL, per transport.
hosts_bench_lines=()
hosts_bench() {
  local perftest="${UCXWHEEL_PERFTEST:-}" tlsname tls port=${HOSTS_PERFTEST_PORT:-13350} gbs both outcome
  [ -x "$perftest" ] || perftest=$(command -v ucx_perftest || true)
  local ratio_args=()
  PERF_BIN=$(perf_bin)
  for tlsname in ${HOSTS_PERF_TLS:-tcp shm}; do
    tls=$(hosts_tls "$tlsname")
    if [ "${HOSTS_PERF_CEILING:-1}" = 0 ]; then
      hosts_bench_lines+=("ucx_perftest and ucx-both-ways UCX_TLS=$tls: not run (HOSTS_PERF_CEILING=0)")
      ratio_args+=("$tlsname" "$tls" "$RESULTS/hosts-perf-${tlsname//[^A-Za-z0-9]/_}.json" "not measured (HOSTS_PERF_CEILING=0)" "")
      continue
    elif [ -z "$perftest" ]; then
      gbs="no ucx_perftest (neither the wheel's nor on PATH)"
    else
      gbs=$(hosts_perftest "$tlsname" "$tls" "$port" "$perftest")
      port=$((port + 1))
      [ -n "$gbs" ] || gbs="ucx_perftest gave no bandwidth (see hosts-perftest-${tlsname//[^A-Za-z0-9]/_}.log)"
    fi
    hosts_bench_lines+=("ucx_perftest tag_bw UCX_TLS=$tls: $( [[ $gbs =~ ^[0-9.]+$ ]] && echo "$gbs GB/s" || echo "$gbs")")
    both=$(hosts_both_ways "$tlsname" "$tls")
    if [ -n "$both" ]; then
      hosts_bench_lines+=("ucx-both-ways UCX_TLS=$tls: one way ${both% *} GB/s, both ways ${both#* } GB/s per direction")
    else
      hosts_bench_lines+=("ucx-both-ways UCX_TLS=$tls: no bandwidth (see hosts-both-ways-${tlsname//[^A-Za-z0-9]/_}.log)")
    fi
    ratio_args+=("$tlsname" "$tls" "$RESULTS/hosts-perf-${tlsname//[^A-Za-z0-9]/_}.json" "$gbs" "${both#* }")
  done
  for tlsname in ${HOSTS_PERF_TLS:-tcp shm}; do
    tls=$(hosts_tls "$tlsname")
    rm -f "$RESULTS/hosts-perf-${tlsname//[^A-Za-z0-9]/_}.json"
    if [ -z "$PERF_BIN" ]; then
      outcome="not run (alloy-perf was not built)"
    else
      outcome=$(hosts_perf_run "$tlsname" "$tls")
    fi
    case $outcome in ok | "not run"*) ;; *) hosts_bad=1 ;; esac
    hosts_bench_lines+=("alloy-perf UCX_TLS=$tls: $outcome")
  done
  hosts_ratio_text=$(hosts_ratios "${ratio_args[@]}" 2>&1)
}

mode_hosts() {
  local native_filter=${HOSTS_NATIVE_FILTER:-$HOSTS_NATIVE_DEFAULT} mpix_filter=${HOSTS_MPIX_FILTER:-$HOSTS_MPIX_DEFAULT}
  local runs=${HOSTS_RUNS:-$HOSTS_RUNS_DEFAULT} run layout tlsname
  # Check the list before spending time on the build.
  for run in $runs; do
    layout=${run%%:*} tlsname=${run#*:}
    if [ "$layout" = "$run" ] || [ -z "$tlsname" ] || [ -z "$(hosts_map "$layout")" ]; then
      hosts_fail "HOSTS_RUNS: '$run' is not LAYOUT:TLS (layouts: 2h 3h 4h 2x2 2+1 or a map such as 0,0,1; TLS: tcp, shm or a UCX_TLS value)"
    fi
  done
  hosts_setup_ucx
  # pkg-config's answer is cached in the build folder: look it up afresh, so that a folder configured
  # before (without UCX, or with another) takes the UCX chosen now.
  configure_args=(-U 'UCX_*' -U 'pkgcfg_lib_UCX_*' -U '__pkg_config_checked_UCX' -U '__pkg_config_arguments_UCX')
  build alloy_gpu_tests alloy_mpix_gpu_tests alloy-perf ucx-both-ways
  hosts_check_ucx_build
  find_gpus
  find_nccl
  start_budget "${HOSTS_BUDGET:-500}"
  # The test runs leave this much of the budget to the benchmark, when it runs.
  hosts_reserve=0
  [ "${HOSTS_PERF:-1}" = 1 ] && hosts_reserve=${HOSTS_PERF_RESERVE:-360}
  for run in $runs; do
    layout=${run%%:*} tlsname=${run#*:}
    hosts_run "$layout" "$tlsname" native "$NATIVE_BIN" "$native_filter"
    hosts_run "$layout" "$tlsname" mpix "$MPIX_BIN" "$mpix_filter"
  done
  hosts_reserve=0
  hosts_ratio_text="(not run)"
  if [ "${HOSTS_PERF:-1}" = 1 ]; then
    hosts_bench
  fi

  local row
  {
    echo
    echo "==== gpu-check hosts summary ===="
    echo "machine: $NGPU x $gpu_name; ranks share the GPU(s), split into virtual hosts by ALLOY_HOSTID; ${hosts_env[*]}"
    echo "UCX: $ucx_source; build: $build_status; $ucx_build"
    echo "NCCL: $( [ "$nccl_found" = 1 ] && echo "${ALLOY_PERF_NCCL_LIB:-libnccl.so.2 (loader path)}" || echo "not found: no NCCL columns, no Alloy/NCCL ratios")"
    echo "native filter: $native_filter"
    echo "mpix filter:   $mpix_filter"
    printf '%-5s %-9s %-17s %-6s %5s %6s %6s  %-30s %6s\n' layout "[hosts]" UCX_TLS suite tests passed failed status time
    for row in "${hosts_rows[@]}"; do echo "$row"; done
    for row in "${hosts_bench_lines[@]}"; do echo "$row"; done
    echo "ratios (targets: small time <= 0.25 of NCCL's, busbw >= 1.5x NCCL's, >= 0.8 of ucx_perftest's bandwidth):"
    echo "$hosts_ratio_text"
    result_line "$hosts_bad" "$hosts_not_run" "the status column and $RESULTS/hosts-*.log" HOSTS_BUDGET
    echo "results: $RESULTS"
  } | tee "$RESULTS/summary.txt"
  [ "$hosts_bad" -eq 0 ]
}

# ---------------------------------------------------------------------------------------------------
# overlap: a compute load beside a collective between virtual hosts, Alloy against NCCL's socket path
# (issue #12: data-only operations wait on the network without holding SMs). Reuses the hosts mode's UCX,
# build check, wrapper and alloy-perf job.

# The summary table from the jobs' JSON files: per layout, collective and size, the compute load's slowdown
# beside Alloy and beside NCCL, and each collective's bus bandwidth beside the load. Arguments: pairs of
# layout name and JSON file.
overlap_table() {
  python3 - "$@" <<'PY'
import json
import os
import sys


def human(n):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def beside(m, key, fmt):
    """A number of a library's overlap record, or why there is none."""
    if not m:
        return "-"
    if m.get("status") != "ok":
        return "not supp."
    o = m.get("overlap")
    return fmt.format(o[key]) if o and o.get(key) is not None else "-"


args = sys.argv[1:]
docs = []  # (layout, document or the reason there is none)
for i in range(0, len(args) - 1, 2):
    layout, path = args[i:i + 2]
    if os.path.exists(path):
        with open(path) as f:
            docs.append((layout, json.load(f)))
    else:
        docs.append((layout, f"no results ({os.path.basename(path)} missing)"))
load = next((d["overlap"] for _, d in docs if isinstance(d, dict) and d.get("overlap")), None)
if load:
    print(f"load: {load['kernels']} launches x {load['blocks']} blocks x {load['threads']} threads, "
          f"{load['calibrated_ms']:.1f} ms alone (target {load['target_ms']} ms); slowdown = the load's time "
          f"with the collective looping beside it / alone, median of {load['reps']}, max over ranks")
print(f"{'layout':<7} {'op':<10} {'size':>8}  {'alloy slowdown':>14}  {'nccl slowdown':>13}  "
      f"{'alloy busbw beside':>18}  {'nccl busbw beside':>17}")
for layout, doc in docs:
    if not isinstance(doc, dict):
        print(f"{layout:<7} {doc}")
        continue
    nccl = doc.get("nccl") or {}
    if not nccl.get("loaded"):
        print(f"{layout:<7} no NCCL: {nccl.get('reason', 'not loaded')}")
    if not doc.get("complete"):
        print(f"{layout:<7} run cut short: the rows measured so far")
    for r in doc.get("rows", []):
        a, n = r.get("alloy"), r.get("nccl")
        print(f"{layout:<7} {r['op']:<10} {human(r['size_bytes']):>8}  "
              f"{beside(a, 'slowdown', '{:.3f}x'):>14}  {beside(n, 'slowdown', '{:.3f}x'):>13}  "
              f"{beside(a, 'busbw_gbs', '{:.2f} GB/s'):>18}  {beside(n, 'busbw_gbs', '{:.2f} GB/s'):>17}")
PY
}

mode_overlap() {
  local layouts=${OVERLAP_LAYOUTS:-2h 2x2} tlsname=${OVERLAP_TLS:-tcp} layout map tls
  for layout in $layouts; do
    [ -n "$(hosts_map "$layout")" ] ||
      hosts_fail "OVERLAP_LAYOUTS: '$layout' is not a layout (2h 3h 4h 2x2 2+1 or a map such as 0,0,1,1)"
  done
  tls=$(hosts_tls "$tlsname")
  hosts_setup_ucx
  # As in hosts mode: pkg-config's answer is looked up afresh in the build folder.
  configure_args=(-U 'UCX_*' -U 'pkgcfg_lib_UCX_*' -U '__pkg_config_checked_UCX' -U '__pkg_config_arguments_UCX')
  build alloy-perf
  PERF_BIN=$(perf_bin)
  [ -n "$PERF_BIN" ] || hosts_fail "alloy-perf was not built in $BUILD_DIR"
  hosts_check_ucx_build "$PERF_BIN"
  find_gpus
  find_nccl
  start_budget "${OVERLAP_BUDGET:-170}"
  local args=(-o "${OVERLAP_OPS:-alltoallv,alltoall}" -b "${OVERLAP_MINBYTES:-64K}" -e "${OVERLAP_MAXBYTES:-64M}"
              -f "${OVERLAP_FACTOR:-4}" -w "${OVERLAP_WARMUP:-2}" -n "${OVERLAP_ITERS:-10}" -O "${OVERLAP_MS:-20}"
              --overlap_reps "${OVERLAP_REPS:-5}" --overlap_kernels "${OVERLAP_KERNELS:-100}" --compare nccl)
  [ "${OVERLAP_CHECK:-1}" = 1 ] && args+=(-c)
  local outcomes=() table_args=() base outcome bad=0 not_run=0
  for layout in $layouts; do
    map=$(hosts_map "$layout")
    base="$RESULTS/overlap-${layout//[^A-Za-z0-9]/_}-${tlsname//[^A-Za-z0-9]/_}"
    rm -f "$base.json"
    outcome=$(hosts_alloy_perf "$base" "$tls" "$map" "${OVERLAP_TIMEOUT:-100}" "${args[@]}")
    case $outcome in ok) ;; "not run"*) not_run=$((not_run + 1)) ;; *) bad=1 ;; esac
    outcomes+=("alloy-perf $layout [$map]: $outcome")
    table_args+=("$layout" "$base.json")
  done

  local row nccl_line="not found: no NCCL columns"
  [ "$nccl_found" = 1 ] && nccl_line="${ALLOY_PERF_NCCL_LIB:-libnccl.so.2 (loader path)}, socket transport over lo,\
 NCCL_HOSTID per virtual host (per rank where a host has several ranks)"
  {
    echo
    echo "==== gpu-check overlap summary ===="
    echo "machine: $NGPU x $gpu_name; ranks share the GPU(s), split into virtual hosts by ALLOY_HOSTID; ${hosts_env[*]} UCX_TLS=$tls"
    echo "UCX: $ucx_source; build: $build_status; $ucx_build"
    echo "NCCL: $nccl_line"
    echo "alloy-perf ${args[*]}"
    for row in "${outcomes[@]}"; do echo "$row"; done
    overlap_table "${table_args[@]}" 2>&1
    result_line "$bad" "$not_run" "$RESULTS/overlap-*.log" OVERLAP_BUDGET
    echo "results: $RESULTS"
  } | tee "$RESULTS/summary.txt"
  [ "$bad" -eq 0 ]
}

# ---------------------------------------------------------------------------------------------------

case $MODE in
  check) mode_check ;;
  stress) mode_stress ;;
  sanitize) mode_sanitize ;;
  hosts) mode_hosts ;;
  overlap) mode_overlap ;;
  python)
    # shellcheck source=scripts/gpu-check-python.sh
    source scripts/gpu-check-python.sh
    mode_python
    ;;
  nccl | versus)
    # From the repository's root (the cd above): the script's own path may be relative to another folder.
    # shellcheck source=scripts/gpu-check-nccl.sh
    source scripts/gpu-check-nccl.sh
    if [ "$MODE" = nccl ]; then
      mode_nccl
    else
      # versus mode uses the nccl mode's nccl-tests helpers.
      # shellcheck source=scripts/gpu-check-versus.sh
      source scripts/gpu-check-versus.sh
      mode_versus
    fi
    ;;
esac
