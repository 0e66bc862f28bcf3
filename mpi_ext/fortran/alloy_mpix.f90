! Fortran 2008 bindings of Alloy's MPI extension, for programs that `use mpi_f08`: the functions of
! alloy_mpix.h with MPI_Comm, MPI_Datatype and MPI_Op handles, a CUDA stream as integer(c_intptr_t)
! (CUDA Fortran's cuda_stream_kind) and an optional ierror. See docs/mpi-extension.md.
!
! Buffers are `type(*), dimension(..)`: any array or scalar of any type, host or device (CUDA Fortran
! `device` arrays, or a Fortran pointer that c_f_pointer laid over cudaMalloc'd memory). Rejected with
! MPI_ERR_BUFFER: non-contiguous array sections (the operation runs after the call returns, so no
! temporary copy could stand in) and type(c_ptr) values (pass the array c_f_pointer makes of them).
module alloy_mpix
  use, intrinsic :: iso_c_binding, only: c_intptr_t
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Op, MPI_COUNT_KIND, MPI_ADDRESS_KIND
  implicit none
  private
  public :: MPIX_Alltoallv_cuda, MPIX_Alltoallv_cuda_c, MPIX_Alltoall_cuda, MPIX_Allreduce_cuda, &
            MPIX_Reduce_cuda, MPIX_Bcast_cuda, MPIX_Allgather_cuda, MPIX_Reduce_scatter_block_cuda, &
            MPIX_Cuda_rejection

  ! Default integer counts, or MPI_COUNT_KIND counts and MPI_ADDRESS_KIND displacements (as MPI-4's
  ! Fortran bindings overload MPI_Alltoallv).
  interface MPIX_Alltoallv_cuda
    subroutine alloy_mpix_alltoallv_f08(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, &
                                        recvtype, comm, stream, ierror) bind(C, name="alloy_mpix_alltoallv_f08")
      import :: MPI_Comm, MPI_Datatype, c_intptr_t
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcounts(*), sdispls(*), recvcounts(*), rdispls(*)
      type(MPI_Datatype), intent(in) :: sendtype, recvtype
      type(*), dimension(..) :: recvbuf
      type(MPI_Comm), intent(in) :: comm
      integer(c_intptr_t), value :: stream
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_alltoallv_f08
    subroutine alloy_mpix_alltoallv_c_f08(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, &
                                          recvtype, comm, stream, ierror) bind(C, name="alloy_mpix_alltoallv_c_f08")
      import :: MPI_Comm, MPI_Datatype, MPI_COUNT_KIND, MPI_ADDRESS_KIND, c_intptr_t
      type(*), dimension(..), intent(in) :: sendbuf
      integer(MPI_COUNT_KIND), intent(in) :: sendcounts(*), recvcounts(*)
      integer(MPI_ADDRESS_KIND), intent(in) :: sdispls(*), rdispls(*)
      type(MPI_Datatype), intent(in) :: sendtype, recvtype
      type(*), dimension(..) :: recvbuf
      type(MPI_Comm), intent(in) :: comm
      integer(c_intptr_t), value :: stream
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_alltoallv_c_f08
  end interface MPIX_Alltoallv_cuda

  interface MPIX_Alltoallv_cuda_c
    procedure :: alloy_mpix_alltoallv_c_f08
  end interface MPIX_Alltoallv_cuda_c

  interface MPIX_Alltoall_cuda
    subroutine alloy_mpix_alltoall_f08(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream, &
                                       ierror) bind(C, name="alloy_mpix_alltoall_f08")
      import :: MPI_Comm, MPI_Datatype, c_intptr_t
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount, recvcount
      type(MPI_Datatype), intent(in) :: sendtype, recvtype
      type(*), dimension(..) :: recvbuf
      type(MPI_Comm), intent(in) :: comm
      integer(c_intptr_t), value :: stream
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_alltoall_f08
  end interface MPIX_Alltoall_cuda

  interface MPIX_Allgather_cuda
    subroutine alloy_mpix_allgather_f08(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream, &
                                        ierror) bind(C, name="alloy_mpix_allgather_f08")
      import :: MPI_Comm, MPI_Datatype, c_intptr_t
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount, recvcount
      type(MPI_Datatype), intent(in) :: sendtype, recvtype
      type(*), dimension(..) :: recvbuf
      type(MPI_Comm), intent(in) :: comm
      integer(c_intptr_t), value :: stream
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_allgather_f08
  end interface MPIX_Allgather_cuda

  interface MPIX_Bcast_cuda
    subroutine alloy_mpix_bcast_f08(buffer, count, datatype, root, comm, stream, ierror) &
        bind(C, name="alloy_mpix_bcast_f08")
      import :: MPI_Comm, MPI_Datatype, c_intptr_t
      type(*), dimension(..) :: buffer
      integer, intent(in) :: count, root
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Comm), intent(in) :: comm
      integer(c_intptr_t), value :: stream
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_bcast_f08
  end interface MPIX_Bcast_cuda

  interface MPIX_Allreduce_cuda
    subroutine alloy_mpix_allreduce_f08(sendbuf, recvbuf, count, datatype, op, comm, stream, ierror) &
        bind(C, name="alloy_mpix_allreduce_f08")
      import :: MPI_Comm, MPI_Datatype, MPI_Op, c_intptr_t
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      integer(c_intptr_t), value :: stream
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_allreduce_f08
  end interface MPIX_Allreduce_cuda

  interface MPIX_Reduce_cuda
    subroutine alloy_mpix_reduce_f08(sendbuf, recvbuf, count, datatype, op, root, comm, stream, ierror) &
        bind(C, name="alloy_mpix_reduce_f08")
      import :: MPI_Comm, MPI_Datatype, MPI_Op, c_intptr_t
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: count, root
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      integer(c_intptr_t), value :: stream
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_reduce_f08
  end interface MPIX_Reduce_cuda

  interface MPIX_Reduce_scatter_block_cuda
    subroutine alloy_mpix_reduce_scatter_block_f08(sendbuf, recvbuf, recvcount, datatype, op, comm, stream, ierror) &
        bind(C, name="alloy_mpix_reduce_scatter_block_f08")
      import :: MPI_Comm, MPI_Datatype, MPI_Op, c_intptr_t
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcount
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      integer(c_intptr_t), value :: stream
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_reduce_scatter_block_f08
  end interface MPIX_Reduce_scatter_block_cuda
  ! The pending rejection by another rank (alloy_mpix.h): its error class and rank, or MPI_SUCCESS and
  ! MPI_PROC_NULL.
  interface MPIX_Cuda_rejection
    subroutine alloy_mpix_cuda_rejection_f08(comm, errorclass, rank, ierror) &
        bind(C, name="alloy_mpix_cuda_rejection_f08")
      import :: MPI_Comm
      type(MPI_Comm), intent(in) :: comm
      integer, intent(out) :: errorclass, rank
      integer, optional, intent(out) :: ierror
    end subroutine alloy_mpix_cuda_rejection_f08
  end interface MPIX_Cuda_rejection
end module alloy_mpix
