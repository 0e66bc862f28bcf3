#include "rail_order.h"

#include <cstdint>
#include <vector>

#include "error.h"

namespace alloy {

alloyResult_t copyByRail(const LocalTopology& t, RailCopy direction, const char* src, char* dst, size_t blockBytes,
                         cudaStream_t stream, const char* function) {
  const bool pack = direction == RailCopy::kIntoRailOrder;
  size_t railAt = 0;  // bytes into the rail-ordered buffer where this rail starts
  for (const std::vector<int>& rail : t.rails) {
    const size_t hosts = rail.size();
    const long long stride = hosts > 1 ? rail[1] - rail[0] : 1;
    // cudaMemcpy2DAsync takes pitches up to the device's memPitch (2^31 - 1 bytes on current GPUs).
    bool even = stride > 0 && stride * blockBytes <= static_cast<size_t>(INT32_MAX);
    for (size_t h = 1; h < hosts && even; ++h) even = rail[h] - rail[h - 1] == stride;
    const size_t rankPitch = even ? stride * blockBytes : 0;
    cudaError_t err = cudaSuccess;
    if (even && pack) {
      err = cudaMemcpy2DAsync(dst + railAt, blockBytes, src + rail[0] * blockBytes, rankPitch, blockBytes, hosts,
                              cudaMemcpyDeviceToDevice, stream);
    } else if (even) {
      err = cudaMemcpy2DAsync(dst + rail[0] * blockBytes, rankPitch, src + railAt, blockBytes, blockBytes, hosts,
                              cudaMemcpyDeviceToDevice, stream);
    } else {
      for (size_t h = 0; h < hosts && err == cudaSuccess; ++h) {
        const size_t railed = railAt + h * blockBytes, ranked = rail[h] * blockBytes;
        err = cudaMemcpyAsync(dst + (pack ? railed : ranked), src + (pack ? ranked : railed), blockBytes,
                              cudaMemcpyDeviceToDevice, stream);
      }
    }
    if (err != cudaSuccess) {
      cudaGetLastError();
      return fail(alloyCudaError, "%s: copying %s failed: %s", function,
                  pack ? "the input into rail order" : "the gathered blocks into rank order", cudaGetErrorString(err));
    }
    railAt += hosts * blockBytes;
  }
  return alloySuccess;
}

bool railOrderIsRankOrder(const LocalTopology& t) {
  int expected = 0;
  for (const std::vector<int>& rail : t.rails)
    for (int rank : rail)
      if (rank != expected++) return false;
  return true;
}

}  // namespace alloy
