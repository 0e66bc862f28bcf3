# ctest "build-options": configures Alloy with both inter-node dependencies switched off and builds the
# library, so the "absent" probes keep compiling and the library keeps linking without libibverbs and
# UCX; the same build has the kernel trace on (-DALLOY_KERNEL_TRACE=ON, host-cost --trace), so that the
# measuring build keeps compiling without a second build of the kernels. Run with cmake -DSOURCE_DIR= -DWORK_DIR= -DGENERATOR= -DCUDA_COMPILER= -DCUDA_ARCHITECTURES=
# -DOBJDUMP= -P build_options.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
          -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES} -DALLOY_BUILD_TESTS=OFF -DALLOY_BUILD_TOOLS=OFF
          -DALLOY_WITH_VERBS=OFF -DALLOY_WITH_UCX=OFF -DALLOY_KERNEL_TRACE=ON
  OUTPUT_VARIABLE configureOutput ERROR_VARIABLE configureOutput RESULT_VARIABLE rc)
message("${configureOutput}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure failed")
endif()
set(expected "Alloy: inter-node probes: verbs OFF (ALLOY_WITH_VERBS=OFF); UCX OFF (ALLOY_WITH_UCX=OFF)")
string(FIND "${configureOutput}" "${expected}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "status line missing: expected \"${expected}\"")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR} --target alloy RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the alloy target failed")
endif()

# The point of the options: liballoy itself must not need rdma-core or UCX. Only its own NEEDED entries
# are read; what its dependencies load is theirs.
file(GLOB library ${WORK_DIR}/lib/liballoy.so.*.*.*)
execute_process(COMMAND ${OBJDUMP} -p ${library} OUTPUT_VARIABLE headers RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT headers MATCHES "NEEDED +libmpi")
  message(FATAL_ERROR "could not read the dynamic section of '${library}'")
endif()
if(headers MATCHES "NEEDED +(libibverbs|libucp|libuct|libucs)[^\n]*")
  message(FATAL_ERROR "liballoy built without verbs and UCX still needs ${CMAKE_MATCH_0}")
endif()
message("build-options: liballoy built and linked without libibverbs and UCX, with the kernel trace")
file(REMOVE_RECURSE ${WORK_DIR})
