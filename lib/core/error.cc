#include "error.h"

#include <cstdarg>
#include <cstdio>

namespace alloy {
namespace {
// One message per thread, as MPI and CUDA users expect from a "last error" query.
thread_local char tlsLastError[1024] = "";
}  // namespace

alloyResult_t fail(alloyResult_t code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(tlsLastError, sizeof(tlsLastError), fmt, args);
  va_end(args);
  return code;
}

void clearLastError() { tlsLastError[0] = '\0'; }

const char* lastError() { return tlsLastError; }

}  // namespace alloy

extern "C" {

ALLOY_API const char* alloyGetErrorString(alloyResult_t result) {
  switch (result) {
    case alloySuccess: return "no error";
    case alloyCudaError: return "CUDA call failed";
    case alloySystemError: return "system call failed";
    case alloyInternalError: return "internal error";
    case alloyInvalidArgument: return "invalid argument";
    case alloyInvalidUsage: return "invalid usage";
    case alloyRemoteError: return "remote process reported an error";
    case alloyInProgress: return "operation in progress";
    case alloyTimeout: return "operation timed out";
    case alloyNotSupported: return "operation not supported";
    default: return "unknown result code";
  }
}

ALLOY_API const char* alloyGetLastError(alloyComm_t) { return alloy::lastError(); }

ALLOY_API alloyResult_t alloyGetVersion(int* version) {
  if (version == nullptr) return alloy::fail(alloyInvalidArgument, "version: expected a non-NULL pointer");
  *version = ALLOY_VERSION_CODE;
  return alloySuccess;
}

}  // extern "C"
