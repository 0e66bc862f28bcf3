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

class IpcTransport {
 public:
  // Allocates the workspace and signal area on the current device and writes their IPC handles into blob.
  static alloyResult_t prepare(int device, int nranks, long long timeoutMs, EndpointBlob* blob,
                               std::unique_ptr<IpcTransport>* out);
  // Maps every peer's workspace and signal area. All ranks are on this host.
  alloyResult_t connect(const std::vector<EndpointBlob>& blobs, int myRank);
  ~IpcTransport();

  const DeviceComm& deviceComm() const { return view_; }
  size_t lowLatencyMaxBytes() const { return lowLatencyMaxBytes_; }
  // The first error a kernel recorded, or alloySuccess.
  alloyResult_t asyncError() const;
  // Makes every kernel of this communicator that waits on a peer return.
  void abort();

  IpcTransport(const IpcTransport&) = delete;
  IpcTransport& operator=(const IpcTransport&) = delete;

 private:
  IpcTransport() = default;

  int device_ = -1;
  DeviceComm view_{};
  size_t lowLatencyMaxBytes_ = 0;
  void* workspace_ = nullptr;         // this rank's, cudaMalloc
  void* signals_ = nullptr;           // this rank's, cudaMalloc
  int* hostWords_ = nullptr;          // [0] abort flag, [1] error word: cudaHostAlloc, mapped
  std::vector<void*> mappedPeers_;    // cudaIpcOpenMemHandle results to close
};

}  // namespace alloy
