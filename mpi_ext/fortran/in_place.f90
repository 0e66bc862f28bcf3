! Tells the C side of the Fortran bindings where mpi_f08's MPI_IN_PLACE and MPI_BOTTOM live: a Fortran
! program passes those variables themselves as buffers, and the shims recognise them by address (turning
! MPI_IN_PLACE into C's MPI_IN_PLACE, refusing MPI_BOTTOM). Asking the module at run time keeps this
! right whatever the MPI library names the variables.
subroutine alloy_mpix_f08_note_sentinels() bind(C, name="alloy_mpix_f08_note_sentinels")
  use mpi_f08, only: MPI_IN_PLACE, MPI_BOTTOM
  implicit none
  interface
    subroutine set_sentinels(in_place, bottom) bind(C, name="alloy_mpix_f08_set_sentinels")
      type(*), dimension(..) :: in_place, bottom
    end subroutine set_sentinels
  end interface
  call set_sentinels(MPI_IN_PLACE, MPI_BOTTOM)
end subroutine alloy_mpix_f08_note_sentinels
