#!/usr/bin/env bash
# Runs pc_sampler_check (pc_sampler_check.cc) and folds its samples with fold-profile.sh: most samples must
# fall in the two loops, and spin<3> must take more of them than spin<1> (3:1 by their work; the bounds
# leave room for a loaded machine). Arguments: the program, fold-profile.sh, a scratch file.
set -euo pipefail
program=$1 fold=$2 profile=$3
"$program" "$profile"
folded=$(bash "$fold" "$profile" 10)
echo "$folded"
share() { grep -F "$1" <<<"$folded" | awk '{s += $1} END {printf "%d", s}'; }
three=$(share "spin<3>") one=$(share "spin<1>")
echo "spin<3>: ${three}%, spin<1>: ${one}%"
[ "$((three + one))" -ge 60 ] ||
  { echo "FAIL: the loops took ${three}% + ${one}% of the samples; expected most"; exit 1; }
[ "$three" -gt "$one" ] || { echo "FAIL: spin<3> ${three}% is not above spin<1> ${one}%"; exit 1; }
[ "$one" -gt 0 ] || { echo "FAIL: no sample in spin<1>"; exit 1; }
echo "PASS"
