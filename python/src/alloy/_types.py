"""Alloy's datatypes and reduction operators (which typestr or DLPack dtype names which datatype: src/_alloy.cpp)."""
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

