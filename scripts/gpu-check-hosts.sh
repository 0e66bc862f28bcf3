# shellcheck shell=bash
# The hosts mode of scripts/gpu-check.sh (sourced by it after gpu-check-common.sh; the overlap mode
# sources it too): what crosses hosts (UCX, through the proxy thread and host staging), on this one
# machine split into virtual hosts: each rank gets its ALLOY_HOSTID from a wrapper, as NCCL's ranks get
# NCCL_HOSTID.
# Cross-host operations of the native suite: every collective and send/recv in every form (graphs,
# several communicators, bad arguments, stream order), and the cross-host suite itself.
HOSTS_NATIVE_DEFAULT="AlltoAll*:SendRecv*:AllReduce.*:Reduce.*:ReduceScatter.*:Broadcast.*:AllGather.*"
HOSTS_NATIVE_DEFAULT+=":CudaGraph.*:MultiComm.*:BadInput.*:StreamOrder.*:CrossHost.*:Faults.AbortStopsAWaitingKernel"
# MPIX: every collective, and the enqueue and rejection cases (which stay agreed across hosts).
HOSTS_MPIX_DEFAULT="MpixAlltoallv.*:MpixCollectives.*:MpixEnqueue*:MpixRejection*"
# Runs in order, most informative first: LAYOUT:TLS, both suites each.
HOSTS_RUNS_DEFAULT="2h:tcp 2x2:tcp 2h:shm 2x2:shm 2+1:tcp 3h:tcp 4h:tcp 2+1:shm 3h:shm 4h:shm"

# The virtual host of each rank, in rank order, for a layout name; a list such as 0,0,1,1 is its own map.
hosts_map() {
  case $1 in
    2h) echo 0,1 ;;
    3h) echo 0,1,2 ;;
    4h) echo 0,1,2,3 ;;
    2x2) echo 0,1,0,1 ;;  # interleaved: a host's ranks are not contiguous
    2+1) echo 0,0,1 ;;    # uneven: hosts {0,1} and {2}
    *) [[ $1 =~ ^[0-9]+(,[0-9]+)+$ ]] && echo "$1" ;;
  esac
}

# UCX_TLS of a transport name: tcp, shm (shared memory, without cma: containers often forbid it), or a
# UCX_TLS value as it is.
hosts_tls() {
  case $1 in
    shm) echo posix,sysv,self ;;
    *) echo "$1" ;;
  esac
}

# Starts "$@" with ALLOY_HOSTID (and NCCL_HOSTID, for alloy-perf's NCCL) from the map given first, indexed
# by the rank Open MPI gives the process; says which host it took, on stderr. With HOSTS_NCCL_PER_RANK=1
# NCCL's host is the rank's own (see hosts_alloy_perf).
# shellcheck disable=SC2016  # expanded by the rank's shell
hosts_wrapper=(sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}; h=$(echo "$1" | cut -d, -f$((r + 1))); shift
[ -n "$h" ] || { echo "hosts wrapper: no host for rank $r" >&2; exit 1; }
n=vhost$h; [ "${HOSTS_NCCL_PER_RANK:-0}" = 1 ] && n=rank$r
echo "vhost: rank $r ALLOY_HOSTID=vhost$h NCCL_HOSTID=$n" >&2
ALLOY_HOSTID=vhost$h NCCL_HOSTID=$n exec "$@"' sh)
# Ranks of a map: one per entry.
hosts_ranks() { echo $(($(tr -cd , <<<"$1" | wc -c) + 1)); }
# rank_placement over the layouts of a HOSTS_RUNS list.
hosts_placement() {
  local run counts=()
  for run in $1; do counts+=("$(hosts_ranks "$(hosts_map "${run%%:*}")")"); done
  rank_placement "${counts[@]}"
}
# MPI's own traffic stays off UCX (ob1 over the shared-memory BTL), so that UCX_TLS and the UCX that is
# loaded concern Alloy alone.
hosts_mpirun=("${test_mpirun[@]}" --mca pml ob1)
# ALLOY_NET=ucx: a UCX that cannot start fails communicator creation loudly instead of leaving every
# cross-host call alloyNotSupported (an ALLOY_NET of the caller's own is kept).
# UCX's memory hooks off (docs/environment.md, "UCX's memory hooks"): with them on, a proxy thread can sit
# in UCX's hooked mmap until its peer times out. A caller's own values are kept.
hosts_env=(ALLOY_NET="${ALLOY_NET:-ucx}" ALLOY_TIMEOUT_MS="${HOSTS_TIMEOUT_MS:-30000}"
           UCX_MEM_MALLOC_HOOKS="${UCX_MEM_MALLOC_HOOKS:-n}" UCX_MEM_MMAP_HOOK_MODE="${UCX_MEM_MMAP_HOOK_MODE:-none}"
           UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}")

# UCX to build against: the wheel in .whl/ (unpacked by scripts/ucx-wheel.sh), else a system UCX with
# headers. Sets ucx_source; without either, says so and exits 1.
ucx_source=
hosts_setup_ucx() {
  local wheels=()
  shopt -s nullglob
  wheels=(.whl/libucx_cu13-*.whl)
  shopt -u nullglob
  if [ ${#wheels[@]} -gt 1 ]; then
    fail_mode "more than one wheel in .whl/ (keep one): ${wheels[*]}"
  elif [ ${#wheels[@]} -eq 1 ]; then
    # shellcheck disable=SC1091  # checked on its own
    source scripts/ucx-wheel.sh "${wheels[0]}" || fail_mode "could not unpack ${wheels[0]} (scripts/ucx-wheel.sh)"
    ucx_source="UCX $UCXWHEEL_VERSION from ${wheels[0]##*/} (unpacked in $UCXWHEEL_DIR)"
  elif command -v pkg-config >/dev/null && pkg-config --exists ucx; then
    ucx_source="system UCX $(pkg-config --modversion ucx) ($(pkg-config --variable=libdir ucx))"
  else
    fail_mode "no UCX to build against: put pip's libucx-cu13 wheel into .whl/ (docs/benchmarks.md) or install UCX with its headers (libucx-dev)"
  fi
  log "$ucx_source"
}


# After the build: UCX must be ON in the build (else every cross-host call is alloyNotSupported and the
# whole mode measures nothing), and the binary given (default: the native test suite) must load the UCX
# chosen above. Sets ucx_build.
ucx_build=
hosts_check_ucx_build() {
  local cache="$BUILD_DIR/CMakeCache.txt" bin=${1:-$NATIVE_BIN} version libucp built_with said
  if ! grep -q '^ALLOY_WITH_UCX:BOOL=ON' "$cache" 2>/dev/null || ! grep -q '^UCX_FOUND:INTERNAL=1' "$cache"; then
    said=$(grep -o 'UCX O[NF]F* (.*' "$RESULTS/configure.log" 2>/dev/null | tail -1)
    fail_mode "the build in $BUILD_DIR has UCX OFF${said:+ (configure: $said; see $RESULTS/configure.log)}"
  fi
  version=$(sed -n 's/^UCX_VERSION:INTERNAL=//p' "$cache")
  # The library the build linked (its headers came from the same pkg-config answer).
  built_with=$(sed -n 's/^pkgcfg_lib_UCX_ucp:FILEPATH=//p' "$cache")
  if [ -n "${UCXWHEEL_DIR:-}" ] && [[ $(readlink -f "$built_with") != "$(readlink -f "$UCXWHEEL_DIR")"/* ]]; then
    fail_mode "$BUILD_DIR was built against ${built_with:-an unknown UCX}, not the wheel in $UCXWHEEL_DIR (SKIP_BUILD=1 on an old build folder?)"
  fi
  [ -x "$bin" ] || fail_mode "$bin was not built"
  libucp=$(ldd "$bin" 2>/dev/null | awk '$1 ~ /^libucp\.so/ { print $3 }')
  if [ -z "$libucp" ] || [ "$libucp" = "not" ]; then  # "libucp.so.0 => not found"
    fail_mode "$bin does not load libucp (ldd: $(ldd "$bin" 2>&1 | grep ucp))"
  fi
  if [ -n "${UCXWHEEL_DIR:-}" ] && [[ $(readlink -f "$libucp") != "$(readlink -f "$UCXWHEEL_DIR")"/* ]]; then
    fail_mode "$bin loads $libucp, not the wheel's UCX in $UCXWHEEL_DIR (a stale $BUILD_DIR? remove it)"
  fi
  ucx_build="UCX ON (UCX $version); $(basename "$bin") loads $libucp"
  log "$ucx_build"
}

# One suite in one layout over one transport. Appends its row to hosts_rows; sets hosts_bad on failure.
hosts_rows=()
hosts_bad=0
hosts_not_run=0
declare -A hosts_tests  # tests a suite's filter selects, listed once per suite
hosts_run() {
  local layout=$1 tlsname=$2 suite=$3 bin=$4 filter=$5
  local map tls np tests limit rc=0 start seconds status passed=0 failed=0 logfile
  map=$(hosts_map "$layout")
  tls=$(hosts_tls "$tlsname")
  np=$(hosts_ranks "$map")
  logfile="$RESULTS/hosts-${layout//[^A-Za-z0-9]/_}-${tlsname//[^A-Za-z0-9]/_}-$suite.log"
  [ -n "${hosts_tests[$suite]:-}" ] || hosts_tests[$suite]=$(count_tests "$bin" "$filter")
  tests=${hosts_tests[$suite]}
  local what shown=$layout
  [[ $layout == *,* ]] && shown=map
  what=$(printf '%-5s %-9s %-17s %-6s %5s' "$shown" "[$map]" "$tls" "$suite" "$tests")
  limit=$(run_limit "${HOSTS_RUN_TIMEOUT:-120}" "$hosts_reserve")
  if [ "$limit" -lt 10 ]; then
    hosts_rows+=("$(printf '%s %6s %6s  %s' "$what" - - "not run (budget)")")
    hosts_not_run=$((hosts_not_run + 1))
    return
  fi
  log "hosts $layout [$map] UCX_TLS=$tls $suite: $np ranks, $tests test(s), at most $limit s" >&2
  start=$(date +%s)
  run_bounded "$limit" "$logfile" env "${test_env[@]}" "${hosts_env[@]}" UCX_TLS="$tls" \
    "${hosts_mpirun[@]}" -np "$np" "${hosts_wrapper[@]}" "$map" "$bin" "--gtest_filter=$filter" --gtest_color=no || rc=$?
  seconds=$(($(date +%s) - start))
  # Rank 0's GoogleTest totals: "[  PASSED  ] 12 tests." and "[  FAILED  ] 2 tests, listed below:".
  local line
  line=$(grep -E '^\[  PASSED  \] [0-9]+ tests?\.' "$logfile" | tail -1) && passed=$(awk '{print $4}' <<<"$line")
  line=$(grep -E '^\[  FAILED  \] [0-9]+ tests?, listed below' "$logfile" | tail -1) && failed=$(awk '{print $4}' <<<"$line")
  status=$(run_status "$logfile" "$rc" "$limit" "${HOSTS_RUN_TIMEOUT:-120}" \
    "$(grep -qE '^\[==========\] [0-9]+ tests? from .* ran\.' "$logfile" && echo 1)" "$failed" "$tests")
  case $status in ok | skipped*) ;; *) hosts_bad=1 ;; esac
  hosts_rows+=("$(printf '%s %6s %6s  %-30s %4s s' "$what" "$passed" "$failed" "$status" "$seconds")")
}

# ucx_perftest between two processes of this machine: UCP tag bandwidth, host memory, 64 MB messages, over
# UCX_TLS=$2. Prints the overall bandwidth in GB/s (10^9 bytes, as alloy-perf's), or nothing.
hosts_perftest() {
  local tlsname=$1 tls=$2 port=$3 perftest=$4
  local log="$RESULTS/hosts-perftest-${tlsname//[^A-Za-z0-9]/_}.log" limit server
  local args=(-t tag_bw -s "${HOSTS_PERFTEST_BYTES:-67108864}" -n "${HOSTS_PERFTEST_ITERS:-20}" -p "$port")
  limit=$(run_limit 30)
  [ "$limit" -lt 5 ] && { echo "not run (budget)" >"$log"; return; }
  log "ucx_perftest UCX_TLS=$tls: ${args[*]}" >&2
  UCX_TLS=$tls timeout -k 5 "$limit" "$perftest" "${args[@]}" </dev/null >"$log.server" 2>&1 &
  server=$!
  # The client gives up at once when nobody listens yet (the server's "Waiting for connection" sits in
  # its stdio buffer until it exits): try again while the server lives.
  local attempt
  for attempt in 1 2 3 4 5; do
    sleep 1
    UCX_TLS=$tls timeout -k 5 "$limit" "$perftest" 127.0.0.1 "${args[@]}" </dev/null >"$log" 2>&1 && break
    grep -q '^Final:' "$log" && break
    kill -0 "$server" 2>/dev/null || break
    log "ucx_perftest UCX_TLS=$tls: client attempt $attempt failed: $(grep -m1 -i 'error\|fail' "$log")" >&2
  done
  # A served server exits by itself; one left waiting is ended.
  for _ in $(seq 25); do
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
  done
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  { echo "==== server ===="; cat "$log.server"; } >>"$log" && rm -f "$log.server"
  # "Final: iterations lat50 lat-avg lat-overall bw-avg bw-overall rate-avg rate-overall", bandwidth in
  # MB/s of 2^20 bytes.
  awk '$1 == "Final:" { printf "%.3f\n", $7 * 1048576 / 1e9; exit }' "$log"
}

# tools/ucx-both-ways over UCX_TLS=$2 between 2 ranks: UCX's own tag bandwidth with one worker per process,
# one way, then both ways at once (the traffic of an alltoall between 2 hosts), ucx_perftest's message
# size and iterations. Prints "ONE_WAY BOTH_WAYS" in GB/s, or nothing.
hosts_both_ways() {
  local tlsname=$1 tls=$2 bin=$BUILD_DIR/tools/ucx-both-ways/ucx-both-ways
  local log="$RESULTS/hosts-both-ways-${tlsname//[^A-Za-z0-9]/_}.log" limit
  [ -x "$bin" ] || { echo "not built" >"$log"; return; }
  limit=$(run_limit 60)
  [ "$limit" -lt 5 ] && { echo "not run (budget)" >"$log"; return; }
  run_bounded "$limit" "$log" env UCX_TLS="$tls" "${hosts_mpirun[@]}" -np 2 "$bin" \
    -s "${HOSTS_PERFTEST_BYTES:-67108864}" -n "${HOSTS_PERFTEST_ITERS:-20}"
  awk '$1 == "Final:" { print $2, $3; exit }' "$log"
}

# alloy-perf with NCCL beside Alloy in one job, its ranks on the virtual hosts of MAP (as hosts_map prints
# them), over UCX_TLS=TLS, for at most CAP seconds (less where the budget has less left); the remaining
# arguments go to alloy-perf. Writes BASE.log and BASE.json; prints the run's outcome. NCCL takes its
# inter-node path in miniature: its socket transport over loopback, IB off. It refuses two ranks of one
# GPU in one host ("Duplicate GPU detected"), so where MAP puts several ranks on a host, NCCL's ranks each
# claim a host of their own.
hosts_alloy_perf() {
  local base=$1 tls=$2 map=$3 cap=$4 limit rc=0 np per_rank=0
  shift 4
  np=$(hosts_ranks "$map")
  [ "$(tr , '\n' <<<"$map" | sort -u | wc -l)" -lt "$np" ] && per_rank=1
  limit=$(run_limit "$cap")
  [ "$limit" -lt 10 ] && { echo "not run (budget)"; return; }
  log "alloy-perf UCX_TLS=$tls, $np ranks on hosts [$map]: $*, at most $limit s" >&2
  run_bounded "$limit" "$base.log" env "${test_env[@]}" "${hosts_env[@]}" UCX_TLS="$tls" NCCL_IB_DISABLE=1 \
    NCCL_SOCKET_IFNAME=lo HOSTS_NCCL_PER_RANK=$per_rank "${hosts_mpirun[@]}" -np "$np" "${hosts_wrapper[@]}" \
    "$map" "$PERF_BIN" "$@" --json "$base.json" || rc=$?
  case $rc in
    0) echo ok ;;
    2) echo "FAILED: alloy-perf refused its arguments ($(grep -m1 '^alloy-perf: ' "$base.log"))" ;;
    3) echo "WRONG RESULTS" ;;
    124 | 137) echo "TIMEOUT after $limit s" ;;
    *) echo "FAILED (exit $rc; see ${base##*/}.log)" ;;
  esac
}

# alloy-perf over the ranks of HOSTS_PERF_LAYOUT (2 ranks as 2 virtual hosts by default) with NCCL beside it
# in the same job, over UCX_TLS=$2. Prints the run's outcome.
hosts_perf_run() {
  local tlsname=$1 tls=$2
  local ops=${HOSTS_PERF_OPS:-allreduce,reduce,broadcast,allgather,reducescatter,alltoall,alltoallv,sendrecv}
  # shellcheck disable=SC2086  # HOSTS_PERF_EXTRA is a list of arguments on purpose
  hosts_alloy_perf "$RESULTS/hosts-perf-${tlsname//[^A-Za-z0-9]/_}" "$tls" "$(hosts_map "${HOSTS_PERF_LAYOUT:-2h}")" \
    "${HOSTS_PERF_TIMEOUT:-180}" \
    -o "$ops" -b "${HOSTS_PERF_MINBYTES:-16}" -e "${HOSTS_PERF_MAXBYTES:-256M}" -f "${HOSTS_PERF_FACTOR:-4}" \
    -w "${HOSTS_PERF_WARMUP:-5}" -n "${HOSTS_PERF_ITERS:-20}" --compare nccl ${HOSTS_PERF_EXTRA:-}
}

# The three ratios, per transport, from alloy-perf's JSON and ucx_perftest's bandwidth, and beside them
# Alloy against UCX's own both-ways bandwidth (no target: the issue's third target is against
# ucx_perftest). Arguments: groups of five: transport name, UCX_TLS, JSON file, ucx_perftest GB/s (or a
# reason it is missing), ucx-both-ways' both-ways GB/s (or empty).
hosts_ratios() {
  python3 - "$@" <<'PY'
import json
import math
import os
import sys

KB, MB = 1 << 10, 1 << 20
SMALL_LO, SMALL_HI, LARGE_LO = 8, 64 * KB, 16 * MB
TARGET_TIME, TARGET_BUSBW, TARGET_CEILING = 0.25, 1.5, 0.8


def human(n):
    for unit, size in (("GB", 1 << 30), ("MB", MB), ("KB", KB)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def ok(m):
    return m is not None and m.get("status") == "ok" and m.get("time_us")


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def verdict(value, target, higher):
    return "met" if (value >= target if higher else value <= target) else "NOT MET"


def band_text(rows):
    sizes = sorted(r["size_bytes"] for r in rows)
    return f"{human(sizes[0])}-{human(sizes[-1])}, {len(sizes)} sizes"


def why_missing(rows, doc):
    """Why no pair of Alloy and NCCL numbers exists in these rows."""
    if not rows:
        return "no rows at these sizes"
    if not any(ok(r["alloy"]) for r in rows):
        first = next((r["alloy"].get("message") for r in rows if r["alloy"]), "") or ""
        return "not supported by alloy" + (f" ({first.strip()})" if first else "")
    nccl = doc.get("nccl") or {}
    if not nccl.get("loaded"):
        return "no NCCL (" + (nccl.get("reason") or "not loaded") + ")"
    return "NCCL has no numbers at these sizes"


def against_nccl(label, what, band, doc, target, busbw):
    """One ratio line against NCCL over the rows of a size band: time (lower is better), or bus
    bandwidth (higher is better; both move the same bytes, so it is NCCL's time over Alloy's)."""
    pairs = [r for r in band if ok(r["alloy"]) and ok(r.get("nccl"))]
    if not pairs:
        return f"{label}{what} n/a: {why_missing(band, doc)}"
    a, n = ("nccl", "alloy") if busbw else ("alloy", "nccl")
    per = [(r[a]["time_us"] / r[n]["time_us"], r["size_bytes"]) for r in pairs]
    g = geomean([v for v, _ in per])
    worst = min(per) if busbw else max(per)
    return (f"{label}{what} {g:5.2f}x  geomean over {band_text(pairs)}; worst {worst[0]:.2f}x at {human(worst[1])}; "
            f"target {'>=' if busbw else '<='} {target}: {verdict(g, target, busbw)}")


def number(text):
    """The float in text, or None where text is a reason instead of a measurement."""
    try:
        return float(text)
    except ValueError:
        return None


def ratios(op, rows, doc, ceiling, both_ways):
    out = []
    small = [r for r in rows if SMALL_LO <= r["size_bytes"] <= SMALL_HI]
    large = [r for r in rows if r["size_bytes"] >= LARGE_LO]
    label = f"  {op:<9} "
    out.append(against_nccl(label, "time alloy/nccl    ", small, doc, TARGET_TIME, False))
    out.append(against_nccl(label, "busbw alloy/nccl   ", large, doc, TARGET_BUSBW, True))
    if doc.get("nranks") != 2:
        out.append(f"{label}alloy/ucx_perftest  n/a: the ceiling is compared at 2 ranks as 2 hosts only")
        return out
    measured = [r for r in large if ok(r["alloy"])]
    # 2 ranks as 2 hosts: every collective's busbw is what one rank sends to the other host per second
    # (nccl-tests' factors are 1 at 2 ranks), so each is held against the transport's one-way ceiling.
    best = max(measured, key=lambda r: r["alloy"].get("busbw_gbs") or 0) if measured else None
    gbs = (best["alloy"].get("busbw_gbs") or 0) if best else 0
    perftest = number(ceiling)
    if perftest is None:
        out.append(f"{label}alloy/ucx_perftest  n/a: {ceiling}")
    elif measured and perftest > 0:
        out.append(f"{label}alloy/ucx_perftest  {gbs / perftest:5.2f}x  alloy {gbs:.2f} GB/s to the other host at "
                   f"{human(best['size_bytes'])} (best of {band_text(measured)}) / ucx_perftest {perftest:.2f} GB/s; "
                   f"target >= {TARGET_CEILING}: {verdict(gbs / perftest, TARGET_CEILING, True)}")
    else:
        out.append(f"{label}alloy/ucx_perftest  n/a: " +
                   (why_missing(large, doc) if not measured else "ucx_perftest measured 0 GB/s"))
    both_ways = number(both_ways) or 0
    if measured and both_ways > 0:
        out.append(f"{label}alloy/ucx both ways {gbs / both_ways:5.2f}x  alloy {gbs:.2f} GB/s / UCX's own "
                   f"{both_ways:.2f} GB/s per direction with both directions at once, one worker per process "
                   f"(no target)")
    return out


args = sys.argv[1:]
for i in range(0, len(args) - 4, 5):
    name, tls, path, ceiling, both_ways = args[i:i + 5]
    if not os.path.exists(path):
        print(f"UCX_TLS={tls}: no alloy-perf results ({os.path.basename(path)} missing)")
        continue
    with open(path) as f:
        doc = json.load(f)
    nccl = doc.get("nccl") or {}
    version = nccl.get("version")
    if isinstance(version, int) and version >= 10000:  # NCCL_VERSION_CODE: 22809 is 2.28.9
        version = f"{version // 10000}.{version % 10000 // 100}.{version % 100}"
    nccl_text = (f"NCCL {version}" if nccl.get("loaded") else "no NCCL: " + (nccl.get("reason") or "not loaded"))
    complete = "" if doc.get("complete") else ", run cut short: rows measured so far"
    layout = os.environ.get("HOSTS_PERF_LAYOUT", "2h")
    print(f"UCX_TLS={tls} ({doc.get('nranks')} ranks, virtual hosts {layout}; {nccl_text}{complete}):")
    if doc.get("alloy_unavailable"):
        print(f"  alloy unavailable: {doc['alloy_unavailable'].strip()}")
    ops = list(dict.fromkeys(r["op"] for r in doc.get("rows", [])))  # in the order they ran
    if not ops:
        print("  no rows")
    for op in ops:
        rows = [r for r in doc.get("rows", []) if r["op"] == op]
        for line in ratios(op, rows, doc, ceiling, both_ways):
            print(line)
PY
}

# The benchmark: ucx_perftest's ceiling, then alloy-perf with NCCL, per transport.
hosts_bench_lines=()
hosts_bench() {
  local perftest="${UCXWHEEL_PERFTEST:-}" tlsname tls port=${HOSTS_PERFTEST_PORT:-13350} gbs both outcome
  [ -x "$perftest" ] || perftest=$(command -v ucx_perftest || true)
  local ratio_args=()
  PERF_BIN=$(perf_bin)
  for tlsname in ${HOSTS_PERF_TLS:-tcp shm}; do
    tls=$(hosts_tls "$tlsname")
    if [ "${HOSTS_PERF_CEILING:-1}" = 0 ]; then
      hosts_bench_lines+=("ucx_perftest and ucx-both-ways UCX_TLS=$tls: not run (HOSTS_PERF_CEILING=0)")
      ratio_args+=("$tlsname" "$tls" "$RESULTS/hosts-perf-${tlsname//[^A-Za-z0-9]/_}.json" "not measured (HOSTS_PERF_CEILING=0)" "")
      continue
    elif [ -z "$perftest" ]; then
      gbs="no ucx_perftest (neither the wheel's nor on PATH)"
    else
      gbs=$(hosts_perftest "$tlsname" "$tls" "$port" "$perftest")
      port=$((port + 1))
      [ -n "$gbs" ] || gbs="ucx_perftest gave no bandwidth (see hosts-perftest-${tlsname//[^A-Za-z0-9]/_}.log)"
    fi
    hosts_bench_lines+=("ucx_perftest tag_bw UCX_TLS=$tls: $( [[ $gbs =~ ^[0-9.]+$ ]] && echo "$gbs GB/s" || echo "$gbs")")
    both=$(hosts_both_ways "$tlsname" "$tls")
    if [ -n "$both" ]; then
      hosts_bench_lines+=("ucx-both-ways UCX_TLS=$tls: one way ${both% *} GB/s, both ways ${both#* } GB/s per direction")
    else
      hosts_bench_lines+=("ucx-both-ways UCX_TLS=$tls: no bandwidth (see hosts-both-ways-${tlsname//[^A-Za-z0-9]/_}.log)")
    fi
    ratio_args+=("$tlsname" "$tls" "$RESULTS/hosts-perf-${tlsname//[^A-Za-z0-9]/_}.json" "$gbs" "${both#* }")
  done
  for tlsname in ${HOSTS_PERF_TLS:-tcp shm}; do
    tls=$(hosts_tls "$tlsname")
    rm -f "$RESULTS/hosts-perf-${tlsname//[^A-Za-z0-9]/_}.json"
    if [ -z "$PERF_BIN" ]; then
      outcome="not run (alloy-perf was not built)"
    else
      outcome=$(hosts_perf_run "$tlsname" "$tls")
    fi
    case $outcome in ok | "not run"*) ;; *) hosts_bad=1 ;; esac
    hosts_bench_lines+=("alloy-perf UCX_TLS=$tls: $outcome")
  done
  hosts_ratio_text=$(hosts_ratios "${ratio_args[@]}" 2>&1)
}

mode_hosts() {
  local native_filter=${HOSTS_NATIVE_FILTER:-$HOSTS_NATIVE_DEFAULT} mpix_filter=${HOSTS_MPIX_FILTER:-$HOSTS_MPIX_DEFAULT}
  local runs=${HOSTS_RUNS:-$HOSTS_RUNS_DEFAULT} run layout tlsname
  # Check the list before spending time on the build.
  for run in $runs; do
    layout=${run%%:*} tlsname=${run#*:}
    if [ "$layout" = "$run" ] || [ -z "$tlsname" ] || [ -z "$(hosts_map "$layout")" ]; then
      fail_mode "HOSTS_RUNS: '$run' is not LAYOUT:TLS (layouts: 2h 3h 4h 2x2 2+1 or a map such as 0,0,1; TLS: tcp, shm or a UCX_TLS value)"
    fi
  done
  hosts_setup_ucx
  # pkg-config's answer is cached in the build folder: look it up afresh, so that a folder configured
  # before (without UCX, or with another) takes the UCX chosen now.
  configure_args=(-U 'UCX_*' -U 'pkgcfg_lib_UCX_*' -U '__pkg_config_checked_UCX' -U '__pkg_config_arguments_UCX')
  build alloy_gpu_tests alloy_mpix_gpu_tests alloy-perf ucx-both-ways
  hosts_check_ucx_build
  find_gpus
  find_nccl
  start_budget "${HOSTS_BUDGET:-500}"
  # The test runs leave this much of the budget to the benchmark, when it runs.
  hosts_reserve=0
  [ "${HOSTS_PERF:-1}" = 1 ] && hosts_reserve=${HOSTS_PERF_RESERVE:-360}
  for run in $runs; do
    layout=${run%%:*} tlsname=${run#*:}
    hosts_run "$layout" "$tlsname" native "$NATIVE_BIN" "$native_filter"
    hosts_run "$layout" "$tlsname" mpix "$MPIX_BIN" "$mpix_filter"
  done
  hosts_reserve=0
  hosts_ratio_text="(not run)"
  if [ "${HOSTS_PERF:-1}" = 1 ]; then
    hosts_bench
  fi

  local row
  {
    echo
    echo "==== gpu-check hosts summary ===="
    echo "machine: $NGPU x $gpu_name; $(hosts_placement "$runs"), split into virtual hosts by ALLOY_HOSTID; ${hosts_env[*]}"
    echo "UCX: $ucx_source; build: $build_status; $ucx_build"
    echo "NCCL: $( [ "$nccl_found" = 1 ] && echo "${ALLOY_PERF_NCCL_LIB:-libnccl.so.2 (loader path)}" || echo "not found: no NCCL columns, no Alloy/NCCL ratios")"
    echo "native filter: $native_filter"
    echo "mpix filter:   $mpix_filter"
    printf '%-5s %-9s %-17s %-6s %5s %6s %6s  %-30s %6s\n' layout "[hosts]" UCX_TLS suite tests passed failed status time
    for row in "${hosts_rows[@]}"; do echo "$row"; done
    for row in "${hosts_bench_lines[@]}"; do echo "$row"; done
    echo "ratios (targets: small time <= 0.25 of NCCL's, busbw >= 1.5x NCCL's, >= 0.8 of ucx_perftest's bandwidth):"
    echo "$hosts_ratio_text"
    result_line "$hosts_bad" "$hosts_not_run" "the status column and $RESULTS/hosts-*.log" HOSTS_BUDGET
    echo "results: $RESULTS"
  } | tee "$RESULTS/summary.txt"
  [ "$hosts_bad" -eq 0 ]
}
