"""Communicators from mpi4py communicators: creation (world, splits, duplicates, in either order),
queries, lifecycle."""
from __future__ import annotations

import pytest
from mpi4py import MPI

import alloy


def test_world_matches_mpi(world: MPI.Intracomm) -> None:
    with alloy.Comm.from_mpi(world) as c:
        assert (c.rank, c.size) == (world.Get_rank(), world.Get_size())
        assert c.device >= -1
        assert c.async_error() == 0
        assert repr(c).startswith(f"<alloy.Comm rank {c.rank} of {c.size}")
    assert "destroyed" in repr(c)


def test_splits_in_either_order(world: MPI.Intracomm) -> None:
    rank, size = world.Get_rank(), world.Get_size()
    parity = world.Split(color=rank % 2, key=-rank)  # reversed key: the split's ranks run backwards
    half = world.Split(color=int(rank >= size // 2), key=rank)
    try:
        # Odd ranks create the half's communicator first, even ranks the parity's: creations of different
        # communicators may come in any order across ranks.
        order = [parity, half] if rank % 2 == 0 else [half, parity]
        made = [alloy.Comm.from_mpi(m) for m in order]
        for mpi_comm, c in zip(order, made):
            assert (c.rank, c.size) == (mpi_comm.Get_rank(), mpi_comm.Get_size())
        for c in made:
            c.destroy()
        with alloy.Comm.from_mpi(world) as again:  # and the world after them
            assert again.size == size
    finally:
        parity.Free()
        half.Free()


def test_destroy_is_idempotent_and_ends_the_handle(world: MPI.Intracomm) -> None:
    c = alloy.Comm.from_mpi(world)
    c.destroy()
    c.destroy()
    with pytest.raises(alloy.AlloyError) as caught:
        _ = c.handle
    assert caught.value.code == 5 and "destroyed" in caught.value.message


def test_abort_frees_without_the_peers(world: MPI.Intracomm) -> None:
    # Rank 0 aborts while the others wait in an MPI barrier, so its abort returns without them; then they
    # abort too. (A destroy would be wrong there: it is collective, and on a GPU communicator it waits for
    # the peers' part, which an aborted rank never gives, until the timeout.)
    c = alloy.Comm.from_mpi(world)
    if world.Get_rank() == 0:
        c.abort()
        with pytest.raises(alloy.AlloyError):
            c.async_error()
        world.Barrier()
    else:
        world.Barrier()
        c.abort()


def test_device_and_timeout_reach_the_library(world: MPI.Intracomm) -> None:
    with alloy.Comm.from_mpi(world, device=None, timeout_ms=5000) as c:
        assert c.size == world.Get_size()
