! What the layer's Fortran test programs share (fortran_program.f90 on the CPU, gpu_fortran.f90 on a GPU
! machine): inputs every rank can compute for every rank, references, checks, and the count of calls by
! expected route that rank 0 prints for run_layer.sh, as the C programs do (cases.h), in a module with
! no MPI binding (the CPU program calls through two); and their rounds and end, through mpi_f08.
module layer_reference
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  integer, parameter :: n_calls = 11, poison = 1515870810  ! 0x5A5A5A5A
  integer, parameter :: c_allreduce = 1, c_reduce = 2, c_bcast = 3, c_allgather = 4, c_allgatherv = 5, &
                        c_reduce_scatter_block = 6, c_reduce_scatter = 7, c_alltoall = 8, c_alltoallv = 9, &
                        c_iallreduce = 10, c_ialltoallv = 11
  character(len=24), parameter :: call_names(n_calls) = [character(len=24) :: 'MPI_Allreduce', 'MPI_Reduce', &
      'MPI_Bcast', 'MPI_Allgather', 'MPI_Allgatherv', 'MPI_Reduce_scatter_block', 'MPI_Reduce_scatter', &
      'MPI_Alltoall', 'MPI_Alltoallv', 'MPI_Iallreduce', 'MPI_Ialltoallv']
  integer(int64), parameter :: modulus = 2147483647_int64
  integer(int64) :: seed = 1
  integer :: rank = 0, nranks = 1, failures = 0, next_case = 0
  ! Calls made, by the route the program expects the layer to take: check() counts each call it checks
  ! under diverted_calls while expect_diverted is set (device memory), else under passed_calls.
  integer :: passed_calls(n_calls) = 0, diverted_calls(n_calls) = 0
  logical :: expect_diverted = .false.
contains
  ! Element i of rank r's input to case k, in [-limit, limit]: every rank can compute every rank's.
  ! (The generator is Park and Miller's, kept in 64-bit integers that never overflow.)
  pure integer function input(k, r, i, limit)
    integer, intent(in) :: k, r, i, limit
    integer(int64) :: x
    x = modulo(seed * 48271_int64 + k, modulus)
    x = modulo(x * 48271_int64 + r + 1, modulus)
    x = modulo(x * 48271_int64 + i, modulus)
    x = modulo(x * 48271_int64, modulus)
    x = modulo(x * 48271_int64, modulus)
    input = int(modulo(x, int(2 * limit + 1, int64))) - limit
  end function input

  ! A count the ranks agree on, 0 .. most.
  integer function shared_count(k, salt, most)
    integer, intent(in) :: k, salt, most
    shared_count = input(k, -1 - salt, 0, 1000) + 1000
    shared_count = modulo(shared_count, most + 1)
  end function shared_count

  integer function new_case()
    next_case = next_case + 1
    new_case = next_case
  end function new_case

  subroutine inputs_of(v, k, r, from, limit)
    integer, intent(out) :: v(:)
    integer, intent(in) :: k, r, from, limit
    integer :: i
    do i = 1, size(v)
      v(i) = input(k, r, from + i - 1, limit)
    end do
  end subroutine inputs_of

  ! The sum over all ranks of element from+i-1 of their inputs to case k.
  subroutine sum_of_inputs(v, k, from)
    integer, intent(out) :: v(:)
    integer, intent(in) :: k, from
    integer :: r, i
    v = 0
    do r = 0, nranks - 1
      do i = 1, size(v)
        v(i) = v(i) + input(k, r, from + i - 1, 1000)
      end do
    end do
  end subroutine sum_of_inputs

  subroutine check(what, rc, got, want, call)
    character(len=*), intent(in) :: what
    integer, intent(in) :: rc, got(:), want(:), call
    integer :: i
    call count_call(call)
    if (rc /= 0) then
      print '(a,i0,a,a,a,i0)', 'FAILED on rank ', rank, ': ', what, ' returned ', rc
      failures = failures + 1
      return
    end if
    do i = 1, size(want)
      if (got(i) /= want(i)) then
        print '(a,i0,a,a,a,i0,a,i0,a,i0)', 'FAILED on rank ', rank, ': ', what, ': element ', i, ' is ', got(i), &
              ', expected ', want(i)
        failures = failures + 1
        return
      end if
    end do
  end subroutine check

  subroutine count_call(call)
    integer, intent(in) :: call
    if (expect_diverted) then
      diverted_calls(call) = diverted_calls(call) + 1
    else
      passed_calls(call) = passed_calls(call) + 1
    end if
  end subroutine count_call

  ! A seed from the clock (rank 0's is broadcast by the program), in 1 .. modulus - 1.
  subroutine draw_seed(round)
    integer, intent(in) :: round
    integer(int64) :: clock
    call system_clock(clock)
    seed = modulo(modulo(clock, modulus) * 48271_int64 + round, modulus - 1) + 1
    if (rank == 0) print '(a,i0)', 'seed ', seed
  end subroutine draw_seed

  ! Every rank prints an "expect rank R: <function>: P passed, D diverted" line per function it called
  ! (compared with the layer's report by run_layer.sh), then rank 0 "<name>: PASSED" or FAILED.
  subroutine print_expectations(name, all_failures)
    character(len=*), intent(in) :: name
    integer, intent(in) :: all_failures
    integer :: c
    do c = 1, n_calls
      if (passed_calls(c) + diverted_calls(c) > 0) print '(a,i0,a,a,a,i0,a,i0,a)', 'expect rank ', rank, ': ', &
          trim(call_names(c)), ': ', passed_calls(c), ' passed, ', diverted_calls(c), ' diverted'
    end do
    if (rank /= 0) return
    if (all_failures == 0) then
      print '(a,a)', name, ': PASSED'
    else
      print '(a,a,i0,a)', name, ': FAILED (', all_failures, ' failures)'
    end if
  end subroutine print_expectations

  ! This rank's inputs to reduction case k (shared_count(k, 0, most) of them) and their sum over all ranks.
  subroutine sum_case(k, most, mine, want)
    integer, intent(in) :: k, most
    integer, allocatable, intent(out) :: mine(:), want(:)
    integer :: n
    n = shared_count(k, 0, most)
    allocate(mine(n), want(n))
    call inputs_of(mine, k, rank, 0, 1000)
    call sum_of_inputs(want, k, 0)
  end subroutine sum_case

  ! Displacements of consecutive blocks of counts(:) elements, each after `gap` elements; total: the
  ! elements of the whole layout, a gap after the last block included.
  subroutine displacements(counts, gap, displs, total)
    integer, intent(in) :: counts(:), gap
    integer, intent(out) :: displs(:), total
    integer :: j
    total = 0
    do j = 1, size(counts)
      displs(j) = total + gap
      total = displs(j) + counts(j)
    end do
    total = total + gap
  end subroutine displacements

  ! Per-rank counts the ranks agree on (counts(r+1) from rank r), each block after a gap of 2 elements.
  subroutine layout(k, salt, most, counts, displs, total)
    integer, intent(in) :: k, salt, most
    integer, intent(out) :: counts(:), displs(:), total
    integer :: r
    do r = 1, nranks
      counts(r) = shared_count(k, salt + r, most)
    end do
    call displacements(counts, 2, displs, total)
  end subroutine layout

  ! What an allgatherv of case k leaves in a layout of total elements: rank r's first counts(r+1) inputs
  ! at displs(r+1), the poison around them.
  subroutine gathered(k, counts, displs, total, want)
    integer, intent(in) :: k, counts(:), displs(:), total
    integer, allocatable, intent(out) :: want(:)
    integer :: r
    allocate(want(total))
    want = poison
    do r = 1, nranks
      call inputs_of(want(displs(r) + 1:displs(r) + counts(r)), k, r - 1, 0, 1000)
    end do
  end subroutine gathered

  ! The counts of alltoallv case k: rank a sends rank b shared_count(k, 100 + a*nranks + b, most)
  ! elements; sends(r+1) is what this rank sends rank r, receives(r+1) what it receives from it.
  subroutine pair_counts(k, most, sends, receives)
    integer, intent(in) :: k, most
    integer, intent(out) :: sends(:), receives(:)
    integer :: r
    do r = 1, nranks
      sends(r) = shared_count(k, 100 + rank * nranks + r - 1, most)
      receives(r) = shared_count(k, 100 + (r - 1) * nranks + rank, most)
    end do
  end subroutine pair_counts

  ! Whether any pair of ranks exchanges an element in alltoallv case k (pair_counts' layout on every rank).
  logical function any_pair_moves(k, most)
    integer, intent(in) :: k, most
    integer :: from, to
    any_pair_moves = .false.
    do from = 0, nranks - 1
      do to = 0, nranks - 1
        if (shared_count(k, 100 + from * nranks + to, most) > 0) any_pair_moves = .true.
      end do
    end do
  end function any_pair_moves

  ! The blocks of alltoallv case k in a layout of the counts at displs: the block between this rank and
  ! rank r holds elements 1000*(receiver).. of the sender's stream; for_sending: this rank's send blocks,
  ! else what it receives; poison around them.
  subroutine exchanged(k, counts, displs, total, for_sending, v)
    integer, intent(in) :: k, counts(:), displs(:), total
    logical, intent(in) :: for_sending
    integer, allocatable, intent(out) :: v(:)
    integer :: r
    allocate(v(total))
    v = poison
    do r = 1, nranks
      if (for_sending) then
        call inputs_of(v(displs(r) + 1:displs(r) + counts(r)), k, rank, 1000 * (r - 1), 1000)
      else
        call inputs_of(v(displs(r) + 1:displs(r) + counts(r)), k, r - 1, 1000 * rank, 1000)
      end if
    end do
  end subroutine exchanged
end module layer_reference

! The rounds and the end of a program, through mpi_f08 (both programs' main bodies use it).
module layer_rounds
  use mpi_f08
  use layer_reference
  implicit none
  private
  public :: start_round, finish
contains
  ! A fresh seed from rank 0 (one MPI_Bcast of host memory: passed), and the cases numbered anew.
  subroutine start_round(round)
    integer, intent(in) :: round
    call draw_seed(round)
    call MPI_Bcast(seed, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD)
    call count_call(c_bcast)
    next_case = 0
  end subroutine start_round

  ! The failures of all ranks summed (one MPI_Allreduce: passed), rank 0's report, MPI_Finalize, and
  ! the exit status.
  subroutine finish(name)
    character(len=*), intent(in) :: name
    integer :: all_failures
    expect_diverted = .false.
    call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call count_call(c_allreduce)
    call print_expectations(name, all_failures)
    call MPI_Finalize()
    if (all_failures /= 0) stop 1
  end subroutine finish
end module layer_rounds
