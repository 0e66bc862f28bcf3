// ncclRedOpCreatePreMulSum and ncclRedOpDestroy: the communicator's operator table (red_op_table.h). The
// reductions serve the operators by scaling this rank's input first (lib/coll/scaled_input.h).
#include <cstring>

#include "arguments.h"
#include "datatype.h"
#include "error.h"
#include "nccl_comm.h"

using namespace alloy::nccl;

namespace {

// ncclScalarHostImmediate's value, read here. Device memory would fault the read, so it is refused; the host
// reads anything else: pinned or managed memory, and memory CUDA does not know (plain host memory, and every
// pointer where the process has no CUDA device, whose query fails).
alloyResult_t readImmediate(const void* scalar, size_t bytes, const char* function, alloy::PreMulScalar* out) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, scalar) != cudaSuccess) cudaGetLastError();
  else if (attributes.type == cudaMemoryTypeDevice)
    return alloy::fail(alloyInvalidArgument, "%s: scalar=%p is device memory, which ncclScalarHostImmediate cannot "
                       "read on the host; pass ncclScalarDevice for a scalar the collective reads when it runs",
                       function, scalar);
  std::memcpy(&out->immediate, scalar, bytes);
  return alloySuccess;
}

// ncclScalarDevice's pointer, read by the scaling kernel whenever a collective runs: it must hold an element
// of the datatype that the communicator's GPU can read.
alloyResult_t checkDeviceScalar(const ncclComm* comm, const void* scalar, size_t bytes, const char* function) {
  ALLOY_TRY(alloy::checkDeviceBuffer(comm->alloy, scalar, bytes, function, "scalar"));
  return alloy::checkElementAligned(scalar, bytes, function, "scalar");
}

alloyResult_t create(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype, ncclScalarResidence_t residence,
                     ncclComm_t comm) {
  const char* fn = "ncclRedOpCreatePreMulSum";
  ALLOY_TRY(checkComm(comm, fn));
  if (op == nullptr)
    return alloy::fail(alloyInvalidArgument, "%s: op is NULL; expected a pointer to receive the operator", fn);
  if (scalar == nullptr)
    return alloy::fail(alloyInvalidArgument, "%s: scalar is NULL; expected a pointer to one element of the datatype",
                       fn);
  const alloyDataType_t type = static_cast<alloyDataType_t>(datatype);
  ALLOY_TRY(alloy::checkDataType(type, fn));
  const size_t bytes = alloy::dataTypeSize(type);
  PreMulSumOp entry{datatype, alloy::PreMulScalar{nullptr, 0}};
  switch (residence) {
    case ncclScalarHostImmediate:
      ALLOY_TRY(readImmediate(scalar, bytes, fn, &entry.scalar));
      break;
    case ncclScalarDevice:
      ALLOY_TRY(checkDeviceScalar(comm, scalar, bytes, fn));
      entry.scalar.device = scalar;
      break;
    default:
      return alloy::fail(alloyInvalidArgument, "%s: residence is %d; expected ncclScalarDevice (%d) or "
                         "ncclScalarHostImmediate (%d)", fn, static_cast<int>(residence),
                         static_cast<int>(ncclScalarDevice), static_cast<int>(ncclScalarHostImmediate));
  }
  return comm->redOps.add(entry, op, fn);
}

}  // namespace

extern "C" {

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  alloy::clearLastError();
  return toNccl(create(op, scalar, datatype, residence, comm));
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  alloy::clearLastError();
  ALLOY_NCCL_TRY(checkComm(comm, "ncclRedOpDestroy"));
  return toNccl(comm->redOps.remove(op, "ncclRedOpDestroy"));
}

}  // extern "C"
