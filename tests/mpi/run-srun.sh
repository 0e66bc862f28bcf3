#!/usr/bin/env bash
# Runs a test program under srun --mpi=pmix on a one-node Slurm cluster started for this run and
# stopped afterwards, whatever happens. Usage: run-srun.sh <scratchdir> <ntasks> <program> [args...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scratch=$1 ntasks=$2
shift 2
"$here/slurm-cluster.sh" start "$scratch" >/dev/null || exit $?
trap '"$here/slurm-cluster.sh" stop "$scratch" >/dev/null' EXIT
"$here/slurm-cluster.sh" run "$scratch" --mpi=pmix -n "$ntasks" "$@"
