// Whether a point-to-point launch's part between hosts goes through the staging kernel
// (lib/kernels/net_stage_kernel.h) instead of the stream's copies and memory operations, and that
// kernel's copies. It applies to an operation of one round whose bytes each way, and whose copies of this
// rank's own blocks, are at most ALLOY_NET_KERNEL_MAX_BYTES each (64 KiB; 0 where another rank shares this
// rank's GPU, unless set), and whose copies fit one launch. docs/architecture.md, "Small operations between
// hosts: one kernel".
#pragma once

#include <vector>

#include "comm.h"
#include "net_rounds.h"
#include "net_stage_kernel.h"
#include "p2p_kernel.h"

namespace alloy {

// rounds: the launch's rounds (cutIntoRounds); selfCopies: this rank's own blocks where they are all the
// launch does on this host (the kernel then copies them too), else empty. Fills *launch's copies, staged,
// local and count and returns true where the kernel applies; the caller sets the rest.
bool planNetStage(alloyComm_t comm, const std::vector<NetRound>& rounds, const std::vector<P2pSegment>& selfCopies,
                  NetStageLaunch* launch);

// Whether an operation of the staging kernel that only sends (no receive between hosts) ends its launch at
// the ring instead of waiting for the release: ALLOY_NET_SENDS_END_AT_RING (1 by default). Its box's next
// user then waits for the release before it stages (NetStageLaunch::waitFree, p2p_plan.cc).
bool sendsEndAtRing();

}  // namespace alloy
