"""Alloy for Python: GPU collectives on communicators made from mpi4py communicators.

    from mpi4py import MPI
    import alloy
    with alloy.Comm.from_mpi(MPI.COMM_WORLD) as comm:
        comm.allreduce(x, y)            # x, y: CuPy arrays, PyTorch tensors, ... on the rank's GPU

See docs/python.md.
"""
from __future__ import annotations

from . import _alloy
from ._comm import Comm
from ._errors import AlloyError
from ._types import DataType, RedOp

SUM, PROD, MAX, MIN, AVG = RedOp.SUM, RedOp.PROD, RedOp.MAX, RedOp.MIN, RedOp.AVG

_code = _alloy.version()
# The C library's version (ALLOY_VERSION_CODE: major * 10000 + minor * 100 + patch).
__version__ = f"{_code // 10000}.{_code // 100 % 100}.{_code % 100}"

__all__ = ["Comm", "AlloyError", "DataType", "RedOp", "SUM", "PROD", "MAX", "MIN", "AVG", "__version__"]
