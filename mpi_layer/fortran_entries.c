/*
 * liballoy_mpi.so, part 2: the Fortran names of the intercepted collectives. Open MPI's Fortran bindings
 * (libmpi_mpifh for mpif.h and `use mpi`, libmpi_usempif08 for `use mpi_f08`, which calls into
 * libmpi_mpifh) call PMPI_* directly (nm -D shows them importing PMPI_Allreduce, not MPI_Allreduce), so
 * the C definitions of interpose.c never see a Fortran program's calls: the layer defines the bindings'
 * own entry points as well.
 *
 * The names are the external names of the bindings as gfortran (and Intel's and NVIDIA's compilers)
 * spell them: mpi_allreduce_ for mpif.h and `use mpi`, mpi_allreduce_f08_ for mpi_f08, which the
 * mpi_f08 module's MPI_Allreduce resolves to. Both take the same arguments: buffers as addresses (the
 * bindings declare them ignore-TKR), counts and handles as default INTEGERs (an mpi_f08 handle is a
 * type holding one INTEGER), and ierror, which mpi_f08 makes optional and then passes as NULL.
 * MPI_IN_PLACE and MPI_BOTTOM arrive as the addresses of Open MPI's common blocks mpi_fortran_in_place_
 * and mpi_fortran_bottom_ (weak: absent from C programs, where no Fortran entry is called).
 */
#include "layer_entry.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed on as C int arrays");

extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));

/* The C value of a Fortran buffer argument: MPI_IN_PLACE and MPI_BOTTOM for their sentinels. */
static void *buf(const void *fortran) {
  if (&mpi_fortran_in_place_ != 0 && fortran == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (&mpi_fortran_bottom_ != 0 && fortran == &mpi_fortran_bottom_) return MPI_BOTTOM;
  return (void *)fortran;
}

static void done(MPI_Fint *ierror, int code) {
  if (ierror != 0) *ierror = code;
}

/* A request is handed back only where the call succeeded, as the library's own binding does. */
static void started(MPI_Fint *request, MPI_Fint *ierror, int code, MPI_Request c) {
  if (code == MPI_SUCCESS) *request = MPI_Request_c2f(c);
  done(ierror, code);
}

/* mpi_f08's name for the same entry point. */
#define ALLOY_F08_ALIAS(name) extern __typeof__(name##_) name##_f08_ __attribute__((alias(#name "_")));

typedef const MPI_Fint fint;

void mpi_allreduce_(const void *sendbuf, void *recvbuf, fint *count, fint *datatype, fint *op, fint *comm,
                    MPI_Fint *ierror) {
  done(ierror, alloy_layer_allreduce(buf(sendbuf), buf(recvbuf), *count, MPI_Type_f2c(*datatype), MPI_Op_f2c(*op),
                                     MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_allreduce)

void mpi_reduce_(const void *sendbuf, void *recvbuf, fint *count, fint *datatype, fint *op, fint *root, fint *comm,
                 MPI_Fint *ierror) {
  done(ierror, alloy_layer_reduce(buf(sendbuf), buf(recvbuf), *count, MPI_Type_f2c(*datatype), MPI_Op_f2c(*op), *root,
                                  MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_reduce)

void mpi_bcast_(void *buffer, fint *count, fint *datatype, fint *root, fint *comm, MPI_Fint *ierror) {
  done(ierror, alloy_layer_bcast(buf(buffer), *count, MPI_Type_f2c(*datatype), *root, MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_bcast)

void mpi_allgather_(const void *sendbuf, fint *sendcount, fint *sendtype, void *recvbuf, fint *recvcount,
                    fint *recvtype, fint *comm, MPI_Fint *ierror) {
  done(ierror, alloy_layer_allgather(buf(sendbuf), *sendcount, MPI_Type_f2c(*sendtype), buf(recvbuf), *recvcount,
                                     MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_allgather)

void mpi_allgatherv_(const void *sendbuf, fint *sendcount, fint *sendtype, void *recvbuf, fint *recvcounts,
                     fint *displs, fint *recvtype, fint *comm, MPI_Fint *ierror) {
  done(ierror, alloy_layer_allgatherv(buf(sendbuf), *sendcount, MPI_Type_f2c(*sendtype), buf(recvbuf), recvcounts,
                                      displs, MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_allgatherv)

void mpi_reduce_scatter_block_(const void *sendbuf, void *recvbuf, fint *recvcount, fint *datatype, fint *op,
                               fint *comm, MPI_Fint *ierror) {
  done(ierror, alloy_layer_reduce_scatter_block(buf(sendbuf), buf(recvbuf), *recvcount, MPI_Type_f2c(*datatype),
                                                MPI_Op_f2c(*op), MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_reduce_scatter_block)

void mpi_reduce_scatter_(const void *sendbuf, void *recvbuf, fint *recvcounts, fint *datatype, fint *op, fint *comm,
                         MPI_Fint *ierror) {
  done(ierror, alloy_layer_reduce_scatter(buf(sendbuf), buf(recvbuf), recvcounts, MPI_Type_f2c(*datatype),
                                          MPI_Op_f2c(*op), MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_reduce_scatter)

void mpi_alltoall_(const void *sendbuf, fint *sendcount, fint *sendtype, void *recvbuf, fint *recvcount,
                   fint *recvtype, fint *comm, MPI_Fint *ierror) {
  done(ierror, alloy_layer_alltoall(buf(sendbuf), *sendcount, MPI_Type_f2c(*sendtype), buf(recvbuf), *recvcount,
                                    MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_alltoall)

void mpi_alltoallv_(const void *sendbuf, fint *sendcounts, fint *sdispls, fint *sendtype, void *recvbuf,
                    fint *recvcounts, fint *rdispls, fint *recvtype, fint *comm, MPI_Fint *ierror) {
  done(ierror, alloy_layer_alltoallv(buf(sendbuf), sendcounts, sdispls, MPI_Type_f2c(*sendtype), buf(recvbuf),
                                     recvcounts, rdispls, MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm)));
}
ALLOY_F08_ALIAS(mpi_alltoallv)

void mpi_iallreduce_(const void *sendbuf, void *recvbuf, fint *count, fint *datatype, fint *op, fint *comm,
                     MPI_Fint *request, MPI_Fint *ierror) {
  MPI_Request c = MPI_REQUEST_NULL;
  const int code = alloy_layer_iallreduce(buf(sendbuf), buf(recvbuf), *count, MPI_Type_f2c(*datatype),
                                          MPI_Op_f2c(*op), MPI_Comm_f2c(*comm), &c);
  started(request, ierror, code, c);
}
ALLOY_F08_ALIAS(mpi_iallreduce)

void mpi_ialltoallv_(const void *sendbuf, fint *sendcounts, fint *sdispls, fint *sendtype, void *recvbuf,
                     fint *recvcounts, fint *rdispls, fint *recvtype, fint *comm, MPI_Fint *request,
                     MPI_Fint *ierror) {
  MPI_Request c = MPI_REQUEST_NULL;
  const int code = alloy_layer_ialltoallv(buf(sendbuf), sendcounts, sdispls, MPI_Type_f2c(*sendtype), buf(recvbuf),
                                          recvcounts, rdispls, MPI_Type_f2c(*recvtype), MPI_Comm_f2c(*comm), &c);
  started(request, ierror, code, c);
}
ALLOY_F08_ALIAS(mpi_ialltoallv)
