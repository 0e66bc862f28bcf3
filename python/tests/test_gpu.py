"""Collectives on real GPU arrays (CuPy, PyTorch), checked against references computed on the host from
every rank's fresh random inputs (each rank regenerates them from the shared seed), outputs poisoned first.
Each rank uses its own GPU (one rank per GPU, or ranks sharing one). Without a CUDA device every test here
says "skipped: no CUDA device"."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest
from mpi4py import MPI

import alloy

POISON = -7


@pytest.fixture
def gpu_comm(world: MPI.Intracomm) -> Iterator[alloy.Comm]:
    c = alloy.Comm.from_mpi(world)
    if c.device < 0:
        c.destroy()
        pytest.skip("skipped: no CUDA device")
    yield c
    c.destroy()


@pytest.fixture
def cp(gpu_comm: alloy.Comm) -> Any:
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    cupy.cuda.Device(gpu_comm.device).use()
    return cupy


def inputs(seed: int, rank: int, count: int, dtype: Any) -> np.ndarray:
    """Rank ``rank``'s input: small integers (exact in every datatype and every order of summation)."""
    return np.random.default_rng([seed, rank]).integers(-8, 9, count).astype(dtype)


def shared_seed(world: MPI.Intracomm) -> int:
    return world.bcast(int(np.random.default_rng().integers(1 << 62)) if world.Get_rank() == 0 else None)


@pytest.mark.parametrize("count", [1, 1001, 300001])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.float64])
def test_allreduce_in_and_out_of_place(gpu_comm: alloy.Comm, cp: Any, world: MPI.Intracomm, count: int,
                                       dtype: Any) -> None:
    seed, n = shared_seed(world), gpu_comm.size
    expected = sum(inputs(seed, r, count, dtype).astype(np.float64) for r in range(n)).astype(dtype)
    x = cp.asarray(inputs(seed, gpu_comm.rank, count, dtype))
    y = cp.full(count, POISON, dtype)
    gpu_comm.allreduce(x, y)
    gpu_comm.allreduce(x, x)  # in place
    cp.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(y), expected)
    np.testing.assert_array_equal(cp.asnumpy(x), expected)


def test_max_reduce_broadcast_allgather_reduce_scatter_alltoall(gpu_comm: alloy.Comm, cp: Any,
                                                                world: MPI.Intracomm) -> None:
    seed, n, me, count = shared_seed(world), gpu_comm.size, gpu_comm.rank, 4099
    every = [inputs(seed, r, count * n, np.int32) for r in range(n)]
    x = cp.asarray(every[me])
    out = cp.full(count * n, POISON, np.int32)
    gpu_comm.reduce(x, out if me == n - 1 else None, root=n - 1, op=alloy.MAX)
    part = cp.full(count, POISON, np.int32)
    gpu_comm.reduce_scatter(x, part)
    gathered = cp.full(count * n, POISON, np.int32)
    gpu_comm.allgather(x[:count], gathered)
    swapped = cp.full(count * n, POISON, np.int32)
    gpu_comm.alltoall(x, swapped)
    b = x.copy()
    gpu_comm.broadcast(b, root=0)
    cp.cuda.get_current_stream().synchronize()
    if me == n - 1:
        np.testing.assert_array_equal(cp.asnumpy(out), np.maximum.reduce(every))
    np.testing.assert_array_equal(cp.asnumpy(part), sum(every)[me * count:(me + 1) * count])
    np.testing.assert_array_equal(cp.asnumpy(gathered), np.concatenate([e[:count] for e in every]))
    np.testing.assert_array_equal(cp.asnumpy(swapped), np.concatenate([e[me * count:(me + 1) * count] for e in every]))
    np.testing.assert_array_equal(cp.asnumpy(b), every[0])


def test_alltoallv_matches_mpi4py(gpu_comm: alloy.Comm, cp: Any, world: MPI.Intracomm) -> None:
    n, me = gpu_comm.size, gpu_comm.rank
    rng = np.random.default_rng([shared_seed(world), 99])
    matrix = rng.integers(0, 5000, (n, n))  # matrix[s, d]: elements rank s sends to rank d
    sendcounts, recvcounts = matrix[me], matrix[:, me]
    sdispls = np.concatenate([[0], np.cumsum(sendcounts)[:-1]]) + rng.integers(0, 7)  # shifted, with a gap
    rdispls = np.concatenate([[0], np.cumsum(recvcounts)[:-1]]) + 3
    send = np.random.default_rng([me, 5]).standard_normal(int(sdispls[-1] + sendcounts[-1])).astype(np.float32)
    recv_ref = np.full(int(rdispls[-1] + recvcounts[-1]), POISON, np.float32)
    world.Alltoallv([send, sendcounts, sdispls, MPI.FLOAT], [recv_ref, recvcounts, rdispls, MPI.FLOAT])
    recv = cp.full(recv_ref.size, POISON, np.float32)
    gpu_comm.alltoallv(cp.asarray(send), recv, sendcounts, sdispls, recvcounts, rdispls)
    cp.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(recv), recv_ref)


def test_send_recv_ring_in_a_group(gpu_comm: alloy.Comm, cp: Any) -> None:
    n, me = gpu_comm.size, gpu_comm.rank
    x = cp.arange(1000, dtype=cp.float64) + me
    y = cp.full(1000, POISON, cp.float64)
    with gpu_comm.group():
        gpu_comm.send(x, (me + 1) % n)
        gpu_comm.recv(y, (me - 1) % n)
    cp.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(y), np.arange(1000) + (me - 1) % n)


def test_cupy_stream_capture_replayed(gpu_comm: alloy.Comm, cp: Any) -> None:
    n = gpu_comm.size
    stream = cp.cuda.Stream(non_blocking=True)
    x = cp.zeros(4096, cp.float32)
    y = cp.full(4096, POISON, cp.float32)
    with stream:
        stream.begin_capture()
        x += 1  # each replay adds 1 on every rank, then sums
        gpu_comm.allreduce(x, y, stream=stream)
        graph = stream.end_capture()
        for _ in range(100):
            graph.launch(stream)
        stream.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(y), np.full(4096, 100 * n, np.float32))


def test_torch_tensors_graph_and_bfloat16(gpu_comm: alloy.Comm) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    n, dev = gpu_comm.size, torch.device("cuda", gpu_comm.device)
    torch.cuda.set_device(dev)
    b = torch.full((1024,), float(gpu_comm.rank + 1), dtype=torch.bfloat16, device=dev)  # through DLPack
    gpu_comm.allreduce(b, b)
    torch.cuda.synchronize()
    assert torch.all(b == float(n * (n + 1) // 2))
    x = torch.zeros(1 << 16, device=dev)
    y = torch.full_like(x, POISON)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    # PyTorch's __cuda_array_interface__ names no stream: the current one is passed.
    with torch.cuda.stream(side):
        gpu_comm.allreduce(x, y, stream=torch.cuda.current_stream())  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        x.add_(1)
        gpu_comm.allreduce(x, y, stream=torch.cuda.current_stream())
    for _ in range(100):
        graph.replay()
    torch.cuda.synchronize()
    assert torch.all(y == 100.0 * n)
