// Results, messages and the library's identity.
#include <cstdio>

#include "alloy_nccl.h"
#include "error.h"
#include "log.h"
#include "nccl_comm.h"

// The NCCL enums are passed through unchanged, so their values must be Alloy's.
static_assert(ncclSuccess == static_cast<int>(alloySuccess) && ncclSystemError == static_cast<int>(alloySystemError) &&
                  ncclInternalError == static_cast<int>(alloyInternalError) &&
                  ncclInvalidArgument == static_cast<int>(alloyInvalidArgument) &&
                  ncclInvalidUsage == static_cast<int>(alloyInvalidUsage) &&
                  ncclRemoteError == static_cast<int>(alloyRemoteError) &&
                  ncclInProgress == static_cast<int>(alloyInProgress) &&
                  ncclUnhandledCudaError == static_cast<int>(alloyCudaError),
              "ncclResult_t and alloyResult_t number their common codes alike");

namespace alloy {
namespace nccl {

ncclResult_t toNccl(alloyResult_t result) {
  // Programs that never call ncclGetLastError (nccl-tests defines a weak one of its own that returns "")
  // still get the reason: ALLOY_DEBUG=INFO logs the message of every failed call.
  if (result != alloySuccess && logLevel() >= LogLevel::Info) logInfo("failed: %s", lastError());
  switch (result) {
    case alloyTimeout: return ncclRemoteError;
    case alloyNotSupported: return ncclInvalidUsage;
    default: return static_cast<ncclResult_t>(result);
  }
}

ncclResult_t refuse(const char* function, const char* why) {
  clearLastError();
  return toNccl(fail(alloyInvalidUsage, "%s is not supported by Alloy's libnccl.so.2: %s", function, why));
}

alloyResult_t checkComm(const ncclComm* comm, const char* function) {
  if (comm == nullptr) return fail(alloyInvalidArgument, "%s: comm is NULL; expected a communicator", function);
  return alloySuccess;
}

}  // namespace nccl
}  // namespace alloy

extern "C" {

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled CUDA error (ncclGetLastError says which call)";
    case ncclSystemError: return "system call failed (ncclGetLastError says which)";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument (ncclGetLastError names it)";
    case ncclInvalidUsage: return "invalid usage (ncclGetLastError says why)";
    case ncclRemoteError: return "remote process failed, exited or did not answer in time";
    case ncclInProgress: return "operation in progress";
    default: return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t) { return alloy::lastError(); }

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr)
    return alloy::nccl::toNccl(alloy::fail(alloyInvalidArgument, "ncclGetVersion: version is NULL; expected a pointer"));
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char* alloyNcclIdentity(void) {
  static char identity[96];
  static const int written = std::snprintf(identity, sizeof(identity), "Alloy %d.%d.%d (NCCL API %d.%d.%d)", ALLOY_MAJOR,
                                           ALLOY_MINOR, ALLOY_PATCH, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  (void)written;
  return identity;
}

// Declared deprecated by nccl.h; Alloy reads ALLOY_DEBUG at each log call and has nothing to reset.
void ncclResetDebugInit() {}

}  // extern "C"
