# shellcheck shell=bash
# The nccl mode of scripts/gpu-check.sh (sourced by it after gpu-check-common.sh, and by the versus mode;
# uses the common build, find_gpus, run_bounded, budget and log helpers): Alloy's libnccl.so.2 under the programs it exists for (issue #16, docs/nccl-compat.md),
# ranks sharing the GPU(s):
#   1. build Alloy with libnccl.so.2 made from the nvidia-nccl wheel's nccl.h, and its ctests (-R nccl);
#   2. nccl-tests, built from NVIDIA's public source in .thirdparty/nccl-tests (not part of Alloy: fetch it
#      there and carry it; version 2.17.10, commit c379e19, the last whose alltoall builds against NCCL
#      2.28.9's nccl_device.h: later ones use the device API of 2.29), with MPI, against Alloy's library,
#      every operation with -c 1 (#wrong must be 0);
#   3. torch.distributed, a ctypes wrapper opening the library by path inside a CUDA graph, CuPy's
#      NcclCommunicator and NVIDIA's nccl4py (its wheels carried in .whl/nccl4py/) (tests/nccl_frameworks),
#      each preloading Alloy's library;
#   4. where UCX is there to build with (the libucx-cu13 wheel in .whl/, as hosts mode takes it), the
#      torch test and nccl-tests' alltoall, all_reduce and sendrecv again on 4 ranks as 2 virtual hosts x 2
#      ranks (ALLOY_HOSTID = rank % 2, so a host's ranks are not contiguous) over UCX tcp;
# then a table of each run and its counts.

# What the runs of step 4 add to every launch: mpirun options, a wrapper before the program, and a tag
# in their names. Empty for the runs inside one host.
launch_env=()
launch_wrap=()
launch_tag=

# nccl.h of the wheel PyTorch uses on the GPU machines, else nothing (CMake then searches itself).
nccl_wheel_include() {
  local dir
  for dir in /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/include; do
    [ -f "$dir/nccl.h" ] && { echo "$dir"; return; }
  done
}

# The folder $1 laid out as nccl-tests' NCCL_HOME expects (include/, lib/libnccl.so), from the headers in $2
# and the libnccl.so* of the folder $3: nccl-tests then links and runs against that library. Every header of
# the wheel goes in, nccl_device.h too: the CUDA toolkit of the GPU machines carries an older nccl_device.h
# that nccl-tests would find otherwise. The wheel has no libnccl.so for the linker: it gets one.
nccl_home() {
  local home=$1 include=$2 libdir=$3
  rm -rf "$home" && mkdir -p "$home/include" "$home/lib" || return 1
  ln -s "$include"/* "$home/include/"
  ln -s "$(cd "$libdir" && pwd)"/libnccl.so* "$home/lib/"
  [ -e "$home/lib/libnccl.so" ] || ln -s libnccl.so.2 "$home/lib/libnccl.so"
  echo "$home"
}

# The same whose library is Alloy's.
nccl_home_of_alloy() { nccl_home "$RESULTS/nccl-home" "$1" "$BUILD_DIR/nccl"; }

# Builds nccl-tests (NVIDIA's source in .thirdparty/nccl-tests) with MPI for sm_90 against the NCCL_HOME
# folder $1, into the folder $2 (make's BUILDDIR; absolute: nccl-tests' make runs in its own folder), its
# output into the log $3.
nccl_tests_build() {
  local home=$1 dir=$2 logfile=$3 mpi_home
  mpi_home=$(dirname "$(mpicc --showme:incdirs | tr ' ' '\n' | grep -m1 include)")
  make -C .thirdparty/nccl-tests -j "$(nproc)" MPI=1 MPI_HOME="$mpi_home" NCCL_HOME="$home" CUDA_HOME=/usr/local/cuda \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$dir" >"$logfile" 2>&1
}

# One line per nccl-tests binary: its outcome, the wrong count from every data row, the average busbw.
nccl_tests_run() {
  local bin=$1 np=$2 rc=0
  local logfile
  logfile=$RESULTS/nccl-tests-$(basename "$bin")-np$np${launch_tag// /-}.log
  # launch_env first: its -x LD_LIBRARY_PATH (the UCX wheel's) would otherwise replace the one that puts
  # Alloy's library ahead of the machine's own libnccl.so.2 (mpirun keeps the last -x of a name).
  run_bounded "$(run_limit "${NCCL_TESTS_TIMEOUT:-60}")" "$logfile" "${test_mpirun[@]}" -np "$np" \
    "${launch_env[@]}" -x NCCL_TESTS_DEVICE=0 -x LD_LIBRARY_PATH="$BUILD_DIR/nccl:${LD_LIBRARY_PATH:-}" \
    -x NCCL_NVLS_ENABLE=0 "${launch_wrap[@]}" "$bin" -b 8 -e "${NCCL_TESTS_MAXBYTES:-16M}" -f 8 -g 1 -c 1 -w 2 -n 5 || rc=$?
  # Data rows: size, count, type, redop, root, then out-of-place and in-place (time, algbw, busbw,
  # #wrong) each; a wrong column may read N/A where a test has no in-place form.
  local rows wrong
  rows=$(grep -cE '^ +[0-9]+ +[0-9]+ ' "$logfile")
  wrong=$(awk '/^ +[0-9]+ +[0-9]+ / { for (i = 6; i <= NF; i++) if ((i - 5) % 4 == 0 && $i ~ /^[0-9]+$/) s += $i }
               END { print s + 0 }' "$logfile")
  local status=ok
  grep -q 'Out of bounds values : 0 OK' "$logfile" || status=FAILED
  [ "$rc" -ne 0 ] && status="FAILED (exit $rc)"
  [ "$rows" -eq 0 ] && status="NO DATA ROWS"
  [ "$wrong" -ne 0 ] && status=FAILED
  printf '%-26s np %d  %-18s rows %3d  #wrong %d  %s\n' "$(basename "$bin")$launch_tag" "$np" "$status" "$rows" "$wrong" \
    "$(grep -o 'Avg bus bandwidth *: *[0-9.]*' "$logfile" | sed 's/ *: */ /')"
  [ "$status" = ok ]
}

# A folder holding NVIDIA's nccl4py for python3, installed into the folder $1 from the wheels carried in
# .whl/nccl4py/ (the GPU machines cannot reach PyPI): nccl4py itself, and each of its dependencies
# (cuda-core, cuda-pathfinder, cuda-bindings) only where python3 lacks it. Fails without the wheels.
nccl4py_site() {
  local site=$1 wheel module wheels=()
  shopt -s nullglob
  for wheel in .whl/nccl4py/*.whl; do
    module=$(basename "$wheel" | cut -d- -f1 | tr _ .)  # cuda_core -> cuda.core, nccl4py -> nccl4py
    [ "$module" = nccl4py ] || ! python3 -c "import $module" 2>/dev/null || continue
    wheels+=("$wheel")
  done
  shopt -u nullglob
  [ ${#wheels[@]} -gt 0 ] && python3 -m pip install --no-index --no-deps --target "$site" "${wheels[@]}" \
    >"$RESULTS/nccl4py-install.log" 2>&1 && echo "$site"
}

# One framework test under mpirun: its closing lines' counts over the ranks and its outcome.
framework_run() {
  local name=$1$launch_tag np=$2 logfile=$RESULTS/frameworks-$1-np$2${launch_tag// /-}.log rc=0
  shift 2
  # Options of mpirun first (-x ...), then the program: the wrapper goes between them.
  local options=() program=()
  while [ $# -gt 0 ] && [ "$1" = -x ]; do options+=("$1" "$2"); shift 2; done
  program=("$@")
  run_bounded "$(run_limit "${FRAMEWORK_TIMEOUT:-120}")" "$logfile" "${test_mpirun[@]}" -np "$np" \
    -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$((29500 + RANDOM % 1000)) -x NCCL_NVLS_ENABLE=0 \
    -x PATH "${options[@]}" "${launch_env[@]}" "${launch_wrap[@]}" "${program[@]}" || rc=$?
  local passed failed
  passed=$(grep -oE ': [0-9]+ passed' "$logfile" | awk '{ s += $2 } END { print s + 0 }')
  failed=$(grep -oE ', [0-9]+ failed' "$logfile" | awk '{ s += $2 } END { print s + 0 }')
  local status=ok
  [ "$rc" -ne 0 ] && status="FAILED (exit $rc)"
  [ "$failed" -ne 0 ] && status=FAILED
  [ "$passed" -eq 0 ] && status="${status/ok/NO CHECKS}"
  printf '%-26s np %d  %-18s checks passed %d, failed %d (summed over ranks)\n' "$name" "$np" "$status" "$passed" "$failed"
  [ "$status" = ok ]
}

mode_nccl() {
  find_gpus
  # UCX for step 4, from the wheel as hosts mode takes it; the runs then need its libraries and modules.
  local wheels=() have_ucx=0
  shopt -s nullglob
  wheels=(.whl/libucx_cu13-*.whl)
  shopt -u nullglob
  # shellcheck disable=SC1091  # checked on its own
  if [ ${#wheels[@]} -eq 1 ] && source scripts/ucx-wheel.sh "${wheels[0]}"; then
    have_ucx=1
    launch_env=(-x LD_LIBRARY_PATH -x UCX_MODULE_DIR)
  fi
  local include
  include=$(nccl_wheel_include)
  [ -n "$include" ] && configure_args+=("-DALLOY_NCCL_INCLUDE_DIR=$include")
  build
  local lib=$BUILD_DIR/nccl/libnccl.so.2
  [ -e "$lib" ] || { log "no $lib after the build: was nccl.h found? (see $RESULTS/configure.log)"; exit 1; }
  lib=$(cd "$(dirname "$lib")" && pwd)/libnccl.so.2
  start_budget "${NCCL_BUDGET:-420}"
  local bad=0 lines=()

  local ctest_rc=0
  timeout "$(run_limit 120)" ctest --test-dir "$BUILD_DIR" -R nccl --output-on-failure >"$RESULTS/nccl-ctest.log" 2>&1 ||
    ctest_rc=$?
  lines+=("ctest -R nccl: $(grep -E 'tests passed|tests failed' "$RESULTS/nccl-ctest.log" | tail -1) (exit $ctest_rc)")
  [ "$ctest_rc" -ne 0 ] && bad=1

  local tests_src=.thirdparty/nccl-tests home bin
  if [ -f "$tests_src/src/Makefile" ] && [ -n "$include" ]; then
    home=$(nccl_home_of_alloy "$include")
    if nccl_tests_build "$home" "$(pwd)/$tests_src/build" "$RESULTS/nccl-tests-build.log"; then
      for bin in "$tests_src"/build/*_perf; do
        lines+=("$(nccl_tests_run "$bin" "${NCCL_TESTS_NP:-2}" || echo BAD)")
      done
      # What the runs load: ldd with the runs' library path (the machine has a system libnccl.so.2 too).
      lines+=("nccl-tests load: $(LD_LIBRARY_PATH="$BUILD_DIR/nccl:${LD_LIBRARY_PATH:-}" ldd "$tests_src/build/all_reduce_perf" |
        grep -o 'libnccl.so.2 => [^ ]*')")
    else
      lines+=("nccl-tests: build FAILED (see $RESULTS/nccl-tests-build.log)")
      bad=1
    fi
  else
    lines+=("nccl-tests: not run (put NVIDIA's nccl-tests source in $tests_src and carry it)")
  fi

  local py=tests/nccl_frameworks
  lines+=("$(framework_run torch 2 -x LD_PRELOAD="$lib" python3 "$py/torch_distributed.py" || echo BAD)")
  lines+=("$(framework_run torch 4 -x LD_PRELOAD="$lib" python3 "$py/torch_distributed.py" || echo BAD)")
  lines+=("$(framework_run ctypes 2 python3 "$py/ctypes_graph.py" "$lib" || echo BAD)")
  lines+=("$(framework_run cupy 2 -x LD_PRELOAD="$lib" python3 "$py/cupy_comm.py" || echo BAD)")
  # One process driving every GPU (ncclCommInitAll, groups of several communicators; issue #34).
  [ "$NGPU" -ge 2 ] && lines+=("$(framework_run cupy-initAll 1 -x LD_PRELOAD="$lib" python3 "$py/cupy_init_all.py" ||
    echo BAD)")
  if ! python3 -c "import jax" 2>/dev/null; then
    lines+=("jax: not run (python3 has no jax)")
  elif [ "$NGPU" -ge 2 ]; then
    lines+=("$(framework_run jax 1 -x LD_PRELOAD="$lib" python3 "$py/jax_collectives.py" || echo BAD)")
  fi
  local n4p_site
  if n4p_site=$(nccl4py_site "$RESULTS/nccl4py"); then
    lines+=("$(framework_run nccl4py 2 -x LD_PRELOAD="$lib" -x PYTHONPATH="$n4p_site" python3 "$py/nccl4py_comm.py" ||
      echo BAD)")
    [ "$NGPU" -ge 4 ] && lines+=("$(framework_run nccl4py 4 -x LD_PRELOAD="$lib" -x PYTHONPATH="$n4p_site" python3 \
      "$py/nccl4py_comm.py" || echo BAD)")
  else
    lines+=("nccl4py: not run (put its wheels in .whl/nccl4py/: docs/nccl-compat.md)")
  fi

  if [ "$have_ucx" = 1 ] && grep -q 'UCX ON' "$RESULTS/configure.log"; then
    launch_env+=(-x ALLOY_NET=ucx -x UCX_TLS=tcp -x ALLOY_TIMEOUT_MS=30000)
    # shellcheck disable=SC2016  # expanded by each rank's shell
    launch_wrap=(bash -c 'export ALLOY_HOSTID=vhost$((OMPI_COMM_WORLD_RANK % 2)); exec "$@"' sh)
    launch_tag=" 2x2 hosts"
    lines+=("$(framework_run torch 4 -x LD_PRELOAD="$lib" python3 "$py/torch_distributed.py" || echo BAD)")
    if [ -x "$tests_src/build/alltoall_perf" ]; then
      for bin in alltoall all_reduce sendrecv; do
        lines+=("$(nccl_tests_run "$tests_src/build/${bin}_perf" 4 || echo BAD)")
      done
    fi
  else
    lines+=("between virtual hosts: not run (no UCX to build with: put pip's libucx-cu13 wheel in .whl/)")
  fi

  local line
  for line in "${lines[@]}"; do
    case $line in *BAD | *FAILED* | *"NO "*) bad=1 ;; esac
  done
  {
    echo
    echo "==== gpu-check nccl summary ===="
    echo "machine: $NGPU x $gpu_name; $(rank_placement "${NCCL_TESTS_NP:-2}" 4); library: $lib"
    echo "nccl.h: ${include:-searched by CMake}"
    for line in "${lines[@]}"; do echo "${line%BAD}"; done
    result_line "$bad" 0 "$RESULTS/nccl-*.log $RESULTS/frameworks-*.log" NCCL_BUDGET
    echo "results: $RESULTS"
  } | tee "$RESULTS/summary.txt"
  [ "$bad" -eq 0 ]
}
