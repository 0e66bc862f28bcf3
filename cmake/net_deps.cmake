# Dependencies of the inter-node transports: rdma-core's libibverbs and UCX. Each is optional; without
# it lib/ builds an "absent" probe and transport instead, so the library builds and runs on machines
# lacking either.
option(ALLOY_WITH_VERBS "Build the verbs transport and its probe where rdma-core's headers are found" ON)
option(ALLOY_WITH_UCX "Probe UCX when it is found" ON)

set(ALLOY_HAVE_VERBS OFF)
set(ALLOY_VERBS_STATE "OFF (ALLOY_WITH_VERBS=OFF)")
if(ALLOY_WITH_VERBS)
  # liballoy loads libibverbs with dlopen at run time (lib/net_verbs/verbs_library.h), so building the
  # verbs transport needs only rdma-core's headers. rdma-core does not ship a pkg-config file everywhere
  # (vendor stacks differ); the header does.
  find_path(ALLOY_IBVERBS_INCLUDE_DIR infiniband/verbs.h)
  if(ALLOY_IBVERBS_INCLUDE_DIR)
    set(ALLOY_HAVE_VERBS ON)
    set(ALLOY_VERBS_STATE "ON (headers in ${ALLOY_IBVERBS_INCLUDE_DIR}; libibverbs loaded at run time)")
    # Only the probe's unit test links the library, to compare the probe with libibverbs' own answer;
    # without it that test is left out.
    find_library(ALLOY_IBVERBS_LIBRARY ibverbs)
    if(ALLOY_IBVERBS_LIBRARY)
      add_library(Alloy_ibverbs UNKNOWN IMPORTED)
      set_target_properties(Alloy_ibverbs PROPERTIES IMPORTED_LOCATION ${ALLOY_IBVERBS_LIBRARY}
        INTERFACE_INCLUDE_DIRECTORIES ${ALLOY_IBVERBS_INCLUDE_DIR})
    endif()
  else()
    set(ALLOY_VERBS_STATE "OFF (infiniband/verbs.h not found; install rdma-core's libibverbs-dev)")
    message(WARNING "rdma-core's infiniband/verbs.h not found: the verbs transport is left out")
  endif()
endif()

set(ALLOY_HAVE_UCX OFF)
set(ALLOY_UCX_STATE "OFF (ALLOY_WITH_UCX=OFF)")
if(ALLOY_WITH_UCX)
  pkg_check_modules(UCX IMPORTED_TARGET ucx)
  if(UCX_FOUND)
    set(ALLOY_HAVE_UCX ON)
    set(ALLOY_UCX_STATE "ON (UCX ${UCX_VERSION})")
  else()
    set(ALLOY_UCX_STATE "OFF (UCX not found; install libucx-dev)")
    message(WARNING "UCX not found: the UCX probe is left out")
  endif()
endif()
message(STATUS "Alloy: inter-node probes: verbs ${ALLOY_VERBS_STATE}; UCX ${ALLOY_UCX_STATE}")
