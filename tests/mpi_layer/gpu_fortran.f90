! An unmodified Fortran MPI program (mpi_f08, and the CUDA runtime through iso_c_binding; no Alloy
! module) for the layer on a GPU machine, run under mpirun with liballoy_mpi.so preloaded, one rank per
! GPU: allreduce (also in place), iallreduce + MPI_Wait, bcast and alltoallv on cudaMalloc'd arrays must
! run on Alloy's GPU engine, each checked against a reference computed on the rank from every rank's
! inputs (reference.f90), the receive buffers poisoned first, on fresh random data. Device arrays are
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

program gpu_fortran
  use mpi_f08
  use cuda_memory
  use layer_reference
  use layer_rounds
  implicit none
  integer :: devices, have, everyone, i, round, k, root, local_rank, rc, stotal, rtotal
  integer, allocatable :: mine(:), want(:), got(:), sendv(:), sc(:), sd(:), rcounts(:), rd(:)
  integer, pointer, contiguous :: dsend(:), drecv(:)
  character(len=16) :: local
  type(MPI_Request) :: request

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  allocate(sc(nranks), sd(nranks), rcounts(nranks), rd(nranks))
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
    sendv = fetched(dsend)
    expect_diverted = .false.
  end do
  call finish('gpu_fortran')
end program gpu_fortran
