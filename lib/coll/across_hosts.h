// The reducing collectives on a communicator that spans hosts. Each runs as an exchange through the
// point-to-point engine, which reaches the ranks of this host over CUDA IPC and the others over the
// network channel (p2p_plan.h), then a reduction of what arrived (slot_reduce_kernel.h), then, for
// allreduce and reduce, a second exchange of the reduced parts. Every part is reduced by one rank, in
// rank order, so reductions give identical bits on every rank. docs/architecture.md, "Collectives
// between hosts", says what is flat here and what a hierarchical schedule would save.
//
// The callers have checked every argument; these enqueue nothing unless every step can be enqueued.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"

namespace alloy {

// Whether schedules may go through the rails: the communicator spans hosts that each hold the same
// number L > 1 of ranks (LocalTopology::rails), and ALLOY_ALLREDUCE_HIERARCHY is not 0. The same on every
// rank.
bool railsApply(alloyComm_t comm);

// recvbuff = part `rank` (recvcount elements, NCCL's layout) of the reduction of every rank's sendbuff.
// Small buffers between many hosts (ALLOY_REDUCE_SCATTER_DOUBLING, round_cost.h): the whole buffer by
// recursive doubling, then this rank's part. Above allreduce's one-shot size, where every host holds the same number L > 1 of ranks: hierarchical
// (inside the host, then along the rail), which sends 1/L of the flat schedule's bytes between hosts.
// Otherwise flat: part p of every rank's buffer to rank p, which reduces them.
alloyResult_t reduceScatterAcrossHosts(const void* sendbuff, void* recvbuff, size_t recvcount, alloyDataType_t type,
                                       alloyRedOp_t op, alloyComm_t comm, cudaStream_t stream, const char* function);
// Small buffers (up to allreduceOneShotMaxBytes): every rank sends its buffer to every rank and reduces
// all of them, or, where allReduceDoublingApplies (allreduce_doubling.h), recursive doubling. Larger, where every host holds the same number L > 1 of ranks: hierarchical (reduce-scatter
// inside the host, reduce-scatter and gather along the rail of ranks of one local index across hosts,
// gather inside the host), which sends 1/L of the flat schedule's bytes between hosts. Otherwise flat:
// reduce-scatter, then every rank sends its reduced part to every rank.
alloyResult_t allReduceAcrossHosts(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t type,
                                   alloyRedOp_t op, alloyComm_t comm, cudaStream_t stream, const char* function);
// Small buffers: every rank sends its buffer to the root, which reduces them, or, where
// reduceTreeApplies (reduce_tree.h), a binomial tree up to the root. Larger: reduce-scatter
// (hierarchical where allreduce's is), then every rank sends its reduced part to the root.
alloyResult_t reduceAcrossHosts(const void* sendbuff, void* recvbuff, size_t count, alloyDataType_t type,
                                alloyRedOp_t op, int root, alloyComm_t comm, cudaStream_t stream, const char* function);

}  // namespace alloy
