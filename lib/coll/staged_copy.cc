#include "staged_copy.h"

#include "error.h"

namespace alloy {

alloyResult_t enqueueStagedCopy(const StagedCopy& c, cudaStream_t stream) {
  if (c.bytes < 2 || c.bytes >= kRowsBelowBytes) {
    ALLOY_CUDA_TRY(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDefault, stream));
    return alloySuccess;
  }
  const size_t row = c.bytes / 2;
  ALLOY_CUDA_TRY(cudaMemcpy2DAsync(c.dst, row, c.src, row, row, 2, cudaMemcpyDefault, stream));
  if (c.bytes % 2 != 0) {
    // The last byte, with the one before it (already copied; the same source byte lands again).
    const size_t last = c.bytes - 2;
    ALLOY_CUDA_TRY(cudaMemcpy2DAsync(static_cast<char*>(c.dst) + last, 1, static_cast<const char*>(c.src) + last, 1, 1,
                                     2, cudaMemcpyDefault, stream));
  }
  return alloySuccess;
}

}  // namespace alloy
