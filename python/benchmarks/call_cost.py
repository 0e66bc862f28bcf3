"""What the Python layer adds to a call (issue #33: at most 1.5 us for an 8-byte operation): host time per
call of an 8-byte float32 allreduce through Comm.allreduce, and through the extension's all_reduce on the
same integers (the C call and nanobind's conversion of seven integers), in one run, each after a warm-up,
with no synchronisation between calls (the GPU's work queues behind; only the host's time per call is
measured). Comm.allreduce is timed twice: inside ``with stream:``, so that CuPy's arrays name the
operation's stream in __cuda_array_interface__ (the usual case), and outside it, where they name CuPy's
default stream and every call first orders the operation's stream after it (a CUDA event recorded and
waited for). Two reads of CuPy's __cuda_array_interface__ (a dict CuPy builds on every read), which the layer
cannot avoid for a CuPy array, are timed too, and the layer's cost without them: what the package's own code
(Comm.allreduce and the extension's allreduce) adds. Run under mpirun, one rank per GPU; rank 0 prints the
figures.

    mpirun -np 2 python python/benchmarks/call_cost.py [calls]
"""
from __future__ import annotations

import sys
import time
from typing import Callable

import cupy as cp
from mpi4py import MPI

import alloy
from alloy import _alloy


def per_call_us(call: Callable[[], object], calls: int, sync: Callable[[], None]) -> float:
    """Median over 5 rounds of host microseconds per call."""
    rounds = []
    for _ in range(5):
        sync()
        MPI.COMM_WORLD.Barrier()
        start = time.perf_counter()
        for _ in range(calls):
            call()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
        sync()
    return sorted(rounds)[2]


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    with alloy.Comm.from_mpi(MPI.COMM_WORLD) as comm:
        cp.cuda.Device(comm.device).use()
        stream = cp.cuda.Stream(non_blocking=True)
        x = cp.ones(2, cp.float32)
        y = cp.zeros(2, cp.float32)
        sync = stream.synchronize
        handle, s = comm.handle, stream.ptr
        send, recv = x.data.ptr, y.data.ptr
        python = lambda: comm.allreduce(x, y, stream=stream)  # noqa: E731
        direct = lambda: _alloy.all_reduce(send, recv, 2, alloy.DataType.FLOAT32, 0, handle, s)  # noqa: E731
        interface = lambda: (x.__cuda_array_interface__, y.__cuda_array_interface__)  # noqa: E731
        with stream:
            per_call_us(python, 200, sync)  # warm-up
            same = per_call_us(python, calls, sync)
            reads = per_call_us(interface, calls, sync)
        for call in (python, direct):
            per_call_us(call, 200, sync)  # warm-up
        other, d = per_call_us(python, calls, sync), per_call_us(direct, calls, sync)
        if comm.rank == 0:
            print(f"call_cost: {comm.size} ranks, 8-byte float32 allreduce, host time per call (median of 5 x {calls})")
            print(f"  Comm.allreduce, arrays on its stream   {same:8.2f} us")
            print(f"  Comm.allreduce, arrays on another one  {other:8.2f} us  (a stream wait per call)")
            print(f"  _alloy.all_reduce                      {d:8.2f} us  (the C call)")
            print(f"  two reads of __cuda_array_interface__  {reads:8.2f} us  (CuPy's, inside the layer's time)")
            print(f"  Python layer                           {same - d:8.2f} us  (target <= 1.5)")
            print(f"  Python layer less the two reads        {same - d - reads:8.2f} us  (the package's own code)")


if __name__ == "__main__":
    main()
