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

__device__ inline unsigned long long globalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until ready() holds. Returns false when the communicator is aborted or the wait outlasts the
// timeout (then alloyTimeout is recorded and the abort flag raised, so every other waiting block of
// this rank gives up too instead of spinning out its own timeout).
template <typename Ready>
__device__ inline bool spinUntil(const DeviceComm& c, Ready ready) {
  if (ready()) return true;
  const unsigned long long start = globalTimerNs();
  for (unsigned spins = 1;; ++spins) {
    if (ready()) return true;
    if ((spins & 1023u) == 0) {
      if (*c.abortFlag) return false;
      if (globalTimerNs() - start > c.timeoutNs) {
        atomicCAS(c.errorWord, 0, static_cast<int>(alloyTimeout));
        *c.abortFlag = 1;
        __threadfence_system();
        return false;
      }
    }
  }
}

// Spins until *address >= target (see spinUntil).
__device__ inline bool waitAtLeast(const DeviceComm& c, const uint64_t* address, uint64_t target) {
  return spinUntil(c, [&] { return loadAcquireSys(address) >= target; });
}

}  // namespace alloy
