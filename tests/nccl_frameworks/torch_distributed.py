"""torch.distributed's NCCL backend on Alloy's libnccl.so.2 (issue #16).

One process per rank under mpirun, with Alloy's library preloaded (LD_PRELOAD: PyTorch finds NVIDIA's
libnccl.so.2 through libtorch_cuda.so's RPATH otherwise). MASTER_ADDR/MASTER_PORT give PyTorch's store,
which carries the unique id. Every operation runs on fresh random data against a reference computed here
on the CPU from every rank's inputs (each rank can regenerate every other rank's inputs from the shared
seed), into outputs poisoned first.
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_env import RANK, WORLD, check, device_index, finish, require_alloy  # noqa: E402

P = "torch"
SEED = int(os.environ.get("ALLOY_TEST_SEED", "20261125"))
POISON = -7


def inputs_of(rank, tag, n, dtype, span=1000):
    """The tensor rank `rank` contributes to the operation `tag`: integers in [-span, span), so that they and
    their sums are exact in dtype (bfloat16 holds integers exactly only up to 256)."""
    g = torch.Generator().manual_seed(SEED * 1000 + rank * 97 + tag)
    return torch.randint(-span, span, (n,), generator=g, dtype=torch.int64).to(dtype)


def poisoned(n, dtype, dev):
    return torch.full((n,), POISON, dtype=dtype, device=dev)


def same(name, got, want):
    got = got.cpu()
    bad = (got != want).sum().item()
    check(P, name, bad == 0, f"{bad} of {want.numel()} elements differ")


def main():
    dev = torch.device("cuda", device_index(torch.cuda.device_count()))
    torch.cuda.set_device(dev)
    require_alloy(P)
    dist.init_process_group("nccl", rank=RANK, world_size=WORLD, device_id=dev)
    check(P, "nccl version is the header's", torch.cuda.nccl.version() >= (2, 28, 0), str(torch.cuda.nccl.version()))

    n = 10007  # odd, not a multiple of any vector width
    for tag, dtype, span in ((1, torch.float32, 1000), (2, torch.int64, 1000), (3, torch.bfloat16, 32)):
        x = inputs_of(RANK, tag, n, dtype, span).to(dev)
        dist.all_reduce(x)
        want = sum(inputs_of(r, tag, n, torch.int64, span) for r in range(WORLD)).to(dtype)
        same(f"all_reduce sum {dtype}", x, want)
    x = inputs_of(RANK, 4, n, torch.float32).to(dev)
    dist.all_reduce(x, op=dist.ReduceOp.MAX)
    same("all_reduce max", x, torch.stack([inputs_of(r, 4, n, torch.float32) for r in range(WORLD)]).max(0).values)

    # PREMUL_SUM (ncclRedOpCreatePreMulSum; FSDP's gradient scaling): each input times the factor, then summed.
    # A factor of 3 keeps the integers' sums exact in float32.
    premul = dist._make_nccl_premul_sum(3.0)
    x = inputs_of(RANK, 13, n, torch.float32).to(dev)
    dist.all_reduce(x, op=premul)
    same("all_reduce PREMUL_SUM(3.0)", x, 3 * sum(inputs_of(r, 13, n, torch.int64) for r in range(WORLD)).to(torch.float32))
    out = poisoned(n, torch.float32, dev)
    dist.reduce_scatter_tensor(out, inputs_of(RANK, 14, n * WORLD, torch.float32).to(dev), op=premul)
    total = 3 * sum(inputs_of(r, 14, n * WORLD, torch.int64) for r in range(WORLD)).to(torch.float32)
    same("reduce_scatter_tensor PREMUL_SUM(3.0)", out, total[RANK * n:(RANK + 1) * n])

    root = WORLD - 1
    x = inputs_of(RANK, 5, n, torch.float32).to(dev) if RANK == root else poisoned(n, torch.float32, dev)
    dist.broadcast(x, src=root)
    same("broadcast", x, inputs_of(root, 5, n, torch.float32))

    out = poisoned(n * WORLD, torch.int32, dev)
    dist.all_gather_into_tensor(out, inputs_of(RANK, 6, n, torch.int32).to(dev))
    same("all_gather_into_tensor", out, torch.cat([inputs_of(r, 6, n, torch.int32) for r in range(WORLD)]))

    out = poisoned(n, torch.float32, dev)
    dist.reduce_scatter_tensor(out, inputs_of(RANK, 7, n * WORLD, torch.float32).to(dev))
    total = sum(inputs_of(r, 7, n * WORLD, torch.int64) for r in range(WORLD)).to(torch.float32)
    same("reduce_scatter_tensor", out, total[RANK * n:(RANK + 1) * n])

    # Uneven splits: rank s sends (s + 2 * d + 1) * 37 elements to rank d (alltoallv).
    def split(s, d):
        return (s + 2 * d + 1) * 37
    send_splits = [split(RANK, d) for d in range(WORLD)]
    recv_splits = [split(s, RANK) for s in range(WORLD)]
    src = inputs_of(RANK, 8, sum(send_splits), torch.float32)
    out = poisoned(sum(recv_splits), torch.float32, dev)
    dist.all_to_all_single(out, src.to(dev), output_split_sizes=recv_splits, input_split_sizes=send_splits)
    want = []
    for s in range(WORLD):
        theirs = inputs_of(s, 8, sum(split(s, d) for d in range(WORLD)), torch.float32)
        start = sum(split(s, d) for d in range(RANK))
        want.append(theirs[start:start + split(s, RANK)])
    same("all_to_all_single (uneven splits)", out, torch.cat(want))

    # A ring of send/recv in one batch (a group), then a plain pair between ranks 0 and 1.
    right, left = (RANK + 1) % WORLD, (RANK - 1) % WORLD
    out = poisoned(n, torch.float32, dev)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, inputs_of(RANK, 9, n, torch.float32).to(dev), right),
                                   dist.P2POp(dist.irecv, out, left)])
    for r in reqs:
        r.wait()
    same("batch_isend_irecv ring", out, inputs_of(left, 9, n, torch.float32))
    if RANK < 2:
        out = poisoned(n, torch.float32, dev)
        if RANK == 0:
            dist.send(inputs_of(0, 10, n, torch.float32).to(dev), dst=1)
        else:
            dist.recv(out, src=0)
            same("send/recv pair", out, inputs_of(0, 10, n, torch.float32))

    # A group of the odd ranks (every rank calls new_group; only members use it).
    members = [r for r in range(WORLD) if r % 2 == 1] or [0]
    group = dist.new_group(ranks=members)
    if RANK in members:
        x = inputs_of(RANK, 11, n, torch.float32).to(dev)
        dist.all_reduce(x, group=group)
        same(f"new_group {members} all_reduce", x, sum(inputs_of(r, 11, n, torch.int64) for r in members).to(torch.float32))

    # An all_reduce captured into a CUDA graph and replayed 1000 times; each replay first copies the next
    # input in, so a replay that reused stale data or skipped the collective shows in the checked ones.
    stream = torch.cuda.Stream()
    base = inputs_of(RANK, 12, n, torch.float32).to(dev)
    scale = torch.ones(1, device=dev)
    work = torch.empty_like(base)
    with torch.cuda.stream(stream):
        work.copy_(base * scale)
        dist.all_reduce(work)  # warm-up outside capture, as PyTorch's docs ask
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        work.copy_(base * scale)
        dist.all_reduce(work)
    total = sum(inputs_of(r, 12, n, torch.int64) for r in range(WORLD)).to(torch.float32)
    wrong_replays = 0
    for i in range(1000):
        factor = float(i % 7 + 1)  # every rank scales alike, so the sum scales too
        scale.fill_(factor)
        work.fill_(POISON)
        graph.replay()
        if i % 97 == 0 or i == 999:
            torch.cuda.synchronize()
            wrong_replays += int((work.cpu() != total * factor).any().item())
    torch.cuda.synchronize()
    check(P, "CUDA graph all_reduce, 1000 replays (11 checked)", wrong_replays == 0, f"{wrong_replays} wrong")

    dist.barrier()
    dist.destroy_process_group()
    finish(P)


if __name__ == "__main__":
    main()
