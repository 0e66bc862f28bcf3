! An unmodified Fortran MPI program (mpi_f08, and the CUDA runtime through iso_c_binding; no Alloy
! module) for the layer on a GPU machine, run under mpirun with liballoy_mpi.so preloaded, one rank per
! GPU: every function the layer intercepts, on cudaMalloc'd arrays (allreduce also in place, iallreduce +
! MPI_Wait, ialltoallv + an MPI_Test loop), must run on Alloy's GPU engine wherever some rank moves data,
! each checked against a reference computed on the rank from every rank's inputs (reference.f90), the
! receive buffers poisoned first, on fresh random data. Device arrays are
! Fortran pointers laid over device memory with c_f_pointer, declared contiguous so that the compiler
! passes their address and never touches them. Without a CUDA device: "skipped: no CUDA device", exit 77.
module cuda_memory
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: cudaGetDeviceCount, cudaSetDevice, device_array, fetched
  interface
    integer(c_int) function cudaGetDeviceCount(count) bind(C, name="cudaGetDeviceCount")
      import :: c_int
      integer(c_int) :: count
    end function cudaGetDeviceCount
    integer(c_int) function cudaSetDevice(device) bind(C, name="cudaSetDevice")
      import :: c_int
      integer(c_int), value :: device
    end function cudaSetDevice
    integer(c_int) function cudaMalloc(ptr, bytes) bind(C, name="cudaMalloc")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr) :: ptr
      integer(c_size_t), value :: bytes
    end function cudaMalloc
    integer(c_int) function cudaFree(ptr) bind(C, name="cudaFree")
      import :: c_int, c_ptr
      type(c_ptr), value :: ptr
    end function cudaFree
    integer(c_int) function cudaMemcpy(dst, src, bytes, kind) bind(C, name="cudaMemcpy")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dst, src
      integer(c_size_t), value :: bytes
      integer(c_int), value :: kind
    end function cudaMemcpy
  end interface
  integer(c_int), parameter :: to_device = 1, to_host = 2
contains
  ! A device array holding values(:), written with cudaMemcpy on the legacy default stream; the call
  ! that uses it follows with no synchronisation (the layer orders its work after that stream).
  function device_array(values) result(d)
    integer, intent(in), target :: values(:)
    integer, pointer, contiguous :: d(:)
    type(c_ptr) :: p
    if (cudaMalloc(p, max(1, size(values)) * 4_c_size_t) /= 0) error stop 'cudaMalloc failed'
    if (size(values) > 0) then
      if (cudaMemcpy(p, c_loc(values), size(values) * 4_c_size_t, to_device) /= 0) error stop 'cudaMemcpy failed'
    end if
    call c_f_pointer(p, d, [size(values)])
  end function device_array

  ! The device array's values; the array is freed.
  function fetched(d) result(values)
    integer, pointer, contiguous :: d(:)
    integer, allocatable, target :: values(:)
    allocate(values(size(d)))
    if (size(d) > 0) then
      if (cudaMemcpy(c_loc(values), c_loc(d), size(d) * 4_c_size_t, to_host) /= 0) error stop 'cudaMemcpy failed'
    end if
    if (cudaFree(c_loc(d)) /= 0) error stop 'cudaFree failed'
  end function fetched
end module cuda_memory

! The functions the main program does not call itself, on device arrays; each diverted where some rank
! moves data (the counts are shared_count's, equal on every rank where the function needs them equal).
module device_cases
  use mpi_f08
  use cuda_memory
  use layer_reference
  implicit none
  private
  public :: reduce_on_device, reduce_scatters_on_device, movements_on_device, alltoallvs_on_device
contains
  subroutine reduce_on_device(round)
    integer, intent(in) :: round
    integer :: k, root, rc, i
    integer, allocatable :: mine(:), want(:)
    integer, pointer, contiguous :: dsend(:), drecv(:)
    k = new_case()
    call sum_case(k, 300, mine, want)
    expect_diverted = size(mine) > 0
    root = mod(k + round, nranks)
    dsend => device_array(mine)
    drecv => device_array([(poison, i = 1, size(want))])
    call MPI_Reduce(dsend, drecv, size(mine), MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, rc)
    if (rank /= root) want = poison  ! recvbuf is not written elsewhere
    call check('MPI_Reduce on device arrays', rc, fetched(drecv), want, c_reduce)
    mine = fetched(dsend)
    expect_diverted = .false.
  end subroutine reduce_on_device

  ! Equal blocks (MPI_Reduce_scatter_block), then a count per rank (MPI_Reduce_scatter; unequal counts
  ! take the layer's allreduce-then-keep path).
  subroutine reduce_scatters_on_device()
    integer :: k, n, r, rc, i, from
    integer :: counts(nranks)
    integer, allocatable :: mine(:), want(:)
    integer, pointer, contiguous :: dsend(:), drecv(:)
    k = new_case()
    n = shared_count(k, 0, 100)
    allocate(mine(n * nranks), want(n))
    call inputs_of(mine, k, rank, 0, 1000)
    call sum_of_inputs(want, k, rank * n)
    expect_diverted = n > 0
    dsend => device_array(mine)
    drecv => device_array([(poison, i = 1, n)])
    call MPI_Reduce_scatter_block(dsend, drecv, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    call check('MPI_Reduce_scatter_block on device arrays', rc, fetched(drecv), want, c_reduce_scatter_block)
    mine = fetched(dsend)
    deallocate(mine, want)
    do r = 1, nranks
      counts(r) = shared_count(k, r, 100)
    end do
    from = sum(counts(1:rank))
    allocate(mine(sum(counts)), want(counts(rank + 1)))
    call inputs_of(mine, k, rank, 0, 1000)
    call sum_of_inputs(want, k, from)
    expect_diverted = sum(counts) > 0
    dsend => device_array(mine)
    drecv => device_array([(poison, i = 1, counts(rank + 1))])
    call MPI_Reduce_scatter(dsend, drecv, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    call check('MPI_Reduce_scatter on device arrays', rc, fetched(drecv), want, c_reduce_scatter)
    mine = fetched(dsend)
    expect_diverted = .false.
  end subroutine reduce_scatters_on_device

  ! Allgather (rank r's n elements at r*n), alltoall (the block for rank j is elements j*n.. of the
  ! sender's inputs), allgatherv (gaps of poison between the blocks).
  subroutine movements_on_device()
    integer :: k, n, r, rc, i, total
    integer :: counts(nranks), displs(nranks)
    integer, allocatable :: mine(:), want(:)
    integer, pointer, contiguous :: dsend(:), drecv(:)
    k = new_case()
    n = shared_count(k, 0, 100)
    allocate(mine(n * nranks), want(n * nranks))
    call inputs_of(mine, k, rank, 0, 1000)
    do r = 0, nranks - 1
      call inputs_of(want(r * n + 1:r * n + n), k, r, 0, 1000)
    end do
    expect_diverted = n > 0
    dsend => device_array(mine)
    drecv => device_array([(poison, i = 1, n * nranks)])
    call MPI_Allgather(dsend, n, MPI_INTEGER, drecv, n, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Allgather on device arrays', rc, fetched(drecv), want, c_allgather)
    do r = 0, nranks - 1
      call inputs_of(want(r * n + 1:r * n + n), k, r, rank * n, 1000)
    end do
    drecv => device_array([(poison, i = 1, n * nranks)])
    call MPI_Alltoall(dsend, n, MPI_INTEGER, drecv, n, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Alltoall on device arrays', rc, fetched(drecv), want, c_alltoall)
    mine = fetched(dsend)
    deallocate(mine, want)
    call layout(k, 10, 60, counts, displs, total)
    call gathered(k, counts, displs, total, want)
    allocate(mine(counts(rank + 1)))
    call inputs_of(mine, k, rank, 0, 1000)
    expect_diverted = sum(counts) > 0
    dsend => device_array(mine)
    drecv => device_array([(poison, i = 1, total)])
    call MPI_Allgatherv(dsend, counts(rank + 1), MPI_INTEGER, drecv, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Allgatherv on device arrays', rc, fetched(drecv), want, c_allgatherv)
    mine = fetched(dsend)
    expect_diverted = .false.
  end subroutine movements_on_device

  ! One count matrix (send blocks without gaps, receive blocks after gaps of one element) through
  ! MPI_Alltoallv, then through MPI_Ialltoallv completed by an MPI_Test loop.
  subroutine alltoallvs_on_device()
    integer :: k, rc, i, stotal, rtotal
    integer :: sc(nranks), sd(nranks), rcounts(nranks), rd(nranks)
    integer, allocatable :: sendv(:), want(:)
    integer, pointer, contiguous :: dsend(:), drecv(:)
    logical :: done
    type(MPI_Request) :: request
    k = new_case()
    call pair_counts(k, 40, sc, rcounts)
    expect_diverted = any_pair_moves(k, 40)
    call displacements(sc, 0, sd, stotal)
    call displacements(rcounts, 1, rd, rtotal)
    call exchanged(k, sc, sd, stotal, .true., sendv)
    call exchanged(k, rcounts, rd, rtotal, .false., want)
    dsend => device_array(sendv)
    drecv => device_array([(poison, i = 1, rtotal)])
    call MPI_Alltoallv(dsend, sc, sd, MPI_INTEGER, drecv, rcounts, rd, MPI_INTEGER, MPI_COMM_WORLD, rc)
    call check('MPI_Alltoallv on device arrays', rc, fetched(drecv), want, c_alltoallv)
    drecv => device_array([(poison, i = 1, rtotal)])
    done = .false.
    call MPI_Ialltoallv(dsend, sc, sd, MPI_INTEGER, drecv, rcounts, rd, MPI_INTEGER, MPI_COMM_WORLD, request, rc)
    do while (rc == 0 .and. .not. done)
      call MPI_Test(request, done, MPI_STATUS_IGNORE, rc)
    end do
    call check('MPI_Ialltoallv + MPI_Test on device arrays', rc, fetched(drecv), want, c_ialltoallv)
    sendv = fetched(dsend)
    expect_diverted = .false.
  end subroutine alltoallvs_on_device
end module device_cases

program gpu_fortran
  use mpi_f08
  use cuda_memory
  use layer_reference
  use layer_rounds
  use device_cases
  implicit none
  integer :: devices, have, everyone, i, round, k, root, local_rank, rc
  integer, allocatable :: mine(:), want(:), got(:)
  integer, pointer, contiguous :: dsend(:), drecv(:)
  character(len=16) :: local
  type(MPI_Request) :: request

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  have = 0
  if (cudaGetDeviceCount(devices) == 0) then
    if (devices > 0) have = 1
  end if
  if (have == 1) then  ! one device per rank: the launcher's local rank modulo the devices
    call get_environment_variable('OMPI_COMM_WORLD_LOCAL_RANK', local)
    read (local, *, iostat=rc) local_rank
    if (rc /= 0) local_rank = 0
    rc = cudaSetDevice(mod(local_rank, devices))
  end if
  call MPI_Allreduce(have, everyone, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)  ! host memory: passed
  call count_call(c_allreduce)
  if (everyone == 0) then
    print '(a)', 'skipped: no CUDA device'
    call MPI_Finalize()
    stop 77
  end if

  do round = 1, 3
    call start_round(round)
    ! Device arrays go to the GPU engine where some rank moves data: with every count zero, no rank has
    ! GPU memory to show and all pass the call to the MPI library.
    k = new_case()
    call sum_case(k, 300, mine, want)
    expect_diverted = size(mine) > 0
    dsend => device_array(mine)
    drecv => device_array([(poison, i = 1, size(want))])
    call MPI_Allreduce(dsend, drecv, size(mine), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    call check('MPI_Allreduce on device arrays', rc, fetched(drecv), want, c_allreduce)
    drecv => device_array(mine)
    call MPI_Allreduce(MPI_IN_PLACE, drecv, size(mine), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    call check('MPI_Allreduce in place on device arrays', rc, fetched(drecv), want, c_allreduce)
    drecv => device_array([(poison, i = 1, size(want))])
    call MPI_Iallreduce(dsend, drecv, size(mine), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, request, rc)
    if (rc == 0) call MPI_Wait(request, MPI_STATUS_IGNORE, rc)
    call check('MPI_Iallreduce + MPI_Wait on device arrays', rc, fetched(drecv), want, c_iallreduce)
    mine = fetched(dsend)

    root = mod(k + round, nranks)
    call inputs_of(want, k, root, 1000, 1000)
    got = want
    if (rank /= root) got = poison
    drecv => device_array(got)
    call MPI_Bcast(drecv, size(got), MPI_INTEGER, root, MPI_COMM_WORLD, rc)
    call check('MPI_Bcast on device arrays', rc, fetched(drecv), want, c_bcast)

    call reduce_on_device(round)
    call reduce_scatters_on_device()
    call movements_on_device()
    call alltoallvs_on_device()
  end do
  call finish('gpu_fortran')
end program gpu_fortran
