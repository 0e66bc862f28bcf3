"""What the framework tests share: the rank and size from the launcher, the GPU every rank uses, the check
that the libnccl.so.2 in this process is Alloy's, and a result line per check.

Run one process per rank under mpirun (scripts/gpu-nccl-frameworks.sh). Ranks may share one GPU: every rank
uses device LOCAL_RANK % device_count, as NCCL programs do, which Alloy allows and NVIDIA's NCCL refuses.
"""
import ctypes
import os
import sys

RANK = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMIX_RANK", "0")))
WORLD = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
LOCAL_RANK = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))

_failures = []
_checks = 0


def device_index(device_count):
    return LOCAL_RANK % device_count


def alloy_identity():
    """The identity string of the libnccl.so.2 this process resolves, or None where it is NVIDIA's."""
    lib = ctypes.CDLL("libnccl.so.2")
    try:
        fn = lib.alloyNcclIdentity
    except AttributeError:
        return None
    fn.restype = ctypes.c_char_p
    return fn().decode()


def require_alloy(prefix):
    identity = alloy_identity()
    if identity is None:
        print(f"{prefix}: rank {RANK}: libnccl.so.2 in this process is not Alloy's (no alloyNcclIdentity)",
              flush=True)
        sys.exit(2)
    if RANK == 0:
        print(f"{prefix}: libnccl.so.2 is {identity}", flush=True)


def check(prefix, name, ok, detail=""):
    """Records one check; every rank prints its failures, rank 0 the passes."""
    global _checks
    _checks += 1
    if not ok:
        _failures.append(name)
        print(f"{prefix}: rank {RANK}: FAIL {name} {detail}", flush=True)
    elif RANK == 0:
        print(f"{prefix}: ok {name}", flush=True)


def finish(prefix):
    """Prints this rank's closing line (its checks passed and failed) and exits with the matching status."""
    failed = len(_failures)
    print(f"{prefix}: rank {RANK}: {_checks - failed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)
