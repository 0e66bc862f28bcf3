// Intra-node transport: this rank's workspace and signal area, exported with CUDA IPC, and every local
// peer's mapped into this process. Set up once per communicator; nothing here runs on a collective's
// path except handing out the DeviceComm view.
#pragma once

#include <memory>
#include <vector>

#include "alloy.h"
#include "device_comm.h"
#include "endpoint.h"
#include "local_transport.h"

namespace alloy {

// The most channels for which every block of any launch on nranks local ranks is resident on every
// rank's GPU at once, given each rank's residentBlocks and the ranks sharing its GPU (which, under MPS,
// run their kernels side by side). At least 1.
int residentChannelLimit(const std::vector<EndpointBlob>& blobs);

// Bytes of each of the direct engine's line areas for bulk areas of directAreaBytes: what the 16-byte lines
// need (directLineAreaBytes), or room for operations of up to wideLinesMaxBytes (at most a bulk area's) as
// 128-byte lines of 120 data bytes, whichever is more.
size_t lineAreaBytes(size_t directAreaBytes, size_t wideLinesMaxBytes);

class IpcTransport final : public LocalTransport {
 public:
  // Allocates the workspace and signal area on the current device for the nranks ranks of this host, and
  // writes their IPC handles into blob.
  static alloyResult_t prepare(int device, int nranks, long long timeoutMs, EndpointBlob* blob,
                               std::unique_ptr<IpcTransport>* out);
  // Maps every peer's workspace and signal area, and lowers the channel count until every launch is
  // wholly resident on every rank's GPU (residentChannelLimit).
  alloyResult_t connect(const std::vector<EndpointBlob>& blobs, int myRank) override;
  ~IpcTransport() override;

  const DeviceComm& deviceComm() const override { return view_; }
  size_t lowLatencyMaxBytes() const override { return lowLatencyMaxBytes_; }
  alloyResult_t asyncError() const override;
  FaultRecord faultRecord() const override;
  // Raises the abort in the host flag and the device word (see DeviceComm::abortWord).
  void abort() override;
  alloyResult_t setSequencesForTest(uint64_t value) override;
  bool linksCarryWideLines() const override { return wideLinesHere_; }
  void enableWideLines(bool enable) override { view_.directWideLines = enable ? 1 : 0; }

  IpcTransport(const IpcTransport&) = delete;
  IpcTransport& operator=(const IpcTransport&) = delete;

 private:
  IpcTransport() = default;
  // Points the view at rank r's memory, a peer in this process (connect).
  alloyResult_t reachInProcess(const EndpointBlob& peer, int r);

  int device_ = -1;
  DeviceComm view_{};
  size_t lowLatencyMaxBytes_ = 0;
  int directBlocks_ = 0;              // ALLOY_DIRECT_BLOCKS, before connect() bounds it by residency
  bool wideLinesHere_ = false;        // connect(): this rank's links to every peer carry wide lines
  void* workspace_ = nullptr;         // this rank's, cudaMalloc
  void* signals_ = nullptr;           // this rank's, cudaMalloc
  FaultRecord* fault_ = nullptr;      // cudaHostAlloc, mapped (DeviceComm::fault is its device address)
  int* abortWord_ = nullptr;          // cudaMalloc (DeviceComm::abortWord)
  std::vector<void*> mappedPeers_;    // cudaIpcOpenMemHandle results to close
};

}  // namespace alloy
