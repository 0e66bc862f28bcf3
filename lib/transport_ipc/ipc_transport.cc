#include "ipc_transport.h"

#include <algorithm>
#include <cstring>

#include "env.h"
#include "error.h"
#include "log.h"
#include "direct_kernel.h"
#include "p2p_kernel.h"
#include "reduce_kernel.h"

namespace alloy {

EngineGeometry engineGeometry(int nranks) {
  EngineGeometry g;
  // About 32 blocks per rank push data out and as many drain it: on 2xH200 16 channels reached 288 GB/s
  // at 512 MB and 32 reached 338-351 (docs/benchmarks.md), close to the 368 GB/s of SM stores. With more
  // ranks, at least 16 channels per pair: a reduction's receiving task has one block per channel, and on
  // 4 x H100 the 10 of 32 / 3 held reduce-scatter at 216 GB/s at 128 MB where 16 reached 257 (and
  // allgather 292 -> 290, broadcast 301 -> 295, allreduce 259 -> 280; docs/benchmarks.md).
  const int peers = nranks > 1 ? nranks - 1 : 1;
  long long channels = envInt("ALLOY_CHANNELS", 0);
  if (channels <= 0) channels = std::max(32 / peers, 16);
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
  // The direct engine's reductions take buffers whose every rank's slot fits one area: an area of A
  // bytes holds a two-shot allreduce or a reduce-scatter of A bytes at any rank count. Four areas (two
  // generations of inputs and results) are allocated after the rings. 32 MiB: on 4 x H100 the direct
  // engine beat the rings up to 32 MB (allreduce 16 MB 265 against 195 GB/s, 32 MB 274 against 212;
  // docs/benchmarks.md, "Session 7"), and on 2 x H200 the allreduce at 8-128 MB took 8-24 % less time than
  // with the 8 MiB areas that left it on the rings ("Session 24"). A host's lone rank keeps 8 MiB: it
  // has no peer to stage for.
  const long long directArea = envInt("ALLOY_DIRECT_BYTES", nranks >= 2 ? 32 << 20 : 8 << 20, 0);
  g.directAreaBytes = (static_cast<size_t>(directArea) + 4095) & ~static_cast<size_t>(4095);
  // 64 blocks: on 4 x H100 they beat 32 at every size measured (allreduce 32 MB 296 against 275 GB/s,
  // reduce-scatter 16-256 MB 3-7% faster; docs/benchmarks.md, "Session 8").
  g.directBlocks = static_cast<int>(envInt("ALLOY_DIRECT_BLOCKS", 64, 1, kMaxDirectBlocks));
  g.directWideLinesBytes = static_cast<size_t>(
      envInt("ALLOY_DIRECT_LL128_MAX_BYTES", static_cast<long long>(directWideLinesAreaDefault(nranks)), 0));
  return g;
}

int residentChannelLimit(const std::vector<EndpointBlob>& blobs) {
  // The widest launch is the point-to-point kernel's: a local copy plus a send and a receive per peer,
  // each with `channels` blocks (a reduction launch has at most nranks tasks). Its one extra block for a
  // small operation between hosts fits too: there the peers on this host are at most nranks - 2.
  const long long tasks = 2ll * static_cast<long long>(blobs.size()) - 1;
  long long limit = kMaxChannels;
  for (const EndpointBlob& b : blobs) {
    long long sharers = 0;
    for (const EndpointBlob& q : blobs)
      sharers += q.hostHash == b.hostHash && std::memcmp(q.gpuUuid, b.gpuUuid, sizeof(q.gpuUuid)) == 0;
    limit = std::min(limit, b.residentBlocks / sharers / tasks);
  }
  return static_cast<int>(std::max(limit, 1ll));
}

size_t lineAreaBytes(size_t directAreaBytes, size_t wideLinesMaxBytes) {
  const size_t narrow = directLineAreaBytes(directAreaBytes);
  const size_t data = wideLinesMaxBytes < directAreaBytes ? wideLinesMaxBytes : directAreaBytes;
  if (data == 0) return narrow;
  // 128 bytes of lines per 120 of data, and a partial line at the end of every slot.
  const size_t bytes = (data * kLl128Bytes + kLl128DataBytes - 1) / kLl128DataBytes + kMaxLocalRanks * kLl128Bytes;
  const size_t wide = (bytes + 4095) & ~static_cast<size_t>(4095);
  return wide > narrow ? wide : narrow;
}

namespace {

// Blocks of the engine's kernels the current device holds at once.
alloyResult_t residentBlocksOf(int device, int32_t* blocks) {
  int sms = 0, p2p = 0, reduce = 0, direct = 0;
  ALLOY_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  ALLOY_CUDA_TRY(p2pKernelBlocksPerSm(&p2p));
  ALLOY_CUDA_TRY(reduceKernelBlocksPerSm(&reduce));
  ALLOY_CUDA_TRY(directKernelBlocksPerSm(&direct));
  *blocks = sms * std::min({p2p, reduce, direct});
  return alloySuccess;
}

}  // namespace

alloyResult_t IpcTransport::prepare(int device, int nranks, long long timeoutMs, EndpointBlob* blob,
                                    std::unique_ptr<IpcTransport>* out) {
  if (nranks > kMaxLocalRanks)
    return fail(alloyNotSupported, "the GPU engine serves at most %d ranks per host; this communicator has %d on this one",
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
  v.directOffset = workspaceBytes(nranks, g.channels, g.slots, g.slotBytes);
  v.directAreaBytes = g.directAreaBytes;
  // Line areas that also hold the largest operation that may go in 128-byte lines (0 at 2 ranks by
  // default: the 16-byte lines' areas).
  v.directLineAreaBytes = lineAreaBytes(g.directAreaBytes, g.directWideLinesBytes);
  t->directBlocks_ = g.directBlocks;
  // Programmatic dependent launch needs compute capability 9.0; a local choice (peers need not agree).
  int major = 0;
  ALLOY_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  v.earlyLaunch = major >= 9 && envInt("ALLOY_EARLY_LAUNCH", 1, 0, 1) != 0 ? 1 : 0;
  // How this rank publishes its stores (sync_primitives.cuh); a local choice as well: each flag's
  // ordering is its writer's fence and its reader's acquire.
  v.scFences = envChoice("ALLOY_FENCE", "acq_rel", {"acq_rel", "sc"}) == "sc" ? 1 : 0;
  const size_t bytes = v.directOffset + 4 * (v.directAreaBytes + v.directLineAreaBytes);

  ALLOY_CUDA_TRY(cudaMalloc(&t->workspace_, bytes));
  // The low-latency lines must start without a valid flag (ll_protocol.cuh).
  ALLOY_CUDA_TRY(cudaMemset(t->workspace_, 0, bytes));
  ALLOY_CUDA_TRY(cudaMalloc(&t->signals_, SignalLayout::kBytes));
  ALLOY_CUDA_TRY(cudaMemset(t->signals_, 0, SignalLayout::kBytes));
  ALLOY_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&t->fault_), sizeof(FaultRecord), cudaHostAllocMapped));
  std::memset(t->fault_, 0, sizeof(FaultRecord));
  ALLOY_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&v.fault), t->fault_, 0));
  ALLOY_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&t->abortWord_), sizeof(int)));
  ALLOY_CUDA_TRY(cudaMemset(t->abortWord_, 0, sizeof(int)));
  v.abortWord = t->abortWord_;
  ALLOY_CUDA_TRY(cudaDeviceSynchronize());  // the memsets must land before any peer maps the signals

  ALLOY_TRY(residentBlocksOf(device, &blob->residentBlocks));
  blob->hasIpc = 1;
  blob->workspaceBytes = bytes;
  ALLOY_CUDA_TRY(cudaIpcGetMemHandle(&blob->workspaceHandle, t->workspace_));
  ALLOY_CUDA_TRY(cudaIpcGetMemHandle(&blob->signalHandle, t->signals_));
  blob->workspaceAddress = reinterpret_cast<uintptr_t>(t->workspace_);
  blob->signalAddress = reinterpret_cast<uintptr_t>(t->signals_);
  *out = std::move(t);
  return alloySuccess;
}

namespace {

// Whether `device` reaches each GPU of `uuids` (16 bytes each) over a link that delivers a warp's 128-byte
// store whole: its own GPU, or a peer with native atomics, which NVLink has and PCIe does not (NVML would
// name the link; this asks only the CUDA runtime). False for a GPU this process cannot see.
alloyResult_t gpusCarryWideLines(int device, const std::vector<const uint8_t*>& uuids, bool* carry) {
  int count = 0;
  ALLOY_CUDA_TRY(cudaGetDeviceCount(&count));
  std::vector<cudaDeviceProp> props(static_cast<size_t>(count));
  for (int d = 0; d < count; ++d) ALLOY_CUDA_TRY(cudaGetDeviceProperties(&props[d], d));
  *carry = true;
  for (const uint8_t* uuid : uuids) {
    int found = -1;
    for (int d = 0; d < count && found < 0; ++d)
      if (std::memcmp(props[d].uuid.bytes, uuid, sizeof(props[d].uuid.bytes)) == 0) found = d;
    int atomics = found == device ? 1 : 0;
    if (found >= 0 && found != device)
      ALLOY_CUDA_TRY(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, device, found));
    *carry = *carry && atomics != 0;
  }
  return alloySuccess;
}

}  // namespace

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
    if (peer.pid == blobs[myRank].pid && peer.hostHash == blobs[myRank].hostHash) {
      ALLOY_TRY(reachInProcess(peer, r));
      continue;
    }
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
  // Blocks wait for other ranks' blocks, so a block that is not resident while the others spin can
  // deadlock the launch. Every rank computes the same limit from the same blobs, so all keep agreeing
  // on the ring layout (the workspace was sized for the larger count, which only leaves room unused).
  const int limit = residentChannelLimit(blobs);
  if (limit < v.channels) {
    // Worth a warning where the user asked for the channels; the default is lowered quietly.
    const bool asked = !envString("ALLOY_CHANNELS", "").empty();
    (asked ? logWarn : logInfo)("rank %d: %d channels instead of %d, so that every block of a launch is resident "
                                "(%d blocks of the engine fit on this GPU; ranks sharing a GPU split it)",
                                myRank, limit, v.channels, blobs[myRank].residentBlocks);
    v.channels = limit;
  }
  std::vector<const uint8_t*> peerGpus;
  for (int r = 0; r < v.nranks; ++r)
    if (r != myRank) peerGpus.push_back(blobs[r].gpuUuid);
  ALLOY_TRY(gpusCarryWideLines(device_, peerGpus, &wideLinesHere_));
  // At most as wide as the widest launch of the other kernels, which is resident (above).
  v.directBlocks = static_cast<int>(std::min<long long>(directBlocks_, (2ll * v.nranks - 1) * v.channels));
  return alloySuccess;
}

// A peer rank of this process, on another GPU (creation refuses two on one): its allocations are
// addresses this process already holds, reached through peer access from this rank's device.
alloyResult_t IpcTransport::reachInProcess(const EndpointBlob& peer, int r) {
  cudaError_t err = cudaDeviceEnablePeerAccess(peer.cudaDevice, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // enabled by another communicator of this process: what is needed
    err = cudaSuccess;
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    return fail(alloyNotSupported,
                "cannot reach rank %d's GPU memory (device %d of this process) from device %d: %s; the GPUs need "
                "peer-to-peer access (NVLink or PCIe P2P)", r, peer.cudaDevice, device_, cudaGetErrorString(err));
  }
  view_.workspace[r] = reinterpret_cast<char*>(static_cast<uintptr_t>(peer.workspaceAddress));
  view_.signals[r] = reinterpret_cast<uint64_t*>(static_cast<uintptr_t>(peer.signalAddress));
  return alloySuccess;
}

IpcTransport::~IpcTransport() {
  // Teardown runs from destructors: report failures in the log, there is nobody to return them to.
  for (void* mapped : mappedPeers_) {
    if (cudaIpcCloseMemHandle(mapped) != cudaSuccess) logWarn("cudaIpcCloseMemHandle failed");
  }
  if (workspace_ != nullptr && cudaFree(workspace_) != cudaSuccess) logWarn("cudaFree(workspace) failed");
  if (signals_ != nullptr && cudaFree(signals_) != cudaSuccess) logWarn("cudaFree(signals) failed");
  if (fault_ != nullptr && cudaFreeHost(fault_) != cudaSuccess) logWarn("cudaFreeHost failed");
  if (abortWord_ != nullptr && cudaFree(abortWord_) != cudaSuccess) logWarn("cudaFree of the abort word failed");
}

// The record is written by running kernels: every field is read through a volatile access.
alloyResult_t IpcTransport::asyncError() const {
  return static_cast<alloyResult_t>(static_cast<const volatile FaultRecord*>(fault_)->errorCode);
}

FaultRecord IpcTransport::faultRecord() const {
  const volatile FaultRecord* f = fault_;
  FaultRecord r;
  r.abortFlag = f->abortFlag;
  r.errorCode = f->errorCode;
  r.operation = f->operation;
  r.peerMask = f->peerMask;
  r.waitedNs = f->waitedNs;
  // The count first: the kernel writes the fields of a rejection before it counts it.
  r.rejections = f->rejections;
  r.rejectedBy = f->rejectedBy;
  r.rejectedMark = f->rejectedMark;
  r.rejectedHandshake = f->rejectedHandshake;
  return r;
}

void IpcTransport::abort() {
  // Kernels spinning now see the host flag within a few thousand polls; launches still queued read
  // the device word on entry. It is written through a copy engine on a stream of its own, which runs
  // beside kernels that spin (a copy on the legacy stream would wait for them).
  static_cast<volatile FaultRecord*>(fault_)->abortFlag = 1;
  static const int raised = 1;
  cudaStream_t stream = nullptr;
  cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (err == cudaSuccess) err = cudaMemcpyAsync(abortWord_, &raised, sizeof raised, cudaMemcpyHostToDevice, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (stream != nullptr) cudaStreamDestroy(stream);
  if (err != cudaSuccess)
    logWarn("alloyCommAbort: raising the abort for queued launches failed (%s); kernels still see the host flag "
            "once they wait", cudaGetErrorString(err));
}

alloyResult_t IpcTransport::setSequencesForTest(uint64_t value) {
  std::vector<uint64_t> words(SignalLayout::kWords, 0);
  for (int r = 0; r < kMaxLocalRanks; ++r) {
    for (int ch = 0; ch < kMaxChannels; ++ch) {
      words[SignalLayout::posted(r, ch)] = value;
      words[SignalLayout::consumed(r, ch)] = value;
      words[SignalLayout::sent(r, ch)] = value;
      words[SignalLayout::recvd(r, ch)] = value;
    }
  }
  ALLOY_CUDA_TRY(cudaMemcpy(signals_, words.data(), SignalLayout::kBytes, cudaMemcpyHostToDevice));
  // A copy from pageable memory may return before it lands; peers write this area once the caller says go.
  ALLOY_CUDA_TRY(cudaDeviceSynchronize());
  return alloySuccess;
}

alloyResult_t prepareLocalTransport(int device, int nranks, long long timeoutMs, EndpointBlob* blob,
                                    std::unique_ptr<LocalTransport>* out) {
  std::unique_ptr<IpcTransport> ipc;
  ALLOY_TRY(IpcTransport::prepare(device, nranks, timeoutMs, blob, &ipc));
  *out = std::move(ipc);
  return alloySuccess;
}

}  // namespace alloy
