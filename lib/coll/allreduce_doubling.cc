#include "allreduce_doubling.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "across_hosts.h"
#include "comm.h"
#include "datatype.h"
#include "doubling_plan.h"
#include "error.h"
#include "p2p_plan.h"
#include "schedule_choice.h"

namespace alloy {

bool allReduceDoublingApplies(alloyComm_t comm, alloyRedOp_t op, size_t bytes) {
  if (op == alloyAvg || !comm->topology.spansHosts()) return false;
  return fewerRoundsChosen(comm, "ALLOY_ALLREDUCE_DOUBLING", doublingDepth, bytes, bytes);
}

alloyResult_t doublingAllReduce(const char* send, char* recv, size_t count, const Reduction& r, alloyComm_t comm,
                                cudaStream_t stream) {
  const LocalTopology& t = comm->topology;
  const size_t bytes = count * dataTypeSize(r.type);
  const bool alongRails = railsApply(comm);
  // Along the rails, members in host order: every rail must pair and combine the hosts' sums alike, and
  // rails list their ranks in rank order, which orders hosts differently on different rails where
  // hosts' ranks are shuffled.
  std::vector<int> members = alongRails ? t.railPeers() : allRanks(comm->nranks);
  if (alongRails)
    std::sort(members.begin(), members.end(), [&t](int a, int b) { return t.hostIndexOf[a] < t.hostIndexOf[b]; });
  const int me = static_cast<int>(std::find(members.begin(), members.end(), comm->rank) - members.begin());

  // Every round is prepared before any is launched; each launch follows the previous one on the stream.
  std::vector<std::unique_ptr<GroupReduce>> reductions;
  std::vector<std::unique_ptr<P2pPlan>> transfers;
  std::vector<std::function<alloyResult_t()>> launches;
  auto reduceWith = [&](const std::vector<int>& group, int index, const char* input,
                        const std::vector<Part>& parts) -> alloyResult_t {
    reductions.push_back(std::make_unique<GroupReduce>(comm, r, stream));
    GroupReduce* step = reductions.back().get();
    ALLOY_TRY(step->prepare(group, index, input, parts, recv));
    launches.emplace_back([step] { return step->launch(); });
    return alloySuccess;
  };
  auto transfer = [&](int peer, bool sending, const char* buffer) -> alloyResult_t {
    transfers.push_back(std::make_unique<P2pPlan>(comm, r.operation));
    P2pPlan* plan = transfers.back().get();
    if (sending) {
      plan->addSend(peer, buffer, bytes);
    } else {
      plan->addRecv(peer, recv, bytes);
    }
    ALLOY_TRY(plan->prepare(r.function));
    launches.emplace_back([plan, stream, &r] { return plan->launch(stream, r.function); });
    return alloySuccess;
  };

  const char* current = send;  // what this rank holds reduced so far
  if (alongRails) {
    // Every rank of the host computes the host's sum, in local order: the same bits on every rail.
    ALLOY_TRY(reduceWith(t.localPeers, t.localRank, send, std::vector<Part>(t.localSize, Part{0, count})));
    current = recv;
  }
  for (const DoublingRound& round : doublingRounds(static_cast<int>(members.size()), me)) {
    const int partner = members[round.partner];
    switch (round.step) {
      case DoublingStep::kCombine:
      case DoublingStep::kTakeIn: {
        // The lower member's contribution comes first on both sides, so the pair computes the same bits.
        const bool lower = me < round.partner;
        const std::vector<int> pair = lower ? std::vector<int>{comm->rank, partner} : std::vector<int>{partner, comm->rank};
        std::vector<Part> parts(2, Part{0, count});
        if (round.step == DoublingStep::kTakeIn) parts[1] = Part{0, 0};  // the member handing in reduces nothing
        ALLOY_TRY(reduceWith(pair, lower ? 0 : 1, current, parts));
        current = recv;
        break;
      }
      case DoublingStep::kHandIn:
        ALLOY_TRY(transfer(partner, true, current));
        break;
      case DoublingStep::kHandBack:
        ALLOY_TRY(transfer(partner, true, recv));
        break;
      case DoublingStep::kTakeBack:
        ALLOY_TRY(transfer(partner, false, nullptr));
        break;
    }
  }
  for (const auto& launch : launches) ALLOY_TRY(launch());
  return alloySuccess;
}

}  // namespace alloy
