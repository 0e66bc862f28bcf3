// The sending side of the ring protocol, shared by every engine kernel (point-to-point, reductions) so
// that all of them advance the same counters in the same way.
#pragma once

#include <cstdint>

#include "block_copy.cuh"
#include "block_sync.cuh"
#include "device_comm.h"
#include "ll_protocol.cuh"

namespace alloy {

// The whole block sends chunk `seq` of channel ch (length bytes at src) into the ring this rank fills
// in peer's workspace: it waits until the peer drained the slot's previous chunk, then writes either
// flagged low-latency lines, or the bulk slot followed by a fenced `posted` flag. Returns false when
// the wait was cut short (abort or timeout).
__device__ inline bool ringSendChunk(const DeviceComm& c, int peer, int ch, uint64_t seq, const char* src,
                                     size_t length, bool lowLatency) {
  // Slot seq % slots is free once the receiver consumed chunk seq - slots.
  const uint64_t* consumed = c.signals[c.rank] + SignalLayout::consumed(peer, ch);
  if (seq >= static_cast<uint64_t>(c.slots) && !blockWait(c, peer, consumed, seq - c.slots + 1)) return false;
  const int slot = static_cast<int>(seq % c.slots);
  char* peerWorkspace = c.workspace[peer];
  if (lowLatency) {
    // The lines carry their own flags. `posted` only has to cover bulk chunks, and the next bulk
    // chunk's publication covers this one too.
    llSendChunk(reinterpret_cast<uint4*>(peerWorkspace + workspaceLlSlotOffset(c, c.rank, ch, slot)), src, length,
                llFlag(seq));
    return true;
  }
  blockCopy(peerWorkspace + workspaceSlotOffset(c, c.rank, ch, slot), src, length);
  blockPublish(c, c.signals[peer] + SignalLayout::posted(c.rank, ch), seq + 1);
  return true;
}

}  // namespace alloy
