# Installation: headers, liballoy.so, alloy.pc for pkg-config, and a CMake package giving Alloy::alloy.
include(CMakePackageConfigHelpers)

install(TARGETS alloy EXPORT AlloyTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/alloy.h include/alloy_mpix.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The layer of standard MPI calls: a library to link before MPI or to load with LD_PRELOAD, with no header
# (programs call MPI's own functions). Not in the CMake export: no target links it to use Alloy's API.
install(TARGETS alloy_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT AlloyTargets NAMESPACE Alloy:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Alloy)

configure_package_config_file(cmake/AlloyConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/AlloyConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Alloy)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/AlloyConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/AlloyConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/AlloyConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Alloy)

# The .pc files are relocatable: prefix is found from the .pc's own directory (${pcfiledir}, which pkg-config
# and pkgconf both define), not from the configure-time CMAKE_INSTALL_PREFIX, which `cmake --install --prefix`
# and moving the tree both leave stale. The way up from LIBDIR/pkgconfig to the prefix follows from
# CMAKE_INSTALL_LIBDIR (../.. for lib or lib64, ../../.. for lib/x86_64-linux-gnu). Absolute install
# directories (GNUInstallDirs allows them) are written as they are, and such a tree cannot move.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(ALLOY_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH ALLOY_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" ALLOY_PC_UP "${ALLOY_PC_UP}")
  set(ALLOY_PC_PREFIX "\${pcfiledir}/${ALLOY_PC_UP}")
endif()
# The .pc value of an install directory: ${prefix}/DIR, or DIR itself where absolute.
function(alloy_pc_dir out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
alloy_pc_dir(ALLOY_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
alloy_pc_dir(ALLOY_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")

# alloy.h includes cuda_runtime.h and mpi.h: the pkg-config file carries the CUDA include path and
# runtime library, as CMake's CUDAToolkit found them; MPI's flags come from the mpicc/mpifort wrapper.
set(ALLOY_PC_CUDA_INCLUDE "${CUDAToolkit_INCLUDE_DIRS}")
list(GET ALLOY_PC_CUDA_INCLUDE 0 ALLOY_PC_CUDA_INCLUDE)
set(ALLOY_PC_CUDA_LIBDIR "${CUDAToolkit_LIBRARY_DIR}")
configure_file(cmake/alloy.pc.in ${CMAKE_CURRENT_BINARY_DIR}/alloy.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/alloy.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Fortran module of the MPI extension: liballoy_fortran.so, the .mod files (they belong to the Fortran
# compiler that built them, hence under lib/) and alloy-fortran.pc. Not in the CMake export, which would
# make every consumer of Alloy::alloy need MPI's Fortran support.
if(TARGET alloy_fortran)
  set(ALLOY_FORTRAN_MODDIR ${CMAKE_INSTALL_LIBDIR}/fortran/alloy)
  install(TARGETS alloy_fortran LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${CMAKE_BINARY_DIR}/mpi_ext/fortran/modules/ DESTINATION ${ALLOY_FORTRAN_MODDIR})
  alloy_pc_dir(ALLOY_PC_MODDIR "${ALLOY_FORTRAN_MODDIR}")
  configure_file(cmake/alloy-fortran.pc.in ${CMAKE_CURRENT_BINARY_DIR}/alloy-fortran.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/alloy-fortran.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
