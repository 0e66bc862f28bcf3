// Which CUDA device a new communicator uses.
#pragma once

#include "alloy.h"

namespace alloy {

// requested is alloyConfig_t::cudaDevice. On success *device is an ordinal, or -1 when the machine has no
// CUDA device and none was requested (host-only mode).
alloyResult_t selectCudaDevice(int requested, int* device);

// The process's rank among the processes on its node as the launcher numbers them (Open MPI, Slurm,
// MPICH, PMI), or 0 when no launcher says. Stable for the whole process, unlike the rank within one
// communicator, so every communicator of a process picks the same GPU.
int launcherLocalRank();

}  // namespace alloy
