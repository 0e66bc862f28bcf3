! Tells the C side of the Fortran bindings where mpi_f08's MPI_IN_PLACE lives: a Fortran program passes
! that variable itself as sendbuf, and the shims turn its address into C's MPI_IN_PLACE. Asking the
! module at run time keeps this right whatever the MPI library names the variable.
subroutine alloy_mpix_f08_note_in_place() bind(C, name="alloy_mpix_f08_note_in_place")
  use mpi_f08, only: MPI_IN_PLACE
  implicit none
  interface
    subroutine set_in_place(sentinel) bind(C, name="alloy_mpix_f08_set_in_place")
      type(*), dimension(..) :: sentinel
    end subroutine set_in_place
  end interface
  call set_in_place(MPI_IN_PLACE)
end subroutine alloy_mpix_f08_note_in_place
