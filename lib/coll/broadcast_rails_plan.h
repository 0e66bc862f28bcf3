// A large broadcast between hosts that each hold L > 1 ranks, over every rail at once, as plain data so
// that it can be checked without a GPU (tests/unit/broadcast_rails_plan_test.cc simulates whole
// communicators with it). The buffer is cut into L parts, part q for the ranks of local index q:
//   1. scatter, inside the root's host (CUDA IPC): the root sends part q to its host's rank of index q;
//   2. along the rails (the network): that rank sends part q to the other ranks of rail q, one per host;
//   3. gather, inside every host (CUDA IPC): each rank sends its part to its host's other ranks (the root
//      excepted, which holds every part).
// The bytes between hosts are those of the root's rail alone (the whole buffer to every other host), but
// spread over L rails, each carrying 1/L of them: a transport whose single connection sets the pace (TCP)
// or one NIC per rail then moves them up to L times as fast.
#pragma once

#include <cstddef>
#include <vector>

#include "topology.h"

namespace alloy {

struct RailsMessage {
  int peer;
  bool isSend;
  size_t offset;  // bytes into the buffer: the source for the root's sends, recvbuff for everything else
  size_t bytes;
};

struct BroadcastRailsPlan {
  std::vector<RailsMessage> scatter;  // launch 1: on the root's host only
  std::vector<RailsMessage> along;    // launch 2: between hosts, along this rank's rail
  std::vector<RailsMessage> gather;   // launch 3: inside this rank's host
};

// Rank me's messages of a broadcast of `bytes` from `root`, where t has rails of more than one host and
// L > 1 (railsApply). Parts without bytes (a buffer of fewer than L 16-byte pieces) send nothing.
BroadcastRailsPlan planBroadcastRails(const LocalTopology& t, int me, int root, size_t bytes);

}  // namespace alloy
