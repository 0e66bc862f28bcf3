// A communicator's queries and end: ncclCommFinalize, ncclCommDestroy, ncclCommAbort, ncclCommGetAsyncError,
// ncclCommCount, ncclCommCuDevice, ncclCommUserRank.
#include "comm.h"
#include "error.h"
#include "nccl_comm.h"
#include "siblings.h"

using namespace alloy::nccl;

namespace {

// The queries that read one int of the communicator.
template <typename Query>
ncclResult_t query(const ncclComm* comm, int* value, const char* function, const char* argument, Query alloyQuery) {
  alloy::clearLastError();
  alloyResult_t result = checkComm(comm, function);
  if (result == alloySuccess && value == nullptr)
    result = alloy::fail(alloyInvalidArgument, "%s: %s is NULL; expected a pointer", function, argument);
  if (result == alloySuccess) result = alloyQuery(comm->alloy, value);
  return toNccl(result);
}

}  // namespace

extern "C" {

// The collective part of destruction (Alloy's device drain and barrier), so that ncclCommDestroy after it is
// local, as NCCL has it.
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  alloy::clearLastError();
  alloyResult_t result = checkComm(comm, "ncclCommFinalize");
  if (result == alloySuccess && (comm->finalized || comm->finalizeAsked))
    result = alloy::fail(alloyInvalidUsage, "ncclCommFinalize: the communicator is finalized already");
  if (result != alloySuccess) return toNccl(result);
  if (comm->siblings) return toNccl(alloy::nccl::endSibling(comm, false));
  comm->finalized = true;
  return toNccl(alloy::commFinalize(comm->alloy));
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  alloy::clearLastError();
  // NCCL accepts a NULL communicator here (ranks left out of a split hold one).
  if (comm == nullptr) return ncclSuccess;
  if (comm->siblings) return toNccl(alloy::nccl::endSibling(comm, true));
  const alloyResult_t result = comm->finalized ? alloySuccess : alloy::commFinalize(comm->alloy);
  delete comm->alloy;
  delete comm;
  return toNccl(result);
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  alloy::clearLastError();
  if (comm == nullptr) return ncclSuccess;
  if (comm->siblings) alloy::nccl::leaveSiblings(comm);
  const alloyResult_t result = alloyCommAbort(comm->alloy);
  delete comm;
  return toNccl(result);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  alloy::clearLastError();
  alloyResult_t result = checkComm(comm, "ncclCommGetAsyncError");
  if (result == alloySuccess && asyncError == nullptr)
    result = alloy::fail(alloyInvalidArgument, "ncclCommGetAsyncError: asyncError is NULL; expected a pointer");
  alloyResult_t error = alloySuccess;
  if (result == alloySuccess) result = alloyCommGetAsyncError(comm->alloy, &error);
  if (result == alloySuccess) *asyncError = toNccl(error);
  return toNccl(result);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return query(comm, count, "ncclCommCount", "count", alloyCommCount);
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return query(comm, device, "ncclCommCuDevice", "device", alloyCommCuDevice);
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return query(comm, rank, "ncclCommUserRank", "rank", alloyCommUserRank);
}

}  // extern "C"
