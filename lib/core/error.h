// Error reporting inside Alloy: every failing path records a per-thread message that names what was
// wrong, and returns a result code. Nothing throws across the C API.
#pragma once

#include <cuda_runtime.h>

#include "alloy.h"

namespace alloy {

// Records the calling thread's last error message (printf-style) and returns code, so that a failing
// path reads `return fail(alloyInvalidArgument, "count: ...")`.
alloyResult_t fail(alloyResult_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void clearLastError();
const char* lastError();

}  // namespace alloy

// Propagates a failed alloyResult_t; the callee already recorded the message.
#define ALLOY_TRY(expr)                                 \
  do {                                                  \
    alloyResult_t alloy_try_result_ = (expr);           \
    if (alloy_try_result_ != alloySuccess) return alloy_try_result_; \
  } while (0)

// Turns a failed CUDA runtime call into alloyCudaError naming the call and CUDA's reason.
#define ALLOY_CUDA_TRY(call)                                                                    \
  do {                                                                                          \
    cudaError_t alloy_cuda_err_ = (call);                                                       \
    if (alloy_cuda_err_ != cudaSuccess)                                                         \
      return ::alloy::fail(alloyCudaError, "%s failed at %s:%d: %s", #call, __FILE__, __LINE__, \
                           cudaGetErrorString(alloy_cuda_err_));                                \
  } while (0)
