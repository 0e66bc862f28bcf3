#include "stream_word.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <mutex>

#include "error.h"

namespace alloy {
namespace {

struct StreamMemOps {
  PFN_cuStreamWriteValue32_v11070 write = nullptr;
  PFN_cuStreamWaitValue32_v11070 wait = nullptr;
  cudaError_t lookup = cudaSuccess;
};

const StreamMemOps& memOps() {
  static StreamMemOps ops;
  static std::once_flag once;
  std::call_once(once, [] {
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    ops.lookup = cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", reinterpret_cast<void**>(&ops.write),
                                                  11070, cudaEnableDefault, &found);
    if (ops.lookup == cudaSuccess && found != cudaDriverEntryPointSuccess) ops.write = nullptr;
    if (ops.lookup == cudaSuccess)
      ops.lookup = cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", reinterpret_cast<void**>(&ops.wait),
                                                    11070, cudaEnableDefault, &found);
    if (ops.lookup == cudaSuccess && found != cudaDriverEntryPointSuccess) ops.wait = nullptr;
  });
  return ops;
}

alloyResult_t check(CUresult r, const char* call, const char* function) {
  if (r == CUDA_SUCCESS) return alloySuccess;
  return fail(alloyCudaError, "%s: %s on the stream failed (CUresult %d)", function, call, static_cast<int>(r));
}

alloyResult_t available(const StreamMemOps& ops, const char* function) {
  if (ops.lookup != cudaSuccess)
    return fail(alloyCudaError, "%s: looking up the driver's stream memory operations failed: %s", function,
                cudaGetErrorString(ops.lookup));
  if (ops.write == nullptr || ops.wait == nullptr)
    return fail(alloyNotSupported, "%s: the CUDA driver lacks cuStreamWriteValue32/cuStreamWaitValue32", function);
  return alloySuccess;
}

}  // namespace

alloyResult_t streamWriteWord(cudaStream_t stream, void* word, uint32_t value, const char* function) {
  const StreamMemOps& ops = memOps();
  ALLOY_TRY(available(ops, function));
  // The default flags order the write after all earlier work of the stream, with a memory barrier: the
  // proxy that sees the value may read what that work wrote.
  return check(ops.write(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(word), value,
                         CU_STREAM_WRITE_VALUE_DEFAULT),
               "cuStreamWriteValue32", function);
}

alloyResult_t streamWaitWordEquals(cudaStream_t stream, void* word, uint32_t value, const char* function) {
  const StreamMemOps& ops = memOps();
  ALLOY_TRY(available(ops, function));
  return check(ops.wait(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(word), value,
                        CU_STREAM_WAIT_VALUE_EQ),
               "cuStreamWaitValue32", function);
}

}  // namespace alloy
