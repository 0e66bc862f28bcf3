"""NVIDIA's nccl4py (0.6, `nccl.core`) on Alloy's libnccl.so.2 (issue #33).

One process per rank under mpirun with Alloy's library preloaded (nccl4py opens the nvidia-nccl wheel's
library by path where that wheel is installed, so LD_PRELOAD is what points it at Alloy's:
docs/nccl-compat.md). The unique id travels through mpi4py as bytes. Every collective nccl4py wraps, and
send/recv in a group, on CuPy arrays of fresh random data against host references, outputs poisoned first.
"""
import os
import sys

import cupy
import numpy
import nccl.core as nc
from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_env import RANK, WORLD, check, device_index, finish, require_alloy  # noqa: E402

P = "nccl4py"
SEED = int.from_bytes(os.urandom(4), "little") if RANK == 0 else None


def inputs_of(seed, rank, n):
    return numpy.random.default_rng([seed, rank]).integers(-1000, 1000, n).astype(numpy.float32)


def poisoned(n):
    return cupy.full(n, numpy.nan, dtype=cupy.float32)


def main():
    cupy.cuda.Device(device_index(cupy.cuda.runtime.getDeviceCount())).use()
    require_alloy(P)
    seed = MPI.COMM_WORLD.bcast(SEED, root=0)
    uid_bytes = MPI.COMM_WORLD.bcast(bytes(nc.get_unique_id()) if RANK == 0 else None, root=0)
    comm = nc.Communicator.init(WORLD, RANK, nc.UniqueId.from_bytes(uid_bytes))
    check(P, "nranks and rank", comm.nranks == WORLD and comm.rank == RANK)
    stream = cupy.cuda.Stream(non_blocking=True)
    n = 3001
    mine = inputs_of(seed, RANK, n)
    every = [inputs_of(seed, r, n) for r in range(WORLD)]
    src = cupy.asarray(mine)

    dst = poisoned(n)
    comm.allreduce(src, dst, nc.NcclRedOp.SUM, stream=stream.ptr)
    stream.synchronize()
    check(P, "allreduce sum", numpy.array_equal(cupy.asnumpy(dst), sum(every)))

    dst = poisoned(n)
    comm.allreduce(src, dst, nc.NcclRedOp.MAX, stream=stream.ptr)
    stream.synchronize()
    check(P, "allreduce max", numpy.array_equal(cupy.asnumpy(dst), numpy.maximum.reduce(every)))

    gathered = poisoned(n * WORLD)
    comm.allgather(src, gathered, stream=stream.ptr)
    stream.synchronize()
    check(P, "allgather", numpy.array_equal(cupy.asnumpy(gathered), numpy.concatenate(every)))

    whole = [inputs_of(seed, 100 + r, n * WORLD) for r in range(WORLD)]
    part = poisoned(n)
    comm.reduce_scatter(cupy.asarray(whole[RANK]), part, nc.NcclRedOp.SUM, stream=stream.ptr)
    stream.synchronize()
    check(P, "reduce_scatter", numpy.array_equal(cupy.asnumpy(part), sum(whole)[RANK * n:(RANK + 1) * n]))

    root = WORLD - 1
    buf = cupy.asarray(every[root]) if RANK == root else poisoned(n)
    comm.broadcast(buf, buf, root, stream=stream.ptr)
    stream.synchronize()
    check(P, "broadcast in place", numpy.array_equal(cupy.asnumpy(buf), every[root]))

    # alltoall: block p of rank r's send buffer goes to rank p.
    sends = [inputs_of(seed, 200 + r, n * WORLD) for r in range(WORLD)]
    received = poisoned(n * WORLD)
    comm.alltoall(cupy.asarray(sends[RANK]), received, stream=stream.ptr)
    stream.synchronize()
    expected = numpy.concatenate([sends[r][RANK * n:(RANK + 1) * n] for r in range(WORLD)])
    check(P, "alltoall", numpy.array_equal(cupy.asnumpy(received), expected))

    # send/recv in a group: a ring, each rank to the next.
    got = poisoned(n)
    with nc.group():
        comm.send(src, (RANK + 1) % WORLD, stream=stream.ptr)
        comm.recv(got, (RANK - 1) % WORLD, stream=stream.ptr)
    stream.synchronize()
    check(P, "send/recv ring in a group", numpy.array_equal(cupy.asnumpy(got), every[(RANK - 1) % WORLD]))

    comm.destroy()
    finish(P)


if __name__ == "__main__":
    main()
