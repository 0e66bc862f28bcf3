# shellcheck shell=bash
# The osu mode of scripts/gpu-check.sh (sourced by it after gpu-check-common.sh; uses the common find_gpus,
# find_nccl, build, perf_bin, start_budget, run_limit, run_bounded, result_line, fail_mode, log and
# test_mpirun): the OSU micro-benchmarks' collectives through the layer of standard calls
# (liballoy_mpi.so, docs/mpi-layer.md; issue #37), one rank per GPU:
#   1. liballoy_mpi.so and alloy-perf built, nothing else; the OSU micro-benchmarks from their public
#      release (5.7, which builds against CUDA 13; the GPU machines cannot fetch it: unpack it into
#      .thirdparty/osu-micro-benchmarks and carry it) configured with --enable-cuda in $BUILD_DIR/osu;
#   2. per benchmark of OSU_BENCHMARKS: on device buffers (-d cuda) with the layer preloaded and its report
#      on (the report lists each MPI function's diverted and passed calls; -f: the fastest and the slowest
#      rank's average beside the ranks' mean, which shows a rank that lags), on host buffers through the MPI
#      library alone, and on host buffers with the layer preloaded (which passes them on after its
#      per-call vote: what the vote costs a host call on a machine with GPUs);
#   3. alloy-perf --blocking --compare nccl for the same collective and bytes: Alloy's own call and NCCL's,
#      each followed by a stream synchronisation and a barrier outside the clock, the ranks' average, as
#      OSU times a blocking MPI call (since session 13); OSU's alltoallv moves equal blocks, so beside it
#      stands alloy-perf's alltoallv with --uniform (equal counts; NCCL's grouped send/recv), the call the
#      layer makes (until session 16 alloy-perf's alltoall stood there, another engine at small sizes);
# then scripts/osu-table.py: a table per collective and the layer's cost over Alloy's own call at sizes up
# to OSU_COST_MAXBYTES, against issue #37's bound of 3 us. Separate runs drift (single sizes jumped by
# 8-11 us in session 19), so
#   4. tools/layer-cost times both sides again in one job, rounds of OSU_ITERS calls alternating the layer's
#      MPI_Alltoallv / MPI_Allreduce and Alloy's own call (LAYER_COST_ROUNDS, 21 by default), and judges
#      the bound on the median of the rounds' paired differences (its last line).

OSU_BENCHMARKS_DEFAULT="osu_allreduce osu_bcast osu_allgather osu_alltoallv"

# alloy-perf's collective beside an OSU benchmark, and how many of OSU's message sizes make its size:
# OSU's allgather and alltoallv sizes are one rank's block, alloy-perf's (nccl-tests') the whole buffer.
osu_native_op() {
  case $1 in
    osu_allreduce) echo allreduce ;;
    osu_bcast) echo broadcast ;;
    osu_allgather) echo allgather ;;
    osu_alltoallv) echo alltoallv ;;
  esac
}
osu_blocks() {
  case $1 in
    osu_allgather | osu_alltoallv) echo "$NGPU" ;;
    *) echo 1 ;;
  esac
}

# Configures and builds OSU's collectives from .thirdparty into $1 (log: logs/osu-build.log).
osu_build() {
  local src=$PWD/.thirdparty/osu-micro-benchmarks dir=$1 cuda=${CUDA_HOME:-/usr/local/cuda}
  [ -x "$src/configure" ] || return 2
  # A copy need not keep the release's times; where configure.ac looks newer than the generated files, make
  # reruns automake, which the GPU machines lack. One time for every file keeps the release as it is.
  find "$src" -exec touch -h -r "$src/configure" {} + || return 1
  mkdir -p "$dir" &&
    (cd "$dir" && "$src/configure" CC=mpicc CXX=mpicxx --enable-cuda --with-cuda="$cuda" &&
      make -j "$(nproc)" -C mpi/collective) >"$RESULTS/logs/osu-build.log" 2>&1
}

# One bounded run of the OSU mode: its name (logs/NAME.log) and the command after it. Appends its row.
osu_rows=()
osu_bad=0
osu_not_run=0
osu_run() {
  local name=$1 limit rc=0 status
  shift
  limit=$(run_limit "${OSU_TIMEOUT:-120}")
  if [ "$limit" -lt 10 ]; then
    osu_rows+=("$(printf '  %-34s %s' "$name" "NOT RUN (OSU_BUDGET spent)")")
    osu_not_run=$((osu_not_run + 1))
    return
  fi
  run_bounded "$limit" "$RESULTS/logs/$name.log" "$@" || rc=$?
  case $rc in
    0) status=ok ;;
    124 | 137) status="TIMEOUT after $limit s"; osu_bad=1 ;;
    *) status="FAILED (exit $rc)"; osu_bad=1 ;;
  esac
  osu_rows+=("$(printf '  %-34s %s' "$name" "$status")")
}

mode_osu() {
  find_gpus
  find_nccl
  mkdir -p "$RESULTS/logs"
  build alloy_mpi alloy-perf layer-cost
  local layer=$BUILD_DIR/mpi_layer/liballoy_mpi.so osu_dir=$BUILD_DIR/osu/mpi/collective perf
  local cost_bin=$BUILD_DIR/tools/layer-cost/layer-cost
  [ -x "$cost_bin" ] || fail_mode "$cost_bin was not built"
  [ -f "$layer" ] || fail_mode "$layer was not built"
  perf=$(perf_bin) || fail_mode "alloy-perf was not built"
  local rc=0
  osu_build "$BUILD_DIR/osu" || rc=$?
  [ "$rc" -eq 2 ] && fail_mode "no OSU source in .thirdparty/osu-micro-benchmarks (the 5.7 release, unpacked, with its configure; carry it)"
  [ "$rc" -ne 0 ] && fail_mode "OSU did not build (see $RESULTS/logs/osu-build.log)"

  local benchmarks=${OSU_BENCHMARKS:-$OSU_BENCHMARKS_DEFAULT} bench op blocks
  local min=${OSU_MINBYTES:-8} max=${OSU_MAXBYTES:-1048576} iters=${OSU_ITERS:-1000} warmup=${OSU_WARMUP:-100}
  local base=("${test_mpirun[@]}" -np "$NGPU" -x NCCL_NVLS_ENABLE=0)
  start_budget "${OSU_BUDGET:-400}"
  for bench in $benchmarks; do
    op=$(osu_native_op "$bench")
    [ -n "$op" ] || fail_mode "OSU_BENCHMARKS: no alloy-perf collective beside $bench"
    [ -x "$osu_dir/$bench" ] || fail_mode "$osu_dir/$bench was not built"
    osu_run "$bench-layer-np$NGPU" "${base[@]}" -x LD_PRELOAD="$PWD/$layer" -x ALLOY_MPI_LAYER_REPORT=1 \
      "$osu_dir/$bench" -d cuda -f -m "$min:$max" -i "$iters" -x "$warmup"
    osu_run "$bench-host-np$NGPU" "${base[@]}" "$osu_dir/$bench" -m "$min:$max" -i "$iters" -x "$warmup"
    osu_run "$bench-hostlayer-np$NGPU" "${base[@]}" -x LD_PRELOAD="$PWD/$layer" "$osu_dir/$bench" -m "$min:$max" \
      -i "$iters" -x "$warmup"
    blocks=$(osu_blocks "$bench")
    osu_run "$bench-native-np$NGPU" "${base[@]}" -x ALLOY_PERF_NCCL_LIB="${ALLOY_PERF_NCCL_LIB:-}" "$perf" -o "$op" \
      -b $((min * blocks)) -e $((max * blocks)) -f 2 -w "$warmup" -n "$iters" --blocking --uniform --compare nccl \
      --json "$RESULTS/logs/$bench-native-np$NGPU.json"
  done
  osu_run "layer-cost-np$NGPU" "${base[@]}" -x ALLOY_MPI_LAYER_REPORT=1 "$cost_bin" "${LAYER_COST_ROUNDS:-21}" "$iters"

  local table trc=0 row
  table=$(python3 scripts/osu-table.py --logs "$RESULTS/logs" --np "$NGPU" --benchmarks "$benchmarks" \
    --cost-maxbytes "${OSU_COST_MAXBYTES:-65536}" 2>&1) || trc=$?
  [ "$trc" -ne 0 ] && osu_bad=1
  # shellcheck disable=SC2154  # gpu_name, build_status: set by find_gpus and build (gpu-check-common.sh)
  {
    echo
    echo "==== gpu-check osu summary ===="
    echo "machine: $NGPU x $gpu_name; one rank per GPU; NCCL_NVLS_ENABLE=0"
    echo "build: $build_status; OSU micro-benchmarks" \
      "$(sed -n 's/.*OSU-Micro-Benchmarks configure \([0-9.]*\).*/\1/p' "$BUILD_DIR/osu/config.log" | head -1)"
    echo "runs: OSU -m $min:$max -i $iters -x $warmup (device buffers: -d cuda, liballoy_mpi.so preloaded);" \
      "alloy-perf --blocking --compare nccl -f 2 -w $warmup -n $iters"
    for row in "${osu_rows[@]}"; do echo "$row"; done
    echo "$table"
    echo "the layer's cost paired in one job (tools/layer-cost; us):"
    sed -n '/^layer-cost: [0-9]/,/^layer-cost: worst/p' "$RESULTS/logs/layer-cost-np$NGPU.log" 2>/dev/null
    result_line "$osu_bad" "$osu_not_run" "$RESULTS/logs" OSU_BUDGET
  } | tee "$RESULTS/summary.txt"
  [ "$osu_bad" -eq 0 ]
}
