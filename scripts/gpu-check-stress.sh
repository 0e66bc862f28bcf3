# shellcheck shell=bash
# The stress mode of scripts/gpu-check.sh (sourced by it after gpu-check-common.sh): a focused subset of both
# GPU suites, repeated on fresh seeds at several rank counts.
# alloy_gpu_tests: random alltoallv matrices with shifted (gapped, shuffled) displacements, blocks around
# the slot size, sizes at every protocol boundary (pages, low-latency chunk and limit, slot) for alltoall
# and allreduce, allreduce, reduce-scatter and reduce in many windows of the direct engine, several communicators
# on one stream and in one group, and the ordering, low-latency wrap-around, group validation and
# residency suites, and broadcasts beside all-gathers (the direct engine's lines). Never Faults.* (slow by design).
STRESS_NATIVE_DEFAULT="AlltoAllv.RandomMatrices:AlltoAllv.MatchesMpiAlltoallv:AlltoAllv.BlocksCrossingSlotSize"
STRESS_NATIVE_DEFAULT+=":AlltoAll.ProtocolBoundarySizes:AllReduce.ProtocolBoundarySizes"
STRESS_NATIVE_DEFAULT+=":AllReduce.WindowsThroughSmallAreas:ReduceScatter.WindowsThroughSmallAreas"
STRESS_NATIVE_DEFAULT+=":Reduce.WindowsThroughSmallAreas:Reduce.NarrowedWindowsWhereThePartsFitAnArea"
STRESS_NATIVE_DEFAULT+=":AllReduce.HundredBackToBackWithoutSync"
# Broadcasts in the direct engine's lines (one step, and two from 3 ranks) beside all-gathers, the root
# moving, no host synchronisation: the tokens that keep the generations apart (direct_kernel.h).
STRESS_NATIVE_DEFAULT+=":AllGather.HundredBackToBackWithBroadcasts:Broadcast.EveryDatatypeCountAndRoot"
STRESS_NATIVE_DEFAULT+=":Broadcast.TwoStepLinesEveryRoot"
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
  # 20 s per repetition, at least 240: the native filter's 15 tests take 11-14 s a repetition at 4 ranks,
  # so 20 of them ran into a flat 240 s cap (session 12) where ALLOY_TIMEOUT_MS catches a real hang anyway.
  local cap=$((20 * repeat > 240 ? 20 * repeat : 240))
  cap=${STRESS_RUN_TIMEOUT:-$cap}
  limit=$(run_limit "$cap")
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
  status=$(run_status "$logfile" "$rc" "$limit" "$cap" "$([ "$done_reps" -ge "$repeat" ] && echo 1)" \
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
    # shellcheck disable=SC2086  # one word per rank count
    echo "machine: $NGPU x $gpu_name; $(rank_placement $ranks); ALLOY_TIMEOUT_MS=${STRESS_TIMEOUT_MS:-30000}"
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
