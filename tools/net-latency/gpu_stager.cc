#include "gpu_stager.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "env.h"
#include "net_stage_kernel.h"

namespace {

void checkCuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "net-latency: %s: %s\n", what, cudaGetErrorString(status));
  std::abort();
}

}  // namespace

GpuStager::GpuStager(size_t bytes) : bytes_(bytes) {
  checkCuda(cudaMalloc(&source_, bytes), "cudaMalloc");
  checkCuda(cudaMalloc(&destination_, bytes), "cudaMalloc");
  checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  checkCuda(cudaHostAlloc(reinterpret_cast<void**>(&fault_), sizeof *fault_, cudaHostAllocMapped), "cudaHostAlloc");
  std::memset(static_cast<void*>(fault_), 0, sizeof *fault_);
  // As a communicator decides it (ipc_transport.cc): compute capability 9.0 and up, unless
  // ALLOY_EARLY_LAUNCH=0.
  int device = 0, major = 0;
  checkCuda(cudaGetDevice(&device), "cudaGetDevice");
  checkCuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  overlap_ = major >= 9 && alloy::envInt("ALLOY_EARLY_LAUNCH", 1, 0, 1) != 0;
  sendsEndAtRing_ = alloy::envInt("ALLOY_NET_SENDS_END_AT_RING", 1, 0, 1) != 0;
}

GpuStager::~GpuStager() {
  cudaStreamDestroy(stream_);
  cudaFree(source_);
  cudaFree(destination_);
  cudaFreeHost(fault_);
}

void GpuStager::launch(uint32_t* bell, uint32_t value, char* outbox, const char* inbox) {
  alloy::NetStageLaunch launch{};
  if (outbox != nullptr) launch.copies[launch.count++] = alloy::P2pSegment{source_, outbox, bytes_};
  launch.staged = launch.local = launch.count;
  if (inbox != nullptr) launch.copies[launch.count++] = alloy::P2pSegment{inbox, destination_, bytes_};
  launch.bell = bell;
  launch.ringValue = value;
  // As p2p_plan.cc runs a small operation: one that only sends ends at its ring, and the next launch waits
  // for that release before it stages.
  const bool endsAtRing = inbox == nullptr && sendsEndAtRing_;
  launch.ring = 1;
  launch.wait = endsAtRing ? 0 : 1;
  launch.waitFree = lastEndedAtRing_ ? 1 : 0;
  lastEndedAtRing_ = endsAtRing;
  launch.fault = fault_;
  checkCuda(alloy::launchNetStage(launch, stream_, overlap_), "launching the staging kernel");
}

bool GpuStager::finish(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  cudaError_t status;
  while ((status = cudaStreamQuery(stream_)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() < deadline) continue;
    __atomic_store_n(&fault_->abortFlag, 1, __ATOMIC_RELEASE);
    checkCuda(cudaStreamSynchronize(stream_), "the aborted staging kernels");
    return false;
  }
  checkCuda(status, "the staging kernel");
  return true;
}

void GpuStager::prepare(int value, int poison) {
  checkCuda(cudaMemset(source_, value, bytes_), "cudaMemset");
  checkCuda(cudaMemset(destination_, poison, bytes_), "cudaMemset");
}

long long GpuStager::firstMismatch(int expected) const {
  std::vector<unsigned char> host(bytes_);
  checkCuda(cudaMemcpy(host.data(), destination_, bytes_, cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (size_t i = 0; i < bytes_; ++i)
    if (host[i] != static_cast<unsigned char>(expected)) return static_cast<long long>(i);
  return -1;
}
