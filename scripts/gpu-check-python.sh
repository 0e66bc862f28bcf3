# shellcheck shell=bash
# The python mode of scripts/gpu-check.sh (sourced by it after gpu-check-common.sh; uses the common
# find_gpus, run_bounded, start_budget, run_limit, result_line and log): the alloy Python package's GPU half, one rank per GPU (issue #33):
#   1. the package built with the GPU machine's Python (PYTHON_BIN, default /opt/torch/.venv/bin/python3,
#      which has CuPy, PyTorch and mpi4py), from this tree, into a folder of its own ($PYTHON_SITE); the
#      machine cannot reach PyPI, so the build's own needs (scikit-build-core, nanobind, and pathspec and
#      packaging where missing) come as wheels carried in .whl/ (docs/python.md says which);
#   2. python/tests under mpirun at 2 ranks and at NGPU ranks (the GPU tests: CuPy and PyTorch collectives
#      against host references, alltoallv against mpi4py's Alltoallv, CUDA graphs replayed 100 times);
#   3. python/tests again at 4 ranks on 2 virtual hosts of 2 (ALLOY_HOSTID by the hosts mode's wrapper,
#      interleaved; UCX over tcp between them), where there are 4 GPUs and a UCX to build against (the
#      hosts mode's: the libucx-cu13 wheel in .whl/, else a system UCX); the package is then built with it;
#   4. python/benchmarks/call_cost.py: the Python layer's time per call over the C call.
# A summary last. Settings: PYTHON_BIN, PYTHON_SITE (default /tmp/alloy-python), PYTHON_BUDGET (300 s).

# shellcheck source=scripts/gpu-check-hosts.sh
source scripts/gpu-check-hosts.sh  # the virtual hosts: hosts_wrapper, hosts_env, hosts_mpirun, hosts_setup_ucx

# Whether the hosts mode finds a UCX to build against (hosts_setup_ucx would end the mode without one).
python_has_ucx() {
  compgen -G ".whl/libucx_cu13-*.whl" >/dev/null || { command -v pkg-config >/dev/null && pkg-config --exists ucx; }
}

mode_python() {
  find_gpus
  local py=${PYTHON_BIN:-/opt/torch/.venv/bin/python3} site=${PYTHON_SITE:-/tmp/alloy-python}
  local build_log=$RESULTS/python-build.log lines=() bad=0 vhosts=0
  [ -x "$py" ] || { log "no Python at $py (set PYTHON_BIN)"; exit 1; }
  if [ "$NGPU" -ge 4 ] && python_has_ucx; then
    hosts_setup_ucx  # before the build: the package's CMake then finds this UCX
    vhosts=1
  fi
  shopt -s nullglob
  local wheels=(.whl/*.whl)
  shopt -u nullglob
  {
    # The build's tools first (offline: only what .whl/ holds), then the package with them.
    [ ${#wheels[@]} -eq 0 ] || "$py" -m pip install --no-index --no-deps --target "$site/tools" "${wheels[@]}" &&
      PYTHONPATH="$site/tools${PYTHONPATH:+:$PYTHONPATH}" "$py" -m pip install --no-index --no-deps \
        --no-build-isolation --target "$site/lib" ./python
  } >"$build_log" 2>&1 || { log "the package did not build (see $build_log)"; exit 1; }
  export PYTHONPATH="$site/lib${PYTHONPATH:+:$PYTHONPATH}"
  # pytest from the carried wheels where the environment lacks it.
  "$py" -c "import pytest" 2>/dev/null || PYTHONPATH="$PYTHONPATH:$site/tools"
  start_budget "${PYTHON_BUDGET:-300}"
  local np rc
  for np in $(printf '%s\n' 2 "$NGPU" | sort -un); do  # 2, and every GPU where there are more
    rc=0
    run_bounded "$(run_limit 150)" "$RESULTS/python-tests-np$np.log" mpirun -np "$np" --bind-to none \
      -x PYTHONPATH -x NCCL_NVLS_ENABLE "$py" python/tests/run_ranks.py || rc=$?
    lines+=("python tests np $np: $(grep -E '[0-9]+ passed|[0-9]+ failed' "$RESULTS/python-tests-np$np.log" |
      tail -1 | tr -d '=') (exit $rc)")
    [ "$rc" -ne 0 ] && bad=1
  done
  if [ "$vhosts" = 1 ]; then
    rc=0
    run_bounded "$(run_limit 150)" "$RESULTS/python-tests-2x2.log" env "${test_env[@]}" "${hosts_env[@]}" UCX_TLS=tcp \
      "${hosts_mpirun[@]}" -np 4 -x PYTHONPATH -x NCCL_NVLS_ENABLE "${hosts_wrapper[@]}" 0,1,0,1 \
      "$py" python/tests/run_ranks.py || rc=$?
    lines+=("python tests 2 virtual hosts x 2 ($ucx_source, tcp): $(grep -E '[0-9]+ passed|[0-9]+ failed' \
      "$RESULTS/python-tests-2x2.log" | tail -1 | tr -d '=') (exit $rc)")
    [ "$rc" -ne 0 ] && bad=1
  else
    lines+=("python tests 2 virtual hosts x 2: not run ($NGPU GPU(s); 4 and a UCX needed: see the hosts mode)")
  fi
  rc=0
  run_bounded "$(run_limit 60)" "$RESULTS/python-call-cost.log" mpirun -np 2 --bind-to none -x PYTHONPATH \
    -x NCCL_NVLS_ENABLE "$py" python/benchmarks/call_cost.py || rc=$?
  [ "$rc" -ne 0 ] && bad=1
  {
    echo
    echo "==== gpu-check python summary ===="
    # shellcheck disable=SC2154  # gpu_name: set by find_gpus (gpu-check-common.sh)
    echo "machine: $NGPU x $gpu_name; one rank per GPU; Python $("$py" --version 2>&1)"
    for line in "${lines[@]}"; do echo "$line"; done
    grep -A6 '^call_cost' "$RESULTS/python-call-cost.log" || echo "call cost: FAILED (see $RESULTS/python-call-cost.log)"
    result_line "$bad" 0 "$RESULTS/python-*.log" PYTHON_BUDGET
  } | tee "$RESULTS/summary.txt"
  [ "$bad" -eq 0 ]
}
