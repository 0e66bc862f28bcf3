#include "allgather_doubling.h"

#include "comm.h"
#include "doubling_plan.h"
#include "error.h"
#include "schedule_choice.h"

namespace alloy {

bool allGatherDoublingApplies(alloyComm_t comm) {
  if (!comm->topology.spansHosts()) return false;
  // Doubling sends 1, 2, 4, ... blocks a round, n - 1 in all, as many as the flat round sends: the bytes
  // cost the same either way, and only the rounds against the peers served decide (0 bytes to the rule).
  return fewerRoundsChosen(comm, "ALLOY_ALLGATHER_DOUBLING", doublingDepth, 0, 0);
}

alloyResult_t DoublingGather::prepare(const std::vector<int>& members, int me, const void* mine, char* blocks,
                                      size_t blockBytes, const char* function) {
  const int n = static_cast<int>(members.size());
  auto round = [&]() -> P2pPlan& {
    rounds_.push_back(std::make_unique<P2pPlan>(comm_, kOpAllGather));
    return *rounds_.back();
  };
  auto at = [&](int member) { return blocks + member * blockBytes; };
  // This rank's own block first, in a launch of its own: later rounds send it from its place.
  if (mine != at(me)) {
    P2pPlan& self = round();
    self.addSend(comm_->rank, mine, blockBytes);
    self.addRecv(comm_->rank, at(me), blockBytes);
  }
  for (const DoublingRound& r : doublingRounds(n, me)) {
    P2pPlan& plan = round();
    const int partner = members[r.partner];
    switch (r.step) {
      case DoublingStep::kCombine: {
        const int distance = me ^ r.partner;
        for (const MemberRange& held : doublingHeld(n, me, distance))
          plan.addSend(partner, at(held.first), held.count * blockBytes);
        for (const MemberRange& theirs : doublingHeld(n, r.partner, distance))
          plan.addRecv(partner, at(theirs.first), theirs.count * blockBytes);
        break;
      }
      case DoublingStep::kTakeIn:
        plan.addRecv(partner, at(r.partner), blockBytes);
        break;
      case DoublingStep::kHandIn:
        plan.addSend(partner, mine, blockBytes);
        break;
      case DoublingStep::kHandBack:
        plan.addSend(partner, blocks, n * blockBytes);
        break;
      case DoublingStep::kTakeBack:
        plan.addRecv(partner, blocks, n * blockBytes);
        break;
    }
  }
  for (const auto& plan : rounds_) ALLOY_TRY(plan->prepare(function));
  return alloySuccess;
}

alloyResult_t DoublingGather::launch(cudaStream_t stream, const char* function) {
  for (const auto& plan : rounds_) ALLOY_TRY(plan->launch(stream, function));
  return alloySuccess;
}

}  // namespace alloy
