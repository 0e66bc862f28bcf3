#!/usr/bin/env bash
# The include rule of docs/architecture.md, "Layers": lib/core and lib/coll reach the transports and the
# bootstraps through their interfaces only (local_transport.h, remote_channel.h, bootstrap.h), so they
# include nothing from the folders that build them (lib/assembly) or that implement them; and lib/core,
# which lib/coll builds on, includes nothing of lib/coll. Prints every
# include that breaks the rule and fails; prints each folder's includes by folder when it holds.
#   check_layers.sh <repository root>
set -u
root=${1:?usage: check_layers.sh <repository root>}
cd "$root/lib" || exit 2
forbidden="assembly net net_ucx net_verbs transport_ipc bootstrap_pmix bootstrap_socket nccl"
status=0
for layer in core coll; do
  declare -A reached=()
  banned=$forbidden
  [ "$layer" = core ] && banned="$forbidden coll"
  for file in "$layer"/*.h "$layer"/*.cc "$layer"/*.cu "$layer"/*.cuh; do
    [ -f "$file" ] || continue
    while read -r header; do
      home=""
      for dir in */; do
        [ -f "$dir$header" ] && { home=${dir%/}; break; }
      done
      [ -n "$home" ] || continue  # a system or public header
      reached[$home]=1
      for bad in $banned; do
        if [ "$home" = "$bad" ]; then
          echo "layer violation: lib/$file includes $header (lib/$home)"
          status=1
        fi
      done
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
  done
  echo "lib/$layer includes from: $(printf '%s\n' "${!reached[@]}" | sort | tr '\n' ' ')"
  unset reached
done
exit $status
