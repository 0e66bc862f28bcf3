#!/usr/bin/env bash
# Runs an MPI test program under valgrind on every rank and fails when a leak record or a memory error
# has an Alloy frame in its stack. Open MPI and PMIx leak on their own at MPI_Finalize (a few KiB of
# strdup'd component names, hwloc bitmaps) and valgrind's suppressions for them differ per release, so the
# check is by attribution rather than by a zero total: any record whose stack passes through Alloy's code
# (namespaces alloy, alloy_mpix and alloy_layer, the alloy* C API, the MPIX_* functions, the layer's
# alloy_layer_* entry points) is Alloy's.
#
# Usage: leak-check.sh <scratchdir> <mpirun and its options...> -- <program> [args...]
# CUDA devices are hidden: communicators run host-only, so what is checked is the host code that every
# machine runs (bootstrap, lifecycle, attribute caching), not the CUDA driver's own allocations.
set -uo pipefail
scratch=$1
shift
launcher=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do launcher+=("$1"); shift; done
shift
if ! command -v valgrind >/dev/null; then
  echo "skipped: valgrind is not installed"
  exit 77
fi
rm -rf "$scratch" && mkdir -p "$scratch" || exit 1

CUDA_VISIBLE_DEVICES="" "${launcher[@]}" valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible \
  --num-callers=50 --log-file="$scratch/valgrind.%p" "$@"
status=$?
if [ $status -ne 0 ]; then
  echo "leak-check: the program failed under valgrind (exit $status)"
  exit 1
fi

logs=("$scratch"/valgrind.*)
[ -e "${logs[0]}" ] || { echo "leak-check: valgrind wrote no log"; exit 1; }
# A record starts at a line naming a leak or an error and ends at valgrind's empty line ("==pid== ").
found=$(awk '
  /lost in loss record|Invalid (read|write|free)|uninitialised|Mismatched free/ { inside = 1; record = $0; next }
  inside && /^==[0-9]+== $/ {
    if (record ~ /alloy::|alloy_mpix::|alloy_layer::|: alloy_layer_[a-z_]+ \(|[ (]alloy[A-Z][A-Za-z]*[ (]|MPIX_[A-Za-z_]+/) print record "\n"
    inside = 0; next
  }
  inside { record = record "\n" $0 }
' "${logs[@]}")
if [ -n "$found" ]; then
  echo "leak-check: records with an Alloy frame:"
  echo "$found"
  exit 1
fi
echo "leak-check: ${#logs[@]} ranks checked, no leak or memory error attributed to Alloy"
grep -h "definitely lost:" "${logs[@]}" | sed 's/^/  (outside Alloy) /'
exit 0
