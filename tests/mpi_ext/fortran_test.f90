! The Fortran module alloy_mpix under mpirun, host memory: every function against its mpi_f08
! counterpart, MPI_IN_PLACE, arrays made by c_f_pointer, the large-count overload, a call without
! ierror, and errors (class and message) under MPI_ERRORS_RETURN.
program fortran_test
  use, intrinsic :: iso_c_binding, only: c_intptr_t, c_loc, c_ptr, c_f_pointer
  use mpi_f08
  use alloy_mpix
  implicit none
  integer(c_intptr_t), parameter :: stream = 0_c_intptr_t  ! host memory: the stream is only synchronised
  type(MPI_Comm) :: comm
  integer :: rank, n, p, ierr, failures, total, cls, length, rejecter
  integer, allocatable :: sendcounts(:), sdispls(:), recvcounts(:), rdispls(:)
  integer(MPI_COUNT_KIND), allocatable :: lsendcounts(:), lrecvcounts(:)
  integer(MPI_ADDRESS_KIND), allocatable :: lsdispls(:), lrdispls(:)
  real(8), allocatable, target :: sendbuf(:), mine(:), ref(:)
  real(8), pointer :: view(:)
  integer, allocatable :: ivals(:), iref(:)
  character(len=MPI_MAX_ERROR_STRING) :: message

  call MPI_Init()
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, n)
  failures = 0

  ! Alltoallv: rank r sends mod(r + p, 3) elements to rank p, so the counts are symmetric.
  allocate(sendcounts(n), sdispls(n), recvcounts(n), rdispls(n))
  total = 0
  do p = 1, n
    sendcounts(p) = mod(rank + p - 1, 3)
    recvcounts(p) = sendcounts(p)
    sdispls(p) = total
    rdispls(p) = total + 1  ! a gap of one element before each received block
    total = total + sendcounts(p) + 1
  end do
  allocate(sendbuf(total + 1), mine(total + 1), ref(total + 1))
  call fill(sendbuf, rank)
  mine = -1d0
  ref = -1d0
  call MPIX_Alltoallv_cuda(sendbuf, sendcounts, sdispls, MPI_DOUBLE_PRECISION, mine, recvcounts, rdispls, &
                           MPI_DOUBLE_PRECISION, comm, stream, ierr)
  call MPI_Alltoallv(sendbuf, sendcounts, sdispls, MPI_DOUBLE_PRECISION, ref, recvcounts, rdispls, &
                     MPI_DOUBLE_PRECISION, comm)
  call check(ierr == MPI_SUCCESS .and. all(mine == ref), "MPIX_Alltoallv_cuda")

  ! The large-count overload of the same generic name.
  allocate(lsendcounts(n), lrecvcounts(n), lsdispls(n), lrdispls(n))
  lsendcounts = sendcounts
  lrecvcounts = recvcounts
  lsdispls = sdispls
  lrdispls = rdispls
  mine = -1d0
  call MPIX_Alltoallv_cuda(sendbuf, lsendcounts, lsdispls, MPI_DOUBLE_PRECISION, mine, lrecvcounts, lrdispls, &
                           MPI_DOUBLE_PRECISION, comm, stream, ierr)
  call check(ierr == MPI_SUCCESS .and. all(mine == ref), "MPIX_Alltoallv_cuda (MPI_COUNT_KIND counts)")

  ! Buffers reached through c_f_pointer, as gfortran programs reach cudaMalloc'd memory.
  deallocate(mine, ref)
  allocate(mine(n * 2), ref(n * 2))
  mine = -1d0
  call c_f_pointer(c_loc(mine), view, [n * 2])
  call MPIX_Allgather_cuda(sendbuf, 2, MPI_DOUBLE_PRECISION, view, 2, MPI_DOUBLE_PRECISION, comm, stream, ierr)
  call MPI_Allgather(sendbuf, 2, MPI_DOUBLE_PRECISION, ref, 2, MPI_DOUBLE_PRECISION, comm)
  call check(ierr == MPI_SUCCESS .and. all(mine == ref), "MPIX_Allgather_cuda through a c_f_pointer array")

  mine = -1d0
  call MPIX_Alltoall_cuda(sendbuf, 1, MPI_DOUBLE_PRECISION, mine, 1, MPI_DOUBLE_PRECISION, comm, stream, ierr)
  call MPI_Alltoall(sendbuf, 1, MPI_DOUBLE_PRECISION, ref, 1, MPI_DOUBLE_PRECISION, comm)
  call check(ierr == MPI_SUCCESS .and. all(mine(1:n) == ref(1:n)), "MPIX_Alltoall_cuda")

  ! Reductions on integers, in place and not, and a call without ierror.
  allocate(ivals(2 * n), iref(2 * n))
  ivals = [(rank * 10 + p, p = 1, 2 * n)]
  iref = ivals
  call MPIX_Allreduce_cuda(MPI_IN_PLACE, ivals, 2 * n, MPI_INTEGER, MPI_SUM, comm, stream, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, iref, 2 * n, MPI_INTEGER, MPI_SUM, comm)
  call check(ierr == MPI_SUCCESS .and. all(ivals == iref), "MPIX_Allreduce_cuda in place")
  call MPIX_Reduce_scatter_block_cuda(ivals, iref(1:2), 2, MPI_INTEGER, MPI_MAX, comm, stream, ierr)
  call check(ierr == MPI_SUCCESS .and. all(iref(1:2) == ivals(2 * rank + 1:2 * rank + 2)), &
             "MPIX_Reduce_scatter_block_cuda of equal inputs")
  iref = 0
  call MPIX_Reduce_cuda(ivals, iref, 2 * n, MPI_INTEGER, MPI_MIN, 0, comm, stream, ierr)
  call check(ierr == MPI_SUCCESS .and. (rank /= 0 .or. all(iref == ivals)), "MPIX_Reduce_cuda")
  if (rank == 0) ivals = 42
  call MPIX_Bcast_cuda(ivals, 2 * n, MPI_INTEGER, 0, comm, stream)
  call check(all(ivals == 42), "MPIX_Bcast_cuda without ierror")
  ! Scalars are buffers too, also under -fcheck=bounds (with which this test is built).
  p = rank + 1
  total = 0
  call MPIX_Allreduce_cuda(p, total, 1, MPI_INTEGER, MPI_SUM, comm, stream, ierr)
  call check(ierr == MPI_SUCCESS .and. total == n * (n + 1) / 2, "MPIX_Allreduce_cuda of a scalar")

  ! Errors: class and message under MPI_ERRORS_RETURN.
  call MPIX_Bcast_cuda(ivals, -1, MPI_INTEGER, 0, comm, stream, ierr)
  call MPI_Error_class(ierr, cls)
  call MPI_Error_string(ierr, message, length)
  call check(cls == MPI_ERR_COUNT .and. index(message(1:length), "count=-1 is negative") > 0, &
             "negative count: MPI_ERR_COUNT naming it")
  call MPIX_Alltoall_cuda(sendbuf(1:2 * n:2), 1, MPI_DOUBLE_PRECISION, mine, 1, MPI_DOUBLE_PRECISION, comm, &
                          stream, ierr)
  call MPI_Error_class(ierr, cls)
  call MPI_Error_string(ierr, message, length)
  call check(cls == MPI_ERR_BUFFER .and. index(message(1:length), "non-contiguous") > 0, &
             "non-contiguous section: MPI_ERR_BUFFER")

  call MPIX_Bcast_cuda(MPI_BOTTOM, 1, MPI_INTEGER, 0, comm, stream, ierr)
  call MPI_Error_class(ierr, cls)
  call MPI_Error_string(ierr, message, length)
  call check(cls == MPI_ERR_BUFFER .and. index(message(1:length), "MPI_BOTTOM") > 0, "MPI_BOTTOM: MPI_ERR_BUFFER")

  ! One rank's bad buffer stops every rank: the binding's check is agreed like any other, none waits.
  if (rank == n - 1) then
    call MPIX_Allreduce_cuda(ivals(1:2 * n:2), iref(1:n), n, MPI_INTEGER, MPI_SUM, comm, stream, ierr)
  else
    call MPIX_Allreduce_cuda(ivals(1:n), iref(1:n), n, MPI_INTEGER, MPI_SUM, comm, stream, ierr)
  end if
  call MPI_Error_class(ierr, cls)
  call check((rank == n - 1 .and. cls == MPI_ERR_BUFFER) .or. (rank /= n - 1 .and. cls == MPI_ERR_OTHER), &
             "non-contiguous section on one rank: every rank returns")

  call MPIX_Allgather_cuda(c_loc(sendbuf), 2, MPI_DOUBLE_PRECISION, mine, 2, MPI_DOUBLE_PRECISION, comm, stream, ierr)
  call MPI_Error_class(ierr, cls)
  call MPI_Error_string(ierr, message, length)
  call check(cls == MPI_ERR_BUFFER .and. index(message(1:length), "type(c_ptr)") > 0, "type(c_ptr): MPI_ERR_BUFFER")

  ! Host memory calls are agreed: nothing is ever pending on this communicator.
  call MPIX_Cuda_rejection(comm, cls, rejecter, ierr)
  call check(ierr == MPI_SUCCESS .and. cls == MPI_SUCCESS .and. rejecter == MPI_PROC_NULL, "MPIX_Cuda_rejection: none")

  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Comm_free(comm)
  if (rank == 0) then
    if (failures == 0) then
      print '(a,i0,a)', 'fortran_test: PASSED on ', n, ' ranks'
    else
      print '(a,i0,a)', 'fortran_test: FAILED (', failures, ' failed checks over all ranks)'
    end if
  end if
  call MPI_Finalize()
  if (failures /= 0) error stop 1

contains

  subroutine fill(values, seed)
    real(8), intent(out) :: values(:)
    integer, intent(in) :: seed
    integer :: i
    do i = 1, size(values)
      values(i) = seed * 1000 + i + 0.25d0
    end do
  end subroutine fill

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(a,i0,2a)', 'rank ', rank, ': FAILED: ', what
    end if
  end subroutine check
end program fortran_test
