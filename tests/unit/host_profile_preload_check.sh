#!/usr/bin/env bash
# libhost-profile.so preloaded into a program that writes one byte into each of 16384 fresh pages of 4 KiB
# (host_profile_touch.cc): its one file must count at least that many minor page faults of the main thread,
# and fold-profile.sh must print the count. Arguments: libhost-profile.so, the program, fold-profile.sh, a
# scratch prefix.
set -euo pipefail
library=$1 program=$2 fold=$3 prefix=$4
rm -f "$prefix".*
LD_PRELOAD=$library HOST_PROFILE_OUT=$prefix HOST_PROFILE_INTERVAL_US=100 \
  "$program"
profiles=("$prefix".*)
[ "${#profiles[@]}" -eq 1 ] && [ -f "${profiles[0]}" ] || { echo "FAIL: expected one profile, got: ${profiles[*]}"; exit 1; }
profile=${profiles[0]}
minor=$(sed -n 's/^# page faults \([0-9]*\) minor, [0-9]* major$/\1/p' "$profile")
echo "minor page faults: ${minor:-none}"
[ -n "$minor" ] && [ "$minor" -ge 16384 ] || { echo "FAIL: expected at least 16384 minor faults"; exit 1; }
folded=$(bash "$fold" "$profile" 5)
echo "$folded"
grep -q "^page faults $minor minor" <<<"$folded" || { echo "FAIL: fold-profile.sh did not print the faults"; exit 1; }
echo "PASS"
