# shellcheck shell=bash
# The versus mode of scripts/gpu-check.sh (sourced by it after gpu-check-common.sh; it sources
# gpu-check-nccl.sh for nccl_wheel_include, nccl_home and nccl_tests_build, and uses the common find_gpus,
# find_nccl, build, perf_bin, run_bounded, run_status, budget, result_line, fail_mode and log): NVIDIA's nccl-tests on NVIDIA's NCCL against
# the same binaries on Alloy's libnccl.so.2, one rank per GPU, as an application sees the two libraries:
#   1. build Alloy's libnccl.so.2 (from the wheel's nccl.h), alloy-perf, link-ceiling and host-cost, nothing
#      else; measure the link ceiling of the GPUs (tools/link-ceiling) and the host's time per small call
#      (tools/host-cost: where it sets the pace of small operations);
#   2. build nccl-tests (.thirdparty/nccl-tests) once, against NVIDIA's NCCL, in a folder of its own: its binaries
#      find libnccl.so.2 through the loader's path, so LD_LIBRARY_PATH picks the library of each run;
#   3. every operation of VERSUS_OPS on NCCL, then on Alloy, then on each of Alloy's variants (its settings as
#      environment variables: A/B runs of one build);
#   4. alltoallv, which NCCL has no call for: alloy-perf, NCCL's grouped send/recv beside Alloy in each job;
#   5. one allreduce per CUDA graph replay, an inference server's pattern (graph_allreduce_time.py), on each;
#   6. with VERSUS_PROFILE=1, nsys over Alloy's all_reduce and broadcast and ncu over rank 0's all_reduce;
# then scripts/versus-table.py: a table per operation, the worst ratio of each size class against its target,
# the #wrong of every run, a plot. The logs go to $RESULTS/logs and end up packed in versus-logs.tar.gz: few
# files come back from a GPU machine.
# With VERSUS_HOSTS (a layout of the hosts mode: 2h, 2x2, 4h...) the same runs cross virtual hosts (issue #36):
# every rank gets ALLOY_HOSTID and NCCL_HOSTID from the hosts mode's wrapper, NCCL moves its bytes over its
# socket transport on loopback (NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo) and Alloy over UCX
# (VERSUS_HOSTS_TLS, tcp by default; built against the wheel in .whl/ as the hosts mode is); the link ceiling
# and host-cost are left out, tools/net-stages splits small operations into their stages, and the table
# judges #36's targets.

# shellcheck source=scripts/gpu-check-nccl.sh
source scripts/gpu-check-nccl.sh
# shellcheck source=scripts/gpu-check-hosts.sh
source scripts/gpu-check-hosts.sh

VERSUS_OPS_DEFAULT="all_reduce reduce_scatter broadcast all_gather alltoall sendrecv reduce"

# Each library configuration, in the order it runs: the tag in its logs' names and the tables, what it is,
# its library's folder, Alloy's settings for it (VAR=value words; none for NCCL).
versus_tags=()
versus_texts=()
versus_dirs=()
versus_envs=()
versus_add() { versus_tags+=("$1"); versus_texts+=("$2"); versus_dirs+=("$3"); versus_envs+=("$4"); }

# A setting's VAR=value words, or the mode stops: each becomes one mpirun -x argument. Arguments: the words,
# the setting's name.
versus_check_env() {
  local word words=()
  read -ra words <<<"$1"
  for word in "${words[@]}"; do
    [[ $word =~ ^[A-Za-z_][A-Za-z0-9_]*=.*$ ]] || fail_mode "$2: '$word' is not VAR=value"
  done
}

# Between virtual hosts (VERSUS_HOSTS): the hosts mode's map of ranks to hosts, and what every run of both
# libraries gets besides (mpirun -x words; the ranks' host names come from the wrapper).
versus_map=
versus_hosts_x=()
# What each run's program is started through: nothing on one host, the hosts mode's wrapper and its map.
versus_wrap=()

# Sets x_args: mpirun's -x arguments of configuration $1 (an index), NVLink multicast off and its settings.
x_args=()
versus_x() {
  local word words=()
  read -ra words <<<"${versus_envs[$1]}"
  x_args=(-x NCCL_NVLS_ENABLE=0 "${versus_hosts_x[@]}")
  for word in "${words[@]}"; do x_args+=(-x "$word"); done
}

# VERSUS_HOSTS set: checks the layout against the GPUs, sets the map, the wrapper and the runs' environment,
# finds the UCX to build with, and adds net-stages to the build. One rank per GPU as on one host.
versus_hosts_setup() {
  local tls
  versus_map=$(hosts_map "$VERSUS_HOSTS")
  [ -n "$versus_map" ] || fail_mode "VERSUS_HOSTS: '$VERSUS_HOSTS' is not a layout (2h, 3h, 4h, 2x2, 2+1 or a map such as 0,0,1,1)"
  [ "$(hosts_ranks "$versus_map")" -eq "$NGPU" ] ||
    fail_mode "VERSUS_HOSTS=$VERSUS_HOSTS has $(hosts_ranks "$versus_map") ranks; this run has one per GPU, $NGPU (set NGPU)"
  tls=$(hosts_tls "${VERSUS_HOSTS_TLS:-tcp}")
  versus_wrap=("${hosts_wrapper[@]}" "$versus_map")
  versus_hosts_x=(-x NCCL_IB_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x UCX_TLS="$tls")
  local word
  for word in "${hosts_env[@]}"; do versus_hosts_x+=(-x "$word"); done
  hosts_setup_ucx
  # As the hosts mode: pkg-config's answer looked up afresh (a folder configured before keeps its own).
  configure_args+=(-U 'UCX_*' -U 'pkgcfg_lib_UCX_*' -U '__pkg_config_checked_UCX' -U '__pkg_config_arguments_UCX')
}

# One run on NGPU ranks, one per GPU (nccl-tests and the graph test pick device = local rank): mpirun's -x
# arguments and the program after the run's name and its own cap in seconds; the output goes to
# logs/NAME.log. Appends its row to versus_rows. A run that goes wrong sets versus_bad, unless it is optional
# (the profiles); one the budget cut short or left out counts in versus_not_run.
versus_rows=()
versus_bad=0
versus_not_run=0
versus_optional=0
versus_reserve=0  # seconds of the budget kept for the runs after this one
versus_run() {
  local name=$1 cap=$2 limit rc=0 start status
  shift 2
  limit=$(run_limit "$cap" "$versus_reserve")
  if [ "$limit" -lt 10 ]; then
    versus_rows+=("$(printf '  %-36s %s' "$name" "NOT RUN (VERSUS_BUDGET spent)")")
    versus_not_run=$((versus_not_run + 1))
    return 1
  fi
  log "$name: at most $limit s"
  start=$(date +%s)
  # shellcheck disable=SC2154  # test_mpirun: gpu-check-common.sh's launcher (unbound, vader; -np set here)
  # Between virtual hosts MPI's own traffic stays off UCX (the hosts mode's ob1), and the program starts
  # through the wrapper that names its host: the arguments after the -x words are the program.
  local launcher=("${test_mpirun[@]}") xs=()
  while [ "$#" -gt 0 ] && [ "$1" = -x ]; do xs+=("$1" "$2"); shift 2; done
  [ -n "$versus_map" ] && launcher=("${hosts_mpirun[@]}")
  run_bounded "$limit" "$RESULTS/logs/$name.log" "${launcher[@]}" -np "$NGPU" "${xs[@]}" "${versus_wrap[@]}" "$@" || rc=$?
  status=$(run_status "$RESULTS/logs/$name.log" "$rc" "$limit" "$cap" 1 0 1)
  versus_rows+=("$(printf '  %-36s %-26s %4d s' "$name" "$status" "$(($(date +%s) - start))")")
  case $status in
    ok) return 0 ;;
    "OUT OF BUDGET"*) versus_not_run=$((versus_not_run + 1)) ;;
    *) [ "$versus_optional" = 1 ] || versus_bad=1 ;;
  esac
  return 1
}

# What a binary loads for libnccl.so.2 with the folder $1 first on the loader's path.
versus_ldd() {
  [ -x "$2" ] || { echo "($2 not built)"; return; }
  LD_LIBRARY_PATH="$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$2" 2>&1 | grep -o 'libnccl\.so\.2 => [^ ]*' ||
    echo "(no libnccl.so.2 in ldd $2)"
}

# The tool $1 from PATH, else from the folders after it (patterns: the newest version sorts last), or nothing.
versus_tool() {
  local name=$1 dir hit=
  shift
  command -v "$name" && return
  for dir in "$@"; do [ -x "$dir/$name" ] && hit=$dir/$name; done
  [ -n "$hit" ] && echo "$hit"
}

# VERSUS_PROFILE=1: nsys over Alloy's all_reduce at 512 MB and 1 MB and broadcast at 128 MB, a report per rank,
# each rank 0's kernel summary into prof-summary.txt; ncu over the first Alloy kernels of rank 0's all_reduce
# at 512 MB. Without -c (-c 0): the check's kernels would crowd the profile. Appends its lines to
# versus_prof_lines. Arguments: the nccl-tests folder, Alloy's library folder.
versus_prof_lines=()
versus_profile() {
  local tests_dir=$1 alloy_dir=$2 nsys ncu spec op bytes name rep summary=$RESULTS/prof-summary.txt
  nsys=$(versus_tool nsys /usr/local/cuda/bin /opt/nvidia/nsight-systems*/bin /usr/local/cuda/nsight-systems*/bin)
  ncu=$(versus_tool ncu /usr/local/cuda/bin /opt/nvidia/nsight-compute* /usr/local/cuda/nsight-compute*)
  mkdir -p "$RESULTS/prof"
  versus_optional=1
  versus_x 1
  local prof_env=("${x_args[@]}" -x LD_LIBRARY_PATH="$alloy_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  if [ -z "$nsys" ]; then
    versus_prof_lines+=("nsys not found (PATH, /usr/local/cuda/bin, the nsight-systems folders)")
  else
    versus_prof_lines+=("nsys: $nsys")
    for spec in all_reduce:512M all_reduce:1M broadcast:128M; do
      op=${spec%:*} bytes=${spec#*:} name=prof-${spec/:/-}
      versus_run "$name-np$NGPU" "${VERSUS_TIMEOUT:-90}" "${prof_env[@]}" "$nsys" profile --stats=true -t cuda \
        --force-overwrite true -o "$RESULTS/prof/$name-r%q{OMPI_COMM_WORLD_RANK}" \
        "$tests_dir/${op}_perf" -b "$bytes" -e "$bytes" -w 2 -n 5 -c 0
      rep=$RESULTS/prof/$name-r0.nsys-rep
      [ -f "$rep" ] || continue
      { echo "==== $name, rank 0: nsys stats --report cuda_gpu_kern_sum ===="
        timeout 120 "$nsys" stats --report cuda_gpu_kern_sum "$rep" 2>&1 | head -60; } >>"$summary"
    done
  fi
  if [ -z "$ncu" ]; then
    versus_prof_lines+=("ncu not found (PATH, /usr/local/cuda/bin, the nsight-compute folders)")
  else
    versus_prof_lines+=("ncu: $ncu")
    local tool=("$ncu" --set basic -k "${VERSUS_NCU_KERNELS:-regex:directKernel|reduceKernel|slotReduceKernel|p2pKernel}"
                --launch-count 3)
    # Rank 0 alone runs under ncu: the wrapper drops the tool's words on the other ranks.
    # shellcheck disable=SC2016  # expanded by each rank's shell
    versus_run "prof-ncu-all_reduce-512M-np$NGPU" "${VERSUS_TIMEOUT:-90}" "${prof_env[@]}" \
      sh -c 'n=$1; shift; [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || shift "$n"; exec "$@"' sh "${#tool[@]}" \
      "${tool[@]}" "$tests_dir/all_reduce_perf" -b 512M -e 512M -w 2 -n 5 -c 0
    [ -f "$RESULTS/logs/prof-ncu-all_reduce-512M-np$NGPU.log" ] &&
      { echo "==== prof-ncu-all_reduce-512M, rank 0: ${tool[*]} ===="
        sed -n '/==PROF==/,$p' "$RESULTS/logs/prof-ncu-all_reduce-512M-np$NGPU.log" | head -300; } >>"$summary"
  fi
  versus_optional=0
  # Rank 0's reports come back where they are small; the rest stays out of what comes back.
  local reps=()
  shopt -s nullglob
  reps=("$RESULTS"/prof/*-r0.nsys-rep)
  shopt -u nullglob
  if [ ${#reps[@]} -gt 0 ] && [ "$(du -cm "${reps[@]}" | tail -1 | cut -f1)" -le 12 ]; then
    tar -czf "$RESULTS/versus-prof.tar.gz" -C "$RESULTS/prof" "${reps[@]##*/}" &&
      versus_prof_lines+=("nsys reports of rank 0: versus-prof.tar.gz")
  elif [ ${#reps[@]} -gt 0 ]; then
    versus_prof_lines+=("nsys reports of rank 0: over 12 MB, not kept (the kernel summaries are in prof-summary.txt)")
  fi
  rm -rf "$RESULTS/prof"
}

mode_versus() {
  local ops=${VERSUS_OPS:-$VERSUS_OPS_DEFAULT} op known variant variants=() words=()
  rm -rf "$RESULTS/logs" "$RESULTS/prof"
  rm -f "$RESULTS"/versus.png "$RESULTS"/versus-logs.tar.gz "$RESULTS"/versus-prof.tar.gz "$RESULTS"/prof-summary.txt
  # The settings first: a typo stops the mode before anything is built.
  known=$(sed -n 's/^BIN_FILES_LIST := //p' .thirdparty/nccl-tests/src/Makefile 2>/dev/null)
  for op in $ops; do
    [ -z "$known" ] || [[ " $known " == *" $op "* ]] || fail_mode "VERSUS_OPS: no nccl-tests operation '$op' ($known)"
  done
  versus_check_env "${VERSUS_ENV:-}" VERSUS_ENV
  IFS=';' read -ra variants <<<"${VERSUS_ALLOY_VARIANTS:-}"
  for variant in "${variants[@]}"; do versus_check_env "$variant" VERSUS_ALLOY_VARIANTS; done
  find_gpus
  mkdir -p "$RESULTS/logs" || exit 1
  # nccl-tests then takes device = local rank, one GPU per rank (the nccl mode's runs share device 0).
  unset NCCL_TESTS_DEVICE
  find_nccl
  local include nccl_lib=${ALLOY_PERF_NCCL_LIB:-} nccl_dir
  include=$(nccl_wheel_include)
  [ -n "$include" ] || fail_mode "no nccl.h of the nvidia-nccl wheel in /opt/torch/.venv"
  [ -f "$nccl_lib" ] || fail_mode "no NVIDIA libnccl.so.2 by path: set ALLOY_PERF_NCCL_LIB"
  nccl_dir=$(cd "$(dirname "$nccl_lib")" && pwd)
  configure_args+=("-DALLOY_NCCL_INCLUDE_DIR=$include")
  local targets=(alloy_nccl alloy-perf link-ceiling host-cost)
  if [ -n "${VERSUS_HOSTS:-}" ]; then
    versus_hosts_setup
    targets=(alloy_nccl alloy-perf net-stages)
  fi
  build "${targets[@]}"
  [ -e "$BUILD_DIR/nccl/libnccl.so.2" ] ||
    fail_mode "no $BUILD_DIR/nccl/libnccl.so.2 after the build: was nccl.h taken? (see configure.log)"
  [ -n "$versus_map" ] && hosts_check_ucx_build "$BUILD_DIR/nccl/libnccl.so.2"
  local alloy_dir build_abs
  alloy_dir=$(cd "$BUILD_DIR/nccl" && pwd)
  build_abs=$(cd "$BUILD_DIR" && pwd)

  versus_add nccl "NVIDIA's NCCL $nccl_lib" "$nccl_dir" ""
  versus_add alloy "Alloy $alloy_dir/libnccl.so.2${VERSUS_ENV:+ with $VERSUS_ENV}" "$alloy_dir" "${VERSUS_ENV:-}"
  for variant in "${variants[@]}"; do
    read -ra words <<<"$variant"
    [ ${#words[@]} -gt 0 ] || continue
    versus_add "alloy-v$((${#versus_tags[@]} - 1))" "Alloy with ${VERSUS_ENV:+$VERSUS_ENV }${words[*]}" "$alloy_dir" \
      "${VERSUS_ENV:-} ${words[*]}"
  done

  # nccl-tests, once, against NVIDIA's NCCL (the nccl mode's build in .thirdparty/nccl-tests/build is Alloy's).
  local tests_dir=$build_abs/versus-nccl-tests tests_status=ok home
  if [ ! -f .thirdparty/nccl-tests/src/Makefile ]; then
    tests_status="NOT BUILT: no source in .thirdparty/nccl-tests (NVIDIA's nccl-tests 2.17.10: fetch it, carry it)"
  elif ! home=$(nccl_home "$build_abs/versus-nccl-home" "$include" "$nccl_dir") ||
       ! nccl_tests_build "$home" "$tests_dir" "$RESULTS/logs/nccl-tests-build.log"; then
    tests_status="build FAILED (logs/nccl-tests-build.log)"
  fi
  [ "$tests_status" = ok ] || versus_bad=1
  log "nccl-tests: $tests_status"

  start_budget "${VERSUS_BUDGET:-420}"
  # The link ceiling of these GPUs (tools/link-ceiling), which the large sizes are judged against too.
  local probe=$BUILD_DIR/tools/link-ceiling/link-ceiling
  if [ -x "$probe" ] && [ -z "$versus_map" ]; then
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1))) timeout 120 "$probe" >"$RESULTS/logs/versus-ceiling.log" 2>&1 ||
      log "link-ceiling FAILED (logs/versus-ceiling.log)"
  fi
  local cap=${VERSUS_TIMEOUT:-90} i tag lib host_cost=$BUILD_DIR/tools/host-cost/host-cost
  local net_stages=$BUILD_DIR/tools/net-stages/net-stages bytes
  versus_optional=1  # measurements beside the table: a failure shows in its row only
  if [ -x "$host_cost" ] && [ -z "$versus_map" ]; then
    versus_run "versus-host-cost-np$NGPU" 60 -x NCCL_NVLS_ENABLE=0 "$host_cost"
  fi
  if [ -n "$versus_map" ]; then
    # Every configuration of Alloy (1 and up; 0 is NCCL), so that a variant's stages stand beside the default's.
    for i in "${!versus_tags[@]}"; do
      [ "$i" -gt 0 ] || continue
      versus_x "$i"
      for bytes in ${VERSUS_STAGES_BYTES:-8 8192}; do
        versus_run "versus-net-stages-${bytes}B-${versus_tags[$i]}-np$NGPU" 60 "${x_args[@]}" "$net_stages" -n 32 -b "$bytes"
      done
    done
  fi
  versus_optional=0
  # Two cycles by default, the table from the second: in a fresh process the first few milliseconds run
  # slow (session 12: send/recv's 8 B and 32 B rows at 10.1-10.5 us in a run whose later rows took 7.5-7.9,
  # after nccl-tests' own warm-up of every size).
  local sizes=(-b "${VERSUS_MINBYTES:-8}" -e "${VERSUS_MAXBYTES:-1G}" -f "${VERSUS_FACTOR:-4}"
               -w "${VERSUS_WARMUP:-5}" -n "${VERSUS_ITERS:-20}")
  local cycles=(-N "${VERSUS_CYCLES:-2}")  # nccl-tests only: alloy-perf has no such option
  # The nccl-tests runs keep time for the alltoallv and graph runs of every configuration after them, but
  # at most half of what is left: the table comes first (a budget below the whole reserve once ran none).
  versus_reserve=$((20 + 40 * (${#versus_tags[@]} - 1)))
  # shellcheck disable=SC2154  # deadline: start_budget of gpu-check-common.sh
  local left=$((deadline - $(date +%s)))
  if [ "$versus_reserve" -gt $((left / 2)) ]; then
    log "VERSUS_BUDGET: $left s left for ${#versus_tags[@]} configurations; the alltoallv and graph runs keep $((left / 2)) s of it instead of $versus_reserve"
    versus_reserve=$((left / 2))
  fi
  for op in $ops; do
    [ "$tests_status" = ok ] || break
    for i in "${!versus_tags[@]}"; do
      versus_x "$i"
      versus_run "versus-$op-${versus_tags[$i]}-np$NGPU" "$cap" "${x_args[@]}" \
        -x LD_LIBRARY_PATH="${versus_dirs[$i]}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$tests_dir/${op}_perf" "${sizes[@]}" "${cycles[@]}" -c 1
    done
  done
  versus_reserve=0
  PERF_BIN=$(perf_bin)
  if [ -z "$PERF_BIN" ]; then
    versus_rows+=("  alltoallv: NOT RUN (alloy-perf was not built)")
    versus_bad=1
  fi
  for i in "${!versus_tags[@]}"; do
    # alloy-perf runs NCCL beside each of Alloy's configurations.
    if [ "$i" -eq 0 ] || [ -z "$PERF_BIN" ]; then continue; fi
    tag=${versus_tags[$i]}
    versus_x "$i"
    versus_run "versus-alltoallv-$tag-np$NGPU" "$cap" "${x_args[@]}" -x ALLOY_PERF_NCCL_LIB="$nccl_lib" \
      "$PERF_BIN" -o alltoallv "${sizes[@]}" --compare nccl --json "$RESULTS/logs/versus-alltoallv-$tag-np$NGPU.json"
  done
  for i in "${!versus_tags[@]}"; do
    lib=$nccl_lib
    [ "$i" -gt 0 ] && lib=$alloy_dir/libnccl.so.2
    versus_x "$i"
    versus_run "versus-graph-${versus_tags[$i]}-np$NGPU" "$cap" "${x_args[@]}" -x PATH \
      python3 tests/nccl_frameworks/graph_allreduce_time.py "$lib"
  done
  [ "${VERSUS_PROFILE:-0}" = 1 ] && versus_profile "$tests_dir" "$alloy_dir"

  local table rc=0 lib_args=() row nccl_load alloy_load
  for i in "${!versus_tags[@]}"; do lib_args+=(--lib "${versus_tags[$i]}=${versus_texts[$i]}"); done
  [ -n "$versus_map" ] && lib_args+=(--between-hosts)
  table=$(python3 scripts/versus-table.py --logs "$RESULTS/logs" --np "$NGPU" --ops "$ops" "${lib_args[@]}" \
    --png "$RESULTS/versus.png" 2>&1) || rc=$?
  case $rc in
    0) ;;
    3) versus_bad=1 ;;  # wrong elements: the table says where
    *) versus_bad=1; table+=$'\n'"scripts/versus-table.py FAILED (exit $rc)" ;;
  esac
  nccl_load=$(versus_ldd "$nccl_dir" "$tests_dir/all_reduce_perf")
  alloy_load=$(versus_ldd "$alloy_dir" "$tests_dir/all_reduce_perf")
  # shellcheck disable=SC2154  # gpu_name, build_status: set by find_gpus and build (gpu-check-common.sh)
  {
    echo
    echo "==== gpu-check versus summary ===="
    echo "machine: $NGPU x $gpu_name; one rank per GPU; NCCL_NVLS_ENABLE=0"
    [ -n "$versus_map" ] && echo "between virtual hosts: VERSUS_HOSTS=$VERSUS_HOSTS (host of each rank: $versus_map);" \
      "${versus_hosts_x[*]}; $ucx_source; $ucx_build"
    echo "NCCL:  $nccl_lib; nccl-tests load $nccl_load"
    echo "Alloy: $alloy_dir/libnccl.so.2 (nccl.h of $include); nccl-tests load $alloy_load"
    echo "build: $build_status; nccl-tests (against NCCL, in $tests_dir): $tests_status"
    echo "runs: nccl-tests ${sizes[*]} ${cycles[*]} -c 1; alloy-perf -o alltoallv ${sizes[*]} --compare nccl;" \
      "graph_allreduce_time.py"
    for row in "${versus_rows[@]}"; do echo "$row"; done
    for row in "${versus_prof_lines[@]}"; do echo "profile: $row"; done
    [ -f "$RESULTS/logs/versus-host-cost-np$NGPU.log" ] &&
      sed -n '/^host-cost:/,$p' "$RESULTS/logs/versus-host-cost-np$NGPU.log" | head -40
    for f in "$RESULTS"/logs/versus-net-stages-*B-*-np"$NGPU".log; do
      [ -f "$f" ] && echo "${f##*/}:" && sed -n '/^net-stages:/,$p' "$f" | head -40
    done
    echo "$table"
    result_line "$versus_bad" "$versus_not_run" "the runs above and versus-logs.tar.gz" VERSUS_BUDGET
    echo "results: $RESULTS: summary.txt, versus.png, the logs in versus-logs.tar.gz"
  } | tee "$RESULTS/summary.txt"
  versus_pack
  [ "$versus_bad" -eq 0 ]
}

# Packs the logs (with the build's, the summary and the plot) into versus-logs.tar.gz and removes them, so
# that a handful of files come back from the GPU machine.
versus_pack() {
  local f files=(logs)
  mv -f "$RESULTS/configure.log" "$RESULTS/build.log" "$RESULTS/logs/" 2>/dev/null
  for f in summary.txt versus.png prof-summary.txt; do [ -f "$RESULTS/$f" ] && files+=("$f"); done
  if tar -czf "$RESULTS/versus-logs.tar.gz" -C "$RESULTS" "${files[@]}"; then
    rm -rf "$RESULTS/logs"
  else
    log "could not pack the logs: they stay in $RESULTS/logs"
  fi
}
