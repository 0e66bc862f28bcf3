"""Comm: an Alloy communicator made from an mpi4py communicator, and its collectives."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from . import _alloy
from ._errors import INVALID_USAGE, AlloyError, check, invalid
from ._types import RedOp


class Comm:
    """An Alloy communicator over the ranks of an MPI communicator (one rank per process and GPU).

    Collectives enqueue on a CUDA stream and return at once. ``stream`` may be an int handle or a stream
    object (``__cuda_stream__``, ``cuda_stream``, ``ptr``); by default an operation runs on the stream its
    first array names in ``__cuda_array_interface__`` (CuPy gives its current stream; PyTorch names none),
    else on the legacy default stream. Where ``stream`` is given and an array names another stream, ``stream`` first
    waits for that one.
    """

    def __init__(self, handle: int) -> None:
        self._handle = handle
        self.rank = self._query(_alloy.comm_user_rank)
        self.size = self._query(_alloy.comm_count)
        self.device = self._query(_alloy.comm_cu_device)

    @classmethod
    def from_mpi(cls, comm: Any, device: int | None = None, timeout_ms: int | None = None) -> "Comm":
        """Collective over ``comm`` (an mpi4py.MPI.Comm): every rank calls it. ``device``: the CUDA device
        (None: local rank modulo the visible devices); ``timeout_ms``: how long an operation may wait for a
        peer (None: ALLOY_TIMEOUT_MS, default 300 s)."""
        py2f = getattr(comm, "py2f", None)
        if py2f is None:
            raise invalid(f"comm: a {type(comm).__name__} is not an mpi4py communicator (expected mpi4py.MPI.Comm)")
        if device is not None and device < 0:
            raise invalid(f"device: {device} is not a CUDA device ordinal (expected >= 0, or None to choose)")
        if timeout_ms is not None and timeout_ms <= 0:
            raise invalid(f"timeout_ms: {timeout_ms} (expected > 0, or None for ALLOY_TIMEOUT_MS)")
        result, handle = _alloy.comm_create_from_mpi(py2f(), -1 if device is None else device, timeout_ms or 0)
        check(result)
        return cls(handle)

    def _query(self, get: Any) -> int:
        result, value = get(self._handle)
        check(result, self._handle)
        return value

    @property
    def handle(self) -> int:
        """The alloyComm_t, for C code; raises once the communicator is destroyed."""
        if not self._handle:
            raise AlloyError(INVALID_USAGE, "the communicator was destroyed or aborted")
        return self._handle

    def destroy(self) -> None:
        """Collective: waits for the communicator's work on the device, then frees it. Idempotent."""
        if self._handle:
            handle, self._handle = self._handle, 0
            check(_alloy.comm_destroy(handle))

    def abort(self) -> None:
        """Local: stops this rank's kernels that wait on peers and frees the communicator."""
        if self._handle:
            handle, self._handle = self._handle, 0
            check(_alloy.comm_abort(handle))

    def async_error(self) -> int:
        """0 (alloySuccess), or the result code a kernel or a peer reported (e.g. TIMEOUT)."""
        result, error = _alloy.comm_async_error(self.handle)
        check(result, self._handle)
        return error

    def __enter__(self) -> "Comm":
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def __repr__(self) -> str:
        state = f"device {self.device}" if self._handle else "destroyed"
        return f"<alloy.Comm rank {self.rank} of {self.size}, {state}>"

    # Collectives. Counts come from the arrays: the whole of sendbuf (allreduce, reduce, broadcast, the
    # per-rank part of allgather) or of recvbuf (reduce_scatter's part); the other array must hold what
    # the operation writes or reads there, which Alloy checks against the allocation. Each is one call of
    # the extension, which reads the arrays and the stream, checks every argument before anything is
    # enqueued, and calls Alloy (src/_alloy.cpp: in Python these steps cost more than issue #33 allows).

    def allreduce(self, sendbuf: Any, recvbuf: Any, op: RedOp | int = RedOp.SUM, *, stream: Any = None) -> None:
        """recvbuf = op over every rank's sendbuf (in place where recvbuf is sendbuf)."""
        _alloy.allreduce(self._handle, sendbuf, recvbuf, op, stream)

    def reduce(self, sendbuf: Any, recvbuf: Any, root: int, op: RedOp | int = RedOp.SUM, *, stream: Any = None) -> None:
        """recvbuf on ``root`` = op over every rank's sendbuf; recvbuf matters on the root only (None elsewhere)."""
        _alloy.reduce(self._handle, sendbuf, recvbuf, root, op, stream)

    def broadcast(self, buf: Any, root: int = 0, *, recvbuf: Any = None, stream: Any = None) -> None:
        """recvbuf on every rank = buf of ``root``; recvbuf defaults to buf (in place, as MPI's Bcast)."""
        _alloy.broadcast(self._handle, buf, root, recvbuf, stream)

    def allgather(self, sendbuf: Any, recvbuf: Any, *, stream: Any = None) -> None:
        """recvbuf (size x sendbuf's elements) = every rank's sendbuf in rank order."""
        _alloy.allgather(self._handle, self.size, sendbuf, recvbuf, stream)

    def reduce_scatter(self, sendbuf: Any, recvbuf: Any, op: RedOp | int = RedOp.SUM, *, stream: Any = None) -> None:
        """recvbuf = part ``rank`` (recvbuf's elements) of op over every rank's sendbuf (size x as many)."""
        _alloy.reduce_scatter(self._handle, self.size, sendbuf, recvbuf, op, stream)

    def alltoall(self, sendbuf: Any, recvbuf: Any, *, stream: Any = None) -> None:
        """Block p of sendbuf to rank p, block q of recvbuf from rank q (size equal blocks each)."""
        _alloy.alltoall(self._handle, self.size, sendbuf, recvbuf, stream)

    def alltoallv(self, sendbuf: Any, recvbuf: Any, sendcounts: Sequence[int], sdispls: Sequence[int],
                  recvcounts: Sequence[int], rdispls: Sequence[int], relaybuf: Any = None, *,
                  stream: Any = None) -> None:
        """MPI_Alltoallv's exchange: sendcounts[p] elements from sdispls[p] of sendbuf to rank p, recvcounts[q]
        from rank q into rdispls[q] of recvbuf (counts and displacements in elements, one per rank).
        ``relaybuf``: optional device scratch Alloy may use between hosts (docs/api.md)."""
        _alloy.alltoallv(self._handle, self.size, sendbuf, recvbuf, sendcounts, sdispls, recvcounts, rdispls, relaybuf,
                         stream)

    def send(self, buf: Any, peer: int, *, stream: Any = None) -> None:
        """buf to ``peer`` (matched in order by its recv); inside ``group()`` fused with the others."""
        _alloy.send(self._handle, buf, peer, stream)

    def recv(self, buf: Any, peer: int, *, stream: Any = None) -> None:
        """buf from ``peer`` (matched in order with its send)."""
        _alloy.recv(self._handle, buf, peer, stream)

    @contextlib.contextmanager
    def group(self) -> Iterator[None]:
        """Sends and receives inside the block are fused into one launch when it ends (groups nest)."""
        check(_alloy.group_start())
        try:
            yield
        except BaseException:
            _alloy.group_end()  # closes the group; its error would only repeat the one on its way out
            raise
        check(_alloy.group_end())
