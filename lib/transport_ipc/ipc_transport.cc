#include "ipc_transport.h"

#include <cstring>

#include "env.h"
#include "error.h"
#include "log.h"

namespace alloy {

EngineGeometry engineGeometry(int nranks) {
  EngineGeometry g;
  // About 32 blocks per rank push data out and as many drain it: on 2xH200 16 channels reached 288 GB/s
  // at 512 MB and 32 reached 338-351 (docs/benchmarks.md), close to the 368 GB/s of SM stores.
  const int peers = nranks > 1 ? nranks - 1 : 1;
  long long channels = envInt("ALLOY_CHANNELS", 0);
  if (channels <= 0) channels = 32 / peers;
  g.channels = static_cast<int>(channels < 1 ? 1 : channels > kMaxChannels ? kMaxChannels : channels);
  long long slots = envInt("ALLOY_SLOTS", 4);
  g.slots = static_cast<int>(slots < 2 ? 2 : slots);
  long long slotBytes = envInt("ALLOY_SLOT_BYTES", 512 << 10);
  if (slotBytes < 4096) slotBytes = 4096;
  g.slotBytes = static_cast<size_t>(slotBytes) & ~static_cast<size_t>(4095);
  // Up to a few hundred KB per peer the bulk protocol's fence and flag round trip cost more than the
  // low-latency protocol's halved bandwidth (on 2xH200, 256 KB per peer: 30 GB/s low-latency, 24 bulk).
  const long long lowLatencyMax = envInt("ALLOY_LL_MAX_BYTES", 256 << 10, 0);
  g.lowLatencyMaxBytes = static_cast<size_t>(lowLatencyMax);
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
  t->lowLatencyMaxBytes_ = g.lowLatencyMaxBytes;
  v.timeoutNs = static_cast<unsigned long long>(timeoutMs) * 1000000ull;
  const size_t bytes = workspaceBytes(nranks, g.channels, g.slots, g.slotBytes);

  ALLOY_CUDA_TRY(cudaMalloc(&t->workspace_, bytes));
  // The low-latency lines must start without a valid flag (ll_protocol.cuh).
  ALLOY_CUDA_TRY(cudaMemset(t->workspace_, 0, bytes));
  ALLOY_CUDA_TRY(cudaMalloc(&t->signals_, SignalLayout::kBytes));
  ALLOY_CUDA_TRY(cudaMemset(t->signals_, 0, SignalLayout::kBytes));
  ALLOY_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&t->hostWords_), 2 * sizeof(int), cudaHostAllocMapped));
  t->hostWords_[0] = 0;
  t->hostWords_[1] = 0;
  int* deviceWords = nullptr;
  ALLOY_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&deviceWords), t->hostWords_, 0));
  v.abortFlag = deviceWords;
  v.errorWord = deviceWords + 1;
  ALLOY_CUDA_TRY(cudaDeviceSynchronize());  // the memsets must land before any peer maps the signals

  blob->hasIpc = 1;
  blob->workspaceBytes = bytes;
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
