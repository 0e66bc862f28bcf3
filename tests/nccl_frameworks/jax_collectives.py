"""JAX on Alloy's libnccl.so.2 (issue #34): one process drives every local GPU, as JAX does by default on one
host; XLA creates one NCCL communicator rank per GPU and launches each collective on all of them in a group.

Run as one process with Alloy's library preloaded (LD_PRELOAD: the CUDA plugin of jaxlib loads libnccl.so.2
by its soname, which then resolves to the library already loaded). psum, psum_scatter, all_gather,
all_to_all and ppermute run under shard_map over a mesh of every GPU, and a psum over one axis of a 2-D
mesh, on integer-valued float32 data (exact sums); each result is checked against a NumPy reference
computed from the same inputs.
"""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave memory for Alloy's workspaces

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as PS  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_env import check, finish, require_alloy  # noqa: E402

P = "jax"


def main():
    devices = jax.devices("gpu")
    n = len(devices)
    if n < 2:
        print(f"{P}: skipped: {n} GPU(s) visible to JAX, the test needs 2 or more", flush=True)
        sys.exit(0)
    require_alloy(P)
    print(f"{P}: jax {jax.__version__} on {n} GPUs", flush=True)
    mesh = Mesh(numpy.array(devices), ("x",))
    sharded = NamedSharding(mesh, PS("x"))

    def over_mesh(body, host):
        """body on every GPU's row block of host (split along axis 0), the results joined along axis 0."""
        fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=PS("x"), out_specs=PS("x"), check_vma=False))
        return numpy.asarray(fn(jax.device_put(jnp.asarray(host), sharded)))

    rng = numpy.random.default_rng(20261126)
    m = 65536 + 3  # per GPU: above the small-message paths, and odd
    rows = rng.integers(-1000, 1000, (n, m)).astype(numpy.float32)  # GPU i holds rows[i]

    got = over_mesh(lambda a: jax.lax.psum(a, "x"), rows)
    check(P, "psum", numpy.array_equal(got, numpy.tile(rows.sum(0), (n, 1))))

    got = over_mesh(lambda a: jax.lax.all_gather(a, "x", axis=0, tiled=True), rows)
    check(P, "all_gather", numpy.array_equal(got, numpy.tile(rows, (n, 1))))

    k = 4099  # every GPU gives k elements to every GPU
    blocks = rng.integers(-1000, 1000, (n, n * k)).astype(numpy.float32)
    got = over_mesh(lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True), blocks)
    total = blocks.sum(0)
    check(P, "psum_scatter", numpy.array_equal(got, total.reshape(n, k)))

    got = over_mesh(lambda a: jax.lax.all_to_all(a, "x", split_axis=1, concat_axis=1, tiled=True), blocks)
    # GPU j receives block j of every GPU i, in the order of i.
    want = numpy.stack([numpy.concatenate([blocks[i, j * k:(j + 1) * k] for i in range(n)]) for j in range(n)])
    check(P, "all_to_all", numpy.array_equal(got, want))

    ring = [(i, (i + 1) % n) for i in range(n)]
    got = over_mesh(lambda a: jax.lax.ppermute(a, "x", perm=ring), rows)
    check(P, "ppermute (ring)", numpy.array_equal(got, numpy.roll(rows, 1, axis=0)))

    # A psum over one axis of a 2-D mesh: XLA builds communicators of the sub-groups (by ncclCommSplit of the
    # whole clique's ranks, from this one thread, where it splits).
    if n >= 4 and n % 2 == 0:
        half = n // 2
        mesh2 = Mesh(numpy.array(devices).reshape(2, half), ("a", "b"))
        fn = jax.jit(jax.shard_map(lambda a: jax.lax.psum(a, "b"), mesh=mesh2, in_specs=PS(("a", "b")),
                                   out_specs=PS(("a", "b")), check_vma=False))
        got = numpy.asarray(fn(jax.device_put(jnp.asarray(rows), NamedSharding(mesh2, PS(("a", "b"))))))
        want = numpy.concatenate([numpy.tile(rows[g * half:(g + 1) * half].sum(0), (half, 1)) for g in range(2)])
        check(P, f"psum over one axis of a 2 x {half} mesh", numpy.array_equal(got, want))

    finish(P)


if __name__ == "__main__":
    main()
