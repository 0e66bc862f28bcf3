// What the UCX-only tools (ucx-both-ways, ucx-two-workers) share: stopping the whole MPI job with a message
// that names the tool and the failed step, and the same for a UCX status.
#pragma once

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ucxtool {

// The tool's name in messages; each tool defines it.
extern const char* const kToolName;

[[noreturn]] inline void die(const char* what, const std::string& why) {
  std::fprintf(stderr, "%s: %s: %s\n", kToolName, what, why.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

inline void check(ucs_status_t status, const char* what) {
  if (status != UCS_OK) die(what, ucs_status_string(status));
}

// A UCP context with the given features from UCX's environment settings; sharedWorkers where its workers
// run on different threads.
inline ucp_context_h initContext(uint64_t features, bool sharedWorkers) {
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  ucp_params_t params = {};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = features;
  params.mt_workers_shared = sharedWorkers ? 1 : 0;
  ucp_context_h context = nullptr;
  const ucs_status_t initialized = ucp_init(&params, config, &context);
  ucp_config_release(config);
  check(initialized, "ucp_init");
  return context;
}

// A worker that one thread at a time uses, as Alloy's proxy and inbound threads use theirs.
inline ucp_worker_h createWorker(ucp_context_h context) {
  ucp_worker_params_t params = {};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucp_worker_h worker = nullptr;
  check(ucp_worker_create(context, &params, &worker), "ucp_worker_create");
  return worker;
}

}  // namespace ucxtool
