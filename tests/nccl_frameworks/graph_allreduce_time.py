"""Times one ncclAllReduce per CUDA graph replay: the pattern of an inference server, which opens the library
by path with ctypes (as vLLM's pynccl does), captures its allreduce into a CUDA graph once and replays the
graph for every step.

One process per rank under mpirun, one rank per GPU; argv[1] is the library's path (NVIDIA's libnccl.so.2
or Alloy's). For each size, one float32 sum allreduce (out of place) is captured into a graph of its own;
one replay is checked (rank r contributes r + 1 everywhere, so every element must be n(n+1)/2), then
--warmup replays warm up and --iters are timed with CUDA events (--large-iters from 64 MB on). Rank 0 prints
one line per size, `graph_allreduce BYTES US`: microseconds per replay, the maximum over ranks. Exits
non-zero where a result is wrong (the closing line of launch_env.finish counts the checks).
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys

import torch
from mpi4py import MPI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctypes_graph import NCCL_FLOAT32, NCCL_SUM, UniqueId, call  # noqa: E402
from launch_env import RANK, WORLD, check, device_index, finish  # noqa: E402

P = "graph_allreduce_time"
DEFAULT_SIZES = "4K,64K,1M,16M,256M"
LARGE = 64 << 20  # from here on a replay takes long enough that fewer replays time it as well


def parse_bytes(text: str) -> int:
    """ "4K", "1M", "256M", "4096": binary multiples, as nccl-tests reads sizes."""
    shift = {"K": 10, "M": 20, "G": 30}.get(text[-1:].upper(), 0)
    return int(text[:-1] if shift else text) << shift


def identity(lib: ctypes.CDLL) -> str:
    """Alloy's identity string, or NCCL's version where the library is NVIDIA's."""
    try:
        fn = lib.alloyNcclIdentity
    except AttributeError:
        version = ctypes.c_int()
        call(lib, "ncclGetVersion", ctypes.byref(version))
        return f"NCCL version code {version.value}"
    fn.restype = ctypes.c_char_p
    return fn().decode()


def init_comm(lib: ctypes.CDLL) -> ctypes.c_void_p:
    """A communicator over every rank; rank 0's unique id travels through MPI."""
    uid = UniqueId()
    if RANK == 0:
        call(lib, "ncclGetUniqueId", ctypes.byref(uid))
    uid = UniqueId.from_buffer_copy(MPI.COMM_WORLD.bcast(bytes(uid) if RANK == 0 else None, root=0))
    comm = ctypes.c_void_p()
    call(lib, "ncclCommInitRank", ctypes.byref(comm), WORLD, uid, RANK)
    return comm


def time_replays(graph: torch.cuda.CUDAGraph, stream: torch.cuda.Stream, warmup: int, iters: int) -> float:
    """Microseconds per replay on this rank, after warm-up; all ranks start the timed replays together."""
    for _ in range(warmup):
        graph.replay()
    stream.synchronize()
    MPI.COMM_WORLD.Barrier()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record(stream)
    for _ in range(iters):
        graph.replay()
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end) * 1000.0 / iters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("library", help="path of the libnccl.so.2 to time")
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help=f"bytes, comma separated (default {DEFAULT_SIZES})")
    parser.add_argument("--warmup", type=int, default=20, help="untimed replays per size (default 20)")
    parser.add_argument("--iters", type=int, default=200, help="timed replays per size (default 200)")
    parser.add_argument("--large-iters", type=int, default=50, help="timed replays from 64 MB on (default 50)")
    args = parser.parse_args()
    sizes = [parse_bytes(s) for s in args.sizes.split(",") if s]

    lib = ctypes.CDLL(args.library)
    if RANK == 0:
        print(f"# {P}: {args.library} is {identity(lib)}; {WORLD} ranks, float32 sum, out of place, "
              f"one allreduce per graph", flush=True)
    dev = torch.device("cuda", device_index(torch.cuda.device_count()))
    torch.cuda.set_device(dev)
    comm = init_comm(lib)

    most = max(sizes) // 4
    src = torch.full((most,), float(RANK + 1), device=dev)
    dst = torch.empty(most, device=dev)
    expected = WORLD * (WORLD + 1) / 2  # exact in float32 for any rank count that fits a machine
    stream = torch.cuda.Stream()

    def allreduce(n: int) -> None:
        call(lib, "ncclAllReduce", ctypes.c_void_p(src.data_ptr()), ctypes.c_void_p(dst.data_ptr()),
             ctypes.c_size_t(n), NCCL_FLOAT32, NCCL_SUM, comm, ctypes.c_void_p(stream.cuda_stream))

    for nbytes in sizes:
        n = nbytes // 4
        with torch.cuda.stream(stream):
            allreduce(n)  # eager first, as servers warm up before they capture
            stream.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                allreduce(n)
            dst[:n].fill_(-1.0)
            graph.replay()
            stream.synchronize()
            wrong = int((dst[:n] != expected).sum())
            check(P, f"allreduce of {nbytes} B in a graph", wrong == 0, f"{wrong} of {n} elements wrong")
            us = time_replays(graph, stream, args.warmup, args.large_iters if nbytes >= LARGE else args.iters)
        slowest = MPI.COMM_WORLD.reduce(us, op=MPI.MAX, root=0)
        if RANK == 0:
            print(f"graph_allreduce {nbytes} {slowest:.2f}", flush=True)
        graph.reset()  # before the communicator goes: the graph holds its launch

    torch.cuda.synchronize()
    call(lib, "ncclCommDestroy", comm)
    finish(P)


if __name__ == "__main__":
    main()
