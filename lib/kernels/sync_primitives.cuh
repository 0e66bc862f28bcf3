// Flag loads/stores at system scope and the bounded wait that every cross-rank dependency goes through.
#pragma once

#include <cstdint>

#include "alloy.h"
#include "device_comm.h"

namespace alloy {

__device__ inline uint64_t loadAcquireSys(const uint64_t* address) {
  uint64_t value;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

__device__ inline void storeReleaseSys(uint64_t* address, uint64_t value) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}

// Relaxed forms, for flags whose ordering a separate fence provides: on 4 x H100 a flag barrier between
// four GPUs took 9 us with a release store per peer and acquire polls, 6 us with one fence.sc.sys and
// relaxed stores and polls, 3 us with no fence at all (docs/benchmarks.md).
__device__ inline uint64_t loadRelaxedSys(const uint64_t* address) {
  uint64_t value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

__device__ inline void storeRelaxedSys(uint64_t* address, uint64_t value) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}

// Publishing a block's stores to its peers: after a barrier of the block, thread 0 fences at system
// scope and then stores the flags relaxed, which PTX's memory model makes a release pattern (the consumer
// polls, then loads the flag with acquire). fence.acq_rel.sys is MEMBAR.ALL.SYS on sm_90; the
// sequentially consistent fence that __threadfence_system() emits is MEMBAR.SC.SYS, and a release store
// is a MEMBAR.ALL.SYS of its own, so the old "fence, then a release store per flag" paid an SC fence and
// then an ALL fence for every flag. ALLOY_FENCE=sc keeps that old form (DeviceComm::scFences), for comparison.
__device__ inline void fenceAcqRelSys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

__device__ inline void publishFence(const DeviceComm& c) {
  if (c.scFences) __threadfence_system();
  else fenceAcqRelSys();
}

// A flag stored after publishFence: relaxed, or a release store where ALLOY_FENCE=sc asks for the old form.
__device__ inline void publishFlag(const DeviceComm& c, uint64_t* flag, uint64_t value) {
  if (c.scFences) storeReleaseSys(flag, value);
  else storeRelaxedSys(flag, value);
}

__device__ inline unsigned long long globalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The abort, in two places. The device word is what kernels read: on entry and every 1024 polls of a
// wait. A read of the host-mapped flag costs about 100 us on 2xH200 (it crosses PCIe): read on entry by
// every block it made every operation 100 us long (alltoall of 64 B: 5.5 us before, 103 us with it), and
// read every 1024 polls it added 100 us to any wait longer than that (single rows of 100+ us among
// 7 us neighbours). One GPU shared by all ranks hid both behind its time slices. alloyCommAbort raises
// the host flag and then the device word; a wait reads the host flag only every 2^20 polls, in case the
// device word could not be written. Whoever gives up raises the device word (recordGiveUp).
__device__ inline bool abortWordRaised(const DeviceComm& c) { return *reinterpret_cast<volatile int*>(c.abortWord) != 0; }
__device__ inline bool hostAbortRaised(const DeviceComm& c) {
  return *reinterpret_cast<volatile int*>(&c.fault->abortFlag) != 0;
}

// Notes that a wait for `peer` was cut short after waitedNs: the host names those peers and the time
// in its report. On a timeout this launch's operation is recorded with the error code (first one wins),
// and the abort flag raised, so that every other waiting block of this rank gives up too instead of
// spinning out its own timeout. Either way the device word goes up, so that launches queued behind this
// one return on entry.
__device__ inline void recordGiveUp(const DeviceComm& c, int peer, unsigned long long waitedNs, bool timedOut) {
  FaultRecord* f = c.fault;
  if (timedOut && atomicCAS(&f->errorCode, 0, static_cast<int>(alloyTimeout)) == 0) f->operation = c.operation;
  atomicOr(&f->peerMask, 1u << peer);
  atomicMax(&f->waitedNs, waitedNs);
  if (timedOut) *reinterpret_cast<volatile int*>(&f->abortFlag) = 1;
  *reinterpret_cast<volatile int*>(c.abortWord) = 1;
  __threadfence_system();
}

// Whether a wait for `peer` that began at `start` and has polled `spins` times (a multiple of 1024) must
// end: the communicator is aborted or the wait outlasts the timeout (then recorded: recordGiveUp).
__device__ inline bool waitGivesUp(const DeviceComm& c, int peer, unsigned long long start, unsigned spins) {
  const unsigned long long waited = globalTimerNs() - start;
  const bool timedOut = waited > c.timeoutNs;
  if (!timedOut && !abortWordRaised(c) && !((spins & 0xfffffu) == 0 && hostAbortRaised(c))) return false;
  recordGiveUp(c, peer, waited, timedOut);
  return true;
}

// Spins until ready() holds, waiting on `peer`. Returns false when the communicator is aborted or the
// wait outlasts the timeout (see recordGiveUp).
template <typename Ready>
__device__ inline bool spinUntil(const DeviceComm& c, int peer, Ready ready) {
  if (ready()) return true;
  const unsigned long long start = globalTimerNs();
  for (unsigned spins = 1;; ++spins) {
    if (ready()) return true;
    if ((spins & 1023u) == 0 && waitGivesUp(c, peer, start, spins)) return false;
  }
}

// spinUntil for a whole warp, whose every lane calls it together with a ready() that answers the same on
// every lane (it may exchange values between lanes): lane 0 alone decides whether to give up, so that no
// lane leaves the loop while the others still call ready().
template <typename Ready>
__device__ inline bool warpSpinUntil(const DeviceComm& c, int peer, Ready ready) {
  if (ready()) return true;
  const unsigned long long start = globalTimerNs();
  for (unsigned spins = 1;; ++spins) {
    if (ready()) return true;
    if ((spins & 1023u) == 0 &&
        __shfl_sync(0xffffffffu, (threadIdx.x & 31) == 0 && waitGivesUp(c, peer, start, spins), 0))
      return false;
  }
}

// Spins until *address >= target, a flag that `peer` raises (see spinUntil).
__device__ inline bool waitAtLeast(const DeviceComm& c, int peer, const uint64_t* address, uint64_t target) {
  return spinUntil(c, peer, [&] { return loadAcquireSys(address) >= target; });
}

// Whether the communicator was aborted before this block began (the same answer on every thread).
// Kernels queued behind an operation that timed out, or behind alloyCommAbort, return at once: their
// starting counters no longer match the peers', so any ring they touched would be corrupted.
__device__ inline bool blockSeesAbort(const DeviceComm& c) {
  return __syncthreads_or(threadIdx.x == 0 && abortWordRaised(c));
}

// Whether this block may run its operation: neither aborted (blockSeesAbort) nor skipped by its handshake
// (a rank rejected the arguments: the verdict the handshake kernel, enqueued just before, left in this
// rank's signal area). `counter`, when given, is read in the same go into *copy (shared memory), which
// the barrier publishes to the block. Thread 0 issues every load before it needs any, so that a launch
// pays one memory round trip and one barrier on entry rather than one of each per word.
__device__ inline bool blockMayRun(const DeviceComm& c, const uint64_t* counter = nullptr, uint64_t* copy = nullptr) {
  bool stop = false;
  if (threadIdx.x == 0) {
    const int aborted = *reinterpret_cast<volatile int*>(c.abortWord);
    const uint64_t verdict =
        c.handshake != 0 ? *reinterpret_cast<const volatile uint64_t*>(c.signals[c.rank] + SignalLayout::verdict()) : 0;
    if (counter != nullptr) *copy = *reinterpret_cast<const volatile uint64_t*>(counter);
    stop = aborted != 0 || verdict != 0;
  }
  return !__syncthreads_or(stop);
}

}  // namespace alloy
