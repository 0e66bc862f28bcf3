// alloyAllReduce of small buffers between many hosts by recursive doubling (doubling_plan.h). The flat
// one-shot schedule sends the whole buffer to every other rank in one round: nranks - 1 messages per
// rank, which at many hosts costs more in per-message work than the extra rounds of doubling cost in
// latency (docs/architecture.md, "Collectives between hosts", has the model and the choice). Where every
// host holds the same L > 1 ranks the host reduces first (a one-shot reduction inside the host, over CUDA
// IPC) and the doubling runs along the rails, so that only ceil(log2 hosts) rounds cross hosts; otherwise
// it runs over every rank of the communicator. Every rank ends with the same bits.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "alloy.h"
#include "group_reduce.h"

namespace alloy {

// Whether an allreduce of one-shot size (`bytes`) on this communicator runs by doubling: not for avg
// (whose division belongs after the whole sum; the flat schedule keeps it); ALLOY_ALLREDUCE_DOUBLING=1
// wherever the communicator spans hosts, 0 never, auto (default) where fewerRoundsPay() (round_cost.h)
// expects it to finish first. The same on every rank.
bool allReduceDoublingApplies(alloyComm_t comm, alloyRedOp_t op, size_t bytes);

// recvbuff = the reduction of every rank's sendbuff (in place allowed). The caller checked the arguments;
// nothing is enqueued unless every round can be.
alloyResult_t doublingAllReduce(const char* send, char* recv, size_t count, const Reduction& r, alloyComm_t comm,
                                cudaStream_t stream);

}  // namespace alloy
