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

namespace {

// Whether the calling thread has a current CUDA context. Asked of the driver through the runtime, so that
// the library does not link libcuda (absent on machines without a GPU driver); false where it cannot ask.
bool threadHasCudaContext() {
  using CtxGetCurrent = int (*)(void**);  // CUresult cuCtxGetCurrent(CUcontext*)
  static const CtxGetCurrent getCurrent = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &entry, 12000, cudaEnableDefault, &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<CtxGetCurrent>(nullptr);
    }
    return reinterpret_cast<CtxGetCurrent>(entry);
  }();
  void* context = nullptr;
  return getCurrent != nullptr && getCurrent(&context) == 0 && context != nullptr;
}

}  // namespace

int visibleDevices(cudaError_t* err) {
  int count = 0;
  const cudaError_t result = cudaGetDeviceCount(&count);
  if (err != nullptr) *err = result;
  if (result != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later CUDA calls are not confused by it
    count = 0;
  }
  return count;
}

int chooseDevice(int visible, bool threadHasContext, int currentDevice, int localRank) {
  if (visible <= 0) return -1;
  if (threadHasContext) return currentDevice;
  return (localRank < 0 ? 0 : localRank) % visible;
}

alloyResult_t deviceByRule(bool makeCurrent, int* device) {
  cudaError_t err = cudaSuccess;
  const int count = visibleDevices(&err);
  const bool hasContext = count > 0 && threadHasCudaContext();
  int current = 0;
  if (hasContext) ALLOY_CUDA_TRY(cudaGetDevice(&current));
  *device = chooseDevice(count, hasContext, current, launcherLocalRank());
  if (makeCurrent && !hasContext && *device >= 0) ALLOY_CUDA_TRY(cudaSetDevice(*device));
  return alloySuccess;
}

alloyResult_t selectCudaDevice(int requested, int* device) {
  cudaError_t err = cudaSuccess;
  const int count = visibleDevices(&err);
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
  if (requested >= 0) {
    *device = requested;
    return alloySuccess;
  }
  return deviceByRule(true, device);
}

}  // namespace alloy
