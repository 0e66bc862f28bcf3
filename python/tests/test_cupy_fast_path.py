"""CuPy arrays are read from their attributes rather than their __cuda_array_interface__ (the extension's
CupyArrays), with the interface's fields and stream, and through the interface wherever the attributes
would not say the same. On a machine without CuPy, stand-in modules named cupy, cupy._util, cupy.cuda and
cupy_backends.cuda.stream let the extension find a `cupy.ndarray` whose interface counts its reads; on a
machine with CuPy the GPU tests (test_gpu.py) run the real arrays, and these skip."""
from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any, Iterator

import numpy as np
import pytest
from test_errors import expect

import alloy
from alloy import _errors

ADDRESS = 0x7F0000000000


class Calls:
    interface = 0  # reads of any stand-in array's __cuda_array_interface__
    current_stream = 0
    default_stream = 0
    stream_protocol = 0  # calls of a stand-in stream's __cuda_stream__


class StandInArray:
    """What the extension reads of a cupy.ndarray: size, _c_contiguous, dtype, data.ptr, and the interface."""

    def __init__(self, count: int, dtype: str = "float32", contiguous: bool = True) -> None:
        self.size = count
        self._c_contiguous = contiguous
        self.dtype = np.dtype(dtype)
        self.data = types.SimpleNamespace(ptr=ADDRESS)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        Calls.interface += 1
        shape, strides = ((self.size,), None) if self._c_contiguous else ((4, self.size // 4), (64, 4))
        return {"shape": shape, "typestr": self.dtype.str, "data": (ADDRESS, False), "strides": strides,
                "version": 3, "stream": 7}


class StandInStream:
    """cupy.cuda.Stream as the extension reads it: `ptr`, which its __cuda_stream__ also returns."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr

    def __cuda_stream__(self) -> tuple[int, int]:
        Calls.stream_protocol += 1
        return (0, self.ptr)


class StandInExternalStream(StandInStream):
    pass


class DerivedStream(StandInStream):
    """A subclass of CuPy's stream: it may return another handle from its protocol, so it is asked."""


# One set of stand-ins for the process: the extension keeps what it finds the first time.
CURRENT = types.SimpleNamespace(ptr=5)
UTIL = types.SimpleNamespace(CUDA_ARRAY_INTERFACE_EXPORT_VERSION=3)


def get_current_stream() -> types.SimpleNamespace:
    Calls.current_stream += 1
    return CURRENT


def get_default_stream_ptr() -> int:
    Calls.default_stream += 1
    return 1


MODULES = {
    "cupy": types.SimpleNamespace(ndarray=StandInArray),
    "cupy._util": UTIL,
    "cupy.cuda": types.SimpleNamespace(get_current_stream=get_current_stream, Stream=StandInStream,
                                       ExternalStream=StandInExternalStream),
    "cupy_backends": types.SimpleNamespace(),
    "cupy_backends.cuda": types.SimpleNamespace(),
    "cupy_backends.cuda.stream": types.SimpleNamespace(get_default_stream_ptr=get_default_stream_ptr),
}


@pytest.fixture
def stand_in_cupy(host_only: alloy.Comm) -> Iterator[None]:
    if "cupy" in sys.modules or importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: its real arrays are tested on GPUs (test_gpu.py)")
    sys.modules.update(MODULES)  # type: ignore[arg-type]
    CURRENT.ptr, UTIL.CUDA_ARRAY_INTERFACE_EXPORT_VERSION = 5, 3
    Calls.interface = Calls.current_stream = Calls.default_stream = Calls.stream_protocol = 0
    try:
        yield
    finally:
        for name in MODULES:
            sys.modules.pop(name, None)


def test_read_from_attributes(host_only: alloy.Comm, stand_in_cupy: None) -> None:
    # Past every check of the package's: the library's own refusal, and no interface read.
    with pytest.raises(alloy.AlloyError) as caught:
        host_only.allreduce(StandInArray(8), StandInArray(8))
    expect(caught, _errors.INVALID_USAGE, "alloyAllReduce: the communicator is host-only")
    assert Calls.interface == 0
    assert Calls.current_stream == 1, "one stream read per call, for both arrays"
    # Datatypes and sizes come from the attributes: the package's checks see them.
    with pytest.raises(alloy.AlloyError) as caught:
        host_only.allreduce(StandInArray(8, "float32"), StandInArray(8, "int32"))
    expect(caught, _errors.INVALID_ARGUMENT, "allreduce: sendbuf is float32 but recvbuf is int32")
    n = host_only.size
    with pytest.raises(alloy.AlloyError) as caught:
        host_only.allgather(StandInArray(4, "float64"), StandInArray(4 * n + 1, "float64"))
    expect(caught, _errors.INVALID_ARGUMENT, f"recvbuf has {4 * n + 1} elements; expected {4 * n}")
    assert Calls.interface == 0


def test_stream_as_the_interface_names_it(host_only: alloy.Comm, stand_in_cupy: None) -> None:
    # The current stream's handle 0 means the default stream's handle, as CuPy's interface gives it.
    CURRENT.ptr = 0
    with pytest.raises(alloy.AlloyError):
        host_only.allreduce(StandInArray(8), StandInArray(8))
    assert (Calls.current_stream, Calls.default_stream, Calls.interface) == (1, 1, 0)
    # Export version 2 names no stream and reads none.
    UTIL.CUDA_ARRAY_INTERFACE_EXPORT_VERSION = 2
    with pytest.raises(alloy.AlloyError):
        host_only.allreduce(StandInArray(8), StandInArray(8))
    assert (Calls.current_stream, Calls.interface) == (1, 0)
    # Any other version is CuPy's to refuse: the interface is read.
    UTIL.CUDA_ARRAY_INTERFACE_EXPORT_VERSION = 5
    with pytest.raises(alloy.AlloyError):
        host_only.allreduce(StandInArray(8), StandInArray(8))
    assert Calls.interface > 0


@pytest.mark.parametrize("array, needle", [
    (StandInArray(16, contiguous=False), "sendbuf: the array is not contiguous"),
    (StandInArray(8, "complex64"), "sendbuf: datatype '<c8' is not one Alloy"),
])
def test_the_interface_where_attributes_would_not_do(host_only: alloy.Comm, stand_in_cupy: None,
                                                     array: StandInArray, needle: str) -> None:
    with pytest.raises(alloy.AlloyError) as caught:
        host_only.allreduce(array, StandInArray(array.size, str(array.dtype)))
    expect(caught, _errors.INVALID_ARGUMENT, needle)
    assert Calls.interface >= 1


def test_empty_arrays_through_the_interface(host_only: alloy.Comm, stand_in_cupy: None) -> None:
    with pytest.raises(alloy.AlloyError):
        host_only.allreduce(StandInArray(0), StandInArray(0))
    assert Calls.interface == 2


def test_cupy_streams_read_from_ptr(host_only: alloy.Comm, stand_in_cupy: None) -> None:
    # CuPy's own stream classes: `ptr` is read, the protocol not called (the library refuses afterwards).
    for stream_type in (StandInStream, StandInExternalStream):
        with pytest.raises(alloy.AlloyError) as caught:
            host_only.allreduce(StandInArray(8), StandInArray(8), stream=stream_type(5))
        expect(caught, _errors.INVALID_USAGE, "alloyAllReduce: the communicator is host-only")
    assert Calls.stream_protocol == 0
    # The handle is the one read: out of range, it is refused by that name.
    with pytest.raises(alloy.AlloyError) as caught:
        host_only.allreduce(StandInArray(8), StandInArray(8), stream=StandInStream(2**64))
    expect(caught, _errors.INVALID_ARGUMENT, f"stream: ptr {2**64} is out of range")
    # A subclass goes through the protocol.
    with pytest.raises(alloy.AlloyError):
        host_only.allreduce(StandInArray(8), StandInArray(8), stream=DerivedStream(5))
    assert Calls.stream_protocol == 1
