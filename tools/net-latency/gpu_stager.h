// net-latency's GPU side (--gpu, rank 0): each transfer staged, rung, waited for and copied out by the
// library's staging kernel (lib/kernels/net_stage_kernel.h) from and into device memory, as a small operation
// between hosts runs: one launch per transfer, and a synchronisation after each or (--queued) after a round
// trip's two. Set beside the CPU thread's transfers, its stamps show what the GPU adds before the doorbell
// (the launch, the copy into the outbox, the ring) and after the release (the kernel's poll, the copy out,
// the kernel's end and the synchronisation).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "device_comm.h"

class GpuStager {
 public:
  // Device buffers of `bytes` on the current device, a stream, and a host-mapped fault record whose abort
  // flag ends a wait that the proxy never releases.
  explicit GpuStager(size_t bytes);
  ~GpuStager();
  GpuStager(const GpuStager&) = delete;
  GpuStager& operator=(const GpuStager&) = delete;

  // Enqueues one launch: it copies the source buffer into outbox (when not NULL), rings bell (host-mapped)
  // with value, waits for the release and copies inbox (when not NULL) into the destination buffer. A launch
  // without an inbox ends at the ring, and the next one waits for that release before it stages, as the
  // library's do (ALLOY_NET_SENDS_END_AT_RING): every launch must then use the same bell.
  void launch(uint32_t* bell, uint32_t value, char* outbox, const char* inbox);
  // Returns once the stream is done, or false when it was not within `seconds` (a release that never
  // came: the kernels are then aborted).
  bool finish(double seconds);

  // For the checked transfers: the source filled with `value`, the destination with anything else.
  void prepare(int value, int poison);
  // The index of the first destination byte that is not `expected`, or -1.
  long long firstMismatch(int expected) const;

 private:
  size_t bytes_;
  char* source_ = nullptr;
  char* destination_ = nullptr;
  cudaStream_t stream_ = nullptr;
  alloy::FaultRecord* fault_ = nullptr;
  bool overlap_ = false;  // launches overlap the previous kernel's end (launch_overlap.cuh)
  bool sendsEndAtRing_ = true;
  bool lastEndedAtRing_ = false;  // the latest launch did not wait for its release
};
