"""A pure-Python ctypes wrapper over Alloy's libnccl.so.2, opened by path as vLLM's pynccl opens NCCL, with
ncclAllReduce on torch tensors captured into a CUDA graph (issue #16).

One process per rank under mpirun; argv[1] is the library's path. The unique id travels through mpi4py.
"""
import ctypes
import os
import sys

import torch
from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_env import RANK, WORLD, check, device_index, finish  # noqa: E402

P = "ctypes"
NCCL_FLOAT32 = 7
NCCL_SUM = 0


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


def call(lib, name, *args):
    result = getattr(lib, name)(*args)
    if result != 0:
        lib.ncclGetLastError.restype = ctypes.c_char_p
        raise RuntimeError(f"{name} returned {result}: {lib.ncclGetLastError(None).decode()}")


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.alloyNcclIdentity.restype = ctypes.c_char_p
    if RANK == 0:
        print(f"{P}: {sys.argv[1]} is {lib.alloyNcclIdentity().decode()}", flush=True)
    dev = torch.device("cuda", device_index(torch.cuda.device_count()))
    torch.cuda.set_device(dev)

    uid = UniqueId()
    if RANK == 0:
        call(lib, "ncclGetUniqueId", ctypes.byref(uid))
    raw = MPI.COMM_WORLD.bcast(bytes(uid.internal) if RANK == 0 else None, root=0)
    ctypes.memmove(ctypes.byref(uid), raw, 128)
    comm = ctypes.c_void_p()
    call(lib, "ncclCommInitRank", ctypes.byref(comm), WORLD, uid, RANK)
    count = ctypes.c_int()
    call(lib, "ncclCommCount", comm, ctypes.byref(count))
    check(P, "ncclCommCount", count.value == WORLD, f"{count.value}")

    n = 4099
    g = torch.Generator().manual_seed(77 + RANK)
    mine = torch.randint(-500, 500, (n,), generator=g).float()
    total = torch.zeros(n)
    for r in range(WORLD):
        total += torch.randint(-500, 500, (n,), generator=torch.Generator().manual_seed(77 + r)).float()
    src = mine.to(dev)
    dst = torch.full((n,), -7.0, device=dev)
    stream = torch.cuda.Stream()

    def allreduce():
        call(lib, "ncclAllReduce", ctypes.c_void_p(src.data_ptr()), ctypes.c_void_p(dst.data_ptr()),
             ctypes.c_size_t(n), NCCL_FLOAT32, NCCL_SUM, comm, ctypes.c_void_p(stream.cuda_stream))

    with torch.cuda.stream(stream):
        allreduce()
    stream.synchronize()
    check(P, "ncclAllReduce eager", torch.equal(dst.cpu(), total))

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        allreduce()
    wrong = 0
    for i in range(100):
        dst.fill_(-7.0)
        graph.replay()
        torch.cuda.synchronize()
        wrong += int(not torch.equal(dst.cpu(), total))
    check(P, "ncclAllReduce in a CUDA graph, 100 replays", wrong == 0, f"{wrong} wrong")

    call(lib, "ncclCommDestroy", comm)
    finish(P)


if __name__ == "__main__":
    main()
