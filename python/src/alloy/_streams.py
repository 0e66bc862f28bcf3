"""CUDA streams as Alloy takes them: an integer handle."""
from __future__ import annotations

from typing import Any

from . import _alloy
from ._arrays import DeviceArray
from ._errors import CUDA_ERROR, AlloyError, invalid

# CAI v3's stream values that mean the legacy default stream (1) and the per-thread one (2).
LEGACY = 1
PER_THREAD = 2


def stream_handle(stream: Any) -> int:
    """The handle of an int, of an object with __cuda_stream__ (cuda.core, CUDA Python's protocol:
    a (version, handle) pair), or of one with ``cuda_stream`` (PyTorch) or ``ptr`` (CuPy)."""
    if isinstance(stream, int):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        _version, handle = protocol() if callable(protocol) else protocol
        return int(handle)
    for attribute in ("cuda_stream", "ptr"):
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return handle
    raise invalid(f"stream: a {type(stream).__name__} is not a CUDA stream (expected an int handle, or an "
                  "object with __cuda_stream__, cuda_stream or ptr)")


def choose_stream(stream: Any, arrays: list[DeviceArray]) -> int:
    """The stream an operation runs on: ``stream`` when given (made to wait for every array's producer
    stream that differs), else the first array's producer stream, else the legacy default stream."""
    if stream is None:
        chosen = next((a.stream for a in arrays if a.stream is not None), 0)
    else:
        chosen = stream if type(stream) is int else stream_handle(stream)
    waited = None
    for array in arrays:
        producer = array.stream
        if producer is None or producer == chosen or (producer == LEGACY and chosen == 0) or producer == waited:
            continue
        err = _alloy.stream_wait(chosen, producer)
        if err != 0:
            raise AlloyError(CUDA_ERROR, f"stream: cannot order stream {chosen:#x} after the array's "
                             f"stream {producer:#x}: {_alloy.cuda_error_string(err)}")
        waited = producer
    return chosen
