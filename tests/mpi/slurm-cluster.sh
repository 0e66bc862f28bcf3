#!/usr/bin/env bash
# A throwaway one-node Slurm cluster for the MPI/PMIx tests (srun --mpi=pmix direct launch).
#
#   tests/mpi/slurm-cluster.sh start <scratchdir>          write <scratchdir>/slurm.conf, start munged (if
#                                                          needed), slurmctld and slurmd, wait until the node
#                                                          is idle; prints "export SLURM_CONF=..." on stdout
#                                                          (so `eval "$(... start dir)"` works), chatter on stderr
#   tests/mpi/slurm-cluster.sh stop <scratchdir>           stop that slurmd and slurmctld (by their pid files
#                                                          only); idempotent
#   tests/mpi/slurm-cluster.sh run <scratchdir> <args...>  srun <args...> against that cluster, time-bounded
#
# Needs root (the daemons run as SlurmUser=root / SlurmdUser=root); otherwise prints "skipped: ..." and exits
# 77, the code ctest's SKIP_RETURN_CODE and automake treat as "skipped". Clients find the cluster only
# through SLURM_CONF; /etc/slurm/slurm.conf is never read or written. munged, when start has to launch it,
# stays running after stop: it is host-wide (one socket in /run/munge) and cheap, and others may use it.
#
# Environment knobs (all optional):
#   ALLOY_SLURMCTLD_PORT   slurmctld port (default 26817)
#   ALLOY_SLURMD_PORT      slurmd port    (default 26818)
#   ALLOY_SLURM_START_TIMEOUT  seconds to wait for the node to become idle (default 60)
#   ALLOY_SLURM_RUN_TIMEOUT    seconds a `run` may take before srun is killed (default 300)
#   ALLOY_SLURM_CPUS       CPUs declared for the node (default 8)
set -euo pipefail

prog=$(basename "$0")
ctld_port=${ALLOY_SLURMCTLD_PORT:-26817}
slurmd_port=${ALLOY_SLURMD_PORT:-26818}
start_timeout=${ALLOY_SLURM_START_TIMEOUT:-60}
run_timeout=${ALLOY_SLURM_RUN_TIMEOUT:-300}
node_cpus=${ALLOY_SLURM_CPUS:-8}

usage() {
  echo "usage: $prog start|stop <scratchdir>" >&2
  echo "       $prog run <scratchdir> <srun args...>" >&2
  exit 2
}

log() { echo "$prog: $*" >&2; }

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
case "$cmd" in start|stop|run) ;; *) usage ;; esac

if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: slurm cluster needs root"
  exit 77
fi

if [ ! -d "$dir" ]; then
  case "$cmd" in
    start) mkdir -p "$dir" ;;
    stop) exit 0 ;; # nothing was ever started there
    run) log "error: no folder $dir; run '$prog start $dir' first"; exit 1 ;;
  esac
fi
# Absolute path: the config and the pid files are used from other working directories.
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf
ctld_pidfile=$dir/run/slurmctld.pid
slurmd_pidfile=$dir/run/slurmd.pid
ctld_log=$dir/log/slurmctld.log
slurmd_log=$dir/log/slurmd.log

# Short host name: slurmd and slurmctld both compare NodeName/SlurmctldHost against the short name.
node=$(hostname -s 2>/dev/null || hostname)

export SLURM_CONF=$conf

tail_logs() {
  local f
  for f in "$ctld_log" "$slurmd_log"; do
    echo "----- last lines of $f -----" >&2
    if [ -f "$f" ]; then tail -n 30 "$f" >&2; else echo "(no log written)" >&2; fi
  done
  # What the daemons printed before they had a log file (config errors end up here).
  for f in "$dir/log/slurmctld.out" "$dir/log/slurmd.out"; do
    if [ -s "$f" ]; then
      echo "----- $f -----" >&2
      tail -n 30 "$f" >&2
    fi
  done
}

die() {
  log "error: $*"
  tail_logs
  exit 1
}

# A failed start leaves nothing running: report, show the logs, then stop whichever daemon did start.
start_failed() {
  log "error: $*"
  tail_logs
  cluster_stop || true
  exit 1
}

# True when the pid in pid file $1 is alive and is the daemon named $2 (guards against a stale pid file
# whose pid has been reused by an unrelated process).
pid_is() {
  local pidfile=$1 name=$2 pid
  [ -s "$pidfile" ] || return 1
  pid=$(tr -dc '0-9' <"$pidfile")
  [ -n "$pid" ] || return 1
  alive "$pid" "$name"
}

# True while pid $1 is a live (not zombie) process named $2. A daemonised slurmd/slurmctld is reparented to
# init; until init reaps it, an exited one lingers as a zombie, which counts as gone.
alive() {
  local pid=$1 name=$2 st
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
  st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
  [ -n "$st" ] && [ "$st" != Z ]
}

stop_daemon() {
  local pidfile=$1 name=$2 pid i
  if ! pid_is "$pidfile" "$name"; then
    rm -f "$pidfile"
    return 0
  fi
  pid=$(tr -dc '0-9' <"$pidfile")
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do # up to 15 s for a clean shutdown (slurmctld saves its state first)
    alive "$pid" "$name" || break
    sleep 0.1
  done
  if alive "$pid" "$name"; then
    log "$name (pid $pid) still running 15 s after SIGTERM, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      alive "$pid" "$name" || break
      sleep 0.1
    done
  fi
  # Give init a moment (bounded, best effort) to reap the exited daemon, so that a `pgrep slurmd` right
  # after stop finds nothing; some container inits reap only every few seconds.
  for ((i = 0; i < 100; i++)); do
    [ -d "/proc/$pid" ] || break
    sleep 0.1
  done
  rm -f "$pidfile"
}

cluster_stop() {
  # Cancel whatever jobs are still in this cluster first, so their slurmstepd processes exit with them
  # instead of outliving slurmd. Bounded: a dead controller must not make `stop` hang.
  if pid_is "$ctld_pidfile" slurmctld && [ -f "$conf" ]; then
    local jobs
    jobs=$(timeout 15 squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      log "cancelling leftover jobs: $(tr "\n" " " <<<"$jobs")"
      # shellcheck disable=SC2086
      timeout 15 scancel $jobs 2>/dev/null || true
      sleep 1
    fi
  fi
  stop_daemon "$slurmd_pidfile" slurmd
  stop_daemon "$ctld_pidfile" slurmctld
}

ensure_munge() {
  # auth/munge needs a running munged with the same key for the daemons and for srun. A system munged
  # (started by systemd or by an earlier run) is reused as is and never stopped by this script.
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    return 0
  fi
  command -v munged >/dev/null || die "munge is not working and munged is not installed"
  log "starting munged"
  mkdir -p /run/munge
  # --force: munged otherwise refuses to start as root / with a key file owned by the munge user.
  munged --force </dev/null || die "munged failed to start (see /var/log/munge/munged.log)"
  local i
  for ((i = 0; i < 50; i++)); do
    if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  tail -n 20 /var/log/munge/munged.log >&2 2>/dev/null || true
  die "munged started but munge -n | unmunge still fails"
}

write_conf() {
  mkdir -p "$dir/state" "$dir/spool" "$dir/run" "$dir/log"
  cat >"$conf" <<EOF
# Generated by tests/mpi/slurm-cluster.sh; a one-node test cluster, rewritten on every start.
ClusterName=alloyci
# SlurmctldHost(addr): the short host name must match this machine's, the address in parentheses avoids
# depending on the host name resolving (containers often cannot resolve their own name).
SlurmctldHost=${node}(127.0.0.1)
# Non-default ports so this cluster does not collide with a real Slurm (6817/6818) on the same host.
SlurmctldPort=${ctld_port}
SlurmdPort=${slurmd_port}
# Everything runs as root: the tests run as root in CI and there is no slurm user to rely on.
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# Plain /proc-based process tracking and no task binding: no cgroups needed (not available in containers).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# Allocate cores, not whole nodes, so several small jobs/steps can share the one node.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Use the CPUs=... declared below instead of the hardware slurmd detects; without this slurmd refuses the
# mismatch (we declare more CPUs than a small CI machine has so that -n 4 fits).
SlurmdParameters=config_overrides
# Each test chooses its PMI explicitly (srun --mpi=pmix); nothing is assumed.
MpiDefault=none
# Return the node to service when it registers with a valid config, even after it was marked DOWN
# (e.g. because slurmd was stopped while slurmctld kept running).
ReturnToService=2
# No mail program on CI machines; /bin/true keeps slurmctld from logging an error about it.
MailProg=/bin/true
# No accounting, no job completion logging, no accounting daemons.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
# Never kill srun for being "inactive" (a test blocked in a collective is bounded by run's timeout instead).
InactiveLimit=0
# Make step teardown quick: SIGKILL 5 s after SIGTERM instead of 30 s.
KillWait=5
# All state, spool, pid and log files live in the scratch folder, so nothing system-wide is touched.
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool
SlurmctldPidFile=${ctld_pidfile}
SlurmdPidFile=${slurmd_pidfile}
SlurmctldLogFile=${ctld_log}
SlurmdLogFile=${slurmd_log}
SlurmctldDebug=info
SlurmdDebug=info
# Empty plugin stack (/etc/slurm/plugstack.conf would otherwise pull in whatever SPANK plugins exist there).
PlugStackConfig=${dir}/plugstack.conf
NodeName=${node} NodeAddr=127.0.0.1 CPUs=${node_cpus} State=UNKNOWN
PartitionName=debug Nodes=${node} Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$dir/plugstack.conf"
}

cluster_start() {
  local d
  for d in slurmctld slurmd srun sinfo squeue scancel munge unmunge; do
    if ! command -v "$d" >/dev/null; then
      echo "skipped: $d not installed (scripts/install-deps.sh installs Slurm and munge)"
      exit 77
    fi
  done

  # A previous cluster in the same folder (or one that crashed) is stopped first, so start is repeatable.
  cluster_stop
  # Fresh state: no jobs, node states or cluster-name checks carried over from an earlier run.
  rm -rf "$dir/state" "$dir/spool" "$dir/log"
  write_conf
  ensure_munge

  # A port already taken (a second cluster, a stray daemon) would only show up as a fatal line in the
  # slurmctld log, or as slurmd timing out; say so directly.
  local port
  for port in "$ctld_port" "$slurmd_port"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      log "error: TCP port $port is already in use; set ALLOY_SLURMCTLD_PORT / ALLOY_SLURMD_PORT to free ports"
      exit 1
    fi
  done

  log "starting slurmctld (config $conf)"
  # -c: clear any saved job state (belt and braces: the state folder was just emptied).
  slurmctld -f "$conf" -c </dev/null >>"$dir/log/slurmctld.out" 2>&1 || start_failed "slurmctld failed to start"
  log "starting slurmd (node $node)"
  slurmd -f "$conf" -N "$node" </dev/null >>"$dir/log/slurmd.out" 2>&1 || start_failed "slurmd failed to start"

  # Bounded by wall-clock time (SECONDS), not by iterations: one sinfo can take seconds when the
  # controller does not answer.
  local state="" deadline=$((SECONDS + start_timeout)) d
  while :; do
    for d in slurmctld slurmd; do
      local pidfile=$dir/run/$d.pid
      # The daemons write their pid file just after forking; give them 5 s before missing means dead.
      if { [ -s "$pidfile" ] || [ "$SECONDS" -ge $((deadline - start_timeout + 5)) ]; } && ! pid_is "$pidfile" "$d"; then
        start_failed "$d is not running"
      fi
    done
    state=$(timeout 5 sinfo -h -o %T 2>/dev/null | head -n 1 || true)
    if [ "$state" = idle ]; then
      log "node $node is idle"
      echo "export SLURM_CONF=$conf"
      return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 1
  done
  start_failed "node did not become idle within ${start_timeout}s (last sinfo state: '${state:-none}')"
}

cluster_run() {
  [ $# -ge 1 ] || usage
  [ -f "$conf" ] || { log "error: no $conf; run '$prog start $dir' first"; exit 1; }
  pid_is "$ctld_pidfile" slurmctld || { log "error: slurmctld of $dir is not running"; exit 1; }
  # Drop job/step variables inherited from an enclosing Slurm job (CI itself may run under Slurm):
  # srun would otherwise try to run a step of that job on this cluster.
  local v
  for v in $(compgen -e | grep '^SLURM_' || true); do
    [ "$v" = SLURM_CONF ] || unset "$v"
  done
  # Two bounds: srun --time lets slurmctld kill the step (minutes, rounded up, one spare minute) and
  # timeout kills srun itself, which also tears the step down. Our --time comes first so that a --time in
  # the caller's arguments overrides it. --foreground keeps srun in the terminal's process group so that
  # it can still forward stdin when run interactively (timeout would otherwise background it and srun
  # would stop on SIGTTIN).
  local minutes=$(((run_timeout + 59) / 60 + 1))
  local rc=0
  timeout --foreground -k 10 "$run_timeout" srun --time="$minutes" "$@" || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    log "error: srun $* did not finish within ${run_timeout}s, killed"
  fi
  return "$rc"
}

case "$cmd" in
  start) cluster_start ;;
  stop) cluster_stop ;;
  run) cluster_run "$@" ;;
esac
