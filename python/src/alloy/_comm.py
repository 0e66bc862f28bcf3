"""Comm: an Alloy communicator made from an mpi4py communicator, and its collectives."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from . import _alloy
from ._arrays import DeviceArray, device_array, same_dtype
from ._errors import INVALID_USAGE, AlloyError, check, invalid
from ._streams import choose_stream
from ._types import RedOp


# RedOp members and their integers (equal as keys) -> the operator's integer: one lookup per call.
_OPS = {int(op): int(op) for op in RedOp}


def _op(op: RedOp | int, function: str) -> int:
    value = _OPS.get(op) if isinstance(op, int) else None
    if value is None:
        raise invalid(f"{function}: op {op!r} is not a reduction operator (expected alloy.SUM, PROD, MAX, MIN "
                      "or AVG)")
    return value


def _counts(values: Sequence[int], size: int, name: str, function: str) -> list[int]:
    values = [int(v) for v in values]
    if len(values) != size:
        raise invalid(f"{function}: {name} has {len(values)} entries; expected one per rank ({size})")
    if any(v < 0 for v in values):
        raise invalid(f"{function}: {name} has a negative entry; expected counts and displacements >= 0")
    return values


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
    # the operation writes or reads there, which Alloy checks against the allocation.

    def _run(self, call: Any, *args: Any) -> None:
        result = call(*args)
        if result:
            check(result, self._handle)

    def _pair(self, sendbuf: Any, recvbuf: Any, function: str) -> tuple[DeviceArray, DeviceArray]:
        send = device_array(sendbuf, function, "sendbuf")
        recv = send if recvbuf is sendbuf else device_array(recvbuf, function, "recvbuf")
        same_dtype(send, recv, function)
        return send, recv

    def allreduce(self, sendbuf: Any, recvbuf: Any, op: RedOp | int = RedOp.SUM, *, stream: Any = None) -> None:
        """recvbuf = op over every rank's sendbuf (in place where recvbuf is sendbuf)."""
        send, recv = self._pair(sendbuf, recvbuf, "allreduce")
        s = choose_stream(stream, [send, recv])
        self._run(_alloy.all_reduce, send.address, recv.address, send.count, send.dtype,
                  _op(op, "allreduce"), self.handle, s)

    def reduce(self, sendbuf: Any, recvbuf: Any, root: int, op: RedOp | int = RedOp.SUM, *, stream: Any = None) -> None:
        """recvbuf on ``root`` = op over every rank's sendbuf; recvbuf matters on the root only (None elsewhere)."""
        send = device_array(sendbuf, "reduce", "sendbuf")
        arrays = [send]
        address = 0
        if recvbuf is not None:
            recv = send if recvbuf is sendbuf else device_array(recvbuf, "reduce", "recvbuf")
            same_dtype(send, recv, "reduce")
            arrays.append(recv)
            address = recv.address
        s = choose_stream(stream, arrays)
        self._run(_alloy.reduce, send.address, address, send.count, send.dtype, _op(op, "reduce"),
                  int(root), self.handle, s)

    def broadcast(self, buf: Any, root: int = 0, *, recvbuf: Any = None, stream: Any = None) -> None:
        """recvbuf on every rank = buf of ``root``; recvbuf defaults to buf (in place, as MPI's Bcast)."""
        send = device_array(buf, "broadcast", "buf")
        recv = send if recvbuf is None or recvbuf is buf else device_array(recvbuf, "broadcast", "recvbuf")
        same_dtype(send, recv, "broadcast")
        s = choose_stream(stream, [send, recv])
        self._run(_alloy.broadcast, send.address, recv.address, recv.count, recv.dtype, int(root), self.handle, s)

    def allgather(self, sendbuf: Any, recvbuf: Any, *, stream: Any = None) -> None:
        """recvbuf (size x sendbuf's elements) = every rank's sendbuf in rank order."""
        send, recv = self._pair(sendbuf, recvbuf, "allgather")
        self._expect(recv, send.count * self.size, "allgather: recvbuf", "size x sendbuf's elements")
        s = choose_stream(stream, [send, recv])
        self._run(_alloy.all_gather, send.address, recv.address, send.count, send.dtype,
                  self.handle, s)

    def reduce_scatter(self, sendbuf: Any, recvbuf: Any, op: RedOp | int = RedOp.SUM, *, stream: Any = None) -> None:
        """recvbuf = part ``rank`` (recvbuf's elements) of op over every rank's sendbuf (size x as many)."""
        send, recv = self._pair(sendbuf, recvbuf, "reduce_scatter")
        self._expect(send, recv.count * self.size, "reduce_scatter: sendbuf", "size x recvbuf's elements")
        s = choose_stream(stream, [send, recv])
        self._run(_alloy.reduce_scatter, send.address, recv.address, recv.count, recv.dtype,
                  _op(op, "reduce_scatter"), self.handle, s)

    def alltoall(self, sendbuf: Any, recvbuf: Any, *, stream: Any = None) -> None:
        """Block p of sendbuf to rank p, block q of recvbuf from rank q (size equal blocks each)."""
        send, recv = self._pair(sendbuf, recvbuf, "alltoall")
        if send.count % self.size != 0:
            raise invalid(f"alltoall: sendbuf has {send.count} elements; expected a multiple of size ({self.size})")
        self._expect(recv, send.count, "alltoall: recvbuf", "as many elements as sendbuf")
        s = choose_stream(stream, [send, recv])
        self._run(_alloy.alltoall, send.address, recv.address, send.count // self.size, send.dtype,
                  self.handle, s)

    def alltoallv(self, sendbuf: Any, recvbuf: Any, sendcounts: Sequence[int], sdispls: Sequence[int],
                  recvcounts: Sequence[int], rdispls: Sequence[int], relaybuf: Any = None, *,
                  stream: Any = None) -> None:
        """MPI_Alltoallv's exchange: sendcounts[p] elements from sdispls[p] of sendbuf to rank p, recvcounts[q]
        from rank q into rdispls[q] of recvbuf (counts and displacements in elements, one per rank).
        ``relaybuf``: optional device scratch Alloy may use between hosts (docs/api.md)."""
        fn = "alltoallv"
        send, recv = self._pair(sendbuf, recvbuf, fn)
        counts = [_counts(v, self.size, name, fn) for v, name in
                  ((sendcounts, "sendcounts"), (sdispls, "sdispls"), (recvcounts, "recvcounts"), (rdispls, "rdispls"))]
        for (c, d, array, name) in ((counts[0], counts[1], send, "sendbuf"), (counts[2], counts[3], recv, "recvbuf")):
            end = max((di + ci for ci, di in zip(c, d) if ci > 0), default=0)
            if end > array.count:
                raise invalid(f"{fn}: {name} has {array.count} elements but the counts and displacements reach "
                              f"element {end}")
        arrays = [send, recv]
        relay = 0
        if relaybuf is not None:
            relay_array = device_array(relaybuf, fn, "relaybuf")
            arrays.append(relay_array)
            relay = relay_array.address
        s = choose_stream(stream, arrays)
        self._run(_alloy.alltoallv, send.address, counts[0], counts[1], recv.address, counts[2], counts[3],
                  relay, send.dtype, self.handle, s)

    def send(self, buf: Any, peer: int, *, stream: Any = None) -> None:
        """buf to ``peer`` (matched in order by its recv); inside ``group()`` fused with the others."""
        array = device_array(buf, "send", "buf")
        s = choose_stream(stream, [array])
        self._run(_alloy.send, array.address, array.count, array.dtype, int(peer), self.handle, s)

    def recv(self, buf: Any, peer: int, *, stream: Any = None) -> None:
        """buf from ``peer`` (matched in order with its send)."""
        array = device_array(buf, "recv", "buf")
        s = choose_stream(stream, [array])
        self._run(_alloy.recv, array.address, array.count, array.dtype, int(peer), self.handle, s)

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

    def _expect(self, array: DeviceArray, count: int, name: str, what: str) -> None:
        if array.count != count:
            raise invalid(f"{name} has {array.count} elements; expected {count} ({what})")
