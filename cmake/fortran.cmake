# The Fortran module of the MPI extension (alloy_mpix, for `use mpi_f08` programs). Built where a Fortran
# compiler, MPI's mpi_f08 module and the compiler's ISO_Fortran_binding.h are all found; otherwise the
# rest of Alloy builds without it and configure says why. ALLOY_BUILD_FORTRAN=OFF skips it always.
option(ALLOY_BUILD_FORTRAN "Build the Fortran module alloy_mpix and liballoy_fortran" ON)
set(ALLOY_HAVE_FORTRAN OFF)
if(ALLOY_BUILD_FORTRAN)
  include(CheckLanguage)
  check_language(Fortran)
  if(CMAKE_Fortran_COMPILER)
    enable_language(Fortran)
    find_package(MPI COMPONENTS Fortran)
    # The C side reads Fortran array descriptors (TS 29113), whose layout is the Fortran compiler's.
    execute_process(COMMAND ${CMAKE_Fortran_COMPILER} -print-file-name=include
                    OUTPUT_VARIABLE ALLOY_FORTRAN_INCLUDE_HINT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    find_path(ALLOY_CFI_INCLUDE_DIR ISO_Fortran_binding.h HINTS ${ALLOY_FORTRAN_INCLUDE_HINT})
    if(MPI_Fortran_FOUND AND MPI_Fortran_HAVE_F08_MODULE AND ALLOY_CFI_INCLUDE_DIR)
      set(ALLOY_HAVE_FORTRAN ON)
    else()
      message(WARNING "Fortran module alloy_mpix not built: needs MPI's mpi_f08 module (found: "
                      "${MPI_Fortran_HAVE_F08_MODULE}) and ISO_Fortran_binding.h (found: ${ALLOY_CFI_INCLUDE_DIR})")
    endif()
  else()
    message(STATUS "No Fortran compiler: the Fortran module alloy_mpix is not built")
  endif()
endif()
message(STATUS "Alloy: Fortran module alloy_mpix ${ALLOY_HAVE_FORTRAN}")
