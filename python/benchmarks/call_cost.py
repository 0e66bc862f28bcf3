"""What the Python layer adds to a call (issue #33: at most 1.5 us for an 8-byte operation): host time per
call of an 8-byte float32 allreduce through Comm.allreduce, and through the extension's all_reduce on the
same integers (the C call and nanobind's conversion of seven integers), with no synchronisation between
calls (the GPU's work queues behind; only the host's time per call is measured). The two are timed in
alternating batches, each round one batch of each, and the layer's cost is the median of the rounds'
differences: both calls take 5-9 us that drift by tenths of a microsecond over a run, more than the layer's
own cost, so figures taken minutes apart would not subtract. Comm.allreduce runs inside ``with stream:``,
so that CuPy's current stream is the operation's stream (the usual case); a third figure times it outside,
where the arrays name CuPy's default stream and every call first orders the operation's stream after it (a
CUDA event recorded and waited for); a fourth leaves ``stream=`` out, so that the stream is the one CuPy's
arrays name (its current one). Two reads of CuPy's __cuda_array_interface__ (a dict CuPy builds on
every read) are timed for comparison: the layer reads exact CuPy arrays from their attributes instead.
Run under mpirun, one rank per GPU; rank 0 prints the figures.

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


def batch_us(call: Callable[[], object], calls: int, sync: Callable[[], None]) -> float:
    """Host microseconds per call over one batch of calls, started together on every rank."""
    sync()
    MPI.COMM_WORLD.Barrier()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = (time.perf_counter() - start) / calls * 1e6
    sync()
    return elapsed


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    rounds = 15
    with alloy.Comm.from_mpi(MPI.COMM_WORLD) as comm:
        cp.cuda.Device(comm.device).use()
        stream = cp.cuda.Stream(non_blocking=True)
        x = cp.ones(2, cp.float32)
        y = cp.zeros(2, cp.float32)
        sync = stream.synchronize
        handle, s = comm.handle, stream.ptr
        send, recv = x.data.ptr, y.data.ptr
        python = lambda: comm.allreduce(x, y, stream=stream)  # noqa: E731
        implicit = lambda: comm.allreduce(x, y)  # noqa: E731  (the stream CuPy's arrays name)
        direct = lambda: _alloy.all_reduce(send, recv, 2, alloy.DataType.FLOAT32, 0, handle, s)  # noqa: E731
        interface = lambda: (x.__cuda_array_interface__, y.__cuda_array_interface__)  # noqa: E731
        with stream:
            for call in (python, implicit, direct):
                batch_us(call, 200, sync)  # warm-up
            layered, unnamed, bare = [], [], []
            for _ in range(rounds):
                layered.append(batch_us(python, calls, sync))
                unnamed.append(batch_us(implicit, calls, sync))
                bare.append(batch_us(direct, calls, sync))
            reads = median([batch_us(interface, calls, sync) for _ in range(5)])
        batch_us(python, 200, sync)  # warm-up
        other = median([batch_us(python, calls, sync) for _ in range(5)])
        layer = median([a - b for a, b in zip(layered, bare)])
        implicit_layer = median([a - b for a, b in zip(unnamed, bare)])
        if comm.rank == 0:
            print(f"call_cost: {comm.size} ranks, 8-byte float32 allreduce, host time per call "
                  f"({rounds} rounds of {calls} calls each, alternating)")
            print(f"  Comm.allreduce, arrays on its stream   {median(layered):8.2f} us")
            print(f"  _alloy.all_reduce                      {median(bare):8.2f} us  (the C call)")
            print(f"  Python layer                           {layer:8.2f} us  (median of the rounds' differences;"
                  f" target <= 1.5; rounds {min(a - b for a, b in zip(layered, bare)):.2f}"
                  f" to {max(a - b for a, b in zip(layered, bare)):.2f})")
            print(f"  Comm.allreduce without stream=         {median(unnamed):8.2f} us  (layer {implicit_layer:.2f} us:"
                  " the stream CuPy's arrays name, its current one)")
            print(f"  Comm.allreduce, arrays on another one  {other:8.2f} us  (a stream wait per call)")
            print(f"  two reads of __cuda_array_interface__  {reads:8.2f} us  (CuPy's; exact CuPy arrays are read"
                  " from their attributes instead)")


if __name__ == "__main__":
    main()
