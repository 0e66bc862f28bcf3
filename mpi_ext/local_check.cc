#include "local_check.h"

#include "device_select.h"

namespace alloy_mpix {
namespace {

// The CUDA device the GPU engine of this communicator uses, or would use if created now.
int engineDevice(Context* context) {
  int device = -1;
  if (context->gpu != nullptr) alloyCommCuDevice(context->gpu, &device);
  else if (processHasCudaDevice() && alloy::deviceByRule(false, &device) != alloySuccess) device = -1;
  return device;
}

}  // namespace

Problem checkArguments(const char* function, const Request& request, Context* context, BufferKinds* kinds) {
  *kinds = BufferKinds{};
  if (request.problem) return request.problem;
  if (!request.inPlace && overlap(request.send, request.recv))
    return problem(MPI_ERR_BUFFER, "%s: %s and %s overlap; pass MPI_IN_PLACE as sendbuf for an in-place operation",
                   function, request.sendName, request.recvName);
  const int device = engineDevice(context);
  if (Problem p = classify(request.send, device, function, request.sendName, &kinds->send)) return p;
  return classify(request.recv, device, function, request.recvName, &kinds->recv);
}

}  // namespace alloy_mpix
