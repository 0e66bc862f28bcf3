// Communicators over the unique-id bootstrap (no MPI), and several ranks of one process made or ended at
// once: alloyGetUniqueId, alloyCommInitRanks and alloyCommDestroyAll (alloy.h), and what the NCCL API's
// creations build on (lib/nccl). A rank's creation and the collective half of its end wait for every rank
// of the communicator, so ranks that one thread drives are made and ended a thread each.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "alloy.h"
#include "unique_id.h"

namespace alloy {

// Runs work(i) for i in [0, count) on a thread each and joins them; false where the threads could not all be
// started (those that were are joined first).
template <typename Work>
bool onThreads(size_t count, Work work) {
  std::vector<std::thread> threads;
  try {
    for (size_t i = 0; i < count; ++i) threads.emplace_back(work, i);
  } catch (const std::system_error&) {
    for (std::thread& t : threads) t.join();
    return false;
  }
  for (std::thread& t : threads) t.join();
  return true;
}

// Rank `rank` of the communicator of id (nranks in all), joined through the id's root and created with
// config (config.cudaDevice: its device, -1 by the device rule). Collective over the nranks ranks.
alloyResult_t createRankFromId(const uint8_t id[kUniqueIdBytes], int nranks, int rank, const alloyConfig_t& config,
                               alloyComm_t* out);

struct RankOfId {
  int rank;
  alloyConfig_t config;
};

// createRankFromId for several ranks at once, a thread each; (*outs)[i] receives ranks[i]. All or none: on
// failure outs is left empty, every rank made is let go (aborted: creation agrees on failures, so the
// others failed too), and the first failure's message is the calling thread's last error.
alloyResult_t createRanksTogether(const uint8_t id[kUniqueIdBytes], int nranks, const std::vector<RankOfId>& ranks,
                                  std::vector<alloyComm_t>* outs);

// The collective half of the end (commFinalize) of several communicators at once, a thread each:
// (*results)[i], and (*messages)[i] where it failed.
void finalizeTogether(const std::vector<alloyComm_t>& comms, std::vector<alloyResult_t>* results,
                      std::vector<std::string>* messages);

}  // namespace alloy
