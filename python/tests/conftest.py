"""Fixtures of the package's tests, which run under mpirun (every rank runs every test, in the same order)."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
from mpi4py import MPI

import alloy


class FakeDeviceArray:
    """An object that describes device memory through __cuda_array_interface__ without owning any: enough
    for every check the package makes before calling Alloy, and for host-only communicators, which refuse
    before they would touch the address."""

    def __init__(self, count: int, typestr: str = "<f4", strides: tuple[int, ...] | None = None,
                 shape: tuple[int, ...] | None = None, address: int = 0x7F0000000000) -> None:
        self.__cuda_array_interface__: dict[str, Any] = {
            "shape": shape if shape is not None else (count,), "typestr": typestr, "data": (address, False),
            "strides": strides, "version": 3, "stream": None,
        }


@pytest.fixture
def world() -> MPI.Intracomm:
    return MPI.COMM_WORLD


@pytest.fixture
def comm(world: MPI.Intracomm) -> Iterator[alloy.Comm]:
    c = alloy.Comm.from_mpi(world)
    yield c
    c.destroy()


@pytest.fixture
def host_only(comm: alloy.Comm) -> alloy.Comm:
    if comm.device >= 0:
        pytest.skip("the rank has a CUDA device: host-only behaviour is tested on machines without one")
    return comm
