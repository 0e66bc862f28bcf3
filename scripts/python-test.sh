#!/usr/bin/env bash
# Builds the alloy Python package (python/, scikit-build-core and nanobind, the library from this tree) into
# a virtual environment and runs its tests under mpirun on 2 and 4 ranks. Part of the README's test command
# (scripts/test.sh). The environment sees the system's packages: mpi4py, pytest and numpy come from
# Debian's (scripts/install-deps.sh), so that mpi4py is the one built for this machine's Open MPI.
#   ALLOY_PYTHON       the interpreter the environment is made from (default /usr/bin/python3)
#   ALLOY_PYTHON_VENV  where the environment goes (default build/python-venv)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${ALLOY_PYTHON:-/usr/bin/python3}
venv=${ALLOY_PYTHON_VENV:-build/python-venv}
[ -x "$venv/bin/python" ] || "$python" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0"
"$venv/bin/python" -m pip install -q --no-build-isolation ./python
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
status=0
for np in 2 4; do
  echo "python tests, $np ranks"
  timeout 600 mpirun --oversubscribe --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
    -np "$np" "$venv/bin/python" python/tests/run_ranks.py || status=1
done
exit "$status"
