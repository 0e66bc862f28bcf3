"""Bad arguments raise AlloyError before anything is enqueued, with a message naming the argument and what
was expected; the library's own refusals come through with its message and code."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import FakeDeviceArray
from mpi4py import MPI

import alloy
from alloy import _errors


def expect(caught: pytest.ExceptionInfo, code: int, *needles: str) -> None:
    assert caught.value.code == code, caught.value
    for needle in needles:
        assert needle in caught.value.message, caught.value.message


def test_not_an_mpi_communicator() -> None:
    with pytest.raises(alloy.AlloyError) as caught:
        alloy.Comm.from_mpi(object())
    expect(caught, _errors.INVALID_ARGUMENT, "comm: a object is not an mpi4py communicator")


@pytest.mark.parametrize("kwargs, needle", [({"device": -3}, "device: -3 is not a CUDA device ordinal"),
                                            ({"timeout_ms": 0}, "timeout_ms: 0")])
def test_bad_creation_arguments(world: MPI.Intracomm, kwargs: dict, needle: str) -> None:
    with pytest.raises(alloy.AlloyError) as caught:
        alloy.Comm.from_mpi(world, **kwargs)
    expect(caught, _errors.INVALID_ARGUMENT, needle)


def test_host_memory(comm: alloy.Comm) -> None:
    with pytest.raises(alloy.AlloyError) as caught:
        comm.allreduce(np.zeros(8, np.float32), np.zeros(8, np.float32))
    expect(caught, _errors.INVALID_ARGUMENT, "allreduce: sendbuf: the array is in host memory", "expected CUDA")


def test_object_without_an_array_interface(comm: alloy.Comm) -> None:
    with pytest.raises(alloy.AlloyError) as caught:
        comm.broadcast([1.0, 2.0], root=0)
    expect(caught, _errors.INVALID_ARGUMENT, "broadcast: buf: a list is not device memory")


def test_not_contiguous(comm: alloy.Comm) -> None:
    strided = FakeDeviceArray(0, shape=(4, 4), strides=(32, 4))  # every other row of an 8-column array
    with pytest.raises(alloy.AlloyError) as caught:
        comm.allreduce(strided, FakeDeviceArray(16))
    expect(caught, _errors.INVALID_ARGUMENT, "allreduce: sendbuf: the array is not contiguous",
           "(32, 4) for shape (4, 4)")


def test_compact_strides_are_contiguous(host_only: alloy.Comm) -> None:
    # Row-major strides given explicitly pass the package's checks and reach the library.
    compact = FakeDeviceArray(0, shape=(4, 4), strides=(16, 4))
    with pytest.raises(alloy.AlloyError) as caught:
        host_only.allreduce(compact, FakeDeviceArray(16))
    expect(caught, _errors.INVALID_USAGE, "alloyAllReduce: the communicator is host-only")


def test_datatype_mismatch(comm: alloy.Comm) -> None:
    with pytest.raises(alloy.AlloyError) as caught:
        comm.allreduce(FakeDeviceArray(8, "<f4"), FakeDeviceArray(8, "<i4"))
    expect(caught, _errors.INVALID_ARGUMENT, "allreduce: sendbuf is float32 but recvbuf is int32")


def test_datatype_alloy_does_not_have(comm: alloy.Comm) -> None:
    with pytest.raises(alloy.AlloyError) as caught:
        comm.allgather(FakeDeviceArray(8, "<c8"), FakeDeviceArray(8 * comm.size, "<c8"))
    expect(caught, _errors.INVALID_ARGUMENT, "allgather: sendbuf: datatype '<c8' is not one Alloy")


def test_wrong_sizes(comm: alloy.Comm) -> None:
    n = comm.size
    with pytest.raises(alloy.AlloyError) as caught:
        comm.allgather(FakeDeviceArray(4), FakeDeviceArray(4 * n + 1))
    expect(caught, _errors.INVALID_ARGUMENT, f"allgather: recvbuf has {4 * n + 1} elements; expected {4 * n}")
    with pytest.raises(alloy.AlloyError) as caught:
        comm.reduce_scatter(FakeDeviceArray(4 * n - 1), FakeDeviceArray(4))
    expect(caught, _errors.INVALID_ARGUMENT, "reduce_scatter: sendbuf has")
    with pytest.raises(alloy.AlloyError) as caught:
        comm.alltoall(FakeDeviceArray(n), FakeDeviceArray(n + 1))
    expect(caught, _errors.INVALID_ARGUMENT, f"alltoall: recvbuf has {n + 1} elements; expected {n}")
    if n > 1:  # on one rank every count is a multiple of the size
        with pytest.raises(alloy.AlloyError) as caught:
            comm.alltoall(FakeDeviceArray(n + 1), FakeDeviceArray(n + 1))
        expect(caught, _errors.INVALID_ARGUMENT, f"alltoall: sendbuf has {n + 1} elements; expected a multiple")


def test_alltoallv_count_lengths_and_extents(comm: alloy.Comm) -> None:
    n = comm.size
    ones, offsets = [1] * n, list(range(n))
    with pytest.raises(alloy.AlloyError) as caught:
        comm.alltoallv(FakeDeviceArray(n), FakeDeviceArray(n), ones + [1], offsets, ones, offsets)
    expect(caught, _errors.INVALID_ARGUMENT, f"alltoallv: sendcounts has {n + 1} entries; expected one per rank ({n})")
    with pytest.raises(alloy.AlloyError) as caught:
        comm.alltoallv(FakeDeviceArray(n), FakeDeviceArray(n), ones, offsets, ones, offsets[:-1])
    expect(caught, _errors.INVALID_ARGUMENT, f"rdispls has {n - 1} entries")
    with pytest.raises(alloy.AlloyError) as caught:
        comm.alltoallv(FakeDeviceArray(n), FakeDeviceArray(n), ones, offsets, [2] * n, offsets)
    expect(caught, _errors.INVALID_ARGUMENT, f"alltoallv: recvbuf has {n} elements but the counts and "
                                             f"displacements reach element {n + 1}")
    with pytest.raises(alloy.AlloyError) as caught:
        comm.alltoallv(FakeDeviceArray(n), FakeDeviceArray(n), [-1] * n, offsets, ones, offsets)
    expect(caught, _errors.INVALID_ARGUMENT, "sendcounts has a negative entry")


def test_bad_operator_and_stream(comm: alloy.Comm) -> None:
    with pytest.raises(alloy.AlloyError) as caught:
        comm.allreduce(FakeDeviceArray(8), FakeDeviceArray(8), op=17)
    expect(caught, _errors.INVALID_ARGUMENT, "allreduce: op 17 is not a reduction operator")
    with pytest.raises(alloy.AlloyError) as caught:
        comm.broadcast(FakeDeviceArray(8), 0, stream="default")
    expect(caught, _errors.INVALID_ARGUMENT, "stream: a str is not a CUDA stream")


def test_the_library_refuses_a_host_only_communicator(host_only: alloy.Comm) -> None:
    n = host_only.size
    calls = {
        "alloyAllReduce": lambda: host_only.allreduce(FakeDeviceArray(8), FakeDeviceArray(8)),
        "alloyBroadcast": lambda: host_only.broadcast(FakeDeviceArray(8), 0),
        "alloyReduce": lambda: host_only.reduce(FakeDeviceArray(8), FakeDeviceArray(8), 0),
        "alloyAllGather": lambda: host_only.allgather(FakeDeviceArray(8), FakeDeviceArray(8 * n)),
        "alloyReduceScatter": lambda: host_only.reduce_scatter(FakeDeviceArray(8 * n), FakeDeviceArray(8)),
        "alloyAlltoAll": lambda: host_only.alltoall(FakeDeviceArray(8 * n), FakeDeviceArray(8 * n)),
        "alloyAlltoAllv": lambda: host_only.alltoallv(FakeDeviceArray(n), FakeDeviceArray(n), [1] * n,
                                                      list(range(n)), [1] * n, list(range(n))),
    }
    for function, call in calls.items():
        with pytest.raises(alloy.AlloyError) as caught:
            call()
        expect(caught, _errors.INVALID_USAGE, f"{function}: the communicator is host-only")


def test_send_and_recv_in_a_group_on_a_host_only_communicator(host_only: alloy.Comm) -> None:
    peer = (host_only.rank + 1) % host_only.size
    with pytest.raises(alloy.AlloyError) as caught:
        with host_only.group():
            host_only.send(FakeDeviceArray(8), peer)
    expect(caught, _errors.INVALID_USAGE, "host-only")
