#!/usr/bin/env bash
# Unpacks pip's libucx-cu13 wheel and makes it usable as a UCX installation, for machines that have a UCX
# runtime but no headers (the GPU machines: docs/benchmarks.md, "Across virtual hosts"). The wheel carries
# headers, libucp/libuct/libucs/libucm, the cuda_copy/cuda_ipc and cma modules, ucx_perftest and
# pkg-config files whose prefix is the wheel builder's folder; this script rewrites that prefix.
#
#   source scripts/ucx-wheel.sh [WHEEL]        unpack (once) and export the variables below into this shell
#   eval "$(bash scripts/ucx-wheel.sh [WHEEL])" the same from a script that prefers not to source
#
# WHEEL defaults to the one libucx_cu13-*.whl in .whl/ of the repository. Settings (environment):
#   UCXWHEEL_DIR   where to unpack (default /tmp/ucx-wheel); reused while it holds the same wheel
# Exported:
#   PKG_CONFIG_PATH     the wheel's lib/pkgconfig first: `pkg-config ucx` (and CMake's) find the wheel
#   LD_LIBRARY_PATH     libucx/lib and libucx_cu13.libs first: programs load the wheel's libucp.so.0, not
#                       a system UCX of the same soname
#   UCX_MODULE_DIR      libucx/lib/ucx: UCX loads the wheel's modules, never another version's
#   UCXWHEEL_DIR, UCXWHEEL_VERSION, UCXWHEEL_PERFTEST (the wheel's ucx_perftest), UCXWHEEL_INFO (ucx_info)
# (Not UCX_*: UCX warns about every UCX_ variable it does not know.)
# Returns (sourced) or exits non-zero with a message when there is no wheel or it cannot be unpacked.

# Everything lives in ucxwheel_* functions: sourcing this file leaves no other names in the caller's shell
# than those functions and the exported variables.
ucxwheel_say() { echo "ucx-wheel: $*" >&2; }

# Prints the wheel to use: $1, else the single .whl/libucx_cu13-*.whl beside this script's repository.
ucxwheel_find() {
  if [ -n "${1:-}" ]; then
    [ -f "$1" ] || { ucxwheel_say "no such file: $1"; return 1; }
    echo "$1"
    return
  fi
  local repo found=()
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || return 1
  local f
  for f in "$repo"/.whl/libucx_cu13-*.whl; do [ -f "$f" ] && found+=("$f"); done
  if [ ${#found[@]} -eq 0 ]; then
    ucxwheel_say "no wheel: $repo/.whl/libucx_cu13-*.whl does not exist (see docs/benchmarks.md)"
    return 1
  fi
  if [ ${#found[@]} -gt 1 ]; then
    ucxwheel_say "more than one wheel in $repo/.whl (keep one): ${found[*]##*/}"
    return 1
  fi
  echo "${found[0]}"
}

# Unpacks wheel $1 into $2 unless $2 already holds it (a stamp names the wheel and its size). Unpacks
# next to $2 and renames, so a run cut short never leaves a half tree that looks complete. Python's
# zipfile does not restore permissions: the executable bits come back from each entry's attributes.
ucxwheel_unpack() {
  local wheel=$1 dir=$2 stamp
  stamp="$(basename "$wheel") $(wc -c <"$wheel")"
  if [ -f "$dir/.unpacked" ] && [ "$(cat "$dir/.unpacked")" = "$stamp" ]; then
    return 0
  fi
  command -v python3 >/dev/null || { ucxwheel_say "python3 is needed to unpack the wheel"; return 1; }
  local tmp="$dir.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$(dirname "$dir")" || return 1
  if ! python3 - "$wheel" "$tmp" <<'PY'
import os
import sys
import zipfile

wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        path = z.extract(info, dest)
        mode = (info.external_attr >> 16) & 0o777
        if mode and not info.is_dir():
            os.chmod(path, mode)
PY
  then
    ucxwheel_say "cannot unpack $wheel"
    rm -rf "$tmp"
    return 1
  fi
  ucxwheel_fix_pc "$tmp/libucx" "$dir/libucx" || { rm -rf "$tmp"; return 1; }
  echo "$stamp" >"$tmp/.unpacked"
  rm -rf "$dir" && mv "$tmp" "$dir"
}

# The wheel's .pc files name the folder the wheel was built in as their prefix: point them at $2, where
# the tree ($1 now) will live. Writes a ucx.pc of its own if a future wheel comes without one.
ucxwheel_fix_pc() {
  local tree=$1 final=$2 pc version
  mkdir -p "$tree/lib/pkgconfig" || return 1
  if [ ! -f "$tree/lib/pkgconfig/ucx.pc" ]; then
    version=$(cat "$tree/UCX_WHEEL_VERSION.txt" 2>/dev/null || echo 0)
    # libucp needs libuct, libucs and libucm; name them all so that static-minded linkers are served too.
    cat >"$tree/lib/pkgconfig/ucx.pc" <<EOF
prefix = $final
libdir = \${prefix}/lib
includedir = \${prefix}/include

Name: ucx
Description: Unified Communication X (from the libucx wheel)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lucp -luct -lucs -lucm
EOF
  fi
  for pc in "$tree"/lib/pkgconfig/*.pc; do
    sed -i -E "s|^prefix[[:space:]]*=.*|prefix = $final|" "$pc" || return 1
  done
  [ -f "$tree/include/ucp/api/ucp.h" ] || { ucxwheel_say "the wheel has no include/ucp/api/ucp.h"; return 1; }
  [ -e "$tree/lib/libucp.so.0" ] || { ucxwheel_say "the wheel has no lib/libucp.so.0"; return 1; }
}

# Prepends $2 to the ':'-separated list in variable $1 (once).
ucxwheel_prepend() {
  local name=$1 item=$2 list=${!1:-}
  case ":$list:" in *":$item:"*) return ;; esac
  printf -v "$name" '%s' "$item${list:+:$list}"
  export "${name?}"
}

ucxwheel_main() {
  local wheel dir arg=${1:-}
  # A sourced file sees its caller's arguments when given none of its own: take only a wheel's name.
  case $arg in *.whl) ;; *) arg= ;; esac
  wheel=$(ucxwheel_find "$arg") || return 1
  dir=${UCXWHEEL_DIR:-/tmp/ucx-wheel}
  ucxwheel_unpack "$wheel" "$dir" || return 1
  local lib="$dir/libucx/lib"
  ucxwheel_prepend PKG_CONFIG_PATH "$lib/pkgconfig"
  ucxwheel_prepend LD_LIBRARY_PATH "$dir/libucx_cu13.libs"
  ucxwheel_prepend LD_LIBRARY_PATH "$lib"
  export UCX_MODULE_DIR="$lib/ucx"
  export UCXWHEEL_DIR="$dir"
  UCXWHEEL_VERSION=$(sed -n 's/^Version:[[:space:]]*//p' "$lib/pkgconfig/ucx.pc")
  export UCXWHEEL_VERSION
  export UCXWHEEL_PERFTEST="$dir/libucx/bin/ucx_perftest"
  export UCXWHEEL_INFO="$dir/libucx/bin/ucx_info"
  ucxwheel_say "UCX $UCXWHEEL_VERSION from $(basename "$wheel") in $dir"
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  ucxwheel_main "$@"
else
  set -uo pipefail
  ucxwheel_main "$@" || exit 1
  for v in PKG_CONFIG_PATH LD_LIBRARY_PATH UCX_MODULE_DIR UCXWHEEL_DIR UCXWHEEL_VERSION UCXWHEEL_PERFTEST UCXWHEEL_INFO; do
    printf 'export %s=%q\n' "$v" "${!v}"
  done
fi
