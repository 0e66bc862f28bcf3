// Which CUDA device a new communicator uses.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"

namespace alloy {

// requested is alloyConfig_t::cudaDevice. On success *device is an ordinal, or -1 when the machine has no
// CUDA device and none was requested (host-only mode). -1 follows the device rule (deviceByRule).
alloyResult_t selectCudaDevice(int requested, int* device);

// The CUDA devices this process sees: 0 without a driver or a device (the query's error, cleared, in *err
// where err is not NULL).
int visibleDevices(cudaError_t* err = nullptr);

// The device rule, the same for every door where the caller names no device (alloyCommCreate* with
// cudaDevice -1, the MPIX calls, the NCCL API): the calling thread's current device when the thread has
// used CUDA already (it has a current context: cudaSetDevice, an allocation, a stream); otherwise the
// launcher's local rank modulo the visible devices, which with makeCurrent becomes the thread's current
// device, so that its later allocations, and any other door it goes through, land on the same GPU. -1
// where the process sees no CUDA device.
alloyResult_t deviceByRule(bool makeCurrent, int* device);

// The rule's choice from what it looks at: the visible devices, whether the thread has a current
// context, the current device, the launcher's local rank.
int chooseDevice(int visible, bool threadHasContext, int currentDevice, int localRank);

// The process's rank among the processes on its node as the launcher numbers them (Open MPI, Slurm,
// MPICH, PMI), or 0 when no launcher says. Stable for the whole process, unlike the rank within one
// communicator, so every communicator of a process picks the same GPU.
int launcherLocalRank();

}  // namespace alloy
