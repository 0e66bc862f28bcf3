#!/usr/bin/env bash
# Alloy's own MPI traffic calls PMPI_*: liballoy must import none of the functions that the layer
# (liballoy_mpi.so) defines, or the layer would re-enter itself and a profiling tool would count Alloy's
# calls as the program's. Usage: no_intercepted_imports.sh path/to/liballoy.so
set -uo pipefail
imports=$(nm -D --undefined-only "$1") || { echo "nm failed on $1"; exit 1; }
grep -q ' PMPI_Allreduce$' <<<"$imports" || { echo "$1 does not import PMPI_Allreduce: is it liballoy?"; exit 1; }
intercepted='MPI_(Allreduce|Iallreduce|Reduce|Bcast|Allgather|Allgatherv|Reduce_scatter|Reduce_scatter_block|Alltoall|Alltoallv|Ialltoallv)'
if grep -E " ${intercepted}\$" <<<"$imports"; then
  echo "$1 calls the functions above through MPI_*, which the layer intercepts; call PMPI_* instead"
  exit 1
fi
echo "no intercepted MPI function imported by $1"
