// Memory calls: ncclMemAlloc/Free (cudaMalloc), ncclCommRegister/Deregister (accepted: Alloy stages through its
// workspace, so a registration changes nothing but must still be released), the window calls (refused: Alloy
// has no symmetric windows).
#include <algorithm>

#include "error.h"
#include "nccl_comm.h"

using namespace alloy::nccl;

extern "C" {

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  alloy::clearLastError();
  if (ptr == nullptr) return toNccl(alloy::fail(alloyInvalidArgument, "ncclMemAlloc: ptr is NULL; expected a pointer"));
  const cudaError_t err = cudaMalloc(ptr, size);
  if (err != cudaSuccess) {
    cudaGetLastError();
    *ptr = nullptr;
    return toNccl(alloy::fail(alloyCudaError, "ncclMemAlloc: cudaMalloc of %zu bytes failed: %s", size,
                              cudaGetErrorString(err)));
  }
  return ncclSuccess;
}

ncclResult_t ncclMemFree(void* ptr) {
  alloy::clearLastError();
  if (ptr == nullptr) return ncclSuccess;  // as cudaFree(NULL)
  const cudaError_t err = cudaFree(ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return toNccl(alloy::fail(alloyCudaError, "ncclMemFree: cudaFree(%p) failed: %s", ptr, cudaGetErrorString(err)));
  }
  return ncclSuccess;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  alloy::clearLastError();
  ALLOY_NCCL_TRY(checkComm(comm, "ncclCommRegister"));
  if (buff == nullptr) return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommRegister: buff is NULL; expected a buffer"));
  if (handle == nullptr)
    return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommRegister: handle is NULL; expected a pointer to receive it"));
  comm->registrations.push_back(std::make_unique<ncclRegistration>(ncclRegistration{buff, size}));
  *handle = comm->registrations.back().get();
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  alloy::clearLastError();
  ALLOY_NCCL_TRY(checkComm(comm, "ncclCommDeregister"));
  auto& owned = comm->registrations;
  const auto found = std::find_if(owned.begin(), owned.end(), [handle](const std::unique_ptr<ncclRegistration>& r) {
    return r.get() == handle;
  });
  if (found == owned.end())
    return toNccl(alloy::fail(alloyInvalidArgument, "ncclCommDeregister: handle %p is not a registration of this "
                              "communicator (already deregistered, or from another one)", handle));
  owned.erase(found);
  return ncclSuccess;
}

ncclResult_t ncclCommWindowRegister(ncclComm_t, void*, size_t, ncclWindow_t*, int) {
  return refuse("ncclCommWindowRegister", "Alloy has no symmetric-memory windows; its collectives take any device buffer");
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t, ncclWindow_t) {
  return refuse("ncclCommWindowDeregister", "Alloy has no symmetric-memory windows, so none was registered");
}

}  // extern "C"
