"""The package itself: import, version, the names it exports."""
from __future__ import annotations

from importlib import metadata

import alloy
from alloy import _alloy


def test_version_is_the_library_and_the_distribution() -> None:
    code = _alloy.version()
    assert alloy.__version__ == f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    assert metadata.version("alloy") == alloy.__version__


def test_operators_and_datatypes_are_numbered_as_in_alloy_h() -> None:
    assert [int(op) for op in (alloy.SUM, alloy.PROD, alloy.MAX, alloy.MIN, alloy.AVG)] == [0, 1, 2, 3, 4]
    assert alloy.DataType.FLOAT32 == 7 and alloy.DataType.BFLOAT16 == 9 and alloy.DataType.FLOAT8_E5M2 == 11


def test_error_strings_come_from_the_library() -> None:
    err = alloy.AlloyError(4, "x: y")
    assert err.code == 4 and err.code_name == _alloy.error_string(4) and err.message == "x: y"
    assert str(err) == f"x: y ({_alloy.error_string(4)}, code 4)"
