// The part of a point-to-point plan that crosses hosts, cut into rounds the network channel carries:
// per peer on another host and direction, each round moves the next capacity() bytes of the messages
// to or from it, laid end to end in staging. A round is copies from user buffers into the outboxes, one
// operation of the channel, then copies from the inboxes into user buffers, all on the caller's stream;
// round r uses the channel's box r % kBoxes, so that consecutive rounds overlap.
// Sender and receiver cut a pair's bytes alike, so their rounds match.
#pragma once

#include <cstddef>
#include <vector>

#include "p2p_kernel.h"
#include "remote_channel.h"
#include "staged_copy.h"

namespace alloy {

struct NetRound {
  NetOperation operation;
  std::vector<StagedCopy> stageIn;   // user buffers -> outboxes, before the doorbell
  std::vector<StagedCopy> stageOut;  // inboxes -> user buffers, once it has cleared
};

// sends[peer], recvs[peer]: the plan's segments in order (empty ones allowed); only peers with
// localIndexOf[peer] < 0 (on another host) are cut.
std::vector<NetRound> cutIntoRounds(const RemoteChannel& channel, const std::vector<std::vector<P2pSegment>>& sends,
                                    const std::vector<std::vector<P2pSegment>>& recvs,
                                    const std::vector<int>& localIndexOf, int operation);

}  // namespace alloy
