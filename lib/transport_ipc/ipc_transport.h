// Intra-node transport: this rank's workspace and signal area, exported with CUDA IPC, and every local
// peer's mapped into this process. Set up once per communicator; nothing here runs on a collective's
// path except handing out the DeviceComm view.
#pragma once

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
};

// Channels, slots, slot size and protocol threshold for nranks ranks: defaults tuned for NVLink,
// overridable by ALLOY_CHANNELS, ALLOY_SLOTS, ALLOY_SLOT_BYTES and ALLOY_LL_MAX_BYTES (which must be
// equal on every rank).
EngineGeometry engineGeometry(int nranks);

// The most channels for which every block of any launch on nranks local ranks is resident on every
// rank's GPU at once, given each rank's residentBlocks and the ranks sharing its GPU (which, under MPS,
// run their kernels side by side). At least 1.
int residentChannelLimit(const std::vector<EndpointBlob>& blobs);

class IpcTransport {
 public:
  // Allocates the workspace and signal area on the current device for the nranks ranks of this host, and
  // writes their IPC handles into blob.
  static alloyResult_t prepare(int device, int nranks, long long timeoutMs, EndpointBlob* blob,
                               std::unique_ptr<IpcTransport>* out);
  // Maps every peer's workspace and signal area, and lowers the channel count until every launch is
  // wholly resident on every rank's GPU (residentChannelLimit). blobs: the ranks of this host, in
  // communicator order; myRank: this rank's position among them (kernels name peers by it).
  alloyResult_t connect(const std::vector<EndpointBlob>& blobs, int myRank);
  ~IpcTransport();

  const DeviceComm& deviceComm() const { return view_; }
  size_t lowLatencyMaxBytes() const { return lowLatencyMaxBytes_; }
  // The first error a kernel recorded, or alloySuccess.
  alloyResult_t asyncError() const;
  // What the kernels recorded when they gave up: the operation, the peers waited for, the time waited.
  FaultRecord faultRecord() const;
  // Makes every kernel of this communicator that waits on a peer return, and every later launch return
  // at once.
  void abort();
  // Test hook: sets every sequence counter of this rank's signal area (posted, consumed, sent, recvd)
  // to value, so that a test reaches counter values (2^32 and beyond) that would take hours of traffic.
  // Every rank of the communicator must set the same value while no operation is in flight.
  alloyResult_t setSequencesForTest(uint64_t value);

  IpcTransport(const IpcTransport&) = delete;
  IpcTransport& operator=(const IpcTransport&) = delete;

 private:
  IpcTransport() = default;

  int device_ = -1;
  DeviceComm view_{};
  size_t lowLatencyMaxBytes_ = 0;
  void* workspace_ = nullptr;         // this rank's, cudaMalloc
  void* signals_ = nullptr;           // this rank's, cudaMalloc
  FaultRecord* fault_ = nullptr;      // cudaHostAlloc, mapped (DeviceComm::fault is its device address)
  int* abortWord_ = nullptr;          // cudaMalloc (DeviceComm::abortWord)
  std::vector<void*> mappedPeers_;    // cudaIpcOpenMemHandle results to close
};

}  // namespace alloy
