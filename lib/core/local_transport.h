// The GPU engine's transport among the ranks of one host, as lib/core and lib/coll use it: they create it
// and read it through this interface only, so neither depends on how it is built (CUDA IPC today:
// lib/transport_ipc). Ranks on other hosts are reached through the network channel and its own interface
// (lib/net/transport.h); docs/architecture.md, "Two transport interfaces", says why there are two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "alloy.h"
#include "device_comm.h"
#include "endpoint.h"

namespace alloy {

struct EngineGeometry {
  int channels;
  int slots;
  size_t slotBytes;
  size_t lowLatencyMaxBytes;  // sends and receives up to this size per peer use the low-latency protocol
  size_t directAreaBytes;     // each of the direct engine's four staging areas (direct_kernel.h); 0: none
  int directBlocks;           // blocks of every launch of the direct engine
  // The largest operation the line areas hold as 128-byte lines: ALLOY_DIRECT_LL128_MAX_BYTES as creation
  // reads it, else what the default bands need (directWideLinesAreaDefault). It sizes the line areas, whose
  // offsets every peer computes alike, so it must be equal on every rank of a host.
  size_t directWideLinesBytes;
};

// Channels, slots, slot size, protocol threshold and direct staging for nranks ranks of one host:
// defaults tuned for NVLink, overridable by ALLOY_CHANNELS, ALLOY_SLOTS, ALLOY_SLOT_BYTES,
// ALLOY_LL_MAX_BYTES, ALLOY_DIRECT_BYTES, ALLOY_DIRECT_BLOCKS and ALLOY_DIRECT_LL128_MAX_BYTES (which must be
// equal on every rank of a host).
EngineGeometry engineGeometry(int nranks);

class LocalTransport {
 public:
  virtual ~LocalTransport() = default;
  // Reaches every peer's memory, and settles what depends on all of them (the channel count).
  // blobs: the ranks of this host, in communicator order; myRank: this rank's position among them
  // (kernels name peers by it).
  virtual alloyResult_t connect(const std::vector<EndpointBlob>& blobs, int myRank) = 0;
  // What the kernels are given: this rank's and its peers' memory, geometry, fault record.
  virtual const DeviceComm& deviceComm() const = 0;
  virtual size_t lowLatencyMaxBytes() const = 0;
  // The first error a kernel recorded, or alloySuccess.
  virtual alloyResult_t asyncError() const = 0;
  // What the kernels recorded when they gave up: the operation, the peers waited for, the time waited.
  virtual FaultRecord faultRecord() const = 0;
  // Makes every kernel of this communicator that waits on a peer return, and every later launch return
  // at once.
  virtual void abort() = 0;
  // Whether this rank reaches every peer of its host over links that deliver a warp's 128-byte store
  // whole (its own GPU, or NVLink), as far as this process can tell (known after connect). The direct
  // engine uses its wide lines only after every rank of the host said yes: enableWideLines.
  virtual bool linksCarryWideLines() const = 0;
  virtual void enableWideLines(bool enable) = 0;
  // Test hook: sets every sequence counter of this rank's signal area to value, so that a test reaches
  // counter values (2^32 and beyond) that would take hours of traffic. Every rank of the communicator
  // must set the same value while no operation is in flight.
  virtual alloyResult_t setSequencesForTest(uint64_t value) = 0;
};

// Allocates this rank's part of the engine on `device` (current) for the nranks ranks of this host, and
// writes what its peers need to reach it into blob.
alloyResult_t prepareLocalTransport(int device, int nranks, long long timeoutMs, EndpointBlob* blob,
                                    std::unique_ptr<LocalTransport>* out);

}  // namespace alloy
