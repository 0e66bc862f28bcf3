! An unmodified Fortran MPI program for the layer's CPU tests (no Alloy module), run under mpirun with
! liballoy_mpi.so in LD_PRELOAD: every intercepted function through mpi_f08, and a part of them through
! `use mpi` (both bindings' entry points of one function are one C function in the layer, so its name
! under `use mpi` is what those calls check). Host memory, so every call must pass to the MPI library
! unchanged; each result is checked against a reference computed on the rank itself from every rank's
! inputs (reference.f90), the receive buffers poisoned first, on fresh random data. Rank 0 prints the
! calls it made, as the C programs do (cases.h), for comparison with the layer's report.

! Every intercepted function through mpi_f08.
module f08_cases
  use mpi_f08
  use layer_reference
  implicit none
  private  ! the program uses mpi_f08 itself; `use mpi` names must not meet it
  public :: reductions, reduce_scatters, movements, alltoallvs
contains
  subroutine reductions()
    integer :: k, root, rc
    integer, allocatable :: mine(:), got(:), want(:)
    type(MPI_Request) :: request
    k = new_case()
    call sum_case(k, 40, mine, want)
    allocate(got(size(want)))
    got = poison
    call MPI_Allreduce(mine, got, size(mine), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    call check('MPI_Allreduce (mpi_f08)', rc, got, want, c_allreduce)
    got = mine
    call MPI_Allreduce(MPI_IN_PLACE, got, size(got), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    call check('MPI_Allreduce in place (mpi_f08)', rc, got, want, c_allreduce)
    got = poison
    call MPI_Iallreduce(mine, got, size(mine), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, request, rc)
    if (rc == 0) call MPI_Wait(request, MPI_STATUS_IGNORE, rc)
    call check('MPI_Iallreduce + MPI_Wait (mpi_f08)', rc, got, want, c_iallreduce)
    root = mod(k, nranks)
    got = poison
    call MPI_Reduce(mine, got, size(mine), MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, rc)
    if (rank /= root) want = poison  ! recvbuf is not written elsewhere
    call check('MPI_Reduce (mpi_f08)', rc, got, want, c_reduce)
  end subroutine reductions

  subroutine reduce_scatters()
    integer :: k, n, r, rc, from
    integer :: counts(nranks)
    integer, allocatable :: mine(:), got(:), want(:)
    k = new_case()
    n = shared_count(k, 0, 30)
    allocate(mine(n * nranks), got(n), want(n))
    call inputs_of(mine, k, rank, 0, 1000)
    call sum_of_inputs(want, k, rank * n)
    got = poison
    call MPI_Reduce_scatter_block(mine, got, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    call check('MPI_Reduce_scatter_block (mpi_f08)', rc, got, want, c_reduce_scatter_block)
    deallocate(mine, got, want)
    do r = 1, nranks
      counts(r) = shared_count(k, r, 30)
    end do
    from = sum(counts(1:rank))
    allocate(mine(sum(counts)), got(counts(rank + 1)), want(counts(rank + 1)))
    call inputs_of(mine, k, rank, 0, 1000)
    call sum_of_inputs(want, k, from)
    got = poison
    call MPI_Reduce_scatter(mine, got, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    call check('MPI_Reduce_scatter (mpi_f08)', rc, got, want, c_reduce_scatter)
  end subroutine reduce_scatters

  subroutine movements()
    integer :: k, n, r, rc, total, root
    integer :: counts(nranks), displs(nranks)
    integer, allocatable :: mine(:), got(:), want(:)
    k = new_case()
    n = shared_count(k, 0, 40)
    root = mod(k + 1, nranks)
    allocate(got(n), want(n))
    call inputs_of(want, k, root, 0, 1000)
    got = poison
    if (rank == root) got = want
    call MPI_Bcast(got, n, MPI_INTEGER, root, MPI_COMM_WORLD, rc)
    call check('MPI_Bcast (mpi_f08)', rc, got, want, c_bcast)
    deallocate(got, want)
    ! allgather: rank r's n elements at r*n; alltoall: the block for rank j is elements j*n.. of the sender
    allocate(mine(n * nranks), got(n * nranks), want(n * nranks))
    call inputs_of(mine, k, rank, 0, 1000)
    do r = 0, nranks - 1
      call inputs_of(want(r * n + 1:r * n + n), k, r, 0, 1000)
    end do
    got = poison
    call MPI_Allgather(mine, n, MPI_INTEGER, got, n, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Allgather (mpi_f08)', rc, got, want, c_allgather)
    do r = 0, nranks - 1
      call inputs_of(want(r * n + 1:r * n + n), k, r, rank * n, 1000)
    end do
    got = poison
    call MPI_Alltoall(mine, n, MPI_INTEGER, got, n, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Alltoall (mpi_f08)', rc, got, want, c_alltoall)
    deallocate(mine, got)
    call layout(k, 10, 20, counts, displs, total)
    call gathered(k, counts, displs, total, want)
    allocate(mine(counts(rank + 1)), got(total))
    call inputs_of(mine, k, rank, 0, 1000)
    got = poison
    call MPI_Allgatherv(mine, counts(rank + 1), MPI_INTEGER, got, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Allgatherv (mpi_f08)', rc, got, want, c_allgatherv)
  end subroutine movements

  subroutine alltoallvs()
    integer :: k, rc, stotal, rtotal
    integer :: sc(nranks), sd(nranks), rcounts(nranks), rd(nranks)
    integer, allocatable :: mine(:), got(:), want(:)
    logical :: done
    type(MPI_Request) :: request
    k = new_case()
    call pair_counts(k, 20, sc, rcounts)
    call displacements(sc, 1, sd, stotal)
    call displacements(rcounts, 1, rd, rtotal)
    call exchanged(k, sc, sd, stotal, .true., mine)
    call exchanged(k, rcounts, rd, rtotal, .false., want)
    allocate(got(rtotal))
    got = poison
    call MPI_Alltoallv(mine, sc, sd, MPI_INTEGER, got, rcounts, rd, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Alltoallv (mpi_f08)', rc, got, want, c_alltoallv)
    got = poison
    done = .false.
    call MPI_Ialltoallv(mine, sc, sd, MPI_INTEGER, got, rcounts, rd, MPI_INTEGER, MPI_COMM_WORLD, request, rc)
    do while (rc == 0 .and. .not. done)
      call MPI_Test(request, done, MPI_STATUS_IGNORE, rc)
    end do
    call check('MPI_Ialltoallv + MPI_Test (mpi_f08)', rc, got, want, c_ialltoallv)
  end subroutine alltoallvs
end module f08_cases

! Entry points through `use mpi`, the names mpi_allreduce_ and so on: an in-place allreduce with
! MPI_MAX, an iallreduce completed by an MPI_Test loop, an allgatherv.
module legacy_cases
  use mpi
  use layer_reference
  implicit none
  private
  public :: legacy_calls
contains
  subroutine legacy_calls()
    integer :: k, rc, request, r, total, i
    integer :: counts(nranks), displs(nranks)
    integer, allocatable :: mine(:), got(:), want(:)
    logical :: done
    k = new_case()
    call sum_case(k, 40, mine, want)
    got = mine
    want = [(maxval([(input(k, r, i - 1, 1000), r = 0, nranks - 1)]), i = 1, size(mine))]
    call MPI_Allreduce(MPI_IN_PLACE, got, size(got), MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, rc)
    call check('MPI_Allreduce in place with MPI_MAX (use mpi)', rc, got, want, c_allreduce)
    call sum_of_inputs(want, k, 0)
    got = poison
    done = .false.
    call MPI_Iallreduce(mine, got, size(mine), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, request, rc)
    do while (rc == 0 .and. .not. done)
      call MPI_Test(request, done, MPI_STATUS_IGNORE, rc)
    end do
    call check('MPI_Iallreduce + MPI_Test (use mpi)', rc, got, want, c_iallreduce)
    deallocate(mine, got)
    call layout(k, 30, 20, counts, displs, total)
    call gathered(k, counts, displs, total, want)
    allocate(mine(counts(rank + 1)), got(total))
    call inputs_of(mine, k, rank, 0, 1000)
    got = poison
    call MPI_Allgatherv(mine, counts(rank + 1), MPI_INTEGER, got, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Allgatherv (use mpi)', rc, got, want, c_allgatherv)
  end subroutine legacy_calls
end module legacy_cases

program fortran_program
  use mpi_f08
  use layer_reference
  use layer_rounds
  use f08_cases
  use legacy_cases
  implicit none
  integer :: round
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  do round = 1, 3
    call start_round(round)
    call reductions()
    call reduce_scatters()
    call movements()
    call alltoallvs()
    call legacy_calls()
  end do
  call finish('fortran_program')
end program fortran_program
