#include "ipc_transport.h"

#include <cstring>

#include "env.h"
#include "error.h"
#include "log.h"

namespace alloy {

EngineGeometry engineGeometry(int nranks) {
  EngineGeometry g;
  // About 32 blocks per rank move data in each direction: enough outstanding NVLink requests to reach
  // the link's bandwidth (see docs/architecture.md), few enough to leave the SMs to the application.
  const int peers = nranks > 1 ? nranks - 1 : 1;
  long long channels = envInt("ALLOY_CHANNELS", 0);
  if (channels <= 0) channels = 16 / peers;
  g.channels = static_cast<int>(channels < 1 ? 1 : channels > kMaxChannels ? kMaxChannels : channels);
  long long slots = envInt("ALLOY_SLOTS", 4);
  g.slots = static_cast<int>(slots < 2 ? 2 : slots);
  long long slotBytes = envInt("ALLOY_SLOT_BYTES", 256 << 10);
  if (slotBytes < 4096) slotBytes = 4096;
  g.slotBytes = static_cast<size_t>(slotBytes) & ~static_cast<size_t>(4095);
  return g;
}

alloyResult_t IpcTransport::prepare(int device, int nranks, long long timeoutMs, EndpointBlob* blob,
                                    std::unique_ptr<IpcTransport>* out) {
  if (nranks > kMaxLocalRanks)
    return fail(alloyNotSupported, "the GPU engine serves at most %d ranks per host; this communicator has %d",
                kMaxLocalRanks, nranks);
  std::unique_ptr<IpcTransport> t(new IpcTransport());
  t->device_ = device;
  const EngineGeometry g = engineGeometry(nranks);
  DeviceComm& v = t->view_;
  v.nranks = nranks;
  v.channels = g.channels;
  v.slots = g.slots;
  v.slotBytes = g.slotBytes;
  v.timeoutNs = static_cast<unsigned long long>(timeoutMs) * 1000000ull;
  const size_t workspaceBytes = static_cast<size_t>(nranks) * g.channels * g.slots * g.slotBytes;

  ALLOY_CUDA_TRY(cudaMalloc(&t->workspace_, workspaceBytes));
  ALLOY_CUDA_TRY(cudaMalloc(&t->signals_, SignalLayout::kBytes));
  ALLOY_CUDA_TRY(cudaMemset(t->signals_, 0, SignalLayout::kBytes));
  ALLOY_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&t->hostWords_), 2 * sizeof(int), cudaHostAllocMapped));
  t->hostWords_[0] = 0;
  t->hostWords_[1] = 0;
  int* deviceWords = nullptr;
  ALLOY_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&deviceWords), t->hostWords_, 0));
  v.abortFlag = deviceWords;
  v.errorWord = deviceWords + 1;
  ALLOY_CUDA_TRY(cudaDeviceSynchronize());  // the memset must land before any peer maps the signals

  blob->hasIpc = 1;
  blob->workspaceBytes = workspaceBytes;
  ALLOY_CUDA_TRY(cudaIpcGetMemHandle(&blob->workspaceHandle, t->workspace_));
  ALLOY_CUDA_TRY(cudaIpcGetMemHandle(&blob->signalHandle, t->signals_));
  *out = std::move(t);
  return alloySuccess;
}

alloyResult_t IpcTransport::connect(const std::vector<EndpointBlob>& blobs, int myRank) {
  DeviceComm& v = view_;
  v.rank = myRank;
  for (int r = 0; r < v.nranks; ++r) {
    const EndpointBlob& peer = blobs[r];
    if (r == myRank) {
      v.workspace[r] = static_cast<char*>(workspace_);
      v.signals[r] = static_cast<uint64_t*>(signals_);
      continue;
    }
    if (!peer.hasIpc)
      return fail(alloyNotSupported, "rank %d has no GPU workspace (host-only or failed set-up)", r);
    if (peer.workspaceBytes != blobs[myRank].workspaceBytes)
      return fail(alloyInvalidUsage,
                  "rank %d's workspace is %llu bytes, this rank's %llu: ALLOY_CHANNELS, ALLOY_SLOTS and "
                  "ALLOY_SLOT_BYTES must be equal on every rank",
                  r, static_cast<unsigned long long>(peer.workspaceBytes),
                  static_cast<unsigned long long>(blobs[myRank].workspaceBytes));
    void* workspace = nullptr;
    void* signals = nullptr;
    cudaError_t err = cudaIpcOpenMemHandle(&workspace, peer.workspaceHandle, cudaIpcMemLazyEnablePeerAccess);
    if (err == cudaSuccess) {
      mappedPeers_.push_back(workspace);
      err = cudaIpcOpenMemHandle(&signals, peer.signalHandle, cudaIpcMemLazyEnablePeerAccess);
    }
    if (err != cudaSuccess) {
      cudaGetLastError();
      return fail(alloyNotSupported,
                  "cannot map rank %d's GPU memory (device %d of pid %d) into device %d: %s; the GPUs need "
                  "peer-to-peer access (NVLink or PCIe P2P) and must be visible to both processes",
                  r, peer.cudaDevice, peer.pid, device_, cudaGetErrorString(err));
    }
    mappedPeers_.push_back(signals);
    v.workspace[r] = static_cast<char*>(workspace);
    v.signals[r] = static_cast<uint64_t*>(signals);
  }
  return alloySuccess;
}

IpcTransport::~IpcTransport() {
  // Teardown runs from destructors: report failures in the log, there is nobody to return them to.
  for (void* mapped : mappedPeers_) {
    if (cudaIpcCloseMemHandle(mapped) != cudaSuccess) logWarn("cudaIpcCloseMemHandle failed");
  }
  if (workspace_ != nullptr && cudaFree(workspace_) != cudaSuccess) logWarn("cudaFree(workspace) failed");
  if (signals_ != nullptr && cudaFree(signals_) != cudaSuccess) logWarn("cudaFree(signals) failed");
  if (hostWords_ != nullptr && cudaFreeHost(hostWords_) != cudaSuccess) logWarn("cudaFreeHost failed");
}

alloyResult_t IpcTransport::asyncError() const {
  return static_cast<alloyResult_t>(reinterpret_cast<volatile int*>(hostWords_)[1]);
}

void IpcTransport::abort() {
  reinterpret_cast<volatile int*>(hostWords_)[0] = 1;
}

}  // namespace alloy
