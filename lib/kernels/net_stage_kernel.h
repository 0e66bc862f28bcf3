// The staging of a small operation between hosts done by one kernel instead of the stream's copies and
// memory operations (lib/coll/p2p_plan.cc; docs/architecture.md, "Small operations between hosts: one
// kernel"). The outboxes, inboxes and doorbell are pinned host memory mapped into the device's address
// space, so the kernel's own threads store the send bytes into the outboxes, ring the doorbell after a
// system fence, copy this rank's own blocks, poll the doorbell until the proxy releases it and load the
// received bytes out of the inboxes. The proxy's side is the same as for the stream's form.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "device_comm.h"
#include "p2p_kernel.h"

namespace alloy {

// Copies of one launch, at most this many (24 bytes each: the argument block stays below 1 KiB).
constexpr int kNetStageMostCopies = 24;
// The staging block's threads: the point-to-point kernel's, whose launch can carry it as one more block.
constexpr int kNetStageThreads = 512;

struct NetStageLaunch {
  P2pSegment copies[kNetStageMostCopies];
  int staged;      // copies[0, staged): this rank's send bytes into the outboxes, before the ring
  int local;       // copies[staged, local): this rank's own blocks, between the ring and the wait
  int count;       // copies[local, count): the received bytes out of the inboxes, after the release
  uint32_t* bell;  // the round's doorbell (host-mapped)
  uint32_t ringValue;  // what the doorbell is rung with (the operation's id + 1)
  int ring;        // 1: stage and ring (copies [0, staged) must then be the sends)
  int wait;        // 1: wait for the release and copy out (copies [local, count))
  // 1: before staging, wait until the doorbell is 0. The box's previous operation only sent, and its launch
  // ended at the ring without waiting for the release (p2p_plan.cc), so the proxy may still read the outboxes.
  int waitFree;
  FaultRecord* fault;  // host-mapped: alloyCommAbort's flag ends the wait (the proxy also releases)
};

// One block of threads, overlapping the previous kernel's end where `overlap` (DeviceComm::earlyLaunch;
// launch_overlap.cuh): between back-to-back small operations between hosts, the next one's launch is then
// off the path from one release to the next doorbell.
cudaError_t launchNetStage(const NetStageLaunch& launch, cudaStream_t stream, bool overlap);

// Whether launchP2pWithNetStage can carry launch: its tasks and segments fit the small table, beside
// which the staging's arguments stay within the kernel parameter space.
bool p2pFitsWithNetStage(const P2pLaunch& launch);

// The point-to-point launch with the staging's work (ring and wait both) as one more block, the last: an
// operation between hosts that has peers on this host as well is one launch instead of the staging's ring,
// the point-to-point kernel and the staging's wait. p2pFitsWithNetStage(launch) must hold.
cudaError_t launchP2pWithNetStage(const P2pLaunch& launch, const NetStageLaunch& stage, cudaStream_t stream);

}  // namespace alloy
