#!/usr/bin/env bash
# Builds Alloy and checks it on the GPUs of this machine, in one of nine modes. Every mode writes its
# logs into $OUT (default ./results), prints its summary last (also kept as summary.txt), and without a
# GPU builds (nccl, versus and osu modes do not), says "skipped: no CUDA device" and exits 0. Run from anywhere
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
#                                       torch.distributed, a ctypes wrapper in a CUDA graph and CuPy on it,
#                                       CuPy's initAll and JAX in one process over every GPU
#                                       (tests/nccl_frameworks); scripts/gpu-check-nccl.sh
#   bash scripts/gpu-check.sh versus    NVIDIA's nccl-tests built once against NVIDIA's NCCL (the wheel), every
#                                       operation run on it and then on Alloy's libnccl.so.2 (LD_LIBRARY_PATH
#                                       picks the library), one rank per GPU, -c 1; alltoallv with alloy-perf
#                                       against NCCL; one allreduce per CUDA graph replay on both
#                                       (tests/nccl_frameworks/graph_allreduce_time.py); the GPUs' link
#                                       ceiling (tools/link-ceiling) and the host's time per small call
#                                       (tools/host-cost); per operation a table, the worst
#                                       Alloy/NCCL ratio of each size class against its target, the large
#                                       class against the ceiling, and a plot (scripts/versus-table.py); the
#                                       logs packed in one tarball;
#                                       scripts/gpu-check-versus.sh
#   bash scripts/gpu-check.sh osu       the OSU micro-benchmarks' allreduce, bcast, allgather and alltoallv
#                                       (their 5.7 release, unpacked in .thirdparty/osu-micro-benchmarks,
#                                       carried) on device buffers through liballoy_mpi.so preloaded, on
#                                       host buffers through the MPI library alone, beside alloy-perf
#                                       --blocking for Alloy's and NCCL's own calls; a table per collective
#                                       and the layer's cost over Alloy's call (scripts/gpu-check-osu.sh)
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
#   STRESS_RUN_TIMEOUT        seconds one suite run (all its repetitions) may take (default 20 per repetition, at least 240)
#   STRESS_BUDGET             seconds all runs together may take after the build (default 480); runs
#                             that no longer fit are reported as not run
# sanitize mode:
#   SANITIZE_TOOLS            compute-sanitizer tools, in order (default "memcheck racecheck synccheck")
#   SANITIZE_RANKS            ranks (default 2)
#   SANITIZE_FILTER           --gtest_filter for alloy_gpu_tests (default: the *.BothProtocols tests, the windows tests, broadcast)
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
#   VERSUS_CYCLES             nccl-tests cycles over the sizes (-N, default 2); the table takes the last one
#   VERSUS_ENV                Alloy's settings in every Alloy run, VAR=value separated by spaces (e.g.
#                             "ALLOY_CHANNELS=18"); NCCL's runs never get them
#   VERSUS_ALLOY_VARIANTS     more Alloy configurations for A/B runs of one build, ';' separated, each VAR=value
#                             words added to VERSUS_ENV (e.g. "ALLOY_CHANNELS=18;ALLOY_CHANNELS=32"): each runs
#                             all that Alloy runs once more, as alloy-v1, alloy-v2... (default none)
#   VERSUS_TIMEOUT            seconds of each run (default 90)
#   VERSUS_BUDGET             seconds all runs together may take after the builds (default 420); the
#                             nccl-tests runs keep 20 s + 40 s per Alloy configuration for the runs after them,
#                             at most half of what is left when they start
#   VERSUS_PROFILE            1: then nsys (every rank) over Alloy's all_reduce at 512 MB and 1 MB and
#                             broadcast at 128 MB, and ncu (rank 0) over its all_reduce at 512 MB, where found,
#                             within VERSUS_BUDGET; kernel summaries in prof-summary.txt (default 0)
#   VERSUS_NCU_KERNELS        ncu's -k (default regex:directKernel|reduceKernel|slotReduceKernel|p2pKernel)
#   VERSUS_HOSTS              a layout of the hosts mode (2h, 4h, 2x2, ...; one rank per GPU): every run crosses
#                             virtual hosts, NCCL over its socket transport on loopback, Alloy over UCX (the
#                             wheel in .whl/), judged by issue #36's targets; no link ceiling or host-cost,
#                             tools/net-stages instead, once per Alloy configuration (default: one host)
#   VERSUS_HOSTS_TLS          Alloy's UCX transport there, as in HOSTS_RUNS (default tcp)
#   VERSUS_STAGES_BYTES       net-stages' sizes there, space separated (default "8 8192")
# osu mode (also ALLOY_PERF_NCCL_LIB as in check mode):
#   OSU_BENCHMARKS            OSU collectives, space separated (default "osu_allreduce osu_bcast osu_allgather
#                             osu_alltoallv")
#   OSU_MINBYTES, OSU_MAXBYTES  OSU's -m MIN:MAX (default 8, 1048576; per rank for allgather and alltoallv)
#   OSU_ITERS, OSU_WARMUP     OSU's -i and -x, and alloy-perf's -n and -w (default 1000, 100)
#   OSU_COST_MAXBYTES         largest size at which the layer's cost is held to 3 us (default 65536)
#   OSU_TIMEOUT               seconds of each run (default 120)
#   LAYER_COST_ROUNDS         rounds of tools/layer-cost, each OSU_ITERS calls of either side (default 21)
#   OSU_BUDGET                seconds all runs together may take after the builds (default 400)
set -uo pipefail

usage() { sed -n '2,/^set -uo pipefail/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

MODE=${1:-check}
case $MODE in
  check | stress | sanitize | hosts | overlap | nccl | versus | osu | python) ;;
  -h | --help | help) usage; exit 0 ;;
  *) echo "gpu-check: unknown mode '$MODE' (check, stress, sanitize, hosts, overlap, nccl, versus, osu or python)" >&2
     exit 2 ;;
esac

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
RESULTS=${OUT:-./results}
mkdir -p "$RESULTS" && RESULTS=$(cd "$RESULTS" && pwd) || exit 1
BUILD_DIR=${BUILD_DIR:-build-gpu}

# Every mode is a file of its own, scripts/gpu-check-MODE.sh, defining mode_MODE (and sourcing any other
# mode's file it builds on), over the helpers of scripts/gpu-check-common.sh. A new mode: its file, its
# name in the list above, and its paragraph in this usage text.
# shellcheck source=scripts/gpu-check-common.sh
source scripts/gpu-check-common.sh
# shellcheck disable=SC1090
source "scripts/gpu-check-$MODE.sh"
"mode_$MODE"
