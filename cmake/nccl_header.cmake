# The nccl.h that Alloy's libnccl.so.2 is built against (lib/nccl): ALLOY_NCCL_INCLUDE_DIR when set (it must
# hold nccl.h), else the CUDA toolkit's headers, else the nvidia-nccl Python wheel's. Sets ALLOY_HAVE_NCCL_HEADER,
# ALLOY_NCCL_HEADER.
set(ALLOY_HAVE_NCCL_HEADER OFF)
if(ALLOY_BUILD_NCCL)
  if(ALLOY_NCCL_INCLUDE_DIR)
    if(NOT EXISTS ${ALLOY_NCCL_INCLUDE_DIR}/nccl.h)
      message(FATAL_ERROR "ALLOY_NCCL_INCLUDE_DIR=${ALLOY_NCCL_INCLUDE_DIR} holds no nccl.h")
    endif()
  else()
    # Beside CUDA's headers, else in the nvidia-nccl wheel of the python3 on PATH (PyTorch's, on the GPU machines).
    find_package(Python3 COMPONENTS Interpreter QUIET)
    set(ALLOY_NCCL_WHEEL_DIR "")
    if(Python3_Interpreter_FOUND)
      execute_process(COMMAND ${Python3_EXECUTABLE} -c
                        "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'include'))"
                      OUTPUT_VARIABLE ALLOY_NCCL_WHEEL_DIR OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    find_path(ALLOY_NCCL_FOUND_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${ALLOY_NCCL_WHEEL_DIR})
    if(ALLOY_NCCL_FOUND_DIR)
      set(ALLOY_NCCL_INCLUDE_DIR ${ALLOY_NCCL_FOUND_DIR})
    endif()
  endif()
  if(ALLOY_NCCL_INCLUDE_DIR)
    set(ALLOY_HAVE_NCCL_HEADER ON)
    set(ALLOY_NCCL_HEADER ${ALLOY_NCCL_INCLUDE_DIR}/nccl.h)
  else()
    message(STATUS "Alloy: no nccl.h found (set ALLOY_NCCL_INCLUDE_DIR): libnccl.so.2 is not built")
  endif()
endif()
