"""Alloy's datatypes and reduction operators, and how array descriptions name them."""
from __future__ import annotations

import enum


class DataType(enum.IntEnum):
    """alloyDataType_t (numbered as NCCL numbers them)."""

    INT8 = 0
    UINT8 = 1
    INT32 = 2
    UINT32 = 3
    INT64 = 4
    UINT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT8_E4M3 = 10
    FLOAT8_E5M2 = 11


class RedOp(enum.IntEnum):
    """alloyRedOp_t."""

    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    AVG = 4


# __cuda_array_interface__ typestr (kind and size; byte order '<' or '|') -> datatype. bfloat16 and the
# fp8 formats have no typestr of their own ('<V2', '|V1'): such arrays reach Alloy through DLPack.
_TYPESTR = {
    "i1": DataType.INT8, "u1": DataType.UINT8, "i4": DataType.INT32, "u4": DataType.UINT32,
    "i8": DataType.INT64, "u8": DataType.UINT64, "f2": DataType.FLOAT16, "f4": DataType.FLOAT32,
    "f8": DataType.FLOAT64,
}

# DLPack (type code, bits) -> datatype; codes (dlpack.h 1.1): 0 int, 1 uint, 2 float, 4 bfloat, 10 float8
# e4m3fn (CUDA's __nv_fp8_e4m3), 12 float8 e5m2.
_DLPACK = {
    (0, 8): DataType.INT8, (1, 8): DataType.UINT8, (0, 32): DataType.INT32, (1, 32): DataType.UINT32,
    (0, 64): DataType.INT64, (1, 64): DataType.UINT64, (2, 16): DataType.FLOAT16, (2, 32): DataType.FLOAT32,
    (2, 64): DataType.FLOAT64, (4, 16): DataType.BFLOAT16, (10, 8): DataType.FLOAT8_E4M3,
    (12, 8): DataType.FLOAT8_E5M2,
}

ITEMSIZE = {
    DataType.INT8: 1, DataType.UINT8: 1, DataType.INT32: 4, DataType.UINT32: 4, DataType.INT64: 8,
    DataType.UINT64: 8, DataType.FLOAT16: 2, DataType.FLOAT32: 4, DataType.FLOAT64: 8, DataType.BFLOAT16: 2,
    DataType.FLOAT8_E4M3: 1, DataType.FLOAT8_E5M2: 1,
}


# The same keyed by the whole typestr, each byte-order mark that means this machine's order: one lookup.
_WHOLE_TYPESTR = {order + kind: dtype for kind, dtype in _TYPESTR.items() for order in "<|="}


def from_typestr(typestr: str) -> DataType | None:
    """The datatype of a __cuda_array_interface__ typestr, or None."""
    return _WHOLE_TYPESTR.get(typestr)


def from_dlpack(code: int, bits: int, lanes: int) -> DataType | None:
    """The datatype of a DLPack dtype, or None."""
    return _DLPACK.get((code, bits)) if lanes == 1 else None
