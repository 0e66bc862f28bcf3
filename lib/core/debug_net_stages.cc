// alloyDebugNetStages: where a communicator's latest operations between hosts spent their time, as its
// network channel stamped them (NetStages, remote_channel.h), for tools/net-stages.
#include "comm.h"
#include "error.h"
#include "remote_channel.h"

extern "C" ALLOY_API alloyResult_t alloyDebugNetStages(alloyComm_t comm, alloy::NetStages* out, size_t max,
                                                       size_t* count) {
  if (comm == nullptr || out == nullptr || count == nullptr)
    return alloy::fail(alloyInvalidArgument, "alloyDebugNetStages: comm, out and count must not be NULL");
  *count = 0;
  if (!comm->net)
    return alloy::fail(alloyNotSupported, "alloyDebugNetStages: the communicator has no channel between hosts (%s)",
                       comm->netUnavailableReason.empty() ? "its ranks share one host" : comm->netUnavailableReason.c_str());
  *count = comm->net->recentStages(out, max);
  return alloySuccess;
}
