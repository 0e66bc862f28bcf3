// Whether a schedule of several rounds with one peer each (recursive doubling, a binomial tree) is
// expected to finish before the flat schedule's one round, whose root or ranks serve `flatPeers` peers
// on other hosts (the most any rank has) with messages of `flatBytes`, where each of the `rounds` carries
// `roundBytes` (the same for a whole buffer that both pass on; a reduce-scatter's flat round sends each
// peer one part, its doubling the whole buffer). hostStep: the schedule starts or ends with a step
// inside the host. The costs are the network channel's as measured between two GPUs over
// tcp (docs/architecture.md, "Collectives between hosts"): 30 us per round, 6 us per peer served in a
// round plus its bytes at 3 GB/s, and 10 us for a step inside a host over NVLink. Every input is the same
// on every rank, so is the answer.
#pragma once

#include <cstddef>

namespace alloy {

bool fewerRoundsPay(int flatPeers, size_t flatBytes, int rounds, size_t roundBytes, bool hostStep);

}  // namespace alloy
