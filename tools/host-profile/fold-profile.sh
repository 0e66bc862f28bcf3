#!/usr/bin/env bash
# Folds a `host-cost --profile` or libhost-profile.so file (lines "count module offset") into time per
# module and per function: each module's offsets go through one addr2line (functions of stripped modules
# show as "??"), and every row gives its share of the samples and, where the file says the host's time
# per call (host-cost's do), the part of that time it stands for; and the page faults, where the file counts
# them (libhost-profile.so's do).
#   tools/host-profile/fold-profile.sh PROFILE [ROWS]
set -euo pipefail
profile=${1:?usage: fold-profile.sh PROFILE [ROWS]}
rows=${2:-30}
command -v addr2line >/dev/null || { echo "fold-profile: addr2line (binutils) not found" >&2; exit 1; }
per_call=$(sed -n "s/.*, \([0-9.]*\) us per call on the host$/\1/p" "$profile" | head -1)
total=$(sed -n 's/^# samples \([0-9]*\)$/\1/p' "$profile")
[ "${total:-0}" -gt 0 ] || { echo "fold-profile: no samples in $profile" >&2; exit 1; }
folded=$(mktemp)
trap 'rm -f "$folded"' EXIT
for module in $(grep -v '^#' "$profile" | awk '{print $2}' | sort -u); do
  lines=$(grep -v '^#' "$profile" | awk -v m="$module" '$2 == m')
  if [ -r "$module" ]; then
    functions=$(awk '{print $3}' <<<"$lines" | addr2line -f -C -e "$module" | awk 'NR % 2 == 1')
  else
    functions=$(awk '{print "??"}' <<<"$lines")
  fi
  paste -d' ' <(awk '{print $1}' <<<"$lines") <(sed 's/ /_/g' <<<"$functions") |
    awk -v m="${module##*/}" '{print $1, m, $2}' >>"$folded"
done
# Rows "count key..." summed by the fields given (2: module; 2 and 3: module and function), largest first.
shares() {
  awk -v keys="$1" '{k = $2; if (keys == 2) k = $2 " " $3; s[k] += $1} END {for (k in s) print s[k], k}' "$folded" |
    sort -rn | head -"$2" |
    awk -v t="$total" -v c="${per_call:-0}" '{
      us = c ? sprintf("%.2f us", c * $1 / t) : ""
      printf "%6.1f%%  %9s  %-22s %s\n", 100 * $1 / t, us, $2, $3
    }'
}
echo "$total samples${per_call:+; $per_call us per call on the host (the us column: the share of it)}"
# libhost-profile.so's files count the main thread's page faults too.
sed -n 's/^# \(page faults .*\)$/\1 (the main thread, start to exit)/p' "$profile"
echo "-- per module"
shares 1 1000
echo "-- per function (top $rows)"
shares 2 "$rows"
