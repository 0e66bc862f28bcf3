# shellcheck shell=bash
# The overlap mode of scripts/gpu-check.sh (sourced by it after gpu-check-common.sh): a compute load beside a
# collective between virtual hosts, Alloy against NCCL's socket path
# (issue #12: data-only operations wait on the network without holding SMs). Reuses the hosts mode's UCX,
# build check, wrapper and alloy-perf job.

# shellcheck source=scripts/gpu-check-hosts.sh
source scripts/gpu-check-hosts.sh

# The summary table from the jobs' JSON files: per layout, collective and size, the compute load's slowdown
# beside Alloy and beside NCCL, and each collective's bus bandwidth beside the load. Arguments: pairs of
# layout name and JSON file.
overlap_table() {
  python3 - "$@" <<'PY'
import json
import os
import sys


def human(n):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def beside(m, key, fmt):
    """A number of a library's overlap record, or why there is none."""
    if not m:
        return "-"
    if m.get("status") != "ok":
        return "not supp."
    o = m.get("overlap")
    return fmt.format(o[key]) if o and o.get(key) is not None else "-"


args = sys.argv[1:]
docs = []  # (layout, document or the reason there is none)
for i in range(0, len(args) - 1, 2):
    layout, path = args[i:i + 2]
    if os.path.exists(path):
        with open(path) as f:
            docs.append((layout, json.load(f)))
    else:
        docs.append((layout, f"no results ({os.path.basename(path)} missing)"))
load = next((d["overlap"] for _, d in docs if isinstance(d, dict) and d.get("overlap")), None)
if load:
    print(f"load: {load['kernels']} launches x {load['blocks']} blocks x {load['threads']} threads, "
          f"{load['calibrated_ms']:.1f} ms alone (target {load['target_ms']} ms); slowdown = the load's time "
          f"with the collective looping beside it / alone, median of {load['reps']}, max over ranks")
print(f"{'layout':<7} {'op':<10} {'size':>8}  {'alloy slowdown':>14}  {'nccl slowdown':>13}  "
      f"{'alloy busbw beside':>18}  {'nccl busbw beside':>17}")
for layout, doc in docs:
    if not isinstance(doc, dict):
        print(f"{layout:<7} {doc}")
        continue
    nccl = doc.get("nccl") or {}
    if not nccl.get("loaded"):
        print(f"{layout:<7} no NCCL: {nccl.get('reason', 'not loaded')}")
    if not doc.get("complete"):
        print(f"{layout:<7} run cut short: the rows measured so far")
    for r in doc.get("rows", []):
        a, n = r.get("alloy"), r.get("nccl")
        print(f"{layout:<7} {r['op']:<10} {human(r['size_bytes']):>8}  "
              f"{beside(a, 'slowdown', '{:.3f}x'):>14}  {beside(n, 'slowdown', '{:.3f}x'):>13}  "
              f"{beside(a, 'busbw_gbs', '{:.2f} GB/s'):>18}  {beside(n, 'busbw_gbs', '{:.2f} GB/s'):>17}")
PY
}

mode_overlap() {
  local layouts=${OVERLAP_LAYOUTS:-2h 2x2} tlsname=${OVERLAP_TLS:-tcp} layout map tls
  for layout in $layouts; do
    [ -n "$(hosts_map "$layout")" ] ||
      fail_mode "OVERLAP_LAYOUTS: '$layout' is not a layout (2h 3h 4h 2x2 2+1 or a map such as 0,0,1,1)"
  done
  tls=$(hosts_tls "$tlsname")
  hosts_setup_ucx
  # As in hosts mode: pkg-config's answer is looked up afresh in the build folder.
  configure_args=(-U 'UCX_*' -U 'pkgcfg_lib_UCX_*' -U '__pkg_config_checked_UCX' -U '__pkg_config_arguments_UCX')
  build alloy-perf
  PERF_BIN=$(perf_bin)
  [ -n "$PERF_BIN" ] || fail_mode "alloy-perf was not built in $BUILD_DIR"
  hosts_check_ucx_build "$PERF_BIN"
  find_gpus
  find_nccl
  start_budget "${OVERLAP_BUDGET:-170}"
  local args=(-o "${OVERLAP_OPS:-alltoallv,alltoall}" -b "${OVERLAP_MINBYTES:-64K}" -e "${OVERLAP_MAXBYTES:-64M}"
              -f "${OVERLAP_FACTOR:-4}" -w "${OVERLAP_WARMUP:-2}" -n "${OVERLAP_ITERS:-10}" -O "${OVERLAP_MS:-20}"
              --overlap_reps "${OVERLAP_REPS:-5}" --overlap_kernels "${OVERLAP_KERNELS:-100}" --compare nccl)
  [ "${OVERLAP_CHECK:-1}" = 1 ] && args+=(-c)
  local outcomes=() table_args=() base outcome bad=0 not_run=0
  for layout in $layouts; do
    map=$(hosts_map "$layout")
    base="$RESULTS/overlap-${layout//[^A-Za-z0-9]/_}-${tlsname//[^A-Za-z0-9]/_}"
    rm -f "$base.json"
    outcome=$(hosts_alloy_perf "$base" "$tls" "$map" "${OVERLAP_TIMEOUT:-100}" "${args[@]}")
    case $outcome in ok) ;; "not run"*) not_run=$((not_run + 1)) ;; *) bad=1 ;; esac
    outcomes+=("alloy-perf $layout [$map]: $outcome")
    table_args+=("$layout" "$base.json")
  done

  local row nccl_line="not found: no NCCL columns"
  [ "$nccl_found" = 1 ] && nccl_line="${ALLOY_PERF_NCCL_LIB:-libnccl.so.2 (loader path)}, socket transport over lo,\
 NCCL_HOSTID per virtual host (per rank where a host has several ranks)"
  {
    echo
    echo "==== gpu-check overlap summary ===="
    echo "machine: $NGPU x $gpu_name; $(hosts_placement "$layouts"), split into virtual hosts by ALLOY_HOSTID; ${hosts_env[*]} UCX_TLS=$tls"
    echo "UCX: $ucx_source; build: $build_status; $ucx_build"
    echo "NCCL: $nccl_line"
    echo "alloy-perf ${args[*]}"
    for row in "${outcomes[@]}"; do echo "$row"; done
    overlap_table "${table_args[@]}" 2>&1
    result_line "$bad" "$not_run" "$RESULTS/overlap-*.log" OVERLAP_BUDGET
    echo "results: $RESULTS"
  } | tee "$RESULTS/summary.txt"
  [ "$bad" -eq 0 ]
}
