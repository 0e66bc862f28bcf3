"""CuPy's cupy.cuda.nccl.NcclCommunicator on Alloy's libnccl.so.2 (issue #16).

One process per rank under mpirun with Alloy's library preloaded; the unique id travels through mpi4py.
"""
import os
import sys

import cupy
import numpy
from cupy.cuda import nccl
from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_env import RANK, WORLD, check, device_index, finish, require_alloy  # noqa: E402

P = "cupy"


def inputs_of(rank, n):
    return numpy.random.default_rng(1234 + rank).integers(-1000, 1000, n).astype(numpy.float32)


def main():
    cupy.cuda.Device(device_index(cupy.cuda.runtime.getDeviceCount())).use()
    require_alloy(P)
    uid = MPI.COMM_WORLD.bcast(nccl.get_unique_id() if RANK == 0 else None, root=0)
    comm = nccl.NcclCommunicator(WORLD, uid, RANK)
    check(P, "size and rank", comm.size() == WORLD and comm.rank_id() == RANK)

    n = 3001
    stream = cupy.cuda.Stream(non_blocking=True)
    src = cupy.asarray(inputs_of(RANK, n))
    dst = cupy.full(n, -7, dtype=cupy.float32)
    comm.allReduce(src.data.ptr, dst.data.ptr, n, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream.ptr)
    stream.synchronize()
    check(P, "allReduce", numpy.array_equal(cupy.asnumpy(dst), sum(inputs_of(r, n) for r in range(WORLD))))

    root = WORLD - 1
    buf = cupy.asarray(inputs_of(RANK, n)) if RANK == root else cupy.full(n, -7, dtype=cupy.float32)
    comm.bcast(buf.data.ptr, n, nccl.NCCL_FLOAT32, root, stream.ptr)
    stream.synchronize()
    check(P, "bcast", numpy.array_equal(cupy.asnumpy(buf), inputs_of(root, n)))

    out = cupy.full(n * WORLD, -7, dtype=cupy.float32)
    comm.allGather(src.data.ptr, out.data.ptr, n, nccl.NCCL_FLOAT32, stream.ptr)
    stream.synchronize()
    check(P, "allGather", numpy.array_equal(cupy.asnumpy(out), numpy.concatenate([inputs_of(r, n) for r in range(WORLD)])))

    comm.destroy()
    finish(P)


if __name__ == "__main__":
    main()
