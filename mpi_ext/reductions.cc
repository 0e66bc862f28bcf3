// Allreduce, reduce and reduce_scatter_block: the GPU engine reduces predefined arithmetic types with
// MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX.
#include "alloy_mpix.h"
#include "arguments.h"
#include "describe.h"
#include "execute.h"

namespace alloy_mpix {
namespace {

// A reduction as the GPU engine takes it. The operations' closures copy it ([=]): it holds no TypeInfo,
// which carries its datatype's name.
struct Reduction {
  alloyDataType_t type = alloyUint8;
  alloyRedOp_t op = alloySum;
  MPI_Count elementBytes = 0;
  size_t bytes = 0;  // of `count` elements
};

bool checkReduction(Request* r, const char* fn, const char* countName, int count, MPI_Datatype datatype, MPI_Op op,
                    Reduction* out) {
  TypeInfo type;
  if (!checkType(r, fn, "datatype", datatype, true, &type) || !checkOp(r, fn, op, &out->op) ||
      !checkCount(r, fn, countName, count, type.size, &out->bytes))
    return false;
  out->type = type.alloyType;
  out->elementBytes = type.size;
  return true;
}

}  // namespace

void describeAllreduce(const char* fn, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                       Request* r) {
  Reduction red;
  if (!checkReduction(r, fn, "count", count, datatype, op, &red)) return;
  r->inPlace = sendbuf == MPI_IN_PLACE;
  r->recv = Region{recvbuf, red.bytes};
  r->send = r->inPlace ? r->recv : Region{sendbuf, red.bytes};
  r->viaGpu = [=](alloyComm_t gpu, const void* send, cudaStream_t s) {
    return alloyAllReduce(send, recvbuf, count, red.type, red.op, gpu, s);
  };
}

void describeReduce(const char* fn, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    int root, const CommShape& shape, Request* r) {
  Reduction red;
  if (!checkReduction(r, fn, "count", count, datatype, op, &red) || !checkRoot(r, fn, root, shape)) return;
  r->inPlace = sendbuf == MPI_IN_PLACE;
  if (shape.rank == root) {
    r->recv = Region{recvbuf, red.bytes};
  } else if (r->inPlace) {
    r->reject(problem(MPI_ERR_BUFFER, "%s: sendbuf is MPI_IN_PLACE on rank %d, which is not the root (%d)", fn,
                      shape.rank, root));
    return;
  }
  r->send = r->inPlace ? r->recv : Region{sendbuf, red.bytes};
  r->viaGpu = [=](alloyComm_t gpu, const void* send, cudaStream_t s) {
    return alloyReduce(send, recvbuf, count, red.type, red.op, root, gpu, s);
  };
}

void describeReduceScatterBlock(const char* fn, const void* sendbuf, void* recvbuf, int recvcount,
                                MPI_Datatype datatype, MPI_Op op, const CommShape& shape, Request* r) {
  Reduction red;
  size_t sendBytes = 0;
  if (!checkReduction(r, fn, "recvcount", recvcount, datatype, op, &red) ||
      !checkCount(r, fn, "recvcount * nranks", static_cast<MPI_Count>(recvcount) * shape.size, red.elementBytes,
                  &sendBytes))
    return;
  r->inPlace = sendbuf == MPI_IN_PLACE;
  if (r->inPlace) {
    // MPI takes the input from recvbuf and leaves this rank's block at its start: the GPU engine
    // (in place only at the rank's own offset) reads the input from a copy instead.
    r->recv = r->send = Region{recvbuf, sendBytes};
    r->stageSend = true;
  } else {
    r->recv = Region{recvbuf, red.bytes};
    r->send = Region{sendbuf, sendBytes};
  }
  r->viaGpu = [=](alloyComm_t gpu, const void* send, cudaStream_t s) {
    return alloyReduceScatter(send, recvbuf, recvcount, red.type, red.op, gpu, s);
  };
}

}  // namespace alloy_mpix

extern "C" ALLOY_MPIX_API int MPIX_Allreduce_cuda(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                                                 MPI_Op op, MPI_Comm comm, cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Allreduce_cuda";
  return execute(fn, comm, stream, [&](const CommShape&, Request* r) {
    describeAllreduce(fn, sendbuf, recvbuf, count, datatype, op, r);
  }, [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); });
}

extern "C" ALLOY_MPIX_API int MPIX_Reduce_cuda(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                                              MPI_Op op, int root, MPI_Comm comm, cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Reduce_cuda";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeReduce(fn, sendbuf, recvbuf, count, datatype, op, root, shape, r);
  }, [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); });
}

extern "C" ALLOY_MPIX_API int MPIX_Reduce_scatter_block_cuda(const void* sendbuf, void* recvbuf, int recvcount,
                                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                            cudaStream_t stream) {
  using namespace alloy_mpix;
  const char* fn = "MPIX_Reduce_scatter_block_cuda";
  return execute(fn, comm, stream, [&](const CommShape& shape, Request* r) {
    describeReduceScatterBlock(fn, sendbuf, recvbuf, recvcount, datatype, op, shape, r);
  }, [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); });
}
