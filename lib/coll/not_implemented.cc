// Reduction and gather collectives: their API is fixed, their GPU algorithms are not written yet.
// Each says so plainly rather than pretend to succeed.
#include "comm.h"
#include "error.h"

namespace {
alloyResult_t notImplemented(alloyComm_t comm, const char* function) {
  ALLOY_TRY(alloy::checkGpuComm(comm, function));
  return alloy::fail(alloyNotSupported, "%s is not implemented yet", function);
}
}  // namespace

extern "C" {

ALLOY_API alloyResult_t alloyAllReduce(const void*, void*, size_t, alloyDataType_t, alloyRedOp_t,
                                       alloyComm_t comm, cudaStream_t) {
  return notImplemented(comm, "alloyAllReduce");
}

ALLOY_API alloyResult_t alloyBroadcast(const void*, void*, size_t, alloyDataType_t, int, alloyComm_t comm,
                                       cudaStream_t) {
  return notImplemented(comm, "alloyBroadcast");
}

ALLOY_API alloyResult_t alloyReduce(const void*, void*, size_t, alloyDataType_t, alloyRedOp_t, int,
                                    alloyComm_t comm, cudaStream_t) {
  return notImplemented(comm, "alloyReduce");
}

ALLOY_API alloyResult_t alloyAllGather(const void*, void*, size_t, alloyDataType_t, alloyComm_t comm,
                                       cudaStream_t) {
  return notImplemented(comm, "alloyAllGather");
}

ALLOY_API alloyResult_t alloyReduceScatter(const void*, void*, size_t, alloyDataType_t, alloyRedOp_t,
                                           alloyComm_t comm, cudaStream_t) {
  return notImplemented(comm, "alloyReduceScatter");
}

}  // extern "C"
