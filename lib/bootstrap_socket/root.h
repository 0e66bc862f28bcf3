// The root of the unique-id bootstrap: ncclGetUniqueId starts one per id, on a thread of the calling
// process. It waits for every rank to present the id's secret with its rank, the number of ranks and the
// address it listens on, then sends every rank the table of all addresses and ends. Connections with
// another secret are answered with a refusal and logged; a rank number that repeats, or a count that
// differs between ranks, fails every rank that came. When no new rank arrives for
// ALLOY_BOOTSTRAP_TIMEOUT_MS the root fails the ranks that came and ends (an id never used ends alike); at
// the process's exit, a root still waiting fails its ranks and is joined.
#pragma once

#include <cstdint>

#include "alloy.h"
#include "unique_id.h"

namespace alloy {

// Starts a root listening on chooseBootstrapAddress()'s interface and writes its id to out.
alloyResult_t startRoot(uint8_t out[kUniqueIdBytes]);

// Stops the root of id if this process started it (nothing otherwise): ncclCommInitRankScalable serves every
// rank from the first of its ids, so the roots of the others are not needed.
void retireRoot(const uint8_t id[kUniqueIdBytes]);

// The bootstrap's timeout: ALLOY_BOOTSTRAP_TIMEOUT_MS, default 300000.
long long bootstrapTimeoutMs();

}  // namespace alloy
