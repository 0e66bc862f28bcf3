// The choice between a flat schedule between hosts and one of several rounds with one peer each
// (recursive doubling, a binomial tree), shared by the collectives that have both: a variable that
// forces it (1) or the flat one (0), and by default (auto) the cost rule of round_cost.h.
#pragma once

#include <cstddef>

#include "alloy.h"

namespace alloy {

// `variable` (auto|1|0, default auto) on a communicator that spans hosts: whether the schedule of
// depth(members) rounds of roundBytes each runs instead of the flat round's messages of flatBytes
// (round_cost.h), its members being the hosts where the rails apply (every host holds the same L > 1
// ranks: the host steps first) and every rank otherwise. The same on every rank.
bool fewerRoundsChosen(alloyComm_t comm, const char* variable, int (*depth)(int members), size_t flatBytes,
                       size_t roundBytes);

}  // namespace alloy
