// Large broadcasts between hosts in parts, so that every connection between hosts carries a share of the
// buffer instead of the root's carrying all of it, as plain data so that they can be checked without a
// GPU (tests/unit/broadcast_parts_plan_test.cc simulates whole communicators with them). Each plan is a
// list of launches, each a list of this rank's messages, in the order the point-to-point engine matches them.
//
// Over every rail, where every host holds the same L > 1 ranks: the buffer is cut into L parts, part q for
// the ranks of local index q:
//   1. inside the root's host (CUDA IPC): the root sends part q to its host's rank of index q;
//   2. along the rails (the network): that rank sends part q to the other ranks of rail q, one per host;
//   3. inside every host (CUDA IPC): each rank sends its part to its host's other ranks (not to the root).
// The bytes between hosts are those of the root's rail alone, (hosts - 1) copies of the buffer, but each
// rail carries 1/L of them.
//
// Scattered and gathered, elsewhere (one rank per host, or hosts of different sizes): the buffer is cut into
// n parts, part r for rank r:
//   1. the root sends part r to rank r;
//   2. each rank sends its part to every other rank (not to the root).
// The root sends 2 (n - 1) / n of the buffer where the flat broadcast sent n - 1 copies of it, and every
// connection carries at most 2 / n of it (van de Geijn's broadcast).
#pragma once

#include <cstddef>
#include <vector>

#include "topology.h"

namespace alloy {

struct PartMessage {
  int peer;
  bool isSend;
  size_t offset;  // bytes into the buffer: the source for the root's sends, recvbuff for everything else
  size_t bytes;
};

using PartLaunches = std::vector<std::vector<PartMessage>>;

// Rank me's three launches over every rail, where t has rails of more than one host and L > 1
// (railsApply). Parts without bytes (a buffer of fewer than L 16-byte pieces) send nothing.
PartLaunches planBroadcastOverRails(const LocalTopology& t, int me, int root, size_t bytes);

// Rank me's two launches scattered and gathered, among nranks ranks.
PartLaunches planBroadcastScatterGather(int nranks, int me, int root, size_t bytes);

}  // namespace alloy
