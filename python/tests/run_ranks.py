"""The package's tests on every rank of an mpirun job: rank 0 reports each test by name, the others only
their failures; every rank exits with the worst outcome of all, so that mpirun fails if any rank did."""
from __future__ import annotations

import contextlib
import io
import os
import sys

import pytest
from mpi4py import MPI


def main() -> int:
    rank = MPI.COMM_WORLD.Get_rank()
    here = os.path.dirname(os.path.abspath(__file__))
    args = [here, "-p", "no:cacheprovider", "--color=no", *sys.argv[1:]]
    if rank == 0:
        code = int(pytest.main([*args, "-v", "-rs"]))
    else:
        # The other ranks' reports would interleave with rank 0's: kept, and shown only where they failed.
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            code = int(pytest.main([*args, "-q"]))
        if code != 0:
            print(f"[rank {rank}]\n{captured.getvalue()}", flush=True)
    worst = MPI.COMM_WORLD.allreduce(code, op=MPI.MAX)
    if rank == 0:
        print(f"alloy python tests on {MPI.COMM_WORLD.Get_size()} ranks: "
              f"{'passed' if worst == 0 else f'FAILED (worst pytest exit code {worst})'}", flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main())
