#include "device_select.h"

#include <cuda_runtime.h>

#include <cstdlib>

#include "error.h"

namespace alloy {

int launcherLocalRank() {
  static const char* const kVariables[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                           "MPI_LOCALRANKID", "PMI_LOCAL_RANK", "PMIX_LOCAL_RANK"};
  for (const char* name : kVariables) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

alloyResult_t selectCudaDevice(int requested, int* device) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later CUDA calls are not confused by it
    count = 0;
  }
  if (requested < -1)
    return fail(alloyInvalidArgument, "config->cudaDevice: expected -1 or a device ordinal, got %d", requested);
  if (count == 0) {
    if (requested >= 0)
      return fail(alloyInvalidArgument,
                  "config->cudaDevice: device %d requested but this machine has no CUDA device (%s)",
                  requested, cudaGetErrorString(err));
    *device = -1;
    return alloySuccess;
  }
  if (requested >= count)
    return fail(alloyInvalidArgument,
                "config->cudaDevice: device %d does not exist (this process sees %d CUDA device%s)",
                requested, count, count == 1 ? "" : "s");
  *device = requested >= 0 ? requested : launcherLocalRank() % count;
  return alloySuccess;
}

}  // namespace alloy
