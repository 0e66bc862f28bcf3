// The C side of the Fortran module alloy_mpix: turns Fortran array descriptors and mpi_f08 handles
// into the arguments of the C functions of alloy_mpix.h, and their result into the optional ierror.
#include <ISO_Fortran_binding.h>

#include <cstdint>
#include <cstdio>
#include <mutex>

#include "alloy_mpix.h"
#include "errors.h"

#define ALLOY_F08_API extern "C" __attribute__((visibility("default")))

ALLOY_F08_API void alloy_mpix_f08_note_sentinels();  // in_place.f90

namespace {

const void* fortranInPlace = nullptr;
const void* fortranBottom = nullptr;
std::once_flag sentinelsOnce;

// The address a buffer argument stands for. An argument that is not a contiguous array or scalar is
// recorded as the call's binding problem (errors.h), which the C function then reports after agreeing
// on it with the other ranks; its address is still passed, and nothing moves.
const void* bufferAddress(const CFI_cdesc_t* d, const char* function, const char* name) {
  std::call_once(sentinelsOnce, alloy_mpix_f08_note_sentinels);
  if (d->base_addr == fortranInPlace) return MPI_IN_PLACE;
  // A type(c_ptr) cannot be told apart from the buffer it points to: gfortran describes a c_ptr variable
  // by the variable's address but a c_loc(...) expression by the pointer's value. Refused, so that the
  // eight bytes of a pointer are never sent by mistake; c_f_pointer gives the array to pass instead.
  const char* wrong = nullptr;
  if (d->base_addr == fortranBottom)  // its address with absolute displacements would be read as data
    wrong = "is MPI_BOTTOM, which the MPIX functions do not take; pass the buffer itself";
  else if (d->type == CFI_type_cptr)
    wrong = "is a type(c_ptr); pass the array it points to (call c_f_pointer(ptr, array, shape))";
  else if (d->rank != 0 && !CFI_is_contiguous(d))  // CFI_is_contiguous is defined for arrays only
    wrong = "is a non-contiguous array section; pass a contiguous array (the operation completes after the call "
            "returns, so no temporary copy can stand in)";
  if (wrong != nullptr) {
    char message[MPI_MAX_ERROR_STRING];
    std::snprintf(message, sizeof(message), "%s: %s %s", function, name, wrong);
    alloy_mpix_binding_problem(MPI_ERR_BUFFER, message);
  }
  return d->base_addr;
}

void setError(MPI_Fint* ierror, int code) {
  if (ierror != nullptr) *ierror = code;
}

cudaStream_t toStream(intptr_t stream) { return reinterpret_cast<cudaStream_t>(stream); }

}  // namespace

ALLOY_F08_API void alloy_mpix_f08_set_sentinels(CFI_cdesc_t* inPlace, CFI_cdesc_t* bottom) {
  fortranInPlace = inPlace->base_addr;
  fortranBottom = bottom->base_addr;
}

ALLOY_F08_API void alloy_mpix_alltoallv_f08(CFI_cdesc_t* sendbuf, const int* sendcounts, const int* sdispls,
                                            const MPI_Fint* sendtype, CFI_cdesc_t* recvbuf, const int* recvcounts,
                                            const int* rdispls, const MPI_Fint* recvtype, const MPI_Fint* comm,
                                            intptr_t stream, MPI_Fint* ierror) {
  const char* fn = "MPIX_Alltoallv_cuda";
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* send = bufferAddress(sendbuf, fn, "sendbuf");
  const void* recv = bufferAddress(recvbuf, fn, "recvbuf");
  setError(ierror, MPIX_Alltoallv_cuda(send, sendcounts, sdispls, MPI_Type_f2c(*sendtype), const_cast<void*>(recv),
                                       recvcounts, rdispls, MPI_Type_f2c(*recvtype), c, toStream(stream)));
}

ALLOY_F08_API void alloy_mpix_alltoallv_c_f08(CFI_cdesc_t* sendbuf, const MPI_Count* sendcounts,
                                              const MPI_Aint* sdispls, const MPI_Fint* sendtype, CFI_cdesc_t* recvbuf,
                                              const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                                              const MPI_Fint* recvtype, const MPI_Fint* comm, intptr_t stream,
                                              MPI_Fint* ierror) {
  const char* fn = "MPIX_Alltoallv_cuda_c";
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* send = bufferAddress(sendbuf, fn, "sendbuf");
  const void* recv = bufferAddress(recvbuf, fn, "recvbuf");
  setError(ierror, MPIX_Alltoallv_cuda_c(send, sendcounts, sdispls, MPI_Type_f2c(*sendtype), const_cast<void*>(recv),
                                         recvcounts, rdispls, MPI_Type_f2c(*recvtype), c, toStream(stream)));
}

ALLOY_F08_API void alloy_mpix_alltoall_f08(CFI_cdesc_t* sendbuf, const int* sendcount, const MPI_Fint* sendtype,
                                           CFI_cdesc_t* recvbuf, const int* recvcount, const MPI_Fint* recvtype,
                                           const MPI_Fint* comm, intptr_t stream, MPI_Fint* ierror) {
  const char* fn = "MPIX_Alltoall_cuda";
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* send = bufferAddress(sendbuf, fn, "sendbuf");
  const void* recv = bufferAddress(recvbuf, fn, "recvbuf");
  setError(ierror, MPIX_Alltoall_cuda(send, *sendcount, MPI_Type_f2c(*sendtype), const_cast<void*>(recv), *recvcount,
                                      MPI_Type_f2c(*recvtype), c, toStream(stream)));
}

ALLOY_F08_API void alloy_mpix_allgather_f08(CFI_cdesc_t* sendbuf, const int* sendcount, const MPI_Fint* sendtype,
                                            CFI_cdesc_t* recvbuf, const int* recvcount, const MPI_Fint* recvtype,
                                            const MPI_Fint* comm, intptr_t stream, MPI_Fint* ierror) {
  const char* fn = "MPIX_Allgather_cuda";
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* send = bufferAddress(sendbuf, fn, "sendbuf");
  const void* recv = bufferAddress(recvbuf, fn, "recvbuf");
  setError(ierror, MPIX_Allgather_cuda(send, *sendcount, MPI_Type_f2c(*sendtype), const_cast<void*>(recv), *recvcount,
                                       MPI_Type_f2c(*recvtype), c, toStream(stream)));
}

ALLOY_F08_API void alloy_mpix_bcast_f08(CFI_cdesc_t* buffer, const int* count, const MPI_Fint* datatype,
                                        const int* root, const MPI_Fint* comm, intptr_t stream, MPI_Fint* ierror) {
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* buf = bufferAddress(buffer, "MPIX_Bcast_cuda", "buffer");
  setError(ierror, MPIX_Bcast_cuda(const_cast<void*>(buf), *count, MPI_Type_f2c(*datatype), *root, c, toStream(stream)));
}

ALLOY_F08_API void alloy_mpix_allreduce_f08(CFI_cdesc_t* sendbuf, CFI_cdesc_t* recvbuf, const int* count,
                                            const MPI_Fint* datatype, const MPI_Fint* op, const MPI_Fint* comm,
                                            intptr_t stream, MPI_Fint* ierror) {
  const char* fn = "MPIX_Allreduce_cuda";
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* send = bufferAddress(sendbuf, fn, "sendbuf");
  const void* recv = bufferAddress(recvbuf, fn, "recvbuf");
  setError(ierror, MPIX_Allreduce_cuda(send, const_cast<void*>(recv), *count, MPI_Type_f2c(*datatype),
                                       MPI_Op_f2c(*op), c, toStream(stream)));
}

ALLOY_F08_API void alloy_mpix_reduce_f08(CFI_cdesc_t* sendbuf, CFI_cdesc_t* recvbuf, const int* count,
                                         const MPI_Fint* datatype, const MPI_Fint* op, const int* root,
                                         const MPI_Fint* comm, intptr_t stream, MPI_Fint* ierror) {
  const char* fn = "MPIX_Reduce_cuda";
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* send = bufferAddress(sendbuf, fn, "sendbuf");
  const void* recv = bufferAddress(recvbuf, fn, "recvbuf");
  setError(ierror, MPIX_Reduce_cuda(send, const_cast<void*>(recv), *count, MPI_Type_f2c(*datatype), MPI_Op_f2c(*op),
                                    *root, c, toStream(stream)));
}

ALLOY_F08_API void alloy_mpix_reduce_scatter_block_f08(CFI_cdesc_t* sendbuf, CFI_cdesc_t* recvbuf,
                                                       const int* recvcount, const MPI_Fint* datatype,
                                                       const MPI_Fint* op, const MPI_Fint* comm, intptr_t stream,
                                                       MPI_Fint* ierror) {
  const char* fn = "MPIX_Reduce_scatter_block_cuda";
  const MPI_Comm c = MPI_Comm_f2c(*comm);
  const void* send = bufferAddress(sendbuf, fn, "sendbuf");
  const void* recv = bufferAddress(recvbuf, fn, "recvbuf");
  setError(ierror, MPIX_Reduce_scatter_block_cuda(send, const_cast<void*>(recv), *recvcount, MPI_Type_f2c(*datatype),
                                                  MPI_Op_f2c(*op), c, toStream(stream)));
}

ALLOY_F08_API void alloy_mpix_cuda_rejection_f08(const MPI_Fint* comm, int* errorclass, int* rank, MPI_Fint* ierror) {
  setError(ierror, MPIX_Cuda_rejection(MPI_Comm_f2c(*comm), errorclass, rank));
}
