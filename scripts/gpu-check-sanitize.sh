# shellcheck shell=bash
# The sanitize mode of scripts/gpu-check.sh (sourced by it after gpu-check-common.sh): compute-sanitizer over
# a reduced suite, one instance per rank.
# One small (low-latency) and one large (bulk, over a slot per peer) call of alltoall, alltoallv,
# allreduce (each algorithm) and a send/recv ring; allreduce, reduce-scatter and reduce in many
# windows of the direct engine.
SANITIZE_DEFAULT="AlltoAll.BothProtocols:AlltoAllv.BothProtocols:AllReduce.BothProtocols:SendRecv.BothProtocols"
SANITIZE_DEFAULT+=":AllReduce.WindowsThroughSmallAreas:ReduceScatter.WindowsThroughSmallAreas"
SANITIZE_DEFAULT+=":Reduce.WindowsThroughSmallAreas"
# Broadcasts in the direct engine's lines at every datatype, count and root, and on the rings (session 16:
# 3 s a tool at 4 ranks), and scattered and passed on in those lines (from 3 ranks).
SANITIZE_DEFAULT+=":Broadcast.EveryDatatypeCountAndRoot:Broadcast.TwoStepLinesEveryRoot"
# The reduce by parts and the reduce-scatter in 128-byte lines (AllReduce.BothProtocols runs the two-shot's).
SANITIZE_DEFAULT+=":Reduce.ByPartsAndReduceScatterInWideLines"

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
    echo "machine: $NGPU x $gpu_name; $np ranks, $(rank_placement "$np"); ALLOY_TIMEOUT_MS=${SANITIZE_TIMEOUT_MS:-120000}; $sanitizer"
    echo "build: $build_status"
    echo "filter: $filter ($tests tests)"
    printf '%-10s %-13s %-34s %s\n' tool "ERROR SUMMARY" status "tests, time"
    for row in "${rows[@]}"; do echo "$row"; done
    [ "$bad" -eq 0 ] && echo "result: PASS (0 errors)" || echo "result: FAIL (see $RESULTS/sanitize-*.log)"
    echo "results: $RESULTS"
  } | tee "$RESULTS/summary.txt"
  [ "$bad" -eq 0 ]
}
