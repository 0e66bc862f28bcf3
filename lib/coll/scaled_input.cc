#include "scaled_input.h"

#include "comm.h"
#include "datatype.h"
#include "device_guard.h"
#include "error.h"
#include "launch_order.h"

namespace alloy {

alloyResult_t ScaledInput::prepare(const PreMulScalar* scalar, alloyDataType_t type, const void* input, size_t count,
                                   void* into, const char* function) {
  input_ = input;
  if (scalar == nullptr) return alloySuccess;
  DeviceGuard guard(comm_->cudaDevice);
  char* dst = static_cast<char*>(into);
  if (dst == nullptr) {
    ALLOY_TRY(scratch_.allocate(count * dataTypeSize(type), function));
    dst = scratch_.get();
  }
  const ScaleLaunch launch{static_cast<const char*>(input), dst, count, *scalar};
  ALLOY_TRY(kernelLaunched(launchScale(launch, type, stream_), function));
  input_ = dst;
  return alloySuccess;
}

}  // namespace alloy
