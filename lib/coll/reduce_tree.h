// alloyReduce of small buffers between many hosts up a binomial tree (binomial_plan.h). The flat
// schedule has every rank send its buffer to the root in one round, so the root serves a message from
// every rank on another host; up the tree each rank reduces what its children send (at most log2 n of
// them) and sends its partial result to its parent, ceil(log2 n) levels in all. Where every host holds
// the same L > 1 ranks the host reduces first (a one-shot reduction inside the host, over CUDA IPC,
// into the host's rank on the root's rail) and the tree runs along the root's rail, over the hosts: the
// mirror of the small broadcast's tree (broadcast.cc). docs/architecture.md, "Collectives between
// hosts", has the cost model that chooses it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"
#include "group_reduce.h"

namespace alloy {

// Whether a reduce of one-shot size (`bytes`) on this communicator goes up the tree: not for avg (whose
// division belongs after the whole sum; the flat schedule keeps it); ALLOY_REDUCE_TREE=1 wherever the
// communicator spans hosts, 0 never, auto (default) where fewerRoundsPay() (round_cost.h) expects the
// tree's levels to finish before the root's one round. The same on every rank.
bool reduceTreeApplies(alloyComm_t comm, alloyRedOp_t op, size_t bytes);

// recvbuff (the root's) = the reduction of every rank's sendbuff (in place allowed). Each rank reduces
// its own partial first and its children's after it, in the tree's order of children, so the result is
// the same on every run. The caller checked the arguments; nothing is enqueued unless every step can be.
alloyResult_t treeReduce(const char* send, char* recv, size_t count, const Reduction& r, int root, alloyComm_t comm,
                         cudaStream_t stream);

}  // namespace alloy
