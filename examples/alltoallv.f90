! MPIX_Alltoallv_cuda from Fortran (mpi_f08), with gfortran: no CUDA Fortran needed. With a CUDA device,
! the buffers are cudaMalloc'd (called through bind(C) interfaces to the CUDA runtime) and passed as the
! Fortran arrays c_f_pointer lays over them (never read on the host); without one, ordinary arrays are
! passed and MPI_Alltoallv does the exchange.
! Rank r sends mod(r + p, 3) integers to rank p, valued r * 1000 + p * 10 + i.
!   mpifort alltoallv.f90 $(pkg-config --cflags --libs alloy-fortran) && mpirun -np 2 ./a.out
program alltoallv_example
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use alloy_mpix
  implicit none
  interface
    integer(c_int) function cudaGetDeviceCount(count) bind(C, name="cudaGetDeviceCount")
      import :: c_int
      integer(c_int) :: count
    end function cudaGetDeviceCount
    integer(c_int) function cudaSetDevice(device) bind(C, name="cudaSetDevice")
      import :: c_int
      integer(c_int), value :: device
    end function cudaSetDevice
    integer(c_int) function cudaMalloc(pointer, bytes) bind(C, name="cudaMalloc")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr) :: pointer
      integer(c_size_t), value :: bytes
    end function cudaMalloc
    integer(c_int) function cudaFree(pointer) bind(C, name="cudaFree")
      import :: c_int, c_ptr
      type(c_ptr), value :: pointer
    end function cudaFree
    integer(c_int) function cudaMemcpy(dst, src, bytes, kind) bind(C, name="cudaMemcpy")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dst, src
      integer(c_size_t), value :: bytes
      integer(c_int), value :: kind
    end function cudaMemcpy
    integer(c_int) function cudaStreamSynchronize(stream) bind(C, name="cudaStreamSynchronize")
      import :: c_int, c_intptr_t
      integer(c_intptr_t), value :: stream
    end function cudaStreamSynchronize
  end interface
  integer(c_int), parameter :: host_to_device = 1, device_to_host = 2
  integer(c_intptr_t), parameter :: stream = 0  ! the default stream
  type(MPI_Comm) :: node
  integer :: rank, nranks, local_rank, p, i, total, wrong, ierr
  integer(c_int) :: devices
  integer, allocatable :: sendcounts(:), sdispls(:)
  integer, allocatable, target :: host_send(:), host_recv(:)
  type(c_ptr) :: dev_send, dev_recv
  integer, pointer :: send_view(:), recv_view(:)
  integer(c_size_t) :: bytes

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  if (cudaGetDeviceCount(devices) /= 0) devices = 0
  if (devices > 0) then  ! one GPU per rank, chosen before any MPIX call
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node)
    call MPI_Comm_rank(node, local_rank)
    call MPI_Comm_free(node)
    ierr = cudaSetDevice(mod(local_rank, devices))
  end if

  allocate(sendcounts(nranks), sdispls(nranks))
  total = 0
  do p = 0, nranks - 1
    sendcounts(p + 1) = mod(rank + p, 3)  ! symmetric: rank p sends this rank as many
    sdispls(p + 1) = total
    total = total + sendcounts(p + 1)
  end do
  allocate(host_send(total + 1), host_recv(total + 1))
  do p = 0, nranks - 1
    do i = 0, sendcounts(p + 1) - 1
      host_send(sdispls(p + 1) + i + 1) = rank * 1000 + p * 10 + i
    end do
  end do
  host_recv = -1

  if (devices > 0) then
    bytes = int(total + 1, c_size_t) * 4
    ierr = cudaMalloc(dev_send, bytes)
    ierr = cudaMalloc(dev_recv, bytes)
    ierr = cudaMemcpy(dev_send, c_loc(host_send), bytes, host_to_device)
    call c_f_pointer(dev_send, send_view, [total + 1])
    call c_f_pointer(dev_recv, recv_view, [total + 1])
    call MPIX_Alltoallv_cuda(send_view, sendcounts, sdispls, MPI_INTEGER, recv_view, sendcounts, sdispls, &
                             MPI_INTEGER, MPI_COMM_WORLD, stream, ierr)
    if (cudaStreamSynchronize(stream) /= 0) ierr = MPI_ERR_OTHER  ! the result is there once the stream is
    if (cudaMemcpy(c_loc(host_recv), dev_recv, bytes, device_to_host) /= 0) ierr = MPI_ERR_OTHER
  else
    call MPIX_Alltoallv_cuda(host_send, sendcounts, sdispls, MPI_INTEGER, host_recv, sendcounts, sdispls, &
                             MPI_INTEGER, MPI_COMM_WORLD, stream, ierr)
  end if

  wrong = 0
  do p = 0, nranks - 1
    do i = 0, sendcounts(p + 1) - 1
      if (host_recv(sdispls(p + 1) + i + 1) /= p * 1000 + rank * 10 + i) wrong = wrong + 1
    end do
  end do
  if (devices > 0) then
    ierr = max(ierr, cudaFree(dev_send) + cudaFree(dev_recv))
  end if
  if (ierr == MPI_SUCCESS .and. wrong == 0) then
    print '(a,i0,a,i0,3a)', 'rank ', rank, ': MPIX_Alltoallv_cuda (Fortran) of ', total, ' integers through ', &
        merge('GPU ', 'host', devices > 0), ' memory: correct'
  else
    print '(a,i0,a)', 'rank ', rank, ': MPIX_Alltoallv_cuda (Fortran): WRONG'
  end if
  call MPI_Finalize()
  if (ierr /= MPI_SUCCESS .or. wrong /= 0) error stop 1
end program alltoallv_example
