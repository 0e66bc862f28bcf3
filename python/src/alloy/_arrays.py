"""What a collective needs of an array: its device address, datatype, element count and stream.

Arrays come through ``__cuda_array_interface__`` (CuPy, PyTorch, Numba; version 2 or 3, whose ``stream``
says where the data is being produced) or, failing that, DLPack's ``__dlpack__`` (read by the extension).
Everything is checked here, before Alloy is called: host memory, arrays that are not contiguous, and
datatypes Alloy has no name for raise AlloyError naming the argument.
"""
from __future__ import annotations

from math import prod
from typing import Any, NamedTuple, Sequence

from . import _alloy
from ._errors import invalid
from ._types import ITEMSIZE, DataType, from_dlpack, from_typestr

_DLPACK_CUDA = 2  # kDLCUDA
_DLPACK_CUDA_MANAGED = 13  # kDLCUDAManaged


class DeviceArray(NamedTuple):
    """A contiguous array in device memory, as Alloy takes it (a named tuple: built on every call, so cheap)."""

    address: int
    dtype: DataType
    count: int  # elements
    stream: int | None  # the producer's stream (__cuda_array_interface__ v3), None where not given


def _contiguous(shape: Sequence[int], strides: Sequence[int] | None, itemsize: int) -> bool:
    """Whether strides (in bytes; None: compact) describe a compact row-major layout of shape."""
    if strides is None or any(extent == 0 for extent in shape):
        return True
    expected = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


def _from_cai(cai: dict[str, Any], dtype: DataType, function: str, role: str) -> DeviceArray:
    # Every collective passes here (twice for most): the common case, compact strides, takes a few
    # dictionary lookups and no loop.
    shape = cai["shape"]
    strides = cai.get("strides")
    if strides is not None and not _contiguous(shape, strides, ITEMSIZE[dtype]):
        raise invalid(f"{function}: {role}: the array is not contiguous (strides {tuple(strides)} for shape "
                      f"{tuple(shape)}); expected a C-contiguous array")
    address, _read_only = cai["data"]
    return DeviceArray(address or 0, dtype, prod(shape), cai.get("stream"))


def _from_dlpack(obj: Any, function: str, role: str) -> DeviceArray:
    try:
        address, device_type, _device_id, code, bits, lanes, shape, strides = _alloy.dlpack_info(obj)
    except Exception as err:  # the producer's own refusal (unsupported device, dtype, or layout)
        raise invalid(f"{function}: {role}: cannot read the object through DLPack: {err}") from err
    if device_type not in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED):
        raise invalid(f"{function}: {role}: the array is in host memory (DLPack device type {device_type}); expected "
                      "CUDA device memory")
    dtype = from_dlpack(code, bits, lanes)
    if dtype is None:
        raise invalid(f"{function}: {role}: DLPack datatype (code {code}, {bits} bits, {lanes} lanes) is not one Alloy "
                      "reduces or moves")
    itemsize = ITEMSIZE[dtype]
    byte_strides = [s * itemsize for s in strides] if strides else None
    if not _contiguous(shape, byte_strides, itemsize):
        raise invalid(f"{function}: {role}: the array is not contiguous (strides {tuple(strides)} elements for shape "
                      f"{tuple(shape)}); expected a C-contiguous array")
    return DeviceArray(address, dtype, prod(shape), None)


def device_array(obj: Any, function: str, role: str) -> DeviceArray:
    """The device array behind obj, the argument ``role`` of ``function`` (named so in messages, which are
    formatted only when raised: this runs on every call)."""
    try:
        cai = obj.__cuda_array_interface__
    except (AttributeError, TypeError):  # older PyTorch raises TypeError for bfloat16, which DLPack carries
        cai = None
    if cai is not None:
        dtype = from_typestr(cai.get("typestr", ""))
        if dtype is not None:
            return _from_cai(cai, dtype, function, role)
        # A typestr with no datatype of its own ('<V2': PyTorch 2.11's bfloat16) is read through DLPack,
        # which names bfloat16 and the float8 formats.
        if not hasattr(obj, "__dlpack__"):
            raise invalid(f"{function}: {role}: datatype {cai.get('typestr')!r} is not one Alloy reduces or moves "
                          "(expected int8, uint8, int32, uint32, int64, uint64, float16, float32, float64; "
                          "bfloat16 and float8 arrays through DLPack)")
        return _from_dlpack(obj, function, role)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, function, role)
    raise invalid(f"{function}: {role}: a {type(obj).__name__} is not device memory Alloy can read (expected an "
                  "object with __cuda_array_interface__ or __dlpack__ in CUDA device memory: CuPy, PyTorch, Numba)")


def same_dtype(send: DeviceArray, recv: DeviceArray, function: str) -> None:
    """Send and receive arrays of one operation share their datatype."""
    if send.dtype != recv.dtype:
        raise invalid(f"{function}: sendbuf is {send.dtype.name.lower()} but recvbuf is "
                      f"{recv.dtype.name.lower()}; expected the same datatype")
