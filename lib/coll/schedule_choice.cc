#include "schedule_choice.h"

#include <string_view>

#include "across_hosts.h"
#include "call_env.h"
#include "comm.h"
#include "round_cost.h"

namespace alloy {

bool fewerRoundsChosen(alloyComm_t comm, const char* variable, int (*depth)(int members), size_t flatBytes,
                       size_t roundBytes) {
  const std::string_view mode = callEnvChoice(variable, "auto", {"auto", "0", "1"});
  if (mode != "auto") return mode == "1";
  const LocalTopology& t = comm->topology;
  const bool alongRails = railsApply(comm);
  // The flat round's busiest rank serves every rank off the smallest host.
  return fewerRoundsPay(comm->nranks - t.smallestHostSize, flatBytes, depth(alongRails ? t.hosts : comm->nranks),
                        roundBytes, alongRails);
}

}  // namespace alloy
