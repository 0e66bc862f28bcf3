#!/usr/bin/env bash
# Installs every build and test dependency of Alloy from Debian's packages. Idempotent: packages already
# present are skipped by apt, and the script does nothing at all when every package is installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config gfortran
  openmpi-bin libopenmpi-dev libpmix-dev
  libucx-dev ucx-utils libibverbs-dev rdma-core
  libgtest-dev googletest
  slurmd slurmctld slurm-client munge
  python3 valgrind
  python3-venv python3-dev python3-mpi4py python3-pytest python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if ! command -v apt-get >/dev/null; then
  echo "install-deps: missing ${missing[*]} and no apt-get here; install them with your package manager" >&2
  exit 1
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
