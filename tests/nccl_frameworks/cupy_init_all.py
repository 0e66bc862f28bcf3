"""CuPy's NcclCommunicator.initAll on Alloy's libnccl.so.2 (issue #34): one process drives every visible GPU,
one communicator rank per GPU, and launches each operation of all of them in one NCCL group.

Run as one process (mpirun -np 1 in scripts/gpu-check-nccl.sh) with Alloy's library preloaded. Every result
is checked against a reference computed on the CPU from every rank's inputs, into outputs poisoned first.
"""
import os
import sys

import cupy
import numpy
from cupy.cuda import nccl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_env import check, finish, require_alloy  # noqa: E402

P = "cupy-initAll"
POISON = -7


def inputs_of(rank, tag, n):
    rng = numpy.random.default_rng(4321 + 100 * tag + rank)
    return rng.integers(-1000, 1000, n).astype(numpy.float32)


def run_group(comms, call):
    """call(rank, comm, stream) for every rank inside one group, then waits for every stream."""
    nccl.groupStart()
    for rank, comm in enumerate(comms):
        with cupy.cuda.Device(rank):
            call(rank, comm, STREAMS[rank])
    nccl.groupEnd()
    for rank, stream in enumerate(STREAMS):
        with cupy.cuda.Device(rank):
            stream.synchronize()


def on_device(rank, host):
    with cupy.cuda.Device(rank):
        return cupy.asarray(host)


def poisoned(rank, n):
    with cupy.cuda.Device(rank):
        return cupy.full(n, POISON, dtype=cupy.float32)


def same(name, got, want):
    bad = [rank for rank, g in enumerate(got) if not numpy.array_equal(cupy.asnumpy(g), want(rank))]
    check(P, name, not bad, f"wrong on ranks {bad}")


def main():
    ndev = cupy.cuda.runtime.getDeviceCount()
    if ndev < 2:
        print(f"{P}: skipped: {ndev} CUDA device(s), the test needs 2 or more", flush=True)
        sys.exit(0)
    require_alloy(P)
    comms = nccl.NcclCommunicator.initAll(ndev)
    check(P, f"initAll({ndev}): ranks and sizes",
          [(c.rank_id(), c.size(), c.device_id()) for c in comms] == [(r, ndev, r) for r in range(ndev)])
    global STREAMS
    STREAMS = []
    for rank in range(ndev):
        with cupy.cuda.Device(rank):
            STREAMS.append(cupy.cuda.Stream(non_blocking=True))

    n = 100003  # odd, above the low-latency sizes of every engine at 2-8 ranks
    f32 = nccl.NCCL_FLOAT32
    src = [on_device(r, inputs_of(r, 1, n)) for r in range(ndev)]
    dst = [poisoned(r, n) for r in range(ndev)]
    run_group(comms, lambda r, c, s: c.allReduce(src[r].data.ptr, dst[r].data.ptr, n, f32, nccl.NCCL_SUM, s.ptr))
    total = sum(inputs_of(r, 1, n) for r in range(ndev))
    same("allReduce sum", dst, lambda r: total)

    whole = [on_device(r, inputs_of(r, 2, n * ndev)) for r in range(ndev)]
    dst = [poisoned(r, n) for r in range(ndev)]
    run_group(comms, lambda r, c, s: c.reduceScatter(whole[r].data.ptr, dst[r].data.ptr, n, f32, nccl.NCCL_SUM,
                                                     s.ptr))
    total = sum(inputs_of(r, 2, n * ndev) for r in range(ndev))
    same("reduceScatter sum", dst, lambda r: total[r * n:(r + 1) * n])

    out = [poisoned(r, n * ndev) for r in range(ndev)]
    run_group(comms, lambda r, c, s: c.allGather(src[r].data.ptr, out[r].data.ptr, n, f32, s.ptr))
    gathered = numpy.concatenate([inputs_of(r, 1, n) for r in range(ndev)])
    same("allGather", out, lambda r: gathered)

    root = ndev - 1
    buf = [on_device(r, inputs_of(r, 3, n)) if r == root else poisoned(r, n) for r in range(ndev)]
    run_group(comms, lambda r, c, s: c.bcast(buf[r].data.ptr, n, f32, root, s.ptr))
    same("bcast", buf, lambda r: inputs_of(root, 3, n))

    # A ring of send/recv: every rank sends to the next and receives from the previous, all in one group.
    dst = [poisoned(r, n) for r in range(ndev)]

    def ring(r, c, s):
        c.send(src[r].data.ptr, n, f32, (r + 1) % ndev, s.ptr)
        c.recv(dst[r].data.ptr, n, f32, (r - 1) % ndev, s.ptr)
    run_group(comms, ring)
    same("send/recv ring", dst, lambda r: inputs_of((r - 1) % ndev, 1, n))

    for comm in comms:
        comm.destroy()
    finish(P)


if __name__ == "__main__":
    main()
