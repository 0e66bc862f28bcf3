// alloyAllGather of small buffers between many hosts by recursive doubling (doubling_plan.h, gathering
// instead of reducing). The flat schedule sends this rank's block to every other rank in one round:
// nranks - 1 messages, which at many hosts cost more in per-message work than doubling's extra rounds
// cost in latency; doubling moves the same bytes (1, 2, 4, ... blocks a round) in ceil(log2 n) rounds of
// one partner each. Where every host holds the same L > 1 ranks it runs along the rails and the host's
// ranks then exchange their rails' blocks inside the host (allgather.cc), as the large allgather does.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "alloy.h"
#include "p2p_plan.h"

namespace alloy {

// Whether an allgather whose whole result is of one-shot size runs by doubling: ALLOY_ALLGATHER_DOUBLING=1
// wherever the communicator spans hosts, 0 never, auto (default) where fewerRoundsPay() (round_cost.h)
// expects it to finish first. The same on every rank.
bool allGatherDoublingApplies(alloyComm_t comm);

// The rounds among `members` (communicator ranks, this rank members[me]): afterwards block m of `blocks`
// (blockBytes each, in member order) holds member m's `mine` on every member. mine may be this rank's
// own block (in place). prepare() checks and builds every round and enqueues nothing.
class DoublingGather {
 public:
  explicit DoublingGather(alloyComm_t comm) : comm_(comm) {}
  alloyResult_t prepare(const std::vector<int>& members, int me, const void* mine, char* blocks, size_t blockBytes,
                        const char* function);
  alloyResult_t launch(cudaStream_t stream, const char* function);

 private:
  alloyComm_t comm_;
  std::vector<std::unique_ptr<P2pPlan>> rounds_;  // launched in order, each after the previous
};

}  // namespace alloy
