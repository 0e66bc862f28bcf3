# shellcheck shell=bash
# The check mode of scripts/gpu-check.sh (the default; sourced by it after gpu-check-common.sh): build, ctest
# -L gpu, alloy-perf against NCCL.
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
