// The layer's entry points (layer_entry.h): each describes its call as the MPI extension does
// (mpi_ext/describe.h) and hands the description, with the PMPI_* call that passes it on unchanged, to
// the blocking or non-blocking run (run.h). Both go as references to the lambdas (FunctionRef), which
// capture the arguments by reference and are called before the entry point returns.
#include "describe.h"
#include "layer_entry.h"
#include "run.h"
#include "vector_calls.h"

using alloy_layer::Call;
using alloy_layer::runBlocking;
using alloy_layer::runNonblocking;
using alloy_mpix::CommShape;
using alloy_mpix::Request;

extern "C" int alloy_layer_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm comm) {
  return runBlocking(Call::Allreduce, comm, [&](const char* fn, const CommShape&, Request* r) {
    alloy_mpix::describeAllreduce(fn, sendbuf, recvbuf, count, datatype, op, r);
  }, [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); });
}

extern "C" int alloy_layer_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                  int root, MPI_Comm comm) {
  return runBlocking(Call::Reduce, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_mpix::describeReduce(fn, sendbuf, recvbuf, count, datatype, op, root, shape, r);
  }, [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); });
}

extern "C" int alloy_layer_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return runBlocking(Call::Bcast, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_mpix::describeBcast(fn, buffer, count, datatype, root, shape, r);
  }, [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

extern "C" int alloy_layer_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return runBlocking(Call::Allgather, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_mpix::describeAllgather(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, shape, r);
  }, [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

extern "C" int alloy_layer_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                      MPI_Comm comm) {
  return runBlocking(Call::Allgatherv, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_layer::describeAllgatherv(fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, shape, r);
  }, [&] { return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm); });
}

extern "C" int alloy_layer_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return runBlocking(Call::ReduceScatterBlock, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_mpix::describeReduceScatterBlock(fn, sendbuf, recvbuf, recvcount, datatype, op, shape, r);
  }, [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); });
}

extern "C" int alloy_layer_reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return runBlocking(Call::ReduceScatter, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_layer::describeReduceScatter(fn, sendbuf, recvbuf, recvcounts, datatype, op, shape, r);
  }, [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); });
}

extern "C" int alloy_layer_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return runBlocking(Call::Alltoall, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_mpix::describeAlltoall(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, shape, r);
  }, [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

extern "C" int alloy_layer_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                     MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                     MPI_Datatype recvtype, MPI_Comm comm) {
  return runBlocking(Call::Alltoallv, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_mpix::describeAlltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                  shape, r);
  }, [&] {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  });
}

extern "C" int alloy_layer_iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                      MPI_Comm comm, MPI_Request* request) {
  return runNonblocking(Call::Iallreduce, comm, [&](const char* fn, const CommShape&, Request* r) {
    alloy_mpix::describeAllreduce(fn, sendbuf, recvbuf, count, datatype, op, r);
  }, [&] { return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request); }, request);
}

extern "C" int alloy_layer_ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                      MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                      MPI_Request* request) {
  return runNonblocking(Call::Ialltoallv, comm, [&](const char* fn, const CommShape& shape, Request* r) {
    alloy_mpix::describeAlltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                  shape, r);
  }, [&] {
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
  }, request);
}
