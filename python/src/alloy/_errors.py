"""AlloyError: a failed call, with Alloy's result code and message."""
from __future__ import annotations

from . import _alloy

# alloyResult_t, include/alloy.h
SUCCESS = 0
CUDA_ERROR = 1
SYSTEM_ERROR = 2
INTERNAL_ERROR = 3
INVALID_ARGUMENT = 4
INVALID_USAGE = 5
REMOTE_ERROR = 6
IN_PROGRESS = 7
TIMEOUT = 8
NOT_SUPPORTED = 9


class AlloyError(RuntimeError):
    """An Alloy call that failed: ``code`` is its alloyResult_t, ``code_name`` what the code means, and the
    message says what was wrong (which argument, which rank, what was expected)."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.code_name = _alloy.error_string(code)
        self.message = message
        super().__init__(f"{message} ({self.code_name}, code {code})")


def check(result: int, comm: int = 0) -> None:
    """Raises AlloyError for a failed C call, with the message Alloy left for this thread."""
    if result != SUCCESS:
        raise AlloyError(result, _alloy.last_error(comm) or _alloy.error_string(result))


def invalid(message: str) -> AlloyError:
    """The error of an argument the package rejects before calling Alloy (nothing is enqueued)."""
    return AlloyError(INVALID_ARGUMENT, message)
