#!/usr/bin/env bash
# Runs an unmodified MPI program under mpirun with the layer's report on (ALLOY_MPI_LAYER_REPORT=1) and,
# where given, liballoy_mpi.so preloaded into the ranks (not into mpirun itself), then checks that:
#   - the program passed ("<name>: PASSED");
#   - every one of the NP ranks printed its expectations, and for every "expect rank R: <function>: P passed,
#     D diverted" line, rank R reported exactly "alloy mpi layer: rank R: <function>: P passed, D diverted"
#     at MPI_Finalize: the layer saw each call and routed it as the program's own counts say (each rank's
#     from the counts its communicators drew, which the ranks of one communicator share);
#   - the layer reported no function the program did not expect.
# A program that prints "skipped: no CUDA device" (the GPU programs on a machine without one), or a launcher
# that prints "skipped: ..." and exits 77 (the Slurm cluster without root), makes it exit 77.
#
# Usage: run_layer.sh NP PRELOAD|- mpirun <mpirun and its options...> -- <program> [args...]
#        run_layer.sh NP PRELOAD|- srun <run-srun.sh and its scratch folder> -- <program> [args...]
# The variables reach the ranks as each launcher's documented way has it (docs/mpi-layer.md): mpirun's
# -x, srun's --export.
set -uo pipefail
np=$1
preload=$2
style=$3
shift 3
launcher=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do launcher+=("$1"); shift; done
shift

case "$style" in
  mpirun)
    exports=(-x ALLOY_MPI_LAYER_REPORT=1)
    [ "$preload" != "-" ] && exports+=(-x "LD_PRELOAD=$preload")
    output=$("${launcher[@]}" -np "$np" "${exports[@]}" "$@" 2>&1) ;;
  srun)
    exports=ALL,ALLOY_MPI_LAYER_REPORT=1
    [ "$preload" != "-" ] && exports+=",LD_PRELOAD=$preload"
    output=$("${launcher[@]}" "$np" "--export=$exports" "$@" 2>&1) ;;
  *) echo "run_layer: launcher style must be mpirun or srun, not $style"; exit 2 ;;
esac
status=$?
echo "$output"

if grep -q "skipped: no CUDA device" <<<"$output"; then exit 77; fi
if [ $status -eq 77 ] && grep -q "^skipped: " <<<"$output"; then exit 77; fi
fail() { echo "run_layer: $*"; exit 1; }
[ $status -eq 0 ] || fail "the program exited with status $status"
grep -qE '^[a-z_]+: PASSED$' <<<"$output" || fail "no PASSED line"

expected=$(sed -n 's/^expect //p' <<<"$output")
[ -n "$expected" ] || fail "the program printed no expectations"
ranks=$(sed -n 's/^rank \([0-9]*\): .*/\1/p' <<<"$expected" | sort -u | wc -l)
[ "$ranks" -eq "$np" ] || fail "expectations came from $ranks ranks, not all $np"
while IFS= read -r line; do
  grep -qxF "alloy mpi layer: $line" <<<"$output" || fail "expected \"$line\", which the layer did not report"
done <<<"$expected"
reported=$(grep -cE '^alloy mpi layer: rank [0-9]+: ' <<<"$output")
lines=$(grep -c . <<<"$expected")
[ "$reported" -eq "$lines" ] || fail "the layer reported $reported lines, expected $lines"
echo "run_layer: the layer saw every call on all $np ranks, routed as expected"
