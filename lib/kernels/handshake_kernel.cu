#include "handshake_kernel.h"
#include "sync_primitives.cuh"

namespace alloy {
namespace {

// A mark word: the handshake's number above the 16-bit mark, so that a wait recognises the mark of
// this handshake and never the older one of the same parity.
__device__ inline uint64_t markWord(uint64_t handshake, int mark) { return (handshake << 16) | static_cast<uint64_t>(mark); }

// One block, a thread per rank: thread r posts this rank's mark to rank r and then waits for rank r's.
// A rank is at most one handshake ahead of another (it cannot finish handshake n + 1 before the other
// posted n + 1, which comes after that one read every mark of n), so two parities keep every unread
// mark intact.
__global__ void handshakeKernel(const DeviceComm c, int mark) {
  __shared__ int lowestOther;
  __shared__ int anyMark;
  const int r = threadIdx.x;
  uint64_t* mine = c.signals[c.rank];
  const uint64_t handshake = *reinterpret_cast<volatile uint64_t*>(mine + SignalLayout::handshakes()) + 1;
  const int parity = static_cast<int>(handshake & 1);
  if (r == 0) {
    lowestOther = kMaxLocalRanks;
    anyMark = mark;
  }
  if (blockSeesAbort(c)) return;  // also orders the shared initialisation before the waits below
  bool arrived = true;
  if (r < c.nranks) {
    storeReleaseSys(c.signals[r] + SignalLayout::mark(c.rank, parity), markWord(handshake, mark));
    const uint64_t* slot = mine + SignalLayout::mark(r, parity);
    arrived = waitAtLeast(c, r, slot, markWord(handshake, 0));
    if (arrived) {
      const int theirs = static_cast<int>(loadAcquireSys(slot) & kMaxHandshakeMark);
      if (theirs != 0) {
        atomicOr(&anyMark, 1);
        if (r != c.rank) atomicMin(&lowestOther, r);
      }
    }
  }
  // A wait that gave up (timeout, abort) raised the abort word: the operation's kernels return on entry.
  if (!__syncthreads_and(arrived) || r != 0) return;
  // Counted only where this rank went ahead: a rank that rejected learned it from its own call.
  if (mark == 0 && lowestOther < kMaxLocalRanks) {
    FaultRecord* f = c.fault;
    f->rejectedBy = lowestOther;
    f->rejectedMark = static_cast<int>(loadAcquireSys(mine + SignalLayout::mark(lowestOther, parity)) & kMaxHandshakeMark);
    f->rejectedHandshake = handshake;
    __threadfence_system();
    atomicAdd(&f->rejections, 1);
  }
  mine[SignalLayout::verdict()] = anyMark != 0 ? 1 : 0;
  mine[SignalLayout::handshakes()] = handshake;
}

}  // namespace

cudaError_t loadHandshakeKernel() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, handshakeKernel);
}

cudaError_t launchHandshake(const DeviceComm& comm, int mark, cudaStream_t stream) {
  handshakeKernel<<<1, 32, 0, stream>>>(comm, mark);
  return cudaGetLastError();
}

}  // namespace alloy
